"""``InMemoryLedger``: the ledger in one process's memory, for tests and short-lived runs.

It keeps durable evaluations' checkpoints in memory too, one ``InMemorySaver`` for its
lifetime: every runtime on the ledger sees the same steps, as it sees the same records.
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from langchain_evals_port.capture._records import InteractionRecord
from langchain_evals_port.storage._records import Claim, EvaluationRecord, Page, WorkUnit

from ._errors import InteractionNotFoundError
from ._leased import check_lease
from ._pages import check_limit, decode_cursor, epoch, evaluation_key, interaction_key, page_of
from ._queue import check_completion, released_unit, resumed_unit

__all__ = ["InMemoryLedger"]

R = TypeVar("R", InteractionRecord, EvaluationRecord)


@dataclass
class _Slot:
    """A queued unit with its claim state: owned by ``worker`` until ``lease_until``."""

    unit: WorkUnit
    token: int = 0
    worker: str | None = None
    lease_until: float = 0.0

    def claimable(self, now: float) -> bool:
        if self.worker is None:
            return self.unit.not_before <= now
        return self.lease_until <= now


class InMemoryLedger:
    """A ``Ledger`` kept in memory and guarded by one lock; everything is lost on exit.

    Example:
        >>> ledger = InMemoryLedger()
        >>> unit = WorkUnit(evaluation_id="e-1", evaluator_id="quality",
        ...                 interaction_id="i-1", agent_id="bot", enqueued_at=0.0)
        >>> ledger.enqueue([unit, unit])
        1
        >>> [claim] = ledger.claim("worker-1", limit=10, lease_seconds=30.0)
        >>> claim.unit.evaluation_id, claim.worker_id, ledger.pending_work("i-1")
        ('e-1', 'worker-1', 1)
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._interactions: dict[str, InteractionRecord] = {}
        self._evaluations: dict[str, EvaluationRecord] = {}
        self._work: dict[str, _Slot] = {}
        self._checkpoints = InMemorySaver()

    def seed(self, *records: InteractionRecord | EvaluationRecord) -> InMemoryLedger:
        """Store ``records`` as they are, replacing any with the same id; returns the ledger.

        Example:
            >>> from langchain_evals_port import EvaluatorResult
            >>> record = EvaluationRecord(
            ...     evaluation_id="e-1", evaluator_id="quality", interaction_id="i-1",
            ...     agent_id="bot", results=[EvaluatorResult(key="quality", score=True)])
            >>> InMemoryLedger().seed(record).get_evaluation("e-1") == record
            True
        """
        with self._lock:
            for record in records:
                if isinstance(record, InteractionRecord):
                    self._interactions[record.interaction_id] = record
                elif isinstance(record, EvaluationRecord):
                    self._evaluations[record.evaluation_id] = record
                else:
                    raise TypeError(f"cannot seed a ledger with {type(record).__name__}")
        return self

    # --- records -------------------------------------------------------------------------

    def record_interaction(self, record: InteractionRecord, work: Sequence[WorkUnit] = ()) -> None:
        """Store ``record`` (the first with its id is kept) and enqueue ``work``."""
        with self._lock:
            self._interactions.setdefault(record.interaction_id, record)
            self._enqueue(work)

    def get_interaction(self, interaction_id: str) -> InteractionRecord:
        """The interaction with this id; ``InteractionNotFoundError`` when there is none."""
        with self._lock:
            record = self._interactions.get(interaction_id)
        if record is None:
            raise InteractionNotFoundError(interaction_id)
        return record

    def record_evaluation(self, record: EvaluationRecord) -> bool:
        """Store ``record`` unless one with its ``evaluation_id`` exists; True when stored."""
        with self._lock:
            return self._store_evaluation(record)

    def get_evaluation(self, evaluation_id: str) -> EvaluationRecord | None:
        """The evaluation record with this id, or ``None``."""
        with self._lock:
            return self._evaluations.get(evaluation_id)

    def get_evaluations(self, interaction_id: str) -> list[EvaluationRecord]:
        """Every evaluation record of one interaction, oldest first."""
        with self._lock:
            found = [r for r in self._evaluations.values() if r.interaction_id == interaction_id]
        return sorted(found, key=evaluation_key)

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
        with self._lock:
            records = list(self._interactions.values())
        if agent_id is not None:
            records = [r for r in records if r.agent_id == agent_id]
        return _query(records, interaction_key, since, until, limit, cursor)

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
        with self._lock:
            records = list(self._evaluations.values())
        if agent_id is not None:
            records = [r for r in records if r.agent_id == agent_id]
        if evaluator_id is not None:
            records = [r for r in records if r.evaluator_id == evaluator_id]
        return _query(records, evaluation_key, since, until, limit, cursor)

    # --- work queue ----------------------------------------------------------------------

    def enqueue(self, units: Sequence[WorkUnit]) -> int:
        """Queue ``units`` (ids already queued or recorded are ignored); the number queued."""
        with self._lock:
            return self._enqueue(units)

    def claim(self, worker_id: str, *, limit: int, lease_seconds: float) -> list[Claim]:
        """Claim up to ``limit`` due units (oldest first) for ``worker_id``."""
        check_limit(limit)
        check_lease(lease_seconds)
        with self._lock:
            now = time.time()
            due = [slot for slot in self._work.values() if slot.claimable(now)]
            due.sort(key=lambda slot: (slot.unit.enqueued_at, slot.unit.evaluation_id))
            claims = []
            for slot in due[:limit]:
                slot.token += 1
                slot.worker = worker_id
                slot.lease_until = now + lease_seconds
                claims.append(
                    Claim(
                        unit=slot.unit,
                        worker_id=worker_id,
                        token=slot.token,
                        lease_expires_at=slot.lease_until,
                    )
                )
            return claims

    def heartbeat(self, claim: Claim, *, lease_seconds: float) -> Claim | None:
        """Extend the lease; the renewed claim, or ``None`` when the claim was lost."""
        check_lease(lease_seconds)
        with self._lock:
            slot = self._held(claim)
            if slot is None:
                return None
            slot.lease_until = time.time() + lease_seconds
            return claim.model_copy(update={"lease_expires_at": slot.lease_until})

    def complete(self, claim: Claim, record: EvaluationRecord) -> bool:
        """Record the outcome (first writer wins) and remove the unit; False when lost."""
        check_completion(claim, record)
        with self._lock:
            if self._held(claim) is None:
                return False
            self._store_evaluation(record)
            del self._work[claim.unit.evaluation_id]
            return True

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
        count or waiting for ``resume`` (with the ``question`` asked); False when the claim
        was lost."""
        with self._lock:
            slot = self._held(claim)
            if slot is None:
                return False
            slot.unit = released_unit(
                slot.unit,
                now=time.time(),
                delay=delay,
                attempts=attempts,
                waiting=waiting,
                question=question,
            )
            slot.worker = None
            return True

    def waiting_work(self, interaction_id: str | None = None) -> list[WorkUnit]:
        """The units waiting for ``resume`` (of one interaction, or all), oldest first."""
        with self._lock:
            units = [
                slot.unit
                for slot in self._work.values()
                if slot.worker is None
                and slot.unit.waiting
                and interaction_id in (None, slot.unit.interaction_id)
            ]
        return sorted(units, key=lambda unit: (unit.enqueued_at, unit.evaluation_id))

    def resume(self, evaluation_id: str, value: Any) -> bool:
        """Make a waiting unit due now, carrying ``value``; False when none is waiting."""
        with self._lock:
            slot = self._work.get(evaluation_id)
            if slot is None or slot.worker is not None or not slot.unit.waiting:
                return False
            slot.unit = resumed_unit(slot.unit, value)
            return True

    def reclaim_expired(self) -> int:
        """Make units whose lease expired claimable again; the number reclaimed."""
        with self._lock:
            now = time.time()
            expired = [s for s in self._work.values() if s.worker is not None and s.claimable(now)]
            for slot in expired:
                slot.worker = None
            return len(expired)

    def pending_work(self, interaction_id: str | None = None) -> int:
        """Units queued or claimed (for one interaction, or in all)."""
        with self._lock:
            if interaction_id is None:
                return len(self._work)
            return sum(s.unit.interaction_id == interaction_id for s in self._work.values())

    def close(self) -> None:
        """Nothing to release: the records stay readable until the ledger is dropped."""

    @asynccontextmanager
    async def open_checkpointer(self) -> AsyncIterator[BaseCheckpointSaver[str]]:
        """The ledger's ``InMemorySaver``, for the ``async with`` block."""
        yield self._checkpoints

    # --- helpers, called with the lock held ------------------------------------------------

    def _enqueue(self, units: Iterable[WorkUnit]) -> int:
        queued = 0
        for unit in units:
            known = unit.evaluation_id in self._work or unit.evaluation_id in self._evaluations
            if not known:
                self._work[unit.evaluation_id] = _Slot(unit)
                queued += 1
        return queued

    def _store_evaluation(self, record: EvaluationRecord) -> bool:
        if record.evaluation_id in self._evaluations:
            return False
        self._evaluations[record.evaluation_id] = record
        return True

    def _held(self, claim: Claim) -> _Slot | None:
        slot = self._work.get(claim.unit.evaluation_id)
        if slot is None or slot.worker is None or slot.token != claim.token:
            return None
        return slot


def _query(
    records: list[R],
    key: Callable[[R], tuple[float, str]],
    since: datetime | None,
    until: datetime | None,
    limit: int,
    cursor: str | None,
) -> Page[R]:
    check_limit(limit)
    after = None if cursor is None else decode_cursor(cursor)
    low = None if since is None else epoch(since)
    high = None if until is None else epoch(until)

    def wanted(record: R) -> bool:
        moment, _ = position = key(record)
        return (
            (low is None or moment >= low)
            and (high is None or moment < high)
            and (after is None or position > after)
        )

    return page_of(sorted(filter(wanted, records), key=key)[: limit + 1], limit, key)
