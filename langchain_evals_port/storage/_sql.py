"""``SqlLedger``: what the SQL ledgers share, written once over the few parts a backend
supplies — its connections and the SQL fragments where the dialects differ.

Written here: the schema's migrations, every read and query (keyset-paged), and the work
queue (``WORK``, a ``LeasedQueue`` of ``_leased``, the one the experiments' runs use too).
Claims raise each unit's fencing token, and every later write of a claim names the token it
holds, so a worker whose lease was taken over changes nothing.
The backends write ``record_interaction`` and ``enqueue`` their own way, as each has a
faster one.

Statements here use ``%s`` placeholders (psycopg's); the SQLite backend turns them into
``?``. Both backends have the same tables (``ledger_interactions``, ``ledger_evaluations``,
``ledger_work``, ``ledger_schema``, the experiments' and ``ledger_annotations``) once set up.
"""

from __future__ import annotations

import json
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, ClassVar, Protocol, TypeVar

from pydantic import BaseModel

from langchain_evals_port.capture._records import InteractionRecord
from langchain_evals_port.storage._records import Claim, EvaluationRecord, Page, WorkUnit

from ._annotations import Annotations
from ._errors import InteractionNotFoundError, LedgerSchemaError, WouldWait
from ._experiment_runs import ExperimentRuns
from ._leased import Held, LeasedQueue, Write
from ._migrations import MIGRATIONS, Migration, evaluation_summary
from ._pages import check_limit, decode_cursor, epoch, page_of
from ._queue import check_completion, released_unit, resumed_unit
from ._reconnect import retried

__all__ = ["WORK", "Session", "SqlLedger", "interaction_row"]

logger = logging.getLogger("langchain_evals_port.runtime")

M = TypeVar("M", InteractionRecord, EvaluationRecord)
T = TypeVar("T")


class Session(Protocol):
    """Statements on one connection (inside a transaction when ``_transaction`` gave it)."""

    def rows(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of one statement."""

    def change(self, sql: str, parameters: Sequence[Any] = ()) -> int:
        """Run one statement; the rows it changed."""

    def change_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        """Run one statement for each of ``rows``; the rows they changed in all."""


class SqlLedger(ExperimentRuns, Annotations, ABC):
    """The part of the SQLite and PostgreSQL ledgers written once: the schema (brought to
    this release's version by ``setup()``), the records and queries, the work queue, the
    experiment tables (``ExperimentRuns``) and people's annotations (``Annotations``).

    A backend supplies its connections (``_connect``, ``_transaction``), the SQL fragments
    below, ``record_interaction``, ``enqueue`` and ``close``.
    """

    MIGRATIONS: ClassVar[tuple[Migration, ...]] = MIGRATIONS
    """The schema, version by version: ``MIGRATIONS[v]`` makes version ``v``, and the last
    version is the one this release reads and writes."""

    _DIALECT: ClassVar[str]
    """The name the migrations give this backend's statements."""

    _HAS_TABLE: ClassVar[str]
    """A query of one row, one column: whether the table named by its parameter exists."""

    _WAITING: ClassVar[str]
    """The condition that the unit in a ``ledger_work`` row waits for ``resume``."""

    _SKIP_LOCKED: ClassVar[str] = ""
    """Ends a ``LeasedQueue`` claim's query of due rows: how claimers pass over the rows
    another one is taking (nothing, where the transaction keeps other claimers out)."""

    _LOCK_ROW: ClassVar[str] = ""
    """Ends ``resume``'s read of a unit: keep others from changing it until the transaction
    ends (nothing, where the transaction keeps other writers out)."""

    # --- what a backend supplies ------------------------------------------------------------

    @abstractmethod
    def _connect(self) -> AbstractContextManager[Session]:
        """A connection in autocommit mode: each statement commits by itself."""

    def without_waiting(self) -> AbstractContextManager[None]:
        """One transaction for the writes and claims this thread makes in the block, begun
        only if that needs no wait, so an event loop may make them itself: a trip to a
        thread costs more CPU than a batch of writes to a local file (measured on the
        anchors' workload, ``benchmarks/bench_experiments.py``, in rounds paired with
        pydantic-evals: about a tenth of a run's). Raises ``WouldWait``, having done
        nothing, when it would wait; always here, where every statement is a trip over the
        network (a SQLite file overrides it)."""
        raise WouldWait(f"{type(self).__name__} answers over a network: write from a thread")

    @abstractmethod
    def _transaction(self) -> AbstractContextManager[Session]:
        """A connection inside one transaction that keeps other writers of the rows it
        writes out, committed when the block ends normally."""

    @retried
    def _change(self, sql: str, parameters: Sequence[Any] = ()) -> int:
        """Run one statement, atomic on its own; the rows it changed."""
        with self._connect() as session:
            return session.change(sql, parameters)

    def _retry(self, call: Callable[[], T]) -> T:
        """Run a statement or transaction (``@retried``): again after a lost connection,
        where a backend can lose one (here, once)."""
        return call()

    def _lock_schema(self, tx: Session) -> None:
        """Make ledgers that set up the same storage at once take turns (the transaction
        alone does it here)."""

    def _unrecorded_version(self, session: Session) -> int:
        """The schema version of a storage whose ``ledger_schema`` records none: -1, none."""
        return -1

    def _record_version(self, tx: Session, version: int) -> None:
        """Record that the storage is at ``version``."""
        tx.change("INSERT INTO ledger_schema (version) VALUES (%s)", (version,))

    @abstractmethod
    def record_interaction(self, record: InteractionRecord, work: Sequence[WorkUnit] = ()) -> None:
        """Store ``record`` (the first with its id is kept) and enqueue ``work``, atomically."""

    @abstractmethod
    def enqueue(self, units: Sequence[WorkUnit]) -> int:
        """Queue ``units`` (ids already queued or recorded are ignored); the number queued."""

    @abstractmethod
    def close(self) -> None:
        """Close the connections; the ledger is unusable afterwards."""

    # --- the schema -------------------------------------------------------------------------

    def setup(self) -> None:
        """Create the ledger's tables, or migrate them to this release's schema; nothing to
        do when they are up to date. Ledgers (and processes) setting up the same storage at
        once take turns, and each migration runs once.

        Raises:
            LedgerSchemaError: The storage was set up by a newer release.
        """
        with self._transaction() as tx:
            self._lock_schema(tx)
            # The versions table first, as a SQLite file of release 0.1.0 has none.
            self._run(tx, self.MIGRATIONS[0])
            recorded = self._recorded_version(tx)
            found = self._unrecorded_version(tx) if recorded is None else recorded
            self._refuse_newer(found)
            if recorded is None and found >= 0:
                self._record_version(tx, found)  # kept elsewhere until now: recorded here too
            for version in range(found + 1, len(self.MIGRATIONS)):
                migration = self.MIGRATIONS[version]
                logger.info("%r: schema version %d: %s", self, version, migration.summary)
                self._run(tx, migration)
                self._record_version(tx, version)

    def _prepare(self, setup: bool) -> None:
        """Run ``setup()``, or (``setup=False``) check that the schema is this release's."""
        if setup:
            self.setup()
            return
        with self._connect() as session:
            found = self._stored_version(session)
        self._refuse_newer(found)
        latest = len(self.MIGRATIONS) - 1
        if found < latest:
            raise LedgerSchemaError(
                f"{self!r} {_holding(found)}; this release needs schema version {latest}: "
                "call setup(), or open it without setup=False",
                found=found,
                expected=latest,
            )

    def _run(self, tx: Session, migration: Migration) -> None:
        for statement in migration.statements(self._DIALECT):
            tx.change(statement)
        if migration.rewrite_evaluations is not None:
            _rewrite_evaluations(tx, migration.rewrite_evaluations)
        if migration.fill_evaluation_columns is not None:
            _fill_evaluation_columns(tx, migration.fill_evaluation_columns)

    def _stored_version(self, session: Session) -> int:
        """The schema version the storage is at (-1: none), read without changing it."""
        recorded = self._recorded_version(session)
        return self._unrecorded_version(session) if recorded is None else recorded

    def _recorded_version(self, session: Session) -> int | None:
        """The last version ``ledger_schema`` records; ``None`` when it records none."""
        [(exists,)] = session.rows(self._HAS_TABLE, ("ledger_schema",))
        if not exists:
            return None
        [(version,)] = session.rows("SELECT max(version) FROM ledger_schema")
        return None if version is None else int(version)

    def _refuse_newer(self, found: int) -> None:
        latest = len(self.MIGRATIONS) - 1
        if found > latest:
            raise LedgerSchemaError(
                f"{self!r} {_holding(found)}; this release of langchain-evals-port knows "
                f"schema versions up to {latest}: upgrade it to open this ledger",
                found=found,
                expected=latest,
            )

    # --- records ----------------------------------------------------------------------------

    @retried
    def _rows(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._connect() as session:
            return session.rows(sql, parameters)

    @property
    def dialect(self) -> str:
        """The SQL dialect of the storage: ``"sqlite"`` or ``"postgresql"``."""
        return self._DIALECT

    def select(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of one read-only statement (``%s`` placeholders) on the ledger's tables,
        for queries of your own (the console's are ``ConsoleQueries``); never a write."""
        return self._rows(sql, parameters)

    def get_interaction(self, interaction_id: str) -> InteractionRecord:
        """The interaction with this id; ``InteractionNotFoundError`` when there is none."""
        rows = self._rows(
            "SELECT record FROM ledger_interactions WHERE interaction_id = %s", (interaction_id,)
        )
        if not rows:
            raise InteractionNotFoundError(interaction_id)
        return InteractionRecord.model_validate_json(rows[0][0])

    def record_evaluation(self, record: EvaluationRecord) -> bool:
        """Store ``record`` unless one with its ``evaluation_id`` exists; True when stored."""
        return self._change(_INSERT_EVALUATION, _evaluation_row(record)) == 1

    def get_evaluation(self, evaluation_id: str) -> EvaluationRecord | None:
        """The evaluation record with this id, or ``None``."""
        rows = self._rows(
            "SELECT record FROM ledger_evaluations WHERE evaluation_id = %s", (evaluation_id,)
        )
        return EvaluationRecord.model_validate_json(rows[0][0]) if rows else None

    def get_evaluations(self, interaction_id: str) -> list[EvaluationRecord]:
        """Every evaluation record of one interaction, oldest first."""
        rows = self._rows(
            "SELECT record FROM ledger_evaluations WHERE interaction_id = %s"
            " ORDER BY evaluated_at, evaluation_id",
            (interaction_id,),
        )
        return [EvaluationRecord.model_validate_json(text) for (text,) in rows]

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
        return self._query(
            InteractionRecord,
            {"agent_id": agent_id},
            since=since,
            until=until,
            limit=limit,
            cursor=cursor,
        )

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
        return self._query(
            EvaluationRecord,
            {"agent_id": agent_id, "evaluator_id": evaluator_id},
            since=since,
            until=until,
            limit=limit,
            cursor=cursor,
        )

    def _query(
        self,
        model: type[M],
        equal: dict[str, str | None],
        *,
        since: datetime | None,
        until: datetime | None,
        limit: int,
        cursor: str | None,
    ) -> Page[M]:
        check_limit(limit)
        table, moment, key = _QUERIED[model]
        parameters: list[Any]
        where, parameters = _keyset_filter(
            equal, moment=moment, key=key, since=since, until=until, cursor=cursor
        )
        rows = self._rows(
            f"SELECT {moment}, {key}, record FROM {table} {where}"
            f" ORDER BY {moment}, {key} LIMIT %s",
            [*parameters, limit + 1],
        )
        page = page_of(rows, limit, key=lambda row: (row[0], row[1]))
        return Page(
            items=[model.model_validate_json(row[2]) for row in page.items],
            next_cursor=page.next_cursor,
        )

    # --- work queue (``WORK``, a ``LeasedQueue``) ---------------------------------------------

    def claim(self, worker_id: str, *, limit: int, lease_seconds: float) -> list[Claim]:
        """Claim up to ``limit`` due units (oldest first) for ``worker_id``; units another
        claimer is taking at the same moment are passed over."""
        return [
            Claim(
                unit=WorkUnit.model_validate_json(leased.carried[0]),
                worker_id=worker_id,
                token=leased.token,
                lease_expires_at=leased.lease_until,
            )
            for leased in WORK.claim(self, (), worker_id, limit=limit, lease_seconds=lease_seconds)
        ]

    def heartbeat(self, claim: Claim, *, lease_seconds: float) -> Claim | None:
        """Extend the lease; the renewed claim, or ``None`` when the claim was lost."""
        renewed, lease_until = WORK.renew(self, [_held(claim)], lease_seconds=lease_seconds)
        return claim.model_copy(update={"lease_expires_at": lease_until}) if renewed else None

    @retried
    def complete(self, claim: Claim, record: EvaluationRecord) -> bool:
        """Record the outcome (first writer wins) and remove the unit; False when lost."""
        check_completion(claim, record)
        row = _evaluation_row(record)
        with self._transaction() as tx:
            if not WORK.remove(tx, _held(claim)):
                return False
            tx.change(_INSERT_EVALUATION, row)
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
        unit = released_unit(
            claim.unit,
            now=time.time(),
            delay=delay,
            attempts=attempts,
            waiting=waiting,
            question=question,
        )
        values = {"not_before": unit.not_before, "unit": unit.model_dump_json()}
        [released] = WORK.write(self, [Write(_held(claim), values, let_go=True)])
        return released

    def waiting_work(self, interaction_id: str | None = None) -> list[WorkUnit]:
        """The units waiting for ``resume`` (of one interaction, or all), oldest first."""
        where = f"worker IS NULL AND {self._WAITING}"
        parameters: tuple[str, ...] = ()
        if interaction_id is not None:
            where += " AND interaction_id = %s"
            parameters = (interaction_id,)
        rows = self._rows(
            f"SELECT unit FROM ledger_work WHERE {where} ORDER BY enqueued_at, evaluation_id",
            parameters,
        )
        return [WorkUnit.model_validate_json(text) for (text,) in rows]

    @retried
    def resume(self, evaluation_id: str, value: Any) -> bool:
        """Make a waiting unit due now, carrying ``value``; False when none is waiting."""
        with self._transaction() as tx:
            rows = tx.rows(
                "SELECT unit FROM ledger_work WHERE evaluation_id = %s AND worker IS NULL"
                + self._LOCK_ROW,
                (evaluation_id,),
            )
            if not rows:
                return False
            unit = WorkUnit.model_validate_json(rows[0][0])
            if not unit.waiting:
                return False
            unit = resumed_unit(unit, value)
            tx.change(
                "UPDATE ledger_work SET not_before = %s, unit = %s WHERE evaluation_id = %s",
                (unit.not_before, unit.model_dump_json(), evaluation_id),
            )
        return True

    def reclaim_expired(self) -> int:
        """Make units whose lease expired claimable again; the number reclaimed."""
        return WORK.reclaim_expired(self)

    def pending_work(self, interaction_id: str | None = None) -> int:
        """Units queued or claimed (for one interaction, or in all)."""
        if interaction_id is None:
            [(count,)] = self._rows("SELECT count(*) FROM ledger_work")
        else:
            [(count,)] = self._rows(
                "SELECT count(*) FROM ledger_work WHERE interaction_id = %s", (interaction_id,)
            )
        return int(count)


_INSERT_EVALUATION = """
INSERT INTO ledger_evaluations
    (evaluation_id, interaction_id, agent_id, evaluator_id, evaluated_at, record,
     outcome, passed, score)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (evaluation_id) DO NOTHING
"""

WORK = LeasedQueue(
    "ledger_work",
    key=("evaluation_id",),
    order="enqueued_at, evaluation_id",
    carries=("unit",),
    not_before="not_before",
)
"""The online work queue: units due after their ``not_before``, oldest first, removed when
completed (``complete`` records the evaluation in the same transaction)."""

_QUERIED: dict[type[BaseModel], tuple[str, str, str]] = {
    InteractionRecord: ("ledger_interactions", "started_at", "interaction_id"),
    EvaluationRecord: ("ledger_evaluations", "evaluated_at", "evaluation_id"),
}
"""The table of each record type, with the columns that order it: time, then id."""


def _held(claim: Claim) -> Held:
    return Held((claim.unit.evaluation_id,), claim.token)


_REWRITE_BATCH = 500
"""Evaluation records read and written back at a time by a migration that rewrites them."""


def _stored_evaluations(tx: Session) -> Iterator[list[tuple[str, dict[str, Any]]]]:
    """Every stored evaluation record's id and parsed JSON, a batch at a time in id order,
    so a large ledger is never all in memory."""
    after: tuple[str, ...] = ()
    while True:
        where = "WHERE evaluation_id > %s" if after else ""
        rows = tx.rows(
            f"SELECT evaluation_id, record FROM ledger_evaluations {where}"
            f" ORDER BY evaluation_id LIMIT {_REWRITE_BATCH}",
            after,
        )
        if not rows:
            return
        yield [(evaluation_id, json.loads(text)) for evaluation_id, text in rows]
        after = (rows[-1][0],)


def _fill_evaluation_columns(
    tx: Session, columns: Callable[[dict[str, Any]], dict[str, Any]]
) -> None:
    """Set the columns ``columns`` computes from each stored evaluation record."""
    for batch in _stored_evaluations(tx):
        filled = [(columns(record), evaluation_id) for evaluation_id, record in batch]
        names = list(filled[0][0])
        tx.change_many(
            f"UPDATE ledger_evaluations SET {', '.join(f'{n} = %s' for n in names)}"
            " WHERE evaluation_id = %s",
            [(*(values[n] for n in names), evaluation_id) for values, evaluation_id in filled],
        )


def _rewrite_evaluations(tx: Session, change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """Pass the JSON of every stored evaluation record through ``change``."""
    for batch in _stored_evaluations(tx):
        tx.change_many(
            "UPDATE ledger_evaluations SET record = %s WHERE evaluation_id = %s",
            [(_compact_json(change(record)), evaluation_id) for evaluation_id, record in batch],
        )


def _compact_json(value: Any) -> str:
    """``value`` as JSON written the way pydantic writes records: no spaces, UTF-8 as is."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _holding(version: int) -> str:
    return "has no ledger tables" if version < 0 else f"has schema version {version}"


def _keyset_filter(
    equal: Mapping[str, str | None],
    *,
    moment: str,
    key: str,
    since: datetime | None,
    until: datetime | None,
    cursor: str | None,
) -> tuple[str, list[Any]]:
    """The ``WHERE`` clause (or ``""``) and parameters of a keyset-paged query: columns
    equal to the values given (``None``: any), ``moment`` in ``[since, until)``, and after
    ``cursor`` in ``(moment, key)`` order."""
    conditions = [f"{column} = %s" for column, value in equal.items() if value is not None]
    parameters: list[Any] = [value for value in equal.values() if value is not None]
    if since is not None:
        conditions.append(f"{moment} >= %s")
        parameters.append(epoch(since))
    if until is not None:
        conditions.append(f"{moment} < %s")
        parameters.append(epoch(until))
    if cursor is not None:
        conditions.append(f"({moment}, {key}) > (%s, %s)")
        parameters.extend(decode_cursor(cursor))
    return (f"WHERE {' AND '.join(conditions)}" if conditions else ""), parameters


def _evaluation_row(record: EvaluationRecord) -> tuple[Any, ...]:
    """The columns an evaluation record is stored in: ids, time, the JSON, and its summary
    (``evaluation_summary``)."""
    results = [r.model_dump(include={"outcome", "score", "passed"}) for r in record.results]
    summary = evaluation_summary({"results": results})
    return (
        record.evaluation_id,
        record.interaction_id,
        record.agent_id,
        record.evaluator_id,
        epoch(record.timestamp),
        record.model_dump_json(),
        summary["outcome"],
        summary["passed"],
        summary["score"],
    )


def interaction_row(record: InteractionRecord) -> tuple[str, str, float, str]:
    """The columns an interaction is stored in: ids, start time, the JSON."""
    return (
        record.interaction_id,
        record.agent_id,
        epoch(record.started_at),
        record.model_dump_json(),
    )
