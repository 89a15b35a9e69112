"""The ``Ledger`` protocol: the record of interactions and evaluations, and the work queue.

One protocol covers both because they must change together: an interaction and the work
units it triggers are committed in one transaction (so an acknowledged reply's evaluations are
never lost), and an evaluation's record is written in the same transaction that completes its
work unit, fenced on the worker's claim (so one unit never records two outcomes).

Queue semantics every implementation follows (the contract tests check them):

* ``enqueue`` is idempotent by ``evaluation_id``: a unit whose id is already queued, claimed
  or recorded is ignored.
* ``claim`` hands out units that are pending and due (``not_before`` passed), or claimed with
  an expired lease, oldest first; each claim raises the unit's fencing token.
* ``heartbeat``, ``complete`` and ``release`` succeed only for the current claim (same token,
  lease not taken over); otherwise they change nothing and return ``None``/``False``.
* ``complete`` writes the evaluation record (first writer wins) and removes the unit.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from langchain_evals_port.capture._records import InteractionRecord
from langchain_evals_port.storage._records import Claim, EvaluationRecord, Page, WorkUnit

from ._errors import CheckpointerUnavailableError

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

__all__ = ["Ledger", "SupportsCheckpoints", "checkpoint_storage"]


@runtime_checkable
class Ledger(Protocol):
    """Storage for interactions, evaluation records and the evaluation work queue.

    A ledger that can also keep the steps of durable evaluations says so by being
    ``SupportsCheckpoints`` as well.
    """

    # --- records -------------------------------------------------------------------------

    def record_interaction(self, record: InteractionRecord, work: Sequence[WorkUnit] = ()) -> None:
        """Store ``record`` and enqueue ``work`` in one transaction (a repeated id is kept once)."""

    def get_interaction(self, interaction_id: str) -> InteractionRecord:
        """The interaction with this id; ``InteractionNotFoundError`` when there is none."""

    def record_evaluation(self, record: EvaluationRecord) -> bool:
        """Store ``record`` unless one with its ``evaluation_id`` exists; True when stored."""

    def get_evaluation(self, evaluation_id: str) -> EvaluationRecord | None:
        """The evaluation record with this id, or ``None``."""

    def get_evaluations(self, interaction_id: str) -> list[EvaluationRecord]:
        """Every evaluation record of one interaction, oldest first."""

    def query_interactions(
        self,
        *,
        agent_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> Page[InteractionRecord]:
        """Interactions by start time (``since`` inclusive, ``until`` exclusive), oldest first."""

    def query_evaluations(
        self,
        *,
        agent_id: str | None = None,
        evaluator_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> Page[EvaluationRecord]:
        """Evaluation records by timestamp (``since`` inclusive, ``until`` exclusive)."""

    # --- work queue ----------------------------------------------------------------------

    def enqueue(self, units: Sequence[WorkUnit]) -> int:
        """Queue ``units`` (ids already known are ignored); the number newly queued."""

    def claim(self, worker_id: str, *, limit: int, lease_seconds: float) -> list[Claim]:
        """Claim up to ``limit`` due units for ``worker_id`` with a lease of ``lease_seconds``."""

    def heartbeat(self, claim: Claim, *, lease_seconds: float) -> Claim | None:
        """Extend the lease; the renewed claim, or ``None`` when the claim was lost."""

    def complete(self, claim: Claim, record: EvaluationRecord) -> bool:
        """Record the outcome and remove the unit, fenced on ``claim``; False when lost."""

    def release(
        self,
        claim: Claim,
        *,
        delay: float = 0.0,
        attempts: int | None = None,
        waiting: bool = False,
        question: Any = None,
    ) -> bool:
        """Put the unit back, due after ``delay`` seconds, optionally with a new attempt
        count, fenced on ``claim``; False when the claim was lost. ``waiting`` parks a
        durable evaluation until ``resume`` (``delay`` is then its deadline), keeping the
        ``question`` its step asked."""

    def waiting_work(self, interaction_id: str | None = None) -> list[WorkUnit]:
        """The units waiting for ``resume`` (of one interaction, or all), oldest first."""

    def resume(self, evaluation_id: str, value: Any) -> bool:
        """Make a waiting unit due now, carrying ``value``; False when no unclaimed unit with
        this id is waiting."""

    def reclaim_expired(self) -> int:
        """Make units whose lease expired claimable again; the number reclaimed."""

    def pending_work(self, interaction_id: str | None = None) -> int:
        """Units queued or claimed (for one interaction, or in all)."""

    def close(self) -> None:
        """Release connections; the ledger is unusable afterwards."""


@runtime_checkable
class SupportsCheckpoints(Protocol):
    """A ledger that keeps LangGraph checkpoints on its own storage, so the steps of durable
    evaluations survive whatever its records survive.

    The runtime uses it for durable evaluators unless it is given a ``checkpointer``.
    """

    def open_checkpointer(self) -> AbstractAsyncContextManager[BaseCheckpointSaver[str]]:
        """An async LangGraph saver on the ledger's storage, its tables set up, open for the
        ``async with`` block (it belongs to the event loop that opened it)."""


def checkpoint_storage(ledger: Ledger) -> SupportsCheckpoints:
    """``ledger`` as the keeper of durable evaluations' checkpoints;
    ``CheckpointerUnavailableError`` when it keeps none."""
    if not isinstance(ledger, SupportsCheckpoints):
        raise CheckpointerUnavailableError(
            "durable evaluators keep their steps in LangGraph checkpoints, and the ledger "
            f"{type(ledger).__name__} keeps none (it has no open_checkpointer()): pass "
            "checkpointer= (an async LangGraph saver) to EvaluationRuntime, or use a ledger "
            "that keeps them (SqliteLedger, PostgresLedger, InMemoryLedger)"
        )
    return ledger
