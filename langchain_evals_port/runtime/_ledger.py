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

import base64
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any, Literal, Protocol, TypeVar, runtime_checkable

from langchain_evals_port.core.errors import EvalsError

from ._records import Claim, EvaluationRecord, InteractionRecord, Page, WorkUnit

__all__ = [
    "InteractionNotFoundError",
    "Ledger",
    "check_completion",
    "check_lease",
    "check_limit",
    "decode_cursor",
    "encode_cursor",
    "epoch",
    "evaluation_key",
    "export_jsonl",
    "interaction_key",
    "page_of",
    "released_unit",
]

T = TypeVar("T")


class InteractionNotFoundError(EvalsError, KeyError):
    """The ledger holds no interaction with the requested id."""

    def __init__(self, interaction_id: str) -> None:
        super().__init__(f"no interaction {interaction_id!r} in the ledger")
        self.interaction_id = interaction_id

    def __str__(self) -> str:
        return str(self.args[0])


@runtime_checkable
class Ledger(Protocol):
    """Storage for interactions, evaluation records and the evaluation work queue."""

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


def open_ledger(location: str | Path) -> Ledger:
    """The ledger at ``location``: a ``postgresql://`` (or ``postgres://``) DSN opens a
    ``PostgresLedger``, anything else is the path of a ``SqliteLedger`` file."""
    if isinstance(location, str) and location.startswith(("postgresql://", "postgres://")):
        from ._postgres import PostgresLedger

        return PostgresLedger(location)
    from ._sqlite import SqliteLedger

    return SqliteLedger(location)


def _all_pages(
    ledger: Ledger, what: Literal["interactions", "evaluations"], **filters: object
) -> Iterator[InteractionRecord | EvaluationRecord]:
    cursor: str | None = None
    while True:
        page: Page[InteractionRecord] | Page[EvaluationRecord]
        if what == "interactions":
            page = ledger.query_interactions(cursor=cursor, limit=500, **filters)  # type: ignore[arg-type]
        else:
            page = ledger.query_evaluations(cursor=cursor, limit=500, **filters)  # type: ignore[arg-type]
        yield from page.items
        if page.next_cursor is None:
            return
        cursor = page.next_cursor


def export_jsonl(
    ledger: Ledger,
    destination: str | Path | IO[str],
    *,
    what: Literal["interactions", "evaluations"] = "evaluations",
    agent_id: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> int:
    """Write the ledger's records as JSON Lines (one record per line); the number written.

    Args:
        ledger: The ledger to read.
        destination: A path, or a text file open for writing.
        what: ``"evaluations"`` or ``"interactions"``.
        agent_id: Only this agent's records.
        since: Only records from this time on.
        until: Only records before this time.
    """
    if what not in ("interactions", "evaluations"):
        raise ValueError(f"what must be 'interactions' or 'evaluations', got {what!r}")
    filters = {"agent_id": agent_id, "since": since, "until": until}
    if isinstance(destination, (str, Path)):
        with open(destination, "w", encoding="utf-8") as out:
            return _write_lines(_all_pages(ledger, what, **filters), out)
    return _write_lines(_all_pages(ledger, what, **filters), destination)


def _write_lines(records: Iterator[InteractionRecord | EvaluationRecord], out: IO[str]) -> int:
    count = 0
    for record in records:
        out.write(record.model_dump_json())
        out.write("\n")
        count += 1
    return count


def encode_cursor(timestamp: float, key: str) -> str:
    """The opaque cursor of a keyset page that continues after ``(timestamp, key)``."""
    raw = json.dumps([timestamp, key], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode()


def decode_cursor(cursor: str) -> tuple[float, str]:
    """The ``(timestamp, key)`` a cursor continues after; ``ValueError`` names a bad cursor."""
    try:
        timestamp, key = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        return float(timestamp), str(key)
    except (ValueError, TypeError) as error:
        raise ValueError(f"cursor: not a cursor this ledger returned: {cursor!r}") from error


def keyset_filter(
    equal: Mapping[str, str | None],
    *,
    moment: str,
    key: str,
    since: datetime | None,
    until: datetime | None,
    cursor: str | None,
    placeholder: str,
) -> tuple[str, list[Any]]:
    """The ``WHERE`` clause (or ``""``) and parameters of a SQL ledger's keyset-paged query:
    columns equal to the values given (``None``: any), ``moment`` in ``[since, until)``, and
    after ``cursor`` in ``(moment, key)`` order; ``placeholder`` is the driver's (``?``, ``%s``)."""
    conditions = [
        f"{column} = {placeholder}" for column, value in equal.items() if value is not None
    ]
    parameters: list[Any] = [value for value in equal.values() if value is not None]
    if since is not None:
        conditions.append(f"{moment} >= {placeholder}")
        parameters.append(epoch(since))
    if until is not None:
        conditions.append(f"{moment} < {placeholder}")
        parameters.append(epoch(until))
    if cursor is not None:
        conditions.append(f"({moment}, {key}) > ({placeholder}, {placeholder})")
        parameters.extend(decode_cursor(cursor))
    return (f"WHERE {' AND '.join(conditions)}" if conditions else ""), parameters


def evaluation_row(record: EvaluationRecord) -> tuple[str, str, str, str, float, str]:
    """The columns a SQL ledger stores an evaluation record in: ids, time, the JSON."""
    return (
        record.evaluation_id,
        record.interaction_id,
        record.agent_id,
        record.evaluator_id,
        epoch(record.timestamp),
        record.model_dump_json(),
    )


def check_limit(limit: int) -> None:
    """Reject a page size below 1, naming the argument."""
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ValueError(f"limit must be a positive int, got {limit!r}")


def check_lease(lease_seconds: float) -> None:
    """Reject a lease that is not a positive number of seconds, naming the argument."""
    if isinstance(lease_seconds, bool) or not isinstance(lease_seconds, (int, float)):
        raise ValueError(f"lease_seconds must be a positive number, got {lease_seconds!r}")
    if not lease_seconds > 0:
        raise ValueError(f"lease_seconds must be a positive number, got {lease_seconds!r}")


def check_completion(claim: Claim, record: EvaluationRecord) -> None:
    """Reject completing ``claim`` with the record of another evaluation."""
    if record.evaluation_id != claim.unit.evaluation_id:
        raise ValueError(
            f"record {record.evaluation_id!r} does not belong to the claimed unit "
            f"{claim.unit.evaluation_id!r}"
        )


def epoch(moment: datetime) -> float:
    """Seconds since the epoch of ``moment``; a naive datetime is taken to be in UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def interaction_key(record: InteractionRecord) -> tuple[float, str]:
    """The order of interactions in queries and cursors: start time, then id."""
    return epoch(record.started_at), record.interaction_id


def evaluation_key(record: EvaluationRecord) -> tuple[float, str]:
    """The order of evaluation records in queries and cursors: timestamp, then id."""
    return epoch(record.timestamp), record.evaluation_id


def page_of(items: Sequence[T], limit: int, key: Callable[[T], tuple[float, str]]) -> Page[T]:
    """The page of the first ``limit`` of ``items`` (fetched as ``limit + 1`` in key order).

    An item beyond ``limit`` means there is more, so the page's cursor continues after its
    last item; otherwise this is the last page.
    """
    if len(items) <= limit:
        return Page(items=list(items))
    return Page(items=list(items[:limit]), next_cursor=encode_cursor(*key(items[limit - 1])))


def released_unit(
    unit: WorkUnit,
    *,
    now: float,
    delay: float,
    attempts: int | None,
    waiting: bool = False,
    question: Any = None,
) -> WorkUnit:
    """``unit`` as ``release`` puts it back: due after ``delay``, with ``attempts`` if given,
    waiting for ``resume`` with ``question`` if asked (a value delivered earlier is used up)."""
    update: dict[str, object] = {
        "not_before": now + delay,
        "waiting": waiting,
        "question": question if waiting else None,
        "resumed": False,
        "resume_value": None,
    }
    if attempts is not None:
        update["attempts"] = attempts
    return unit.model_copy(update=update)


def resumed_unit(unit: WorkUnit, value: Any) -> WorkUnit:
    """``unit`` as ``resume`` makes it: due now, no longer waiting, carrying ``value``."""
    return unit.model_copy(
        update={"not_before": 0.0, "waiting": False, "resumed": True, "resume_value": value}
    )
