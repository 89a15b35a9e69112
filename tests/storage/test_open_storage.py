"""``open_storage``: the SQL ledger a path or DSN names, typed as one; ``open_ledger``, its
old name, still opens one and warns; and the console's queries refuse a ledger without SQL
tables, by name."""

from __future__ import annotations

import sqlite3
import warnings
from pathlib import Path

import pytest
from _postgres_server import fresh_schema, postgres_server_dsn

from langchain_evals_port.storage import (
    ConsoleQueries,
    InMemoryLedger,
    PostgresLedger,
    SqliteLedger,
    SqlLedger,
    open_ledger,
    open_storage,
)
from langchain_evals_port.storage.contract import make_interaction


@pytest.mark.parametrize("kind", [Path, str])
def test_a_path_opens_a_sqlite_file_set_up(tmp_path: Path, kind: type) -> None:
    ledger = open_storage(kind(tmp_path / "evals.db"))
    try:
        assert isinstance(ledger, SqliteLedger)
        ledger.record_interaction(make_interaction("i-1"))
        assert ledger.get_interaction("i-1").interaction_id == "i-1"
    finally:
        ledger.close()
    with sqlite3.connect(tmp_path / "evals.db") as db:
        assert db.execute("SELECT count(*) FROM ledger_interactions").fetchone() == (1,)


@pytest.mark.services
def test_a_dsn_opens_a_postgresql_ledger() -> None:
    with fresh_schema(postgres_server_dsn()) as dsn:
        ledger = open_storage(dsn)
        try:
            assert isinstance(ledger, PostgresLedger)
            assert ledger.dialect == "postgresql"
            ledger.record_interaction(make_interaction("i-1"))
            assert ledger.get_interaction("i-1").interaction_id == "i-1"
        finally:
            ledger.close()


@pytest.mark.parametrize(
    "location", ["sqlite:///evals.db", "mysql://app:s3cret@db/evals", "https://example.com/x"]
)
def test_a_url_of_another_kind_is_refused_without_its_secrets(
    location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="expected a postgresql:// DSN or the path") as error:
        open_storage(location)
    assert "s3cret" not in str(error.value)
    assert list(tmp_path.iterdir()) == []  # no file or folder made of the URL


def test_a_path_in_a_missing_folder_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        open_storage(tmp_path / "nowhere" / "evals.db")


def test_open_ledger_warns_naming_open_storage_and_opens_the_same(tmp_path: Path) -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        ledger = open_ledger(tmp_path / "evals.db")
    try:
        assert isinstance(ledger, SqlLedger)
        assert [w.category for w in seen] == [DeprecationWarning]
        assert "langchain_evals_port.storage.open_storage" in str(seen[0].message)
        assert seen[0].filename == __file__  # the caller's line, not ours
    finally:
        ledger.close()


def test_the_console_s_queries_refuse_a_ledger_without_sql_tables() -> None:
    with pytest.raises(TypeError, match="expected a SqliteLedger or PostgresLedger, got InMem"):
        ConsoleQueries(InMemoryLedger())  # type: ignore[arg-type]


def test_the_console_s_queries_refuse_a_bad_text_window(tmp_path: Path) -> None:
    ledger = SqliteLedger(tmp_path / "evals.db")
    try:
        with pytest.raises(ValueError, match="text_window must be a positive int, got 0"):
            ConsoleQueries(ledger, text_window=0)
    finally:
        ledger.close()
