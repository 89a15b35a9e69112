"""``SqlLedger.without_waiting``: the writes and claims of a block in one transaction, begun
only when that needs no wait, so an event loop can make them itself (the experiment runner
does, ``experiments._writes``). On a SQLite file it commits the block's writes together and
refuses, having done nothing, while another connection or thread is writing; PostgreSQL,
whose every statement crosses a network, always refuses."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from _postgres_server import sql_location  # noqa: F401 (the `location` fixture)

from langchain_evals_port.storage import (
    RunClaim,
    RunWrite,
    SqliteLedger,
    SqlLedger,
    WouldWait,
    open_storage,
)

WORKER = "worker-a"


@pytest.fixture
def ledger(location: str) -> Iterator[SqlLedger]:
    opened = open_storage(location)
    opened.create_experiment("e", "{}", [(f"r-{n}", 0, "{}") for n in range(4)])
    yield opened
    opened.close()


@pytest.fixture
def sqlite_ledger(tmp_path: Path) -> Iterator[SqliteLedger]:
    opened = SqliteLedger(tmp_path / "store.db")
    opened.create_experiment("e", "{}", [(f"r-{n}", 0, "{}") for n in range(4)])
    yield opened
    opened.close()


def _finish(ledger: SqlLedger, claim: RunClaim) -> bool:
    [done] = ledger.write_runs("e", [RunWrite(claim, '{"done": 1}', finished=True)])
    return done


def _finished(path: Path) -> int:
    """Finished runs as another connection (another process) sees them."""
    with sqlite3.connect(path) as other:
        [(count,)] = other.execute(
            "SELECT count(*) FROM ledger_experiment_runs WHERE finished_at IS NOT NULL"
        )
    return int(count)


def test_the_block_s_writes_are_made_together_or_not_at_all(ledger: SqlLedger) -> None:
    """On every backend: either the block's writes and claims commit together, or
    ``WouldWait`` is raised before anything is done; the ledger works as usual after."""
    try:
        with ledger.without_waiting():
            claims = ledger.claim_runs("e", WORKER, limit=2, lease_seconds=60)
            assert [_finish(ledger, claim) for claim in claims] == [True, True]
    except WouldWait:
        assert not isinstance(ledger, SqliteLedger)  # a free SQLite file never refuses
        claims = ledger.claim_runs("e", WORKER, limit=2, lease_seconds=60)
        assert [_finish(ledger, claim) for claim in claims] == [True, True]
    finished = {row.case_id for row in ledger.runs("e", finished_only=True)}
    assert finished == {"r-0", "r-1"}
    assert [c.case_id for c in ledger.claim_runs("e", WORKER, limit=4, lease_seconds=60)] == [
        "r-2",
        "r-3",
    ]


def test_a_sqlite_block_commits_when_it_ends(sqlite_ledger: SqliteLedger) -> None:
    with sqlite_ledger.without_waiting():
        [claim] = sqlite_ledger.claim_runs("e", WORKER, limit=1, lease_seconds=60)
        assert _finish(sqlite_ledger, claim)
        assert _finished(sqlite_ledger.path) == 0  # not yet committed: others see nothing
    assert _finished(sqlite_ledger.path) == 1


def test_a_sqlite_block_that_raises_leaves_nothing_written(sqlite_ledger: SqliteLedger) -> None:
    claimed: list[RunClaim] = []

    def write_then_fail() -> None:
        with sqlite_ledger.without_waiting():
            claimed.extend(sqlite_ledger.claim_runs("e", WORKER, limit=1, lease_seconds=60))
            assert _finish(sqlite_ledger, claimed[0])
            raise RuntimeError("stop")

    with pytest.raises(RuntimeError, match="stop"):
        write_then_fail()
    [claim] = claimed
    assert _finished(sqlite_ledger.path) == 0
    # The claim was rolled back too: the run is claimable at once.
    [again] = sqlite_ledger.claim_runs("e", WORKER, limit=1, lease_seconds=60)
    assert again.case_id == claim.case_id


def test_a_file_another_connection_is_writing_to_is_refused_at_once(
    sqlite_ledger: SqliteLedger,
) -> None:
    other = sqlite3.connect(sqlite_ledger.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process's write under way
    with pytest.raises(WouldWait, match="locked"), sqlite_ledger.without_waiting():
        pytest.fail("the block ran although the file was being written")
    other.execute("ROLLBACK")
    other.close()
    # Nothing was left behind: the usual writes go on, with the ledger's busy timeout.
    [claim] = sqlite_ledger.claim_runs("e", WORKER, limit=1, lease_seconds=60)
    assert _finish(sqlite_ledger, claim)
    [(timeout,)] = sqlite_ledger._writing_connection().execute("PRAGMA busy_timeout")
    assert timeout == 30_000


def test_a_file_another_thread_of_the_process_is_writing_to_is_refused(
    sqlite_ledger: SqliteLedger,
) -> None:
    inside, leave = threading.Event(), threading.Event()

    def writer() -> None:
        with sqlite_ledger.without_waiting():
            sqlite_ledger.claim_runs("e", WORKER, limit=1, lease_seconds=60)
            inside.set()
            leave.wait()

    thread = threading.Thread(target=writer)
    thread.start()
    inside.wait()
    with pytest.raises(WouldWait, match="another thread"), sqlite_ledger.without_waiting():
        pytest.fail("the block ran while another thread was writing")
    leave.set()
    thread.join()
    assert [
        c.case_id for c in sqlite_ledger.claim_runs("e", WORKER, limit=1, lease_seconds=60)
    ] == ["r-1"]
