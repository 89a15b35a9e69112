"""What only the SQLite ledger promises: one file shared by processes, reopened, in WAL mode."""

from __future__ import annotations

import gc
import json
import os
import sqlite3
import subprocess
import sys
import threading
from contextlib import closing
from pathlib import Path

import pytest
from _factories import make_evaluation, make_interaction, make_unit

from langchain_evals_port.runtime import LedgerSchemaError, SqliteLedger

LATEST = len(SqliteLedger.MIGRATIONS) - 1
"""The schema version of this release."""

# A worker process: waits for "go" on stdin, claims and completes units until none is left
# for it, then prints the ids it claimed as JSON.
WORKER = """
import json, sys
sys.path.insert(0, sys.argv[3])
from _factories import make_evaluation
from langchain_evals_port.runtime import SqliteLedger

ledger = SqliteLedger(sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()
claimed = []
while claims := ledger.claim(sys.argv[2], limit=7, lease_seconds=60.0):
    for claim in claims:
        claimed.append(claim.unit.evaluation_id)
        record = make_evaluation(claim.unit.evaluation_id, interaction_id=claim.unit.interaction_id)
        assert ledger.complete(claim, record)
ledger.close()
print(json.dumps(claimed), flush=True)
"""


@pytest.mark.processes
def test_two_processes_complete_every_unit_exactly_once(tmp_path):
    path = tmp_path / "ledger.db"
    ledger = SqliteLedger(path)
    for n in range(50):
        work = [make_unit(f"e-{n}-{k}", interaction_id=f"i-{n}") for k in range(10)]
        ledger.record_interaction(make_interaction(f"i-{n}"), work)
    assert ledger.pending_work() == 500

    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(path), f"w-{k}", str(Path(__file__).parent)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for k in range(2)
    ]
    for worker in workers:
        assert worker.stdout.readline().strip() == "ready"
    for worker in workers:
        worker.stdin.write("go\n")
        worker.stdin.flush()
    outputs = [worker.communicate(timeout=60)[0] for worker in workers]

    assert [worker.returncode for worker in workers] == [0, 0]
    first, second = (set(json.loads(output)) for output in outputs)
    assert first.isdisjoint(second)
    assert len(first | second) == 500
    assert ledger.pending_work() == 0
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT COUNT(*) FROM ledger_evaluations").fetchone() == (500,)
    ledger.close()


def test_a_reopened_file_holds_everything(tmp_path):
    path = tmp_path / "ledger.db"
    first = SqliteLedger(str(path))
    first.record_interaction(make_interaction("i-1"), [make_unit("e-1"), make_unit("e-2")])
    first.record_evaluation(make_evaluation("e-0"))
    claim = first.claim("w-1", limit=1, lease_seconds=60.0)[0]
    first.close()

    second = SqliteLedger(path)

    assert second.get_interaction("i-1") == make_interaction("i-1")
    assert second.get_evaluation("e-0") == make_evaluation("e-0")
    assert second.pending_work("i-1") == 2
    assert second.complete(claim, make_evaluation(claim.unit.evaluation_id)) is True
    assert second.pending_work("i-1") == 1
    second.close()


def test_the_file_is_in_wal_mode_with_the_schema_version(tmp_path):
    path = tmp_path / "ledger.db"
    SqliteLedger(path).close()

    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert db.execute("PRAGMA user_version").fetchone() == (LATEST,)


def test_a_file_a_newer_release_versioned_only_in_user_version_is_refused(tmp_path):
    # What release 0.1.0 read and wrote; this release keeps it too, so each refuses the other's
    # newer files.
    path = tmp_path / "ledger.db"
    with closing(sqlite3.connect(path)) as db:
        db.execute(f"PRAGMA user_version = {LATEST + 1}")

    with pytest.raises(LedgerSchemaError, match=f"schema version {LATEST + 1}"):
        SqliteLedger(path)


def test_an_sqlite_too_old_for_the_ledger_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite3, "sqlite_version_info", (3, 24, 0))

    with pytest.raises(RuntimeError, match=r"needs SQLite 3\.25\.0 or newer"):
        SqliteLedger(tmp_path / "ledger.db")


def test_a_missing_directory_is_named(tmp_path):
    path = tmp_path / "missing" / "ledger.db"

    with pytest.raises(ValueError, match="missing"):
        SqliteLedger(path)


def test_an_unknown_synchronous_setting_is_refused(tmp_path):
    with pytest.raises(ValueError, match="synchronous"):
        SqliteLedger(tmp_path / "ledger.db", synchronous="SOMETIMES; DROP TABLE work")


def test_a_closed_ledger_is_unusable(tmp_path):
    ledger = SqliteLedger(tmp_path / "ledger.db")
    ledger.close()

    with pytest.raises(sqlite3.ProgrammingError):
        ledger.pending_work()


def test_threads_that_end_leave_no_open_connection(tmp_path: Path) -> None:
    """Each thread reads through its own connection, closed when the thread ends."""
    ledger = SqliteLedger(tmp_path / "ledger.db")

    def open_files() -> int:
        gc.collect()
        return len(os.listdir("/proc/self/fd"))

    before = open_files()
    for _ in range(30):
        thread = threading.Thread(target=ledger.pending_work)
        thread.start()
        thread.join()
    assert open_files() <= before + 2
    ledger.close()


def test_the_old_ledger_paths_warn_and_give_the_storage_names() -> None:
    import warnings

    import langchain_evals_port.runtime.ledger as old
    import langchain_evals_port.runtime.ledger.contract as old_contract
    from langchain_evals_port import storage
    from langchain_evals_port.storage import contract

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert old.SqliteLedger is storage.SqliteLedger
        assert old_contract.LedgerContract is contract.LedgerContract
    assert [str(w.message).split(";")[0] for w in seen] == [
        "langchain_evals_port.runtime.ledger is deprecated",
        "langchain_evals_port.runtime.ledger.contract is deprecated",
    ]
