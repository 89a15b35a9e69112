"""``SqliteLedger``: the embedded default ledger, one SQLite file shared by processes.

The file runs in WAL mode, so readers never wait for the writer. Every write that must be
atomic runs in a ``BEGIN IMMEDIATE`` transaction, which takes the file's write lock up front;
another process waits for it up to ``busy_timeout`` seconds. The queries and the queue's
fenced writes are ``SqlLedger``'s; this module supplies SQLite's connections and dialect.

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
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from langchain_evals_port.capture._records import InteractionRecord
from langchain_evals_port.core._sqlite import switch_to_wal
from langchain_evals_port.storage._records import Claim, WorkUnit

from ._errors import WouldWait
from ._sql import Session, SqlLedger, interaction_row

__all__ = ["SqliteLedger"]

_MINIMUM_SQLITE = (3, 25, 0)
"""The oldest SQLite the ledger runs on: ``ON CONFLICT DO NOTHING`` came in 3.24, renaming a
column (a migration does) in 3.25."""

_INSERT_INTERACTION = """
INSERT INTO ledger_interactions (interaction_id, agent_id, started_at, record)
VALUES (%s, %s, %s, %s)
ON CONFLICT (interaction_id) DO NOTHING
"""

_ENQUEUE = """
INSERT INTO ledger_work (evaluation_id, interaction_id, enqueued_at, not_before, unit)
SELECT %s, %s, %s, %s, %s
WHERE NOT EXISTS (SELECT 1 FROM ledger_evaluations WHERE evaluation_id = %s)
ON CONFLICT (evaluation_id) DO NOTHING
"""

_SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")

_AUTOCHECKPOINT_PAGES = 20_000
"""WAL size (pages of 4 KB) at which a commit checkpoints by itself: only without a worker."""

_CHECKPOINT_INTERVAL = 1.0
"""Seconds between the worker's passive checkpoints."""


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
        if sqlite3.sqlite_version_info < _MINIMUM_SQLITE:
            raise RuntimeError(
                f"SqliteLedger needs SQLite {'.'.join(map(str, _MINIMUM_SQLITE))} or newer; "
                f"this Python's sqlite3 module uses SQLite {sqlite3.sqlite_version}"
            )
        if synchronous.upper() not in _SYNCHRONOUS:
            raise ValueError(f"synchronous must be one of {_SYNCHRONOUS}, got {synchronous!r}")
        self._synchronous = synchronous.upper()
        self._busy_timeout = busy_timeout
        # One connection per thread for reads: they never queue behind another thread, and
        # the worker's checkpoints never run on an agent's thread. Writes of this process
        # take a lock first, which hands the file's write lock over without SQLite's busy
        # sleeps, and all go through one connection, whichever thread makes them: its page
        # cache stays current across its own commits, where a thread's connection would
        # reread the pages another connection had written since (measured: writes made in
        # turn from three threads of an executor, as asyncio.to_thread makes them, cost
        # about 2.3x the CPU of the same writes on one connection).
        self._local = threading.local()
        self._connections: weakref.WeakSet[_ThreadConnection] = weakref.WeakSet()
        self._connections_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._writer: sqlite3.Connection | None = None
        self._closed = False
        self._next_checkpoint = 0.0
        try:
            switch_to_wal(self._connection(), busy_timeout)
            self._prepare(setup)
        except sqlite3.DatabaseError as error:  # SQLite's message names no file
            self.close()
            raise type(error)(f"ledger {str(self.path)!r}: {error}") from error
        except BaseException:
            self.close()
            raise

    def __repr__(self) -> str:
        return f"SqliteLedger({str(self.path)!r})"

    def _connection(self) -> sqlite3.Connection:
        """This thread's connection, opened on first use (closed when the thread ends)."""
        held: _ThreadConnection | None = getattr(self._local, "held", None)
        if held is not None:
            return held.db
        with self._connections_lock:
            held = _ThreadConnection(self._open())
            self._connections.add(held)
        self._local.held = held
        return held.db

    def _writing_connection(self) -> sqlite3.Connection:
        """The connection every write of this ledger uses (call with ``_write_lock`` held)."""
        if self._writer is None:
            self._writer = self._open()
        return self._writer

    def _open(self) -> sqlite3.Connection:
        """A new connection to the file (call with ``_connections_lock`` or ``_write_lock``
        held: ``close`` holds both while it closes the ledger)."""
        if self._closed:
            raise sqlite3.ProgrammingError(f"ledger {str(self.path)!r} is closed")
        db = sqlite3.connect(
            self.path,
            timeout=self._busy_timeout,
            isolation_level=None,
            check_same_thread=False,  # used by one thread at a time; closed by ``close``
        )
        db.execute(f"PRAGMA synchronous = {self._synchronous}")
        # Checkpoints run from ``claim`` (the worker), not on whichever commit crosses
        # SQLite's default threshold; this bound only applies when no worker runs.
        db.execute(f"PRAGMA wal_autocheckpoint = {_AUTOCHECKPOINT_PAGES}")
        return db

    # --- the parts of a SqlLedger ------------------------------------------------------------

    _DIALECT = "sqlite"
    _HAS_TABLE = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = %s"
    _WAITING = "json_extract(unit, '$.waiting') = 1"

    @contextmanager
    def _connect(self) -> Iterator[Session]:
        yield _Statements(self._connection())

    @contextmanager
    def _transaction(self) -> Iterator[Session]:
        """This thread's connection inside one ``BEGIN IMMEDIATE`` transaction (inside
        ``without_waiting``, that block's)."""
        if (session := self._local_transaction()) is not None:
            yield session
            return
        with self._write_lock:
            db = self._writing_connection()
            db.execute("BEGIN IMMEDIATE")
            with _committed(db) as session:
                yield session

    def _change(self, sql: str, parameters: Sequence[Any] = ()) -> int:
        """Run one statement (atomic on its own, in autocommit mode); the rows it changed."""
        if (session := self._local_transaction()) is not None:
            return session.change(sql, parameters)
        with self._write_lock:
            return _Statements(self._writing_connection()).change(sql, parameters)

    @contextmanager
    def without_waiting(self) -> Iterator[None]:
        """One ``BEGIN IMMEDIATE`` transaction for the writes this thread makes in the block,
        if this process's write lock is free and SQLite grants the file's at once (a busy
        timeout of zero for the ``BEGIN`` alone); else ``WouldWait``, nothing done. The
        commit writes the WAL, not the database file, except when it crosses the WAL's
        automatic checkpoint (80 MB of it: rarely, and then on the caller's thread too)."""
        if not self._write_lock.acquire(blocking=False):
            raise WouldWait(f"another thread is writing to {str(self.path)!r}")
        try:
            db = self._writing_connection()
            db.execute("PRAGMA busy_timeout = 0")
            try:
                db.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) and "busy" not in str(error):
                    raise
                raise WouldWait(f"{str(self.path)!r}: {error}") from error
            finally:
                db.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}")
            with _committed(db) as session:
                self._local.transaction = session
                try:
                    yield
                finally:
                    self._local.transaction = None
        finally:
            self._write_lock.release()

    def _local_transaction(self) -> Session | None:
        """The transaction ``without_waiting`` has open on this thread, if any."""
        return getattr(self._local, "transaction", None)

    def _unrecorded_version(self, session: Session) -> int:
        """Release 0.1.0 kept the version of a file in its ``user_version`` alone (0: none)."""
        [(version,)] = session.rows("PRAGMA user_version")
        return int(version) or -1

    def _record_version(self, tx: Session, version: int) -> None:
        super()._record_version(tx, version)
        # Release 0.1.0 reads the version here, and so refuses a file it cannot use.
        tx.change(f"PRAGMA user_version = {int(version)}")

    def record_interaction(self, record: InteractionRecord, work: Sequence[WorkUnit] = ()) -> None:
        """Store ``record`` (the first with its id is kept) and enqueue ``work``, atomically."""
        units = _unit_rows(work)
        with self._transaction() as tx:
            tx.change(_INSERT_INTERACTION, interaction_row(record))
            tx.change_many(_ENQUEUE, units)

    def enqueue(self, units: Sequence[WorkUnit]) -> int:
        """Queue ``units`` (ids already queued or recorded are ignored); the number queued."""
        rows = _unit_rows(units)
        with self._transaction() as tx:
            return tx.change_many(_ENQUEUE, rows)

    def claim(self, worker_id: str, *, limit: int, lease_seconds: float) -> list[Claim]:
        """Claim up to ``limit`` due units (oldest first) for ``worker_id``."""
        self._checkpoint_now_and_then()
        return super().claim(worker_id, limit=limit, lease_seconds=lease_seconds)

    def _checkpoint_now_and_then(self) -> None:
        """Copy the WAL into the database file, at most once a second, without blocking
        writers (a passive checkpoint)."""
        now = time.monotonic()
        if now >= self._next_checkpoint:
            self._next_checkpoint = now + _CHECKPOINT_INTERVAL
            self._connection().execute("PRAGMA wal_checkpoint(PASSIVE)")

    def close(self) -> None:
        """Close the connections; the ledger is unusable afterwards."""
        with self._connections_lock, self._write_lock:
            self._closed = True
            for held in list(self._connections):
                held.db.close()
            self._connections.clear()
            if self._writer is not None:
                self._writer.close()
                self._writer = None

    @asynccontextmanager
    async def open_checkpointer(self) -> AsyncIterator[BaseCheckpointSaver[str]]:
        """An ``AsyncSqliteSaver`` on the ledger's file, its tables set up, open for the
        ``async with`` block (it belongs to the event loop that opened it)."""
        async with AsyncSqliteSaver.from_conn_string(str(self.path)) as saver:
            # Set up before any evaluation uses it: deleting the thread of an evaluation that
            # timed out before its first step must find the tables.
            await saver.setup()
            yield saver


def _unit_rows(units: Sequence[WorkUnit]) -> list[tuple[str, str, float, float, str, str]]:
    """The parameters of ``_ENQUEUE`` for each unit."""
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


@contextmanager
def _committed(db: sqlite3.Connection) -> Iterator[Session]:
    """The transaction ``db`` has begun, committed when the block ends normally, else
    rolled back."""
    try:
        yield _Statements(db)
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


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
