"""What the ledger stores besides interactions (``capture``): evaluations and the work units
between them.

Records are frozen pydantic models, so they serialise to JSON (the SQLite and PostgreSQL
ledgers store them that way) and messages round-trip as LangChain messages.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from langchain_evals_port.capture import InteractionRecord, Subject, utc_now
from langchain_evals_port.core import EvaluatorResult, Outcome
from langchain_evals_port.core._result import StoredResult

from ._ids import evaluation_id as derived_evaluation_id

__all__ = ["Claim", "EvaluationRecord", "Page", "Trigger", "WorkUnit"]


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)


Trigger = Literal["on_interaction", "manual"]
"""What started an evaluation: the runtime after an interaction, or ``evaluate_now``."""


class EvaluationRecord(_Record):
    """The recorded outcome of one evaluation: the core ``EvaluatorResult`` of each key the
    evaluator scored (one ``failed`` result when it could not judge), with the evaluation's
    ids, trigger, control id, attempts, duration and timestamps.

    A verdict result carries ``passed``: a bool score as it is, a number when it is at least
    ``pass_threshold``.
    """

    evaluation_id: str
    evaluator_id: str
    control_id: str | None = None
    trigger: Trigger = "on_interaction"
    trigger_attributes: dict[str, str] = {}
    interaction_id: str
    agent_id: str
    roles: tuple[str, ...] = ()
    """The agent's roles when the evaluation was queued: they chose its binding."""
    flow_id: str | None = None
    results: list[StoredResult] = Field(min_length=1)
    pass_threshold: float | None = None
    """The threshold a numeric score was held to, when one applied."""
    attempts: int = 1
    duration: float = 0.0
    """Seconds the last attempt took; for a durable evaluation, seconds from being queued to
    its outcome (waits for a person included)."""
    enqueued_at: datetime | None = None
    timestamp: datetime = Field(default_factory=utc_now)
    """When the outcome was recorded."""

    @classmethod
    def of(
        cls,
        unit: WorkUnit,
        results: list[EvaluatorResult],
        *,
        control_id: str | None,
        pass_threshold: float | None,
        duration: float,
    ) -> EvaluationRecord:
        """The record of ``unit``'s attempt that gave ``results``: the unit's ids, trigger,
        roles and flow with it, so the evaluation can be queued again as it was."""
        return cls(
            **unit.model_dump(include=_UNIT_IDENTITY),
            control_id=control_id,
            results=results,
            pass_threshold=pass_threshold,
            attempts=unit.attempts + 1,
            duration=duration,
            enqueued_at=datetime.fromtimestamp(unit.enqueued_at, timezone.utc),
        )

    @property
    def outcome(self) -> Outcome:
        """``failed`` when any key failed, else ``inconclusive`` when any key reached no
        verdict, else ``verdict``."""
        outcomes = {result.outcome for result in self.results}
        for outcome in ("failed", "inconclusive"):
            if outcome in outcomes:
                return outcome
        return "verdict"

    @property
    def passed(self) -> bool | None:
        """Whether every key's verdict passed; ``None`` unless the outcome is a verdict."""
        if self.outcome != "verdict":
            return None
        return all(result.passed is True for result in self.results)

    @property
    def result(self) -> EvaluatorResult:
        """The one result of a single-key evaluation (an error when there are several)."""
        if len(self.results) != 1:
            raise ValueError(
                f"evaluation {self.evaluation_id} has {len(self.results)} results; read .results"
            )
        return self.results[0]

    @property
    def is_verdict(self) -> bool:
        """Whether the outcome is a verdict."""
        return self.outcome == "verdict"

    @property
    def is_inconclusive(self) -> bool:
        """Whether the outcome is inconclusive."""
        return self.outcome == "inconclusive"

    @property
    def is_failed(self) -> bool:
        """Whether the outcome is failed (an error, not a failing verdict)."""
        return self.outcome == "failed"


_UNIT_IDENTITY = {
    "evaluation_id",
    "evaluator_id",
    "interaction_id",
    "agent_id",
    "roles",
    "flow_id",
    "trigger",
    "trigger_attributes",
}
"""What a unit and the record of its evaluation share."""


class WorkUnit(_Record):
    """One evaluation waiting in the ledger's work queue.

    ``attempts`` counts attempts that ended in a non-transient error; ``not_before`` (epoch
    seconds) delays a retry; ``enqueued_at`` bounds how long transient errors are retried and
    when a durable evaluation times out.
    """

    evaluation_id: str
    evaluator_id: str
    interaction_id: str
    agent_id: str
    roles: tuple[str, ...] = ()
    flow_id: str | None = None
    trigger: Trigger = "on_interaction"
    trigger_attributes: dict[str, str] = {}
    attempts: int = 0
    enqueued_at: float
    not_before: float = 0.0
    waiting: bool = False
    """A durable evaluation paused for a person: due again on ``resume`` (or its deadline)."""
    question: Any = None
    """What the paused step asked (the payload it gave LangGraph's ``interrupt``)."""
    resumed: bool = False
    resume_value: Any = None
    """The value ``resume`` delivered, handed to the paused step when the unit runs again."""

    @property
    def subject(self) -> Subject:
        """The subject this unit evaluates."""
        return Subject.interaction(self.interaction_id, self.agent_id, self.flow_id)

    @classmethod
    def queued(
        cls,
        evaluator_id: str,
        of: InteractionRecord | EvaluationRecord,
        *,
        trigger: Trigger,
        trigger_attributes: Mapping[str, str] | None = None,
        evaluation_id: str | None = None,
        enqueued_at: float | None = None,
    ) -> WorkUnit:
        """The unit that evaluates the interaction ``of`` is (or that an evaluation ``of``
        evaluated) with ``evaluator_id``: its agent, roles and flow with it, so the same
        binding applies. ``evaluation_id`` defaults to the deterministic one, ``enqueued_at``
        to now. The one way a unit is made.

        Example:
            >>> record = InteractionRecord(interaction_id="i-1", agent_id="bot", roles=("faq",))
            >>> WorkUnit.queued("tone", record, trigger="manual", enqueued_at=0.0).roles
            ('faq',)
        """
        attributes = dict(trigger_attributes or {})
        return cls(
            evaluation_id=evaluation_id
            or derived_evaluation_id(evaluator_id, of.interaction_id, attributes),
            evaluator_id=evaluator_id,
            interaction_id=of.interaction_id,
            agent_id=of.agent_id,
            roles=of.roles,
            flow_id=of.flow_id,
            trigger=trigger,
            trigger_attributes=attributes,
            enqueued_at=time.time() if enqueued_at is None else enqueued_at,
        )


class Claim(_Record):
    """A worker's lease on a work unit; every later write is fenced on ``token``.

    A write with a stale claim (the lease expired and another worker claimed the unit, which
    raised the token) is refused.
    """

    unit: WorkUnit
    worker_id: str
    token: int
    lease_expires_at: float


T = TypeVar("T")


class Page(BaseModel, Generic[T]):
    """One page of a ledger query; pass ``next_cursor`` back for the next (``None``: last)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    items: list[T]
    next_cursor: str | None = None
