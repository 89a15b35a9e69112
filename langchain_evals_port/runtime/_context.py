"""What an evaluation sees: the ``EvaluationContext`` and the request built from it.

``build_request`` is the one request builder, for the runtime and for experiments: it turns
an interaction into the ``EvalRequest`` any evaluator of the package takes. ``inputs`` is the
input text (an experiment's case inputs), ``outputs`` the final response (a target's return
value) — or the transcript as LangChain messages, or the response parsed as JSON, as the
evaluator's ``outputs_kind`` says — and the variables are ``interaction`` (the
``InteractionRecord``), ``config`` (an ``EvaluatorConfig``: the binding's properties online,
the experiment's ``evaluator_config`` offline), ``subject`` and ``evaluation_id``, and
offline also ``case``, ``case_id`` and ``metadata``. A function evaluator asks for any of
them by parameter name; an ``LLMJudge`` ignores those its prompt does not name.
``request_for`` builds the runtime's request in a test.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from langchain_evals_port.core import MISSING, EvalRequest, Evaluator, OutputsKind
from langchain_evals_port.core.errors import EvaluatorUsageError

from ._config import EvaluatorConfig
from ._records import InteractionRecord, Subject, Trigger

if TYPE_CHECKING:
    from .ledger import Ledger

__all__ = ["EvaluationContext", "RequestBuilder", "build_request", "request_for"]

RequestBuilder: TypeAlias = Callable[[InteractionRecord], EvalRequest | Mapping[str, Any]]
"""Builds an evaluator's request from the interaction (``to_request=`` on a registration):
the fields it sets replace the runtime's, e.g. ``{"reference_outputs": ...}`` alone."""


@dataclass(frozen=True)
class EvaluationContext:
    """One evaluation's ids, configuration and interaction; a durable evaluator's nodes get
    it as LangGraph's run context (``runtime.context``).

    Attributes:
        subject: The interaction, its agent and the flow it ran in (ids only).
        evaluation_id: The deterministic id this evaluation is recorded under.
        config: The binding's configuration over the evaluator entry.
        ledger: Where the interaction is read from.
        trigger: ``"on_interaction"`` or ``"manual"``.
        trigger_attributes: The attributes that identify this evaluation, if any.
    """

    subject: Subject
    evaluation_id: str
    config: EvaluatorConfig
    ledger: Ledger
    trigger: Trigger = "on_interaction"
    trigger_attributes: Mapping[str, str] = field(default_factory=dict)
    preloaded: InteractionRecord | None = field(default=None, repr=False, compare=False)
    """The interaction, when the runtime already holds it (it recorded it lately)."""

    def interaction(self) -> InteractionRecord:
        """The interaction under evaluation (from the ledger, unless already at hand)."""
        if self.preloaded is not None:
            return self.preloaded
        return self.ledger.get_interaction(self.subject.interaction_id)

    async def ainteraction(self) -> InteractionRecord:
        """``interaction()`` for async code: a ledger read runs in a thread, so it does not
        hold up the other evaluations on the event loop."""
        if self.preloaded is not None:
            return self.preloaded
        return await asyncio.to_thread(self.ledger.get_interaction, self.subject.interaction_id)

    def judge_session(self, node: str | None = None, attempt: int | None = None) -> str:
        """A session id for a judge called from a durable evaluator's node: derived from the
        evaluation, the node and its attempt, apart from the evaluated agent's session, so a
        retried node's judge does not see the earlier attempt (pass it as the judge's
        ``thread_id``). Inside a node, ``node`` and ``attempt`` default to LangGraph's own
        (the running node and ``execution_info.node_attempt``)."""
        if node is None or attempt is None:
            from langgraph.config import get_config
            from langgraph.runtime import get_runtime

            node = node or get_config()["metadata"]["langgraph_node"]
            info = get_runtime().execution_info
            attempt = attempt or (info.node_attempt if info is not None else 1)
        return f"{self.evaluation_id}:{node}:{attempt}"


def request_for(
    record: InteractionRecord,
    evaluator: Evaluator | None = None,
    *,
    config: Mapping[str, Any] | None = None,
    subject: Subject | None = None,
    evaluation_id: str | None = None,
    to_request: RequestBuilder | None = None,
) -> EvalRequest:
    """The request the runtime gives ``evaluator`` for the interaction ``record``.

    Unit-test an evaluator by calling it with this request, as the runtime would.

    Args:
        record: The interaction.
        evaluator: Decides ``outputs`` by its ``outputs_kind`` (text when not given).
        config: The binding's properties, as the configuration would give them.
        subject: Defaults to the interaction's own ids.
        evaluation_id: The ``evaluation_id`` variable (``None`` when not given).
        to_request: The registration's own request builder, if it has one.

    Example:
        >>> from langchain_evals_port import evaluator
        >>> @evaluator
        ... def long_enough(outputs, config):
        ...     return len(outputs) >= config.get_int("min_length")
        >>> record = InteractionRecord(interaction_id="i-1", agent_id="bot", output_text="Hi!")
        >>> long_enough.invoke(request_for(record, long_enough, config={"min_length": 3})).score
        True
    """
    context_subject = subject or Subject.interaction(
        record.interaction_id, record.agent_id, record.flow_id
    )
    return build_request(
        record,
        outputs_kind=evaluator.outputs_kind if evaluator is not None else "text",
        config=config if isinstance(config, EvaluatorConfig) else EvaluatorConfig(config),
        subject=context_subject,
        evaluation_id=evaluation_id,
        to_request=to_request,
    )


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
