"""The runner's batched writes (``experiments._writes``): a write waits for a claim, a full
batch or until it is due (a kept run sooner than a record), and ``flush`` sends at once —
on a real SQLite store."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from langchain_evals_port import EvaluatorResult
from langchain_evals_port.experiments import (
    CaseResult,
    Dataset,
    ExperimentStore,
    Target,
    TargetRun,
)
from langchain_evals_port.experiments._store import ExperimentInfo, PendingRun
from langchain_evals_port.experiments._writes import (
    FLUSH_SECONDS,
    FLUSH_SIZE,
    KEPT_SECONDS,
    Writes,
)

CASES = list(Dataset.from_records([{"id": f"c{n}", "inputs": {"n": n}} for n in range(80)]))


@pytest.fixture
async def writes(tmp_path: Path) -> AsyncIterator[Writes]:
    store = ExperimentStore(tmp_path / "experiments.db")
    info = ExperimentInfo(
        name="x", target="t", evaluators=["k"], trials=1, cases=len(CASES), dataset="d"
    )
    store.create(info, [(case, 0, None) for case in CASES])
    yield Writes(store, "x")
    store.close()


async def _ran() -> TargetRun:
    return await Target(lambda inputs: "ok").arun({"n": 0}, case_id="c0")


def _record(writes: Writes, pending: PendingRun, run: TargetRun) -> asyncio.Future[bool]:
    results = (EvaluatorResult(key="k", score=True),)
    return writes.submit(pending, CaseResult(case=pending.case, trial=0, run=run, results=results))


def _waiting(writes: Writes) -> bool:
    """Whether queued writes wait for their timer, no trip under way."""
    return writes.timer is not None and (writes.writing is None or writes.writing.done())


async def test_writes_wait_for_their_batch_and_flush_sends_them_at_once(writes: Writes) -> None:
    [pending] = await writes.claim(1)
    written = _record(writes, pending, await _ran())
    assert _waiting(writes)
    await writes.flush()
    assert written.result() is True
    assert writes.store.unfinished("x") == len(CASES) - 1


async def test_writes_go_on_their_own_when_due(writes: Writes) -> None:
    run = await _ran()
    futures = [_record(writes, pending, run) for pending in await writes.claim(3)]
    assert _waiting(writes)
    assert await asyncio.gather(*futures) == [True, True, True]
    assert writes.store.unfinished("x") == len(CASES) - 3


async def test_a_full_batch_goes_without_waiting(writes: Writes) -> None:
    run = await _ran()
    futures = [_record(writes, pending, run) for pending in await writes.claim(FLUSH_SIZE)]
    assert writes.writing is not None  # sent at once
    assert writes.timer is None  # with no timer set
    assert await asyncio.gather(*futures) == [True] * FLUSH_SIZE


async def test_a_claim_takes_the_queued_writes_along(writes: Writes) -> None:
    [pending] = await writes.claim(1)
    written = _record(writes, pending, await _ran())
    more = await writes.claim(2)  # the claim's trip carries the write queued before it
    assert written.done()
    assert written.result() is True
    assert len(more) == 2


async def test_a_kept_run_is_due_sooner_than_a_record(writes: Writes) -> None:
    loop = asyncio.get_running_loop()
    [first, second] = await writes.claim(2)
    run = await _ran()
    record = _record(writes, first, run)
    assert writes.timer is not None
    assert KEPT_SECONDS < writes.timer.when() - loop.time() <= FLUSH_SECONDS
    kept = writes.submit(second, run)  # what the target did, before the run is scored
    assert writes.timer.when() - loop.time() <= KEPT_SECONDS  # the record goes along
    assert await asyncio.gather(record, kept) == [True, True]


async def test_a_free_file_is_written_on_the_event_loop(writes: Writes) -> None:
    """No trip to a thread: the batch is written in the first turn of the loop it gets."""
    [pending] = await writes.claim(1)
    written = _record(writes, pending, await _ran())
    writes.send()
    await asyncio.sleep(0)  # the writing task's first step runs, and ends
    assert written.done()
    assert written.result() is True


async def test_a_file_another_process_is_writing_is_written_from_a_thread(
    writes: Writes, tmp_path: Path
) -> None:
    """While another connection holds the file's write lock, the batch waits for it in a
    thread and the event loop goes on; the write lands once the lock is let go."""
    [pending] = await writes.claim(1)
    other = sqlite3.connect(tmp_path / "experiments.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    written = _record(writes, pending, await _ran())
    writes.send()
    for _ in range(3):
        await asyncio.sleep(0)  # this coroutine runs: the loop is not held by the write
    assert not written.done()
    other.execute("ROLLBACK")
    other.close()
    assert await written is True
    assert writes.store.unfinished("x") == len(CASES) - 1
