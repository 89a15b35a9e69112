"""``build_request``: the one request builder, for the runtime and for experiments.

It turns an interaction into the ``EvalRequest`` any evaluator of the package takes.
``inputs`` is the input text (an experiment's case inputs), ``outputs`` the final response
(a target's return value) — or the transcript as LangChain messages, or the response parsed as
JSON, as the evaluator's ``outputs_kind`` says — and the variables are ``interaction`` (the
``InteractionRecord``), ``config`` (an ``EvaluatorConfig``: the binding's properties online,
the experiment's ``evaluator_config`` offline), ``subject`` and ``evaluation_id``, and offline
also ``case``, ``case_id``, ``trial`` and ``metadata``. A function evaluator asks for any of
them by parameter name; an ``LLMJudge`` ignores those its prompt does not name.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

from langchain_evals_port.core import MISSING, EvalRequest, OutputsKind
from langchain_evals_port.core.errors import EvaluatorUsageError

from ._config import EvaluatorConfig
from ._records import InteractionRecord, Subject

__all__ = ["RequestBuilder", "build_request"]


RequestBuilder: TypeAlias = Callable[[InteractionRecord], EvalRequest | Mapping[str, Any]]
"""Builds an evaluator's request from the interaction (``to_request=`` on a registration):
the fields it sets replace the runtime's, e.g. ``{"reference_outputs": ...}`` alone."""


def build_request(
    record: InteractionRecord,
    *,
    outputs_kind: OutputsKind,
    config: EvaluatorConfig,
    subject: Subject,
    evaluation_id: str | None,
    to_request: RequestBuilder | None = None,
    inputs: Any = MISSING,
    outputs: Any = MISSING,
    reference_outputs: Any = None,
    variables: Mapping[str, Any] | None = None,
) -> EvalRequest:
    """The request for ``record``, online and offline alike (see the module docstring).

    Online the interaction gives ``inputs`` and the outputs; an experiment passes the case's
    ``inputs`` and ``reference_outputs``, the target's return value as ``outputs`` and its
    own ``variables`` (``case``, ``case_id``, ``metadata``). ``outputs_kind`` decides the
    outputs either way: ``"messages"`` is the transcript, ``"json"`` text parsed as JSON.
    ``to_request``'s fields that are set (not ``None``) replace these, its variables are
    added, so a builder that only adds ``reference_outputs`` keeps the usual ``outputs``."""
    given = {
        "interaction": record,
        "config": config,
        "subject": subject,
        "evaluation_id": evaluation_id,
        **(variables or {}),
    }
    if outputs_kind == "other" and to_request is None and outputs is MISSING:
        raise EvaluatorUsageError(
            "this evaluator does not judge text or messages; register it with to_request= "
            "to build its request from the interaction"
        )
    answer: Any = record.final_response_text if outputs is MISSING else outputs
    if outputs_kind == "messages":
        answer = record.transcript_messages
    elif outputs_kind == "json" and isinstance(answer, str):
        answer = _json_or_text(answer)
    elif outputs_kind == "other" and outputs is MISSING:
        answer = None
    request = EvalRequest(
        inputs=record.input_text if inputs is MISSING else inputs,
        outputs=answer,
        reference_outputs=reference_outputs,
        variables=given,
    )
    if to_request is None:
        return request
    built = EvalRequest.coerce(to_request(record))
    replaced = {
        name: getattr(built, name)
        for name in ("inputs", "outputs", "reference_outputs")
        if getattr(built, name) is not None
    }
    return request.model_copy(
        update={
            **replaced,
            "attachments": built.attachments,
            "variables": {**given, **built.variables},
        }
    )


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text
