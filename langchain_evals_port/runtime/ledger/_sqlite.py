"""``SqliteLedger``: the embedded default ledger, one SQLite file shared by processes.

The file runs in WAL mode, so readers never wait for the writer. Every write that must be
atomic runs in a ``BEGIN IMMEDIATE`` transaction, which takes the file's write lock up front;
another process waits for it up to ``busy_timeout`` seconds. Claims raise each unit's
fencing token, and every later write of a claim names the token it holds, so a worker whose
lease was taken over changes nothing.

Durable evaluations keep their LangGraph checkpoints in the same file (LangGraph's tables
beside the ledger's), so their steps survive whatever the ledger survives; SQLite's own file
lock serialises the processes setting those tables up.
"""

from __future__ import annotations

import functools
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from pydantic import BaseModel

from langchain_evals_port.runtime._records import (
    Claim,
    EvaluationRecord,
    InteractionRecord,
    Page,
    WorkUnit,
)

from ._errors import InteractionNotFoundError
from ._pages import check_limit, epoch, page_of
from ._queue import check_completion, check_lease, released_unit, resumed_unit
from ._sql import Session, SqlLedger, evaluation_row, keyset_filter

__all__ = ["SqliteLedger"]

_ENQUEUE = """
INSERT OR IGNORE INTO work (evaluation_id, interaction_id, enqueued_at, not_before, unit)
SELECT ?, ?, ?, ?, ?
WHERE NOT EXISTS (SELECT 1 FROM evaluations WHERE evaluation_id = ?)
"""

_DUE = """
SELECT evaluation_id, token, unit FROM work
WHERE (worker IS NULL AND not_before <= :now) OR (worker IS NOT NULL AND lease_until <= :now)
ORDER BY enqueued_at, evaluation_id
LIMIT :limit
"""

# The fence of every write made under a claim: the unit is still claimed, with the same token.
_HELD = "evaluation_id = ? AND token = ? AND worker IS NOT NULL"

_SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")

_AUTOCHECKPOINT_PAGES = 20_000
"""WAL size (pages of 4 KB) at which a commit checkpoints by itself: only without a worker."""

_CHECKPOINT_INTERVAL = 1.0
"""Seconds between the worker's passive checkpoints."""

M = TypeVar("M", InteractionRecord, EvaluationRecord)


class _ThreadConnection:
    """One thread's connection; it closes when the thread ends and drops it."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __del__(self) -> None:
        self.db.close()


class SqliteLedger(SqlLedger):
    """A ``Ledger`` in one SQLite file (WAL mode) that several processes may share.

    Args:
        path: The database file; created when missing. Its directory must exist.
        synchronous: SQLite's ``synchronous`` setting. ``"NORMAL"`` (the default) survives a
            process crash; a power loss may drop the last commits. ``"FULL"`` survives both.
        busy_timeout: Seconds to wait for another connection's write lock before failing.
        setup: Create the tables, or migrate a file of an earlier release, now (``setup()``).
            With ``False`` the file must already be at this release's schema version.

    Raises:
        LedgerSchemaError: The file was set up by a newer release (or, with
            ``setup=False``, not yet set up for this one).

    Attributes:
        path: The database file.

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     ledger = SqliteLedger(Path(folder) / "ledger.db")
        ...     unit = WorkUnit(evaluation_id="e-1", evaluator_id="quality",
        ...                     interaction_id="i-1", agent_id="bot", enqueued_at=0.0)
        ...     print(ledger.enqueue([unit, unit]), ledger.pending_work())
        ...     ledger.close()
        1 1
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: str = "NORMAL",
        busy_timeout: float = 30.0,
        setup: bool = True,
    ) -> None:
        self.path = Path(path)
        if not self.path.parent.is_dir():
            raise ValueError(
                f"ledger path {str(self.path)!r}: "
                f"directory {str(self.path.parent)!r} does not exist"
            )
        if synchronous.upper() not in _SYNCHRONOUS:
            raise ValueError(f"synchronous must be one of {_SYNCHRONOUS}, got {synchronous!r}")
        self._synchronous = synchronous.upper()
        self._busy_timeout = busy_timeout
        # One connection per thread: reads never queue behind another thread, and the
        # worker's checkpoints never run on an agent's thread. Writes of this process take
        # a lock first, which hands the file's write lock over without SQLite's busy sleeps.
        self._local = threading.local()
        self._connections: weakref.WeakSet[_ThreadConnection] = weakref.WeakSet()
        self._connections_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._closed = False
        self._next_checkpoint = 0.0
        try:
            self._connection().execute("PRAGMA journal_mode = WAL")
            self._prepare(setup)
        except BaseException:
            self.close()
            raise

    def _connection(self) -> sqlite3.Connection:
        """This thread's connection, opened on first use (closed when the thread ends)."""
        held: _ThreadConnection | None = getattr(self._local, "held", None)
        if held is not None:
            return held.db
        with self._connections_lock:
            if self._closed:
                raise sqlite3.ProgrammingError(f"ledger {str(self.path)!r} is closed")
            db = sqlite3.connect(
                self.path,
                timeout=self._busy_timeout,
                isolation_level=None,
                check_same_thread=False,  # used by its own thread; closed by ``close``
            )
            db.execute(f"PRAGMA synchronous = {self._synchronous}")
            # Checkpoints run from ``claim`` (the worker), not on whichever commit crosses
            # SQLite's default threshold; this bound only applies when no worker runs.
            db.execute(f"PRAGMA wal_autocheckpoint = {_AUTOCHECKPOINT_PAGES}")
            held = _ThreadConnection(db)
            self._connections.add(held)
        self._local.held = held
        return db

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """The connection inside one ``BEGIN IMMEDIATE`` transaction, committed on success."""
        db = self._connection()
        with self._write_lock:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def __repr__(self) -> str:
        return f"SqliteLedger({str(self.path)!r})"

    # --- the parts of a SqlLedger ------------------------------------------------------------

    _DIALECT = "sqlite"
    _HAS_TABLE = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = %s"

    @contextmanager
    def _connect(self) -> Iterator[Session]:
        yield _Statements(self._connection())

    @contextmanager
    def _transaction(self) -> Iterator[Session]:
        with self._write() as db:
            yield _Statements(db)

    def _unrecorded_version(self, session: Session) -> int:
        """Release 0.1.0 kept the version of a file in its ``user_version`` alone (0: none)."""
        [(version,)] = session.rows("PRAGMA user_version")
        return int(version) or -1

    def _record_version(self, tx: Session, version: int) -> None:
        super()._record_version(tx, version)
        # Release 0.1.0 reads the version here, and so refuses a file it cannot use.
        tx.change(f"PRAGMA user_version = {int(version)}")

    def _read(self, sql: str, parameters: Sequence[Any] = ()) -> list[Any]:
        """The rows of one query."""
        return self._connection().execute(sql, parameters).fetchall()

    def _change(self, sql: str, parameters: Sequence[Any] = ()) -> int:
        """Run one statement (atomic on its own, in autocommit mode); the rows it changed."""
        db = self._connection()
        with self._write_lock:
            return db.execute(sql, parameters).rowcount

    def _checkpoint_now_and_then(self) -> None:
        """Copy the WAL into the database file, at most once a second, without blocking
        writers (a passive checkpoint)."""
        now = time.monotonic()
        if now >= self._next_checkpoint:
            self._next_checkpoint = now + _CHECKPOINT_INTERVAL
            self._connection().execute("PRAGMA wal_checkpoint(PASSIVE)")

    # --- records -------------------------------------------------------------------------

    def record_interaction(self, record: InteractionRecord, work: Sequence[WorkUnit] = ()) -> None:
        """Store ``record`` (the first with its id is kept) and enqueue ``work``, atomically."""
        row = (record.interaction_id, record.agent_id, epoch(record.started_at))
        stored = record.model_dump_json()
        units = _unit_rows(work)
        with self._write() as db:
            db.execute("INSERT OR IGNORE INTO interactions VALUES (?, ?, ?, ?)", (*row, stored))
            db.executemany(_ENQUEUE, units)

    def get_interaction(self, interaction_id: str) -> InteractionRecord:
        """The interaction with this id; ``InteractionNotFoundError`` when there is none."""
        rows = self._read(
            "SELECT record FROM interactions WHERE interaction_id = ?", (interaction_id,)
        )
        if not rows:
            raise InteractionNotFoundError(interaction_id)
        return InteractionRecord.model_validate_json(rows[0][0])

    def record_evaluation(self, record: EvaluationRecord) -> bool:
        """Store ``record`` unless one with its ``evaluation_id`` exists; True when stored."""
        return self._change(_INSERT_EVALUATION, evaluation_row(record)) == 1

    def get_evaluation(self, evaluation_id: str) -> EvaluationRecord | None:
        """The evaluation record with this id, or ``None``."""
        rows = self._read(
            "SELECT record FROM evaluations WHERE evaluation_id = ?", (evaluation_id,)
        )
        return EvaluationRecord.model_validate_json(rows[0][0]) if rows else None

    def get_evaluations(self, interaction_id: str) -> list[EvaluationRecord]:
        """Every evaluation record of one interaction, oldest first."""
        rows = self._read(
            "SELECT record FROM evaluations WHERE interaction_id = ?"
            " ORDER BY timestamp, evaluation_id",
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
        where, parameters = keyset_filter(
            equal,
            moment=moment,
            key=key,
            since=since,
            until=until,
            cursor=cursor,
            placeholder="?",
        )
        rows = self._read(
            f"SELECT {moment}, {key}, record FROM {table} {where} ORDER BY {moment}, {key} LIMIT ?",
            [*parameters, limit + 1],
        )
        page = page_of(rows, limit, key=lambda row: (row[0], row[1]))
        return Page(
            items=[model.model_validate_json(row[2]) for row in page.items],
            next_cursor=page.next_cursor,
        )

    # --- work queue ----------------------------------------------------------------------

    def enqueue(self, units: Sequence[WorkUnit]) -> int:
        """Queue ``units`` (ids already queued or recorded are ignored); the number queued."""
        rows = _unit_rows(units)
        with self._write() as db:
            return db.executemany(_ENQUEUE, rows).rowcount

    def claim(self, worker_id: str, *, limit: int, lease_seconds: float) -> list[Claim]:
        """Claim up to ``limit`` due units (oldest first) for ``worker_id``."""
        check_limit(limit)
        check_lease(lease_seconds)
        self._checkpoint_now_and_then()
        with self._write() as db:
            now = time.time()
            due = db.execute(_DUE, {"now": now, "limit": limit}).fetchall()
            lease_until = now + lease_seconds
            db.executemany(
                "UPDATE work SET worker = ?, token = token + 1, lease_until = ?"
                " WHERE evaluation_id = ?",
                [(worker_id, lease_until, evaluation_id) for evaluation_id, _, _ in due],
            )
        return [
            Claim(
                unit=WorkUnit.model_validate_json(unit),
                worker_id=worker_id,
                token=token + 1,
                lease_expires_at=lease_until,
            )
            for _, token, unit in due
        ]

    def heartbeat(self, claim: Claim, *, lease_seconds: float) -> Claim | None:
        """Extend the lease; the renewed claim, or ``None`` when the claim was lost."""
        check_lease(lease_seconds)
        lease_until = time.time() + lease_seconds
        changed = self._change(
            f"UPDATE work SET lease_until = ? WHERE {_HELD}", (lease_until, *_fence(claim))
        )
        return claim.model_copy(update={"lease_expires_at": lease_until}) if changed else None

    def complete(self, claim: Claim, record: EvaluationRecord) -> bool:
        """Record the outcome (first writer wins) and remove the unit; False when lost."""
        check_completion(claim, record)
        row = evaluation_row(record)
        with self._write() as db:
            if db.execute(f"DELETE FROM work WHERE {_HELD}", _fence(claim)).rowcount != 1:
                return False
            db.execute(_INSERT_EVALUATION, row)
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
        changed = self._change(
            f"UPDATE work SET worker = NULL, lease_until = NULL, not_before = ?, unit = ?"
            f" WHERE {_HELD}",
            (unit.not_before, unit.model_dump_json(), *_fence(claim)),
        )
        return changed == 1

    def waiting_work(self, interaction_id: str | None = None) -> list[WorkUnit]:
        """The units waiting for ``resume`` (of one interaction, or all), oldest first."""
        where = "worker IS NULL AND json_extract(unit, '$.waiting') = 1"
        parameters: tuple[str, ...] = ()
        if interaction_id is not None:
            where += " AND interaction_id = ?"
            parameters = (interaction_id,)
        rows = self._read(
            f"SELECT unit FROM work WHERE {where} ORDER BY enqueued_at, evaluation_id",
            parameters,
        )
        return [WorkUnit.model_validate_json(text) for (text,) in rows]

    def resume(self, evaluation_id: str, value: Any) -> bool:
        """Make a waiting unit due now, carrying ``value``; False when none is waiting."""
        with self._write() as db:
            row = db.execute(
                "SELECT unit FROM work WHERE evaluation_id = ? AND worker IS NULL",
                (evaluation_id,),
            ).fetchone()
            if row is None:
                return False
            unit = WorkUnit.model_validate_json(row[0])
            if not unit.waiting:
                return False
            unit = resumed_unit(unit, value)
            db.execute(
                "UPDATE work SET not_before = ?, unit = ? WHERE evaluation_id = ?",
                (unit.not_before, unit.model_dump_json(), evaluation_id),
            )
        return True

    def reclaim_expired(self) -> int:
        """Make units whose lease expired claimable again; the number reclaimed."""
        return self._change(
            "UPDATE work SET worker = NULL, lease_until = NULL"
            " WHERE worker IS NOT NULL AND lease_until <= ?",
            (time.time(),),
        )

    def pending_work(self, interaction_id: str | None = None) -> int:
        """Units queued or claimed (for one interaction, or in all)."""
        if interaction_id is None:
            [(count,)] = self._read("SELECT COUNT(*) FROM work")
        else:
            [(count,)] = self._read(
                "SELECT COUNT(*) FROM work WHERE interaction_id = ?", (interaction_id,)
            )
        return int(count)

    def close(self) -> None:
        """Close the connections; the ledger is unusable afterwards."""
        with self._connections_lock, self._write_lock:
            self._closed = True
            for held in list(self._connections):
                held.db.close()
            self._connections.clear()

    @asynccontextmanager
    async def open_checkpointer(self) -> AsyncIterator[BaseCheckpointSaver[str]]:
        """An ``AsyncSqliteSaver`` on the ledger's file, its tables set up, open for the
        ``async with`` block (it belongs to the event loop that opened it)."""
        async with AsyncSqliteSaver.from_conn_string(str(self.path)) as saver:
            # Set up before any evaluation uses it: deleting the thread of an evaluation that
            # timed out before its first step must find the tables.
            await saver.setup()
            yield saver


_INSERT_EVALUATION = "INSERT OR IGNORE INTO evaluations VALUES (?, ?, ?, ?, ?, ?)"

_QUERIED: dict[type[BaseModel], tuple[str, str, str]] = {
    InteractionRecord: ("interactions", "started_at", "interaction_id"),
    EvaluationRecord: ("evaluations", "timestamp", "evaluation_id"),
}
"""The table of each record type, with the columns that order it: time, then id."""


def _unit_rows(units: Sequence[WorkUnit]) -> list[tuple[str, str, float, float, str, str]]:
    return [
        (
            unit.evaluation_id,
            unit.interaction_id,
            unit.enqueued_at,
            unit.not_before,
            unit.model_dump_json(),
            unit.evaluation_id,
        )
        for unit in units
    ]


def _fence(claim: Claim) -> tuple[str, int]:
    return claim.unit.evaluation_id, claim.token


class _Statements:
    """A SQLite connection running the shared statements (``%s`` placeholders)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def rows(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._db.execute(_qmark(sql), parameters).fetchall()

    def change(self, sql: str, parameters: Sequence[Any] = ()) -> int:
        return self._db.execute(_qmark(sql), parameters).rowcount

    def change_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        return self._db.executemany(_qmark(sql), rows).rowcount


@functools.lru_cache(maxsize=256)
def _qmark(sql: str) -> str:
    """``sql`` with SQLite's placeholder, ``?``, for the shared statements' ``%s``."""
    return sql.replace("%s", "?")
