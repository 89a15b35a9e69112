"""The SQL ledgers' schema versions: a ledger written by release 0.1.0 (a snapshot of its
tables and rows, in ``ledger_snapshots/``) opens and is migrated once, even by several
ledgers at once, its evaluation records rewritten from one outcome to a list of core results;
a newer schema is refused naming both versions; ``setup=False`` opens only a ledger already
at this release's version. The ledger tests run on SQLite and PostgreSQL."""

from __future__ import annotations

import copy
import json
import sqlite3
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _postgres_server import fresh_schema, postgres_server_dsn

from langchain_evals_port.core import EvaluatorResult
from langchain_evals_port.runtime import (
    InteractionNotFoundError,
    LedgerSchemaError,
    PostgresLedger,
    SqliteLedger,
)
from langchain_evals_port.storage import _sql as sql_module
from langchain_evals_port.storage._migrations import outcome_to_results
from langchain_evals_port.storage._sql import SqlLedger

SNAPSHOTS = Path(__file__).parent / "ledger_snapshots"

LATEST = len(SqlLedger.MIGRATIONS) - 1
"""The schema version of this release."""


@dataclass
class Storage:
    """A SQLite file or a PostgreSQL schema of one test: ledgers open on it, and plain SQL
    reads and writes it behind their back (``sql``: one statement, ``script``: several)."""

    kind: str
    open: Callable[..., SqlLedger]
    sql: Callable[[str], list[tuple[Any, ...]]]
    script: Callable[[str], object]
    tables_query: str
    previous_release_reads: str
    """The query by which release 0.1.0 learns the version, to refuse a newer one."""

    def load_previous_release(self) -> None:
        """Fill the storage with the tables and rows release 0.1.0 left in it."""
        self.script((SNAPSHOTS / f"{self.kind}_0.1.0.sql").read_text(encoding="utf-8"))

    def tables(self) -> set[str]:
        """The names of the tables in the storage."""
        return {name for (name,) in self.sql(self.tables_query)}

    def evaluations(self, table: str = "ledger_evaluations") -> dict[str, Any]:
        """The stored JSON of every evaluation record, by id."""
        rows = self.sql(f"SELECT evaluation_id, record FROM {table}")
        # psycopg parses a json column itself; sqlite3 returns the text.
        return {key: json.loads(text) if isinstance(text, str) else text for key, text in rows}

    def versions(self) -> list[int]:
        """The versions recorded in ``ledger_schema``, in order."""
        return [version for (version,) in self.sql("SELECT version FROM ledger_schema")]


@pytest.fixture(params=["sqlite", "postgres"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Storage]:
    if request.param == "sqlite":
        path = tmp_path / "ledger.db"

        def sqlite_sql(statement: str) -> list[tuple[Any, ...]]:
            with closing(sqlite3.connect(path)) as db, db:
                return db.execute(statement).fetchall()

        def sqlite_script(script: str) -> None:
            with closing(sqlite3.connect(path)) as db:
                db.executescript(script)

        yield Storage(
            "sqlite",
            lambda **options: SqliteLedger(path, **options),
            sqlite_sql,
            sqlite_script,
            "SELECT name FROM sqlite_master WHERE type = 'table'",
            "PRAGMA user_version",
        )
        return
    import psycopg

    with fresh_schema(postgres_server_dsn()) as dsn:

        def postgres_sql(script: str) -> list[tuple[Any, ...]]:
            with psycopg.connect(dsn, autocommit=True) as db:
                cursor = db.execute(script)
                return cursor.fetchall() if cursor.description else []

        yield Storage(
            "postgres",
            lambda **options: PostgresLedger(dsn, pool_size=2, **options),
            postgres_sql,
            postgres_sql,  # psycopg sends a script without parameters as one
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()",
            "SELECT max(version) FROM ledger_schema",
        )


def test_a_new_ledger_records_every_version_once(storage: Storage) -> None:
    storage.open().close()
    storage.open().close()  # set up again: nothing to do

    assert storage.versions() == list(range(LATEST + 1))


def test_a_ledger_of_release_0_1_0_opens_and_keeps_its_records(storage: Storage) -> None:
    storage.load_previous_release()

    with closing(storage.open()) as ledger:
        assert ledger.get_interaction("i-1").final_response_text == (
            "Your order A-17 shipped on 27 February."
        )
        assert [
            r.interaction_id for r in ledger.query_interactions(agent_id="billing-agent").items
        ] == ["i-2"]
        with pytest.raises(InteractionNotFoundError):
            ledger.get_interaction("i-3")
        assert ledger.pending_work() == 3
        [waiting] = ledger.waiting_work()
        assert (waiting.evaluation_id, waiting.question) == (
            "e-waiting",
            {"question": "Is this reply right?"},
        )
        # The lease of w-1's claim has long expired: its unit is claimed again, with the
        # fencing token raised past the one w-1 holds.
        claims = ledger.claim("w-2", limit=5, lease_seconds=60.0)
        assert [(c.unit.evaluation_id, c.token) for c in claims] == [
            ("e-claimed", 2),
            ("e-pending", 1),
        ]

    assert storage.versions()[-1] == LATEST
    # Every stored evaluation is summed up in the columns aggregates read.
    summaries = storage.sql(
        "SELECT evaluation_id, outcome, passed, score FROM ledger_evaluations"
        " ORDER BY evaluation_id"
    )
    assert summaries == [
        ("e-failed", "failed", None, None),
        ("e-failing-verdict", "verdict", 0, 0.0),
        ("e-inconclusive", "inconclusive", None, None),
        ("e-verdict", "verdict", 1, 0.9),
    ]
    # One set of names on both: SQLite's tables were renamed.
    assert storage.tables() == {
        "ledger_interactions",
        "ledger_evaluations",
        "ledger_work",
        "ledger_schema",
        "ledger_experiments",
        "ledger_experiment_runs",
        "ledger_annotations",
    }
    # Release 0.1.0 reads a version it does not know, and so refuses the ledger.
    assert storage.sql(storage.previous_release_reads) == [(LATEST,)]


@pytest.mark.parametrize("start", ["empty", "release 0.1.0"])
def test_ledgers_opened_at_once_set_up_or_migrate_it_once(storage: Storage, start: str) -> None:
    # As the application and its workers starting together on one database (or file).
    if start == "release 0.1.0":
        storage.load_previous_release()

    with ThreadPoolExecutor(4) as pool:
        ledgers = list(pool.map(lambda _: storage.open(), range(4)))
    for ledger in ledgers:
        ledger.close()

    assert storage.versions()[-1] == LATEST
    assert len(storage.versions()) == len(set(storage.versions()))


def test_a_schema_newer_than_this_release_is_refused_naming_both_versions(
    storage: Storage,
) -> None:
    storage.open().close()
    storage.sql(f"INSERT INTO ledger_schema (version) VALUES ({LATEST + 1})")

    with pytest.raises(LedgerSchemaError) as raised:
        storage.open()

    message = str(raised.value)
    assert f"schema version {LATEST + 1}" in message
    assert f"up to {LATEST}" in message
    assert (raised.value.found, raised.value.expected) == (LATEST + 1, LATEST)
    with pytest.raises(LedgerSchemaError):
        storage.open(setup=False)


def test_without_setup_only_a_ledger_at_this_release_s_version_opens(storage: Storage) -> None:
    with pytest.raises(LedgerSchemaError, match=r"has no ledger tables.*call setup\(\)"):
        storage.open(setup=False)
    assert storage.tables() == set()  # nothing was created

    storage.open().close()
    with closing(storage.open(setup=False)) as ledger:
        assert ledger.pending_work() == 0


def test_without_setup_a_ledger_of_release_0_1_0_is_left_as_it_is(storage: Storage) -> None:
    storage.load_previous_release()
    tables = storage.tables()

    with pytest.raises(
        LedgerSchemaError,
        match=f"has schema version 1; this release needs schema version {LATEST}",
    ):
        storage.open(setup=False)

    assert storage.tables() == tables
    assert storage.sql(storage.previous_release_reads) == [(1,)]


# --- evaluation records: one outcome becomes a list of results ----------------------------

RECORD_0_1_0 = {
    "evaluation_id": "e-1",
    "evaluator_id": "reply-quality",
    "control_id": "quality-control",
    "trigger": "on_interaction",
    "trigger_attributes": {"prompt": "v2"},
    "interaction_id": "i-1",
    "agent_id": "support-agent",
    "outcome": {
        "kind": "verdict",
        "evaluation": {
            "passed": True,
            "explanation": "answered the question",
            "score": 0.9,
            "label": "good",
            "attributes": {"judge": "gpt-4o-mini"},
        },
    },
    "attempts": 1,
    "duration": 0.25,
    "timestamp": "2025-03-01T09:30:05Z",
}
"""An evaluation record as release 0.1.0 wrote it: a scored, labelled verdict."""


def with_outcome(outcome: dict[str, Any]) -> dict[str, Any]:
    return {**RECORD_0_1_0, "outcome": outcome}


def test_a_verdict_becomes_one_result_keyed_by_the_evaluator() -> None:
    before = copy.deepcopy(RECORD_0_1_0)

    after = outcome_to_results(RECORD_0_1_0)

    assert after["results"] == [
        {
            "key": "reply-quality",
            "score": 0.9,
            "comment": "answered the question",
            "metadata": {"passed": True, "label": "good", "judge": "gpt-4o-mini"},
            "outcome": "verdict",
        }
    ]
    assert after["pass_threshold"] is None
    # Every other field as it was, in its place; the results where the outcome was.
    fields = list(RECORD_0_1_0)
    at = fields.index("outcome")
    assert list(after) == [*fields[:at], "results", "pass_threshold", *fields[at + 1 :]]
    assert {name: after[name] for name in RECORD_0_1_0 if name != "outcome"} == {
        name: value for name, value in RECORD_0_1_0.items() if name != "outcome"
    }
    assert before == RECORD_0_1_0  # the old record is left as it was


def test_a_verdict_without_a_score_scores_whether_it_passed_and_has_no_label() -> None:
    failing = {
        "passed": False,
        "explanation": "no order number given",
        "score": None,
        "label": None,
        "attributes": {},
    }

    [result] = outcome_to_results(with_outcome({"kind": "verdict", "evaluation": failing}))[
        "results"
    ]

    assert result == {
        "key": "reply-quality",
        "score": False,
        "comment": "no order number given",
        "metadata": {"passed": False},
        "outcome": "verdict",
    }


def test_an_inconclusive_outcome_keeps_its_reason() -> None:
    outcome = {"kind": "inconclusive", "reason": "nothing to judge"}

    [result] = outcome_to_results(with_outcome(outcome))["results"]

    assert result == {
        "key": "reply-quality",
        "outcome": "inconclusive",
        "reason": "nothing to judge",
        "score": None,
    }


@pytest.mark.parametrize(
    ("code", "error_code"),
    [("timeout", "timeout"), ("rate_limited", "rate_limited"), ("disk_full", "evaluator_error")],
)
def test_a_failure_keeps_a_code_the_core_knows(code: str, error_code: str) -> None:
    error = {"type": "TimeoutError", "message": "judge timed out after 30 s", "code": code}

    [result] = outcome_to_results(with_outcome({"kind": "failed", "error": error}))["results"]

    assert result == {
        "key": "reply-quality",
        "outcome": "failed",
        "error_code": error_code,
        "reason": "TimeoutError: judge timed out after 30 s",
        "score": None,
    }


@pytest.mark.parametrize(
    "outcome",
    [
        RECORD_0_1_0["outcome"],
        {"kind": "inconclusive", "reason": "nothing to judge"},
        {"kind": "failed", "error": {"type": "KeyError", "message": "'x'", "code": "odd"}},
    ],
)
def test_every_result_is_a_valid_core_evaluator_result(outcome: dict[str, Any]) -> None:
    [result] = outcome_to_results(with_outcome(outcome))["results"]

    assert EvaluatorResult.model_validate(result).key == "reply-quality"


def test_an_unknown_outcome_is_named() -> None:
    with pytest.raises(ValueError, match=r"'e-1'.*'maybe'"):
        outcome_to_results(with_outcome({"kind": "maybe"}))


MIGRATED_RESULTS = {
    "e-verdict": [
        {
            "key": "reply-quality",
            "score": 0.9,
            "comment": "answered the question",
            "metadata": {"passed": True, "label": "good", "judge": "gpt-4o-mini"},
            "outcome": "verdict",
        }
    ],
    "e-failing-verdict": [
        {
            "key": "mentions-order",
            "score": False,
            "comment": "no order number given",
            "metadata": {"passed": False},
            "outcome": "verdict",
        }
    ],
    "e-inconclusive": [
        {
            "key": "refund-policy",
            "outcome": "inconclusive",
            "reason": "nothing to judge: the agent asked a question back",
            "score": None,
        }
    ],
    "e-failed": [
        {
            "key": "llm-judge",
            "outcome": "failed",
            "error_code": "timeout",
            "reason": "TimeoutError: judge timed out after 30 s",
            "score": None,
        }
    ],
}
"""The results of the evaluation records in the snapshots of release 0.1.0, once migrated."""


def test_the_evaluation_records_of_release_0_1_0_are_migrated_once(
    storage: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Batches of 3, so the 4 records take two: the second must continue after the first.
    monkeypatch.setattr(sql_module, "_REWRITE_BATCH", 3)
    storage.load_previous_release()
    # Release 0.1.0 named SQLite's table ``evaluations``.
    before = storage.evaluations(
        "evaluations" if storage.kind == "sqlite" else "ledger_evaluations"
    )

    storage.open().close()
    migrated = storage.evaluations()
    storage.open().close()  # opened again: nothing left to migrate

    assert {key: record["results"] for key, record in migrated.items()} == MIGRATED_RESULTS
    assert migrated == {key: outcome_to_results(record) for key, record in before.items()}
    assert migrated["e-verdict"]["control_id"] == "quality-control"
    assert migrated["e-failed"]["attempts"] == 3
    assert storage.evaluations() == migrated
    # And this release's models read them: outcomes and verdicts as 0.1.0 recorded them.
    ledger = storage.open()
    try:
        records = {key: ledger.get_evaluation(key) for key in migrated}
    finally:
        ledger.close()
    outcomes = {key: (record.outcome, record.passed) for key, record in records.items() if record}
    assert len(outcomes) == len(migrated)
    assert outcomes["e-verdict"][0] == "verdict"
    assert outcomes["e-failed"] == ("failed", None)
