"""``PostgresLedger``: the ledger in a PostgreSQL database, shared by processes and machines.

The queries and the queue's fenced writes are ``SqlLedger``'s; this module supplies
PostgreSQL's connections (a pool) and dialect, and one-statement forms of the writes an
application makes on every interaction.

Needs the ``postgres`` extra (``psycopg`` 3 with its pool); psycopg is imported when a
``PostgresLedger`` is created, never when the package is. Durable evaluations keep their
LangGraph checkpoints in the same database (``langgraph-checkpoint-postgres``, also in the
extra).
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from langchain_evals_port.capture._records import InteractionRecord
from langchain_evals_port.storage._records import WorkUnit

from ._sql import Session, SqlLedger, interaction_row

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg import Connection
    from psycopg_pool import AsyncConnectionPool, ConnectionPool

__all__ = ["PostgresLedger"]

logger = logging.getLogger("langchain_evals_port.runtime")

T = TypeVar("T")

_SCHEMA_LOCK = 0x6C65_6467_6572_0001
"""The advisory lock under which ledgers set up or migrate the tables (processes may start
at once); release 0.1.0 took the same one, so it takes turns with this release too."""

_CHECKPOINT_LOCK = 0x6C65_6467_6572_0002
"""The advisory lock that serialises setting up LangGraph's checkpoint tables."""

# Units arrive as parallel arrays, so a batch is one statement; an id already queued or
# recorded is skipped (a repeated id within the batch too: the first one is kept).
_ENQUEUE = """
INSERT INTO ledger_work (evaluation_id, interaction_id, enqueued_at, not_before, unit)
SELECT u.evaluation_id, u.interaction_id, u.enqueued_at, u.not_before, u.unit::json
FROM unnest(%s::text[], %s::text[], %s::float8[], %s::float8[], %s::text[])
    AS u (evaluation_id, interaction_id, enqueued_at, not_before, unit)
WHERE NOT EXISTS (SELECT 1 FROM ledger_evaluations e WHERE e.evaluation_id = u.evaluation_id)
ON CONFLICT (evaluation_id) DO NOTHING
"""

# The interaction and its work in one statement, hence one transaction.
_RECORD_INTERACTION = f"""
WITH stored AS (
    INSERT INTO ledger_interactions (interaction_id, agent_id, started_at, record)
    VALUES (%s, %s, %s, %s::json)
    ON CONFLICT (interaction_id) DO NOTHING
)
{_ENQUEUE}
"""


class PostgresLedger(SqlLedger):
    """A ``Ledger`` in a PostgreSQL database that any number of processes may share.

    ``record_interaction`` (with its work) and ``enqueue`` are one statement each, so the
    application's write is one round trip; ``claim``, ``complete`` and ``resume`` are short
    transactions, and every other operation one statement. Connections come from a pool, so
    the ledger may be called from many threads at once.

    Concurrency: ``claim`` selects due units with ``FOR UPDATE SKIP LOCKED``, so claimers
    never wait for each other and never receive the same unit; each claim raises the unit's
    fencing token. ``heartbeat``, ``release`` and ``complete`` change a unit only while it is
    claimed with the token they hold, so a worker whose lease expired and was taken over
    changes nothing. ``complete`` deletes the unit and records the outcome in one
    transaction.

    Time: leases and due times are the clients' clocks (``time.time()``), as in the SQLite
    ledger, so processes on several machines need synchronised clocks (NTP); a lease should
    be much longer than their skew.

    The tables (``ledger_interactions``, ``ledger_evaluations``, ``ledger_work`` and
    ``ledger_schema``) are created by ``setup()`` when missing, in the first schema of the
    connection's ``search_path`` — choose another with ``?options=-csearch_path%3Dmy_schema``
    in the DSN.

    Args:
        dsn: A libpq connection string: ``postgresql://user:password@host:port/database`` or
            ``host=... dbname=...``.
        pool_size: The most connections the ledger keeps open.
        connect_timeout: Seconds to wait for the server when connecting.
        reconnect_seconds: How long a call waits for a server that went away (a restart,
            a failover) before it fails with ``ConnectionError``: a call that lost its
            connection runs again, from the start of its statement or transaction, as the
            pool reconnects (with growing pauses), so a restart loses and repeats nothing.
        setup: Create the tables, or migrate those of an earlier release, now
            (``setup()``). With ``False`` the database must already be at this release's
            schema version (e.g. migrated by a deploy step).

    Attributes:
        dsn: The connection string, as given (it may hold a password: do not log it; the
            ledger's ``repr`` and errors show it with the password masked).

    Raises:
        ConnectionError: The server cannot be reached or refuses the connection (from any
            call: for longer than ``reconnect_seconds``).
        ValueError: ``dsn`` is not a connection string.
        LedgerSchemaError: The database was set up by a newer release (or, with
            ``setup=False``, not yet set up for this one).
        ImportError: psycopg is not installed (install ``langchain-evals-port[postgres]``).
    """

    def __init__(
        self,
        dsn: str,
        *,
        pool_size: int = 8,
        connect_timeout: float = 10.0,
        reconnect_seconds: float = 120.0,
        setup: bool = True,
    ) -> None:
        if isinstance(pool_size, bool) or not isinstance(pool_size, int) or pool_size < 1:
            raise ValueError(f"pool_size must be a positive int, got {pool_size!r}")
        if not 0 <= reconnect_seconds < math.inf:
            raise ValueError(
                f"reconnect_seconds must be a number of seconds >= 0, got {reconnect_seconds!r}"
            )
        self.reconnect_seconds = float(reconnect_seconds)
        try:
            import psycopg
            from psycopg.types.string import TextLoader
            from psycopg_pool import ConnectionPool
        except ImportError as error:
            raise ImportError(
                "PostgresLedger needs psycopg 3 and psycopg-pool: "
                'pip install "langchain-evals-port[postgres]"'
            ) from error
        self.dsn = dsn
        self._shown = redact_dsn(dsn)
        options: dict[str, Any] = {
            "autocommit": True,
            "connect_timeout": max(1, round(connect_timeout)),
        }
        # A connection of its own first: the pool would retry a wrong password or an absent
        # server until its timeout, and then not say why.
        try:
            psycopg.connect(dsn, **options).close()
        except psycopg.ProgrammingError as error:
            raise ValueError(
                f"PostgreSQL ledger {self._shown}: not a valid connection string: "
                f"{_scrub(str(error), dsn)}"
            ) from None
        except psycopg.OperationalError as error:
            raise ConnectionError(
                f"PostgreSQL ledger {self._shown}: cannot connect: {_scrub(str(error), dsn)}"
            ) from None
        self._pool: ConnectionPool[Connection[tuple[Any, ...]]] = ConnectionPool(
            dsn,
            min_size=1,
            max_size=pool_size,
            kwargs=options,
            # Records are read as the JSON text they were stored as, not parsed to dicts.
            configure=lambda db: db.adapters.register_loader("json", TextLoader),
            # A pooled connection is checked as it is handed out: one the server closed (a
            # restart) is replaced, rather than failing the call that gets it.
            check=ConnectionPool.check_connection,
            open=False,
            name=f"ledger {self._shown}",
        )
        try:
            self._pool.open(wait=True, timeout=max(connect_timeout, 1.0))
            self._prepare(setup)
        except BaseException:
            self._pool.close()
            raise

    def __repr__(self) -> str:
        return f"PostgresLedger({self._shown!r})"

    # --- the parts of a SqlLedger ------------------------------------------------------------

    _DIALECT = "postgresql"
    _HAS_TABLE = "SELECT to_regclass(%s) IS NOT NULL"
    _WAITING = "(unit->>'waiting')::boolean"
    _SKIP_LOCKED = " FOR UPDATE SKIP LOCKED"
    _LOCK_ROW = " FOR UPDATE"

    @contextmanager
    def _connect(self) -> Iterator[Session]:
        with self._pool.connection() as db:
            yield _Statements(db)

    @contextmanager
    def _transaction(self) -> Iterator[Session]:
        with self._pool.connection() as db, db.transaction():
            yield _Statements(db)

    def _retry(self, call: Callable[[], T]) -> T:
        """``call()``; after a lost connection, or a transaction the server rolled back (a
        deadlock, a serialization failure), again and again (pauses growing to 2 s) until it
        goes through or ``reconnect_seconds`` have passed (then ``ConnectionError``)."""
        try:
            return call()
        except Exception as error:
            lost = _connection_lost(error)
            if _rolled_back(error):
                logger.info(
                    "%r: the server rolled back a transaction (%s); running it again",
                    self,
                    _scrub(str(error), self.dsn),
                )
            elif lost:
                logger.warning(
                    "%r: lost the connection to the server (%s); reconnecting for up to %g s",
                    self,
                    _scrub(str(error), self.dsn),
                    self.reconnect_seconds,
                )
            else:
                raise
        import tenacity  # on the first failure only: importing it takes a while

        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception(_may_run_again),
            # Jittered, so processes that lost the server together do not return in step.
            wait=tenacity.wait_exponential(multiplier=0.1, max=2.0) + tenacity.wait_random(0, 0.1),
            stop=tenacity.stop_after_delay(self.reconnect_seconds),
            reraise=True,
        )
        try:
            result = retrying(call)
        except Exception as error:
            if not _connection_lost(error):
                raise
            raise ConnectionError(
                f"PostgreSQL ledger {self._shown}: the server has not answered for "
                f"{self.reconnect_seconds:g} s: {_scrub(str(error), self.dsn)}"
            ) from None
        if lost:
            logger.warning("%r: reconnected", self)
        return result

    def _lock_schema(self, tx: Session) -> None:
        """Wait for the schema lock, held to the end of the transaction.

        Blocking is safe here, unlike for LangGraph's checkpoint setup below: the ledger's
        migrations run inside this transaction, so none creates an index concurrently, and
        nothing they wait for waits for a session blocked on this lock.
        """
        tx.rows("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))

    def record_interaction(self, record: InteractionRecord, work: Sequence[WorkUnit] = ()) -> None:
        """Store ``record`` (the first with its id is kept) and enqueue ``work``, in one
        statement."""
        self._change(_RECORD_INTERACTION, (*interaction_row(record), *_unit_arrays(work)))

    def enqueue(self, units: Sequence[WorkUnit]) -> int:
        """Queue ``units`` (ids already queued or recorded are ignored); the number queued."""
        if not units:
            return 0
        return self._change(_ENQUEUE, _unit_arrays(units))

    def close(self) -> None:
        """Close the pool's connections; the ledger is unusable afterwards."""
        self._pool.close()

    @asynccontextmanager
    async def open_checkpointer(self) -> AsyncIterator[BaseCheckpointSaver[str]]:
        """An ``AsyncPostgresSaver`` on the ledger's database, its tables set up, open for
        the ``async with`` block (it belongs to the event loop that opened it)."""
        # Imported here: langgraph-checkpoint-postgres comes with the postgres extra, which
        # importing this module must not need.
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        from psycopg.rows import dict_row
        from psycopg_pool import AsyncConnectionPool

        # A pool rather than one connection: a connection the server closed (a restart) is
        # replaced as it is handed out, so durable evaluations go on after a restart.
        pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
            self.dsn,
            min_size=1,
            max_size=4,
            kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
            check=AsyncConnectionPool.check_connection,
            open=False,
            name=f"checkpoints {self._shown}",
        )
        await pool.open(wait=True)
        try:
            saver = AsyncPostgresSaver(pool)
            await _set_up_checkpoints(saver, pool)
            yield saver
        finally:
            await pool.close()


def _may_run_again(error: BaseException) -> bool:
    """Whether a ``@retried`` call that raised ``error`` may run again from the start."""
    return _connection_lost(error) or _rolled_back(error)


def _rolled_back(error: BaseException) -> bool:
    """Whether ``error`` says the server rolled the transaction back for a conflict with
    another one (40P01 deadlock detected, 40001 serialization failure): none of it took
    effect, so it may run again."""
    from psycopg import OperationalError

    return isinstance(error, OperationalError) and error.sqlstate in _ROLLED_BACK_STATES


_ROLLED_BACK_STATES = frozenset({"40P01", "40001"})


def _connection_lost(error: BaseException) -> bool:
    """Whether ``error`` says the connection to the server was lost or cannot be made (the
    server shut down, restarted or is unreachable), so the call may run again."""
    from psycopg import OperationalError
    from psycopg_pool import PoolClosed

    if not isinstance(error, OperationalError) or isinstance(error, PoolClosed):
        return False  # PoolClosed: the ledger was closed, which no retry undoes
    state = error.sqlstate
    # No SQLSTATE: the client's side (connection refused, closed, a pool timeout); class 08:
    # connection exceptions; 57P01-57P03: the server shutting down or starting.
    return state is None or state.startswith("08") or state in _SHUTDOWN_STATES


_SHUTDOWN_STATES = frozenset({"57P01", "57P02", "57P03"})


async def _set_up_checkpoints(saver: AsyncPostgresSaver, pool: AsyncConnectionPool[Any]) -> None:
    """Run LangGraph's checkpoint migrations (``saver.setup()``), one session at a time.

    Sessions running ``setup()`` at once collide (each creates the tables and inserts the
    migration versions), so it runs under an advisory lock held on a connection of the
    saver's pool. A session lock, as some migrations ``CREATE INDEX CONCURRENTLY``, which no
    transaction may hold; and taken by polling, as a session blocked in
    ``pg_advisory_lock`` holds a snapshot that ``CREATE INDEX CONCURRENTLY`` waits for: the
    two would deadlock.
    """
    async with pool.connection() as db:
        while True:
            cursor = await db.execute(
                "SELECT pg_try_advisory_lock(%s) AS locked", (_CHECKPOINT_LOCK,)
            )
            row = await cursor.fetchone()
            if row is not None and row["locked"]:
                break
            await asyncio.sleep(0.05)
        try:
            await saver.setup()
        finally:
            await db.execute("SELECT pg_advisory_unlock(%s)", (_CHECKPOINT_LOCK,))


def redact_dsn(dsn: str) -> str:
    """``dsn`` with its password (if any) replaced by ``***``, fit for messages and logs.

    Example:
        >>> redact_dsn("postgresql://app:s3cret@db.internal:5432/evals")
        'postgresql://app:***@db.internal:5432/evals'
        >>> redact_dsn("host=db.internal password='s 3' dbname=evals")
        'host=db.internal password=*** dbname=evals'
    """
    if dsn.startswith(_URL_SCHEMES):
        try:
            parts = urlsplit(dsn)
        except ValueError:
            return "<unparsable connection string>"
        netloc = parts.netloc
        userinfo, at, hostinfo = netloc.rpartition("@")
        if at and ":" in userinfo:
            netloc = f"{userinfo.split(':', 1)[0]}:***@{hostinfo}"
        query = re.sub(r"(^|&)(password=)[^&]*", r"\1\2***", parts.query)
        return urlunsplit(parts._replace(netloc=netloc, query=query))
    return _KEYWORD_PASSWORD.sub(r"\1***", dsn)


_URL_SCHEMES = ("postgresql://", "postgres://")

_KEYWORD_PASSWORD = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)")


def _scrub(message: str, dsn: str) -> str:
    """``message`` without the password of ``dsn``, should a driver error repeat it."""
    secrets: list[str] = []
    if dsn.startswith(_URL_SCHEMES):
        try:
            userinfo = urlsplit(dsn).netloc.rpartition("@")[0]
        except ValueError:
            userinfo = ""
        if ":" in userinfo:
            secrets.append(userinfo.split(":", 1)[1])
    secrets += [match.group(2).strip("'") for match in _KEYWORD_PASSWORD.finditer(dsn)]
    for secret in secrets:
        if secret:
            message = message.replace(secret, "***")
    return message.strip()


def _unit_arrays(
    units: Sequence[WorkUnit],
) -> tuple[list[str], list[str], list[float], list[float], list[str]]:
    """The columns of ``units`` as the parallel arrays ``_ENQUEUE`` unnests."""
    return (
        [unit.evaluation_id for unit in units],
        [unit.interaction_id for unit in units],
        [float(unit.enqueued_at) for unit in units],
        [float(unit.not_before) for unit in units],
        [unit.model_dump_json() for unit in units],
    )


class _Statements:
    """A psycopg connection running the shared statements."""

    def __init__(self, db: Connection[tuple[Any, ...]]) -> None:
        self._db = db

    def rows(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._db.execute(sql, parameters).fetchall()

    def change(self, sql: str, parameters: Sequence[Any] = ()) -> int:
        return self._db.execute(sql, parameters).rowcount

    def change_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        with self._db.cursor() as cursor:
            cursor.executemany(sql, rows)
            return cursor.rowcount
