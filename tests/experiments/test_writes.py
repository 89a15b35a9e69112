"""The runner's batched writes (``experiments._writes``): a write waits for a claim, a full
batch or ``FLUSH_SECONDS``, and ``flush`` sends at once — on a real SQLite store."""

from __future__ import annotations

import asyncio
from pathlib import Path

from langchain_evals_port import EvaluatorResult
from langchain_evals_port.experiments import CaseResult, Dataset, ExperimentStore, Target
from langchain_evals_port.experiments._store import ExperimentInfo
from langchain_evals_port.experiments._writes import FLUSH_SECONDS, FLUSH_SIZE, KEPT_SECONDS, Writes

CASES = list(Dataset.from_records([{"id": f"c{n}", "inputs": {"n": n}} for n in range(80)]))


def _store(folder: Path) -> ExperimentStore:
    store = ExperimentStore(folder / "experiments.db")
    info = ExperimentInfo(
        name="x", target="t", evaluators=["k"], trials=1, cases=len(CASES), dataset="d"
    )
    store.create(info, [(case, 0, None) for case in CASES])
    return store


async def _finished_runs(store: ExperimentStore, writes: Writes, count: int) -> list[bool]:
    claimed = await writes.claim(count)
    run = await Target(lambda inputs: "ok").arun({"n": 0}, case_id="c0")
    results = (EvaluatorResult(key="k", score=True),)
    futures = [
        writes.submit(p, CaseResult(case=p.case, trial=0, run=run, results=results))
        for p in claimed
    ]
    # No trip under way: they wait for their timer.
    assert writes.writing is None or writes.writing.done()
    assert writes.timer is not None
    return await asyncio.gather(*futures)


async def test_writes_wait_for_their_batch_and_flush_sends_them_at_once(tmp_path: Path) -> None:
    store = _store(tmp_path)
    writes = Writes(store, "x")
    run = await Target(lambda inputs: "ok").arun({"n": 0}, case_id="c0")
    [pending] = await writes.claim(1)
    results = (EvaluatorResult(key="k", score=True),)
    written = writes.submit(
        pending, CaseResult(case=pending.case, trial=0, run=run, results=results)
    )
    assert writes.timer is not None  # waiting for others to share its trip
    assert writes.writing is None or writes.writing.done()
    await writes.flush()
    assert written.result() is True
    assert store.unfinished("x") == len(CASES) - 1
    store.close()


async def test_writes_go_on_their_own_after_flush_seconds(tmp_path: Path) -> None:
    store = _store(tmp_path)
    writes = Writes(store, "x")
    assert await _finished_runs(store, writes, 3) == [True, True, True]
    assert store.unfinished("x") == len(CASES) - 3
    store.close()


async def test_a_full_batch_goes_without_waiting(tmp_path: Path) -> None:
    store = _store(tmp_path)
    writes = Writes(store, "x")
    claimed = await writes.claim(FLUSH_SIZE)
    run = await Target(lambda inputs: "ok").arun({"n": 0}, case_id="c0")
    results = (EvaluatorResult(key="k", score=True),)
    futures = [
        writes.submit(p, CaseResult(case=p.case, trial=0, run=run, results=results))
        for p in claimed
    ]
    assert writes.writing is not None  # sent at once
    assert writes.timer is None  # with no timer set
    assert await asyncio.gather(*futures) == [True] * FLUSH_SIZE
    store.close()


async def test_a_claim_takes_the_queued_writes_along(tmp_path: Path) -> None:
    store = _store(tmp_path)
    writes = Writes(store, "x")
    run = await Target(lambda inputs: "ok").arun({"n": 0}, case_id="c0")
    [pending] = await writes.claim(1)
    results = (EvaluatorResult(key="k", score=True),)
    written = writes.submit(
        pending, CaseResult(case=pending.case, trial=0, run=run, results=results)
    )
    more = await writes.claim(2)  # the claim's trip carries the write queued before it
    assert written.done()
    assert written.result() is True
    assert len(more) == 2
    store.close()


async def test_a_kept_run_is_due_sooner_than_a_record(tmp_path: Path) -> None:
    store = _store(tmp_path)
    writes = Writes(store, "x")
    loop = asyncio.get_running_loop()
    [first, second] = await writes.claim(2)
    run = await Target(lambda inputs: "ok").arun({"n": 0}, case_id="c0")
    results = (EvaluatorResult(key="k", score=True),)
    record = writes.submit(first, CaseResult(case=first.case, trial=0, run=run, results=results))
    assert writes.timer is not None
    assert KEPT_SECONDS < writes.timer.when() - loop.time() <= FLUSH_SECONDS
    kept = writes.submit(second, run)  # what the target did, before the run is scored
    assert writes.timer.when() - loop.time() <= KEPT_SECONDS  # the record goes along
    assert await asyncio.gather(record, kept) == [True, True]
    store.close()
