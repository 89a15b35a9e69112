"""PostgreSQL for the tests (ledgers, workers, experiment stores): the server named by
``LANGCHAIN_EVALS_PG_DSN``.

``scripts/test.sh`` starts a throwaway server and sets the variable when it can. Without it
the PostgreSQL tests skip, loudly — and fail under ``CI=true``, so a skipped service suite
cannot pass CI. Each test works in a schema of its own (a fresh, uniquely named schema chosen
through the DSN's ``search_path``), dropped afterwards, so tests may run in parallel. A test
about what a brand-new database does takes ``postgres_database_dsn``: a database of its own.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlencode, urlsplit, urlunsplit

import pytest

if TYPE_CHECKING:
    from langchain_evals_port.runtime import PostgresLedger

PG_DSN_VARIABLE = "LANGCHAIN_EVALS_PG_DSN"


def postgres_server_dsn() -> str:
    """The server's DSN; skips the test without one (fails it under ``CI=true``)."""
    dsn = os.environ.get(PG_DSN_VARIABLE, "").strip()
    if not dsn:
        reason = (
            f"PostgreSQL not available: {PG_DSN_VARIABLE} is not set, so the PostgreSQL "
            "ledger was NOT tested (scripts/test.sh starts a throwaway server when it can)"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason} (CI=true)", pytrace=False)
        pytest.skip(reason)
    return dsn


def with_search_path(dsn: str, schema: str) -> str:
    """``dsn`` with ``schema`` as its ``search_path`` (a URL stays a URL)."""
    option = {"options": f"-csearch_path={schema}"}
    if dsn.startswith(("postgresql://", "postgres://")):
        parts = urlsplit(dsn)
        query = f"{parts.query}&{urlencode(option)}" if parts.query else urlencode(option)
        return urlunsplit(parts._replace(query=query))
    from psycopg.conninfo import make_conninfo

    return make_conninfo(dsn, **option)


@contextmanager
def fresh_schema(server_dsn: str) -> Iterator[str]:
    """A DSN whose ``search_path`` is a new, empty schema, dropped on exit."""
    import psycopg

    schema = f"test_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(server_dsn, autocommit=True) as db:
        db.execute(f"CREATE SCHEMA {schema}")
    try:
        yield with_search_path(server_dsn, schema)
    finally:
        with psycopg.connect(server_dsn, autocommit=True) as db:
            db.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def with_database(dsn: str, database: str) -> str:
    """``dsn`` naming ``database`` instead of its own (a URL stays a URL)."""
    if dsn.startswith(("postgresql://", "postgres://")):
        return urlunsplit(urlsplit(dsn)._replace(path=f"/{database}"))
    from psycopg.conninfo import make_conninfo

    return make_conninfo(dsn, dbname=database)


@contextmanager
def fresh_database(server_dsn: str) -> Iterator[str]:
    """A DSN of a new, empty database on the server, dropped on exit."""
    import psycopg

    database = f"test_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(server_dsn, autocommit=True) as db:
        db.execute(f"CREATE DATABASE {database}")
    try:
        yield with_database(server_dsn, database)
    finally:
        with psycopg.connect(server_dsn, autocommit=True) as db:
            db.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")


@pytest.fixture(params=["sqlite", "postgres"], name="location")
def sql_location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Where a SQL ledger or experiment store lives, once for each backend: a SQLite file's
    path (its folder made), then the DSN of a fresh PostgreSQL schema. A test module imports
    it to run on both."""
    if request.param == "sqlite":
        (tmp_path / "sql").mkdir()
        yield str(tmp_path / "sql" / "store.db")
        return
    with fresh_schema(postgres_server_dsn()) as dsn:
        yield dsn


@pytest.fixture
def postgres_database_dsn() -> Iterator[str]:
    """A DSN of a brand-new database of this test's own on the test server."""
    with fresh_database(postgres_server_dsn()) as dsn:
        yield dsn


@pytest.fixture
def postgres_dsn() -> Iterator[str]:
    """A DSN of the test server in a fresh schema of this test's own."""
    with fresh_schema(postgres_server_dsn()) as dsn:
        yield dsn


def open_postgres_ledger(folder: Path) -> PostgresLedger:
    """A ``PostgresLedger`` in a fresh schema that is dropped when the ledger closes (for
    ledger factories, which are given a folder rather than fixtures)."""
    from langchain_evals_port.runtime import PostgresLedger

    cleanup = ExitStack()
    dsn = cleanup.enter_context(fresh_schema(postgres_server_dsn()))

    class SchemaLedger(PostgresLedger):
        def close(self) -> None:
            with cleanup:
                super().close()

    try:
        return SchemaLedger(dsn, pool_size=4)
    except BaseException:
        cleanup.close()
        raise


POSTGRES_BIN = Path(os.environ.get("LANGCHAIN_EVALS_PG_BIN", "/usr/lib/postgresql/15/bin"))
"""Where ``initdb`` and ``pg_ctl`` are, for the tests that run a server of their own."""


class ThrowawayPostgres:
    """A PostgreSQL cluster of one test's own (``initdb`` in a temporary folder, on a free
    port of 127.0.0.1), which the test may stop, start and restart — never the shared
    server. Run as root, the server commands run as the ``postgres`` user."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.data = folder / "data"
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.dsn = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        if os.geteuid() == 0:
            shutil.chown(folder, "postgres", "postgres")
        self._server("initdb", "-A", "trust", "-U", "postgres", "--no-sync", "-D", self.data)

    def _server(self, program: str, *args: str | Path) -> None:
        as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        subprocess.run(
            [*as_postgres, str(POSTGRES_BIN / program), *map(str, args)],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        log = self.folder / "server.log"
        self._server(
            "pg_ctl", "-D", self.data, "-l", log, "-o", options, "-w", "-t", "300", "start"
        )

    def stop(self) -> None:
        """Stop the server the way a restart does (``-m fast``: sessions are ended, their
        transactions rolled back)."""
        self._server("pg_ctl", "-D", self.data, "-m", "fast", "-w", "-t", "300", "stop")

    def restart(self) -> None:
        """Stop the server, then start it again."""
        self.stop()
        self.start()


@pytest.fixture
def restartable_postgres() -> Iterator[ThrowawayPostgres]:
    """A running ``ThrowawayPostgres`` of this test's own, stopped afterwards; skips (fails
    under ``CI=true``) where the PostgreSQL server programs are not installed."""
    if not (POSTGRES_BIN / "pg_ctl").exists():
        reason = f"PostgreSQL's server programs are not in {POSTGRES_BIN} (LANGCHAIN_EVALS_PG_BIN)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason} (CI=true)", pytrace=False)
        pytest.skip(reason)
    # Not under pytest's tmp_path: the postgres user may not enter root's folders there.
    folder = Path(tempfile.mkdtemp(prefix="langchain-evals-pg-"))
    try:
        server = ThrowawayPostgres(folder)
        server.start()
        try:
            yield server
        finally:
            with contextlib.suppress(subprocess.CalledProcessError):
                server.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
