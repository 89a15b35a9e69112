"""``PostgresLedger``: the ledger in a PostgreSQL database, shared by processes and machines.

Needs the ``postgres`` extra (``psycopg`` 3 with its pool); psycopg is imported when a
``PostgresLedger`` is created, never when the package is. Durable evaluations keep their
LangGraph checkpoints in the same database (``langgraph-checkpoint-postgres``, also in the
extra).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

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

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg import Connection
    from psycopg_pool import ConnectionPool

__all__ = ["PostgresLedger", "set_up_checkpoints"]

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

_INSERT_EVALUATION = """
INSERT INTO ledger_evaluations
    (evaluation_id, interaction_id, agent_id, evaluator_id, evaluated_at, record)
VALUES (%s, %s, %s, %s, %s, %s::json)
ON CONFLICT (evaluation_id) DO NOTHING
"""

# Due units, oldest first; rows another claimer holds locked are skipped, not waited for.
_CLAIM = """
WITH due AS (
    SELECT evaluation_id FROM ledger_work
    WHERE (worker IS NULL AND not_before <= %(now)s)
        OR (worker IS NOT NULL AND lease_until <= %(now)s)
    ORDER BY enqueued_at, evaluation_id
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
)
UPDATE ledger_work AS w
SET worker = %(worker)s, token = w.token + 1, lease_until = %(lease_until)s
FROM due
WHERE w.evaluation_id = due.evaluation_id
RETURNING w.enqueued_at, w.evaluation_id, w.token, w.unit::text
"""

# The fence of every write made under a claim: the unit is still claimed, with the same token.
_HELD = "evaluation_id = %(evaluation_id)s AND token = %(token)s AND worker IS NOT NULL"

# Remove the unit if the claim holds and record the outcome (first writer wins), atomically.
_COMPLETE = f"""
WITH done AS (
    DELETE FROM ledger_work WHERE {_HELD} RETURNING evaluation_id
), stored AS (
    INSERT INTO ledger_evaluations
        (evaluation_id, interaction_id, agent_id, evaluator_id, evaluated_at, record)
    SELECT done.evaluation_id, %(interaction_id)s, %(agent_id)s, %(evaluator_id)s,
        %(evaluated_at)s, %(record)s::json
    FROM done
    ON CONFLICT (evaluation_id) DO NOTHING
)
SELECT count(*) FROM done
"""

_QUERIED: dict[type[BaseModel], tuple[str, str, str]] = {
    InteractionRecord: ("ledger_interactions", "started_at", "interaction_id"),
    EvaluationRecord: ("ledger_evaluations", "evaluated_at", "evaluation_id"),
}
"""The table of each record type, with the columns that order it: time, then id."""

M = TypeVar("M", InteractionRecord, EvaluationRecord)


class PostgresLedger(SqlLedger):
    """A ``Ledger`` in a PostgreSQL database that any number of processes may share.

    Every operation is one statement (one transaction) except ``resume``; connections come
    from a pool, so the ledger may be called from many threads at once.

    Concurrency: ``claim`` selects due units with ``FOR UPDATE SKIP LOCKED``, so claimers
    never wait for each other and never receive the same unit; each claim raises the unit's
    fencing token. ``heartbeat``, ``release`` and ``complete`` change a unit only while it is
    claimed with the token they hold, so a worker whose lease expired and was taken over
    changes nothing. ``complete`` deletes the unit and records the outcome in one statement.

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
        setup: Create the tables, or migrate those of an earlier release, now
            (``setup()``). With ``False`` the database must already be at this release's
            schema version (e.g. migrated by a deploy step).

    Attributes:
        dsn: The connection string, as given (it may hold a password: do not log it; the
            ledger's ``repr`` and errors show it with the password masked).

    Raises:
        ConnectionError: The server cannot be reached or refuses the connection.
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
        setup: bool = True,
    ) -> None:
        if isinstance(pool_size, bool) or not isinstance(pool_size, int) or pool_size < 1:
            raise ValueError(f"pool_size must be a positive int, got {pool_size!r}")
        try:
            import psycopg
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

    @contextmanager
    def _connect(self) -> Iterator[Session]:
        with self._pool.connection() as db:
            yield _Statements(db)

    @contextmanager
    def _transaction(self) -> Iterator[Session]:
        with self._pool.connection() as db, db.transaction():
            yield _Statements(db)

    def _lock_schema(self, tx: Session) -> None:
        """Wait for the schema lock, held to the end of the transaction.

        Blocking is safe here, unlike for LangGraph's checkpoint setup below: the ledger's
        migrations run inside this transaction, so none creates an index concurrently, and
        nothing they wait for waits for a session blocked on this lock.
        """
        tx.rows("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))

    @contextmanager
    def _connection(self) -> Iterator[Connection[tuple[Any, ...]]]:
        """A pooled connection in autocommit mode, returned to the pool afterwards."""
        with self._pool.connection() as db:
            yield db

    def _rows(self, query: str, parameters: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        """The rows of one statement."""
        with self._connection() as db:
            return db.execute(query, parameters).fetchall()

    def _change(self, query: str, parameters: Sequence[Any] | dict[str, Any] = ()) -> int:
        """Run one statement (atomic on its own); the rows it changed."""
        with self._connection() as db:
            return db.execute(query, parameters).rowcount

    # --- records -------------------------------------------------------------------------

    def record_interaction(self, record: InteractionRecord, work: Sequence[WorkUnit] = ()) -> None:
        """Store ``record`` (the first with its id is kept) and enqueue ``work``, atomically."""
        row = (record.interaction_id, record.agent_id, epoch(record.started_at))
        self._change(_RECORD_INTERACTION, (*row, record.model_dump_json(), *_unit_arrays(work)))

    def get_interaction(self, interaction_id: str) -> InteractionRecord:
        """The interaction with this id; ``InteractionNotFoundError`` when there is none."""
        rows = self._rows(
            "SELECT record::text FROM ledger_interactions WHERE interaction_id = %s",
            (interaction_id,),
        )
        if not rows:
            raise InteractionNotFoundError(interaction_id)
        return InteractionRecord.model_validate_json(rows[0][0])

    def record_evaluation(self, record: EvaluationRecord) -> bool:
        """Store ``record`` unless one with its ``evaluation_id`` exists; True when stored."""
        return self._change(_INSERT_EVALUATION, evaluation_row(record)) == 1

    def get_evaluation(self, evaluation_id: str) -> EvaluationRecord | None:
        """The evaluation record with this id, or ``None``."""
        rows = self._rows(
            "SELECT record::text FROM ledger_evaluations WHERE evaluation_id = %s",
            (evaluation_id,),
        )
        return EvaluationRecord.model_validate_json(rows[0][0]) if rows else None

    def get_evaluations(self, interaction_id: str) -> list[EvaluationRecord]:
        """Every evaluation record of one interaction, oldest first."""
        rows = self._rows(
            "SELECT record::text FROM ledger_evaluations WHERE interaction_id = %s"
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
        where, parameters = keyset_filter(
            equal,
            moment=moment,
            key=key,
            since=since,
            until=until,
            cursor=cursor,
            placeholder="%s",
        )
        rows = self._rows(
            f"SELECT {moment}, {key}, record::text FROM {table} {where}"
            f" ORDER BY {moment}, {key} LIMIT %s",
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
        if not units:
            return 0
        return self._change(_ENQUEUE, _unit_arrays(units))

    def claim(self, worker_id: str, *, limit: int, lease_seconds: float) -> list[Claim]:
        """Claim up to ``limit`` due units (oldest first) for ``worker_id``; units another
        claimer is taking at the same moment are skipped, not waited for."""
        check_limit(limit)
        check_lease(lease_seconds)
        now = time.time()
        lease_until = now + lease_seconds
        rows = self._rows(
            _CLAIM, {"now": now, "limit": limit, "worker": worker_id, "lease_until": lease_until}
        )
        rows.sort(key=lambda row: (row[0], row[1]))
        return [
            Claim(
                unit=WorkUnit.model_validate_json(unit),
                worker_id=worker_id,
                token=token,
                lease_expires_at=lease_until,
            )
            for _, _, token, unit in rows
        ]

    def heartbeat(self, claim: Claim, *, lease_seconds: float) -> Claim | None:
        """Extend the lease; the renewed claim, or ``None`` when the claim was lost."""
        check_lease(lease_seconds)
        lease_until = time.time() + lease_seconds
        changed = self._change(
            f"UPDATE ledger_work SET lease_until = %(lease_until)s WHERE {_HELD}",
            {"lease_until": lease_until, **_fence(claim)},
        )
        return claim.model_copy(update={"lease_expires_at": lease_until}) if changed else None

    def complete(self, claim: Claim, record: EvaluationRecord) -> bool:
        """Record the outcome (first writer wins) and remove the unit; False when lost."""
        check_completion(claim, record)
        rows = self._rows(
            _COMPLETE,
            {
                **_fence(claim),
                "interaction_id": record.interaction_id,
                "agent_id": record.agent_id,
                "evaluator_id": record.evaluator_id,
                "evaluated_at": epoch(record.timestamp),
                "record": record.model_dump_json(),
            },
        )
        return bool(rows[0][0] == 1)

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
            "UPDATE ledger_work SET worker = NULL, lease_until = NULL,"
            f" not_before = %(not_before)s, unit = %(unit)s::json WHERE {_HELD}",
            {"not_before": unit.not_before, "unit": unit.model_dump_json(), **_fence(claim)},
        )
        return changed == 1

    def waiting_work(self, interaction_id: str | None = None) -> list[WorkUnit]:
        """The units waiting for ``resume`` (of one interaction, or all), oldest first."""
        where = "worker IS NULL AND (unit->>'waiting')::boolean"
        parameters: tuple[str, ...] = ()
        if interaction_id is not None:
            where += " AND interaction_id = %s"
            parameters = (interaction_id,)
        rows = self._rows(
            f"SELECT unit::text FROM ledger_work WHERE {where} ORDER BY enqueued_at, evaluation_id",
            parameters,
        )
        return [WorkUnit.model_validate_json(text) for (text,) in rows]

    def resume(self, evaluation_id: str, value: Any) -> bool:
        """Make a waiting unit due now, carrying ``value``; False when none is waiting."""
        with self._connection() as db, db.transaction():
            row = db.execute(
                "SELECT unit::text FROM ledger_work"
                " WHERE evaluation_id = %s AND worker IS NULL FOR UPDATE",
                (evaluation_id,),
            ).fetchone()
            if row is None:
                return False
            unit = WorkUnit.model_validate_json(row[0])
            if not unit.waiting:
                return False
            unit = resumed_unit(unit, value)
            db.execute(
                "UPDATE ledger_work SET not_before = %s, unit = %s::json WHERE evaluation_id = %s",
                (unit.not_before, unit.model_dump_json(), evaluation_id),
            )
        return True

    def reclaim_expired(self) -> int:
        """Make units whose lease expired claimable again; the number reclaimed."""
        return self._change(
            "UPDATE ledger_work SET worker = NULL, lease_until = NULL"
            " WHERE worker IS NOT NULL AND lease_until <= %s",
            (time.time(),),
        )

    def pending_work(self, interaction_id: str | None = None) -> int:
        """Units queued or claimed (for one interaction, or in all)."""
        if interaction_id is None:
            [(count,)] = self._rows("SELECT count(*) FROM ledger_work")
        else:
            [(count,)] = self._rows(
                "SELECT count(*) FROM ledger_work WHERE interaction_id = %s", (interaction_id,)
            )
        return int(count)

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

        async with AsyncPostgresSaver.from_conn_string(self.dsn) as saver:
            await set_up_checkpoints(saver)
            yield saver


async def set_up_checkpoints(saver: AsyncPostgresSaver) -> None:
    """Run LangGraph's checkpoint migrations (``saver.setup()``), one session at a time.

    Sessions running ``setup()`` at once collide (each creates the tables and inserts the
    migration versions), so it runs under an advisory lock on the saver's connection. A
    session lock, as some migrations ``CREATE INDEX CONCURRENTLY``, which no transaction may
    hold; and taken by polling, as a session blocked in ``pg_advisory_lock`` holds a
    snapshot that ``CREATE INDEX CONCURRENTLY`` waits for: the two would deadlock.
    """
    from psycopg import AsyncConnection

    db = saver.conn
    assert isinstance(db, AsyncConnection)  # from_conn_string: one connection, not a pool
    while True:
        cursor = await db.execute("SELECT pg_try_advisory_lock(%s) AS locked", (_CHECKPOINT_LOCK,))
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


def _fence(claim: Claim) -> dict[str, Any]:
    return {"evaluation_id": claim.unit.evaluation_id, "token": claim.token}


class _Statements:
    """A psycopg connection running the shared statements."""

    def __init__(self, db: Connection[tuple[Any, ...]]) -> None:
        self._db = db

    def rows(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._db.execute(sql, parameters or None).fetchall()

    def change(self, sql: str, parameters: Sequence[Any] = ()) -> int:
        return self._db.execute(sql, parameters or None).rowcount

    def change_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        with self._db.cursor() as cursor:
            cursor.executemany(sql, rows)
            return cursor.rowcount
