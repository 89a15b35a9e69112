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
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_evals_port.capture._config import EvaluatorConfig
from langchain_evals_port.capture._records import InteractionRecord, Subject
from langchain_evals_port.core import EvalRequest, Evaluator
from langchain_evals_port.storage._records import Trigger

if TYPE_CHECKING:
    from langchain_evals_port.storage import Ledger

from langchain_evals_port.capture import RequestBuilder, build_request

__all__ = ["EvaluationContext", "RequestBuilder", "build_request", "request_for"]


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
