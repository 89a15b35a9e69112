"""The SQL ledgers' schema, version by version: ``MIGRATIONS[v]`` makes version ``v``.

A migration is history: it stays as it was released, and a change of the schema is a new
migration at the end of the list. ``SqlLedger.setup()`` applies those a ledger has not had
yet, in one transaction, and records each version in the ``ledger_schema`` table. Where the
dialects differ a migration says what each runs; a dialect it names no statement for has
nothing to do.

Release 0.1.0 made versions 0 and 1 (PostgreSQL recorded 1 in ``ledger_schema``, SQLite in
the file's ``user_version`` alone).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "Migration"]


@dataclass(frozen=True)
class Migration:
    """The step to one schema version: what it does, and its statements (``;``-separated;
    one text for every dialect, or one per dialect name)."""

    summary: str
    sql: str | Mapping[str, str] = field(default="")

    def statements(self, dialect: str) -> list[str]:
        """The statements ``dialect`` (``"sqlite"``, ``"postgresql"``) runs, one by one."""
        text = self.sql if isinstance(self.sql, str) else self.sql.get(dialect, "")
        return [statement.strip() for statement in text.split(";") if statement.strip()]


_SQLITE_TABLES = """
CREATE TABLE IF NOT EXISTS interactions (
    interaction_id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL,
    started_at REAL NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS interactions_by_time ON interactions (started_at, interaction_id);
CREATE INDEX IF NOT EXISTS interactions_by_agent
    ON interactions (agent_id, started_at, interaction_id);

CREATE TABLE IF NOT EXISTS evaluations (
    evaluation_id TEXT PRIMARY KEY,
    interaction_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    evaluator_id TEXT NOT NULL,
    timestamp REAL NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS evaluations_by_interaction ON evaluations (interaction_id);
CREATE INDEX IF NOT EXISTS evaluations_by_time ON evaluations (timestamp, evaluation_id);
CREATE INDEX IF NOT EXISTS evaluations_by_agent
    ON evaluations (agent_id, timestamp, evaluation_id);
CREATE INDEX IF NOT EXISTS evaluations_by_evaluator
    ON evaluations (evaluator_id, timestamp, evaluation_id);

CREATE TABLE IF NOT EXISTS work (
    evaluation_id TEXT PRIMARY KEY,
    interaction_id TEXT NOT NULL,
    enqueued_at REAL NOT NULL,
    not_before REAL NOT NULL,
    worker TEXT,
    token INTEGER NOT NULL DEFAULT 0,
    lease_until REAL,
    unit TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS work_by_age ON work (enqueued_at, evaluation_id);
CREATE INDEX IF NOT EXISTS work_by_interaction ON work (interaction_id);
"""

# Ids sort in the "C" collation (code point order), as the other ledgers sort them in Python.
# Records are JSON text in ``json`` columns: kept byte for byte, readable with ``->``/``->>``.
_POSTGRES_TABLES = """
CREATE TABLE IF NOT EXISTS ledger_interactions (
    interaction_id text COLLATE "C" PRIMARY KEY,
    agent_id text COLLATE "C" NOT NULL,
    started_at double precision NOT NULL,
    record json NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_interactions_by_time
    ON ledger_interactions (started_at, interaction_id);
CREATE INDEX IF NOT EXISTS ledger_interactions_by_agent
    ON ledger_interactions (agent_id, started_at, interaction_id);

CREATE TABLE IF NOT EXISTS ledger_evaluations (
    evaluation_id text COLLATE "C" PRIMARY KEY,
    interaction_id text COLLATE "C" NOT NULL,
    agent_id text COLLATE "C" NOT NULL,
    evaluator_id text COLLATE "C" NOT NULL,
    evaluated_at double precision NOT NULL,
    record json NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_evaluations_by_interaction
    ON ledger_evaluations (interaction_id);
CREATE INDEX IF NOT EXISTS ledger_evaluations_by_time
    ON ledger_evaluations (evaluated_at, evaluation_id);
CREATE INDEX IF NOT EXISTS ledger_evaluations_by_agent
    ON ledger_evaluations (agent_id, evaluated_at, evaluation_id);
CREATE INDEX IF NOT EXISTS ledger_evaluations_by_evaluator
    ON ledger_evaluations (evaluator_id, evaluated_at, evaluation_id);

CREATE TABLE IF NOT EXISTS ledger_work (
    evaluation_id text COLLATE "C" PRIMARY KEY,
    interaction_id text COLLATE "C" NOT NULL,
    enqueued_at double precision NOT NULL,
    not_before double precision NOT NULL,
    worker text,
    token bigint NOT NULL DEFAULT 0,
    lease_until double precision,
    unit json NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_work_by_age ON ledger_work (enqueued_at, evaluation_id);
CREATE INDEX IF NOT EXISTS ledger_work_by_interaction ON ledger_work (interaction_id);
"""

# SQLite's tables take the names they have on PostgreSQL (the evaluations' time column too),
# so both dialects run the same statements. Indexes keep their names: they follow their
# tables, and renaming one means building it again.
_SQLITE_NAMES = """
ALTER TABLE interactions RENAME TO ledger_interactions;
ALTER TABLE evaluations RENAME TO ledger_evaluations;
ALTER TABLE ledger_evaluations RENAME COLUMN timestamp TO evaluated_at;
ALTER TABLE work RENAME TO ledger_work
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        "the table of applied versions",
        "CREATE TABLE IF NOT EXISTS ledger_schema (version integer NOT NULL)",
    ),
    Migration(
        "interactions, evaluation records and the work queue, as release 0.1.0 made them",
        {"sqlite": _SQLITE_TABLES, "postgresql": _POSTGRES_TABLES},
    ),
    Migration("one set of table names: SQLite's take PostgreSQL's", {"sqlite": _SQLITE_NAMES}),
)

SCHEMA_VERSION = len(MIGRATIONS) - 1
"""The version this release's ledgers are at once set up."""
