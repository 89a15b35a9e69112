"""What the judge cache (``SqliteCache``) costs and saves, measured in one run.

The entries are a real judge call's: the messages of ``CORRECTNESS_PROMPT`` rendered for a
case as LangChain serializes them (``prompt``), the scripted judge's ``llm_string`` with the
score schema, and its reply (an ``AIMessage`` with usage and metadata), captured from an
``LLMJudge`` run. Printed:

* per call, median of ``--calls`` calls on a fresh file: ``update`` (a new entry), ``lookup``
  of an entry (a hit: read and decoded) and of a missing key (a miss: the read alone),
  ``alookup`` of an entry from the event loop (a hop to a worker thread and back), and the
  miss on a connection opened for it, the design not taken (a connection per call rather
  than one per thread);
* four processes storing ``--calls`` new entries each in one file at once: entries per
  second in all;
* ``--evaluations`` evaluations (``abatch``) on a 20 ms scripted judge at concurrency 64
  (where the event loop's CPU is the limit) and 8 (where the judge's latency is): without a
  cache, on an empty cache (every call a miss, then stored), and again on the filled cache
  (every call a hit: zero judge calls); wall time and CPU per evaluation, the best of
  ``--repeats`` runs;
* one evaluation at a time (``invoke``): a hit against an uncached judge that answers at
  once (what the judge itself costs).

Run: ``.venv/bin/python benchmarks/bench_cache.py [--calls N] [--evaluations N]
[--repeats N]`` (about 50 s with the defaults on two cores).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.pop("LANGSMITH_TRACING", None)
os.environ.pop("LANGCHAIN_TRACING_V2", None)

LATENCY = 0.020
REPLY = {
    "reasoning": "The output gives the same number as the reference. Thus, the score should "
    "be: true.",
    "score": True,
}


def median_us(calls: int, step: Callable[[int], Any]) -> float:
    samples = []
    for n in range(calls):
        started = time.perf_counter()
        step(n)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1e6


def captured_call() -> tuple[str, str, list[Any]]:
    """The prompt, ``llm_string`` and reply of one real judge call."""
    from langchain_core.caches import InMemoryCache

    from langchain_evals_port import prompts
    from langchain_evals_port.judge import LLMJudge
    from langchain_evals_port.testing import ScriptedChatModel

    class Recorder(InMemoryCache):
        entries: list[tuple[str, str, Any]] = []  # noqa: RUF012

        def update(self, prompt: str, llm_string: str, return_val: Any) -> None:
            self.entries.append((prompt, llm_string, list(return_val)))

    model = ScriptedChatModel(responder=lambda messages: REPLY, latency=LATENCY)
    LLMJudge(prompt=prompts.CORRECTNESS_PROMPT, model=model, cache=Recorder()).invoke(
        {"inputs": "What is 21 plus 21?", "outputs": "42", "reference_outputs": "The sum is 42."}
    )
    [entry] = Recorder.entries
    return entry


def per_call(folder: Path, calls: int, prompt: str, llm_string: str, reply: list[Any]) -> None:
    from langchain_evals_port.judge import SqliteCache

    path = folder / "per-call.db"
    cache = SqliteCache(path)
    update = median_us(calls, lambda n: cache.update(f"{prompt}{n}", llm_string, reply))
    hit = median_us(calls, lambda n: cache.lookup(f"{prompt}{n}", llm_string))
    miss = median_us(calls, lambda n: cache.lookup(f"{prompt}-{n}", llm_string))
    assert cache.lookup(f"{prompt}0", llm_string) == reply

    async def async_hits() -> float:
        samples = []
        for n in range(calls):
            started = time.perf_counter()
            await cache.alookup(f"{prompt}{n}", llm_string)
            samples.append(time.perf_counter() - started)
        return statistics.median(samples) * 1e6

    ahit = asyncio.run(async_hits())

    def fresh_connection_lookup(n: int) -> None:
        # What a lookup costs when it opens the WAL file for itself (the rejected design).
        db = sqlite3.connect(path, timeout=30.0, isolation_level=None)
        try:
            db.execute("SELECT generations FROM llm_cache_v1 WHERE key = ?", (b"k" * 32,))
        finally:
            db.close()

    fresh = median_us(calls, fresh_connection_lookup)
    print(
        f"per call (median of {calls}); the prompt is {len(prompt):,} characters, "
        f"llm_string {len(llm_string):,}:"
    )
    print(f"  update (a new entry)                   {update:7.1f} µs")
    print(f"  lookup, a hit (decoding the reply)     {hit:7.1f} µs")
    print(f"  alookup, a hit (via a worker thread)   {ahit:7.1f} µs")
    print(f"  lookup, a miss                         {miss:7.1f} µs")
    print(f"  the same on a connection opened for it {fresh:7.1f} µs")


def processes(folder: Path, calls: int, prompt: str, llm_string: str, reply: list[Any]) -> None:
    path = folder / "processes.db"
    # One writer: waits for "go", then stores its entries; any warning (a write given up)
    # fails it.
    script = """
import sys, warnings
warnings.simplefilter("error")
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration
from langchain_evals_port.judge import SqliteCache

path, name, calls, prompt, llm_string, message = sys.argv[1:7]
reply = [ChatGeneration(message=AIMessage.model_validate_json(message))]
print("ready", flush=True)
sys.stdin.readline()
cache = SqliteCache(path)
for n in range(int(calls)):
    cache.update(f"{prompt}{name}{n}", llm_string, reply)
print("done", flush=True)
"""
    [generation] = reply
    message = generation.message.model_dump_json()
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                script,
                str(path),
                f"w{k}",
                str(calls),
                prompt,
                llm_string,
                message,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for k in range(4)
    ]
    for worker in workers:
        assert worker.stdout.readline().strip() == "ready"
    started = time.perf_counter()
    for worker in workers:
        worker.stdin.write("go\n")
        worker.stdin.flush()
    outputs = [worker.communicate(timeout=300)[0].strip() for worker in workers]
    elapsed = time.perf_counter() - started
    assert outputs == ["done"] * 4, outputs
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(*) FROM llm_cache_v1").fetchone() == (4 * calls,)
    print(
        f"4 processes storing {calls} entries each in one file: "
        f"{4 * calls / elapsed:,.0f} entries/s in all ({elapsed:.2f} s)"
    )


def judge_runs(folder: Path, evaluations: int, concurrency: int, repeats: int) -> None:
    from langchain_evals_port import prompts
    from langchain_evals_port.judge import LLMJudge, SqliteCache
    from langchain_evals_port.testing import ScriptedChatModel

    requests = [
        {
            "inputs": f"What is {i} plus {i}?",
            "outputs": f"{2 * i}",
            "reference_outputs": f"The sum is {2 * i}.",
        }
        for i in range(evaluations)
    ]

    def run(cache: Any) -> tuple[float, float, int]:
        model = ScriptedChatModel(responder=lambda messages: REPLY, latency=LATENCY)
        judge = LLMJudge(prompt=prompts.CORRECTNESS_PROMPT, model=model, cache=cache)
        wall, cpu = time.perf_counter(), time.process_time()
        config: Any = {"max_concurrency": concurrency}
        results = asyncio.run(judge.abatch(requests, config=config))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        assert all(r.outcome == "verdict" and r.score is True for r in results)
        return wall, cpu, len(model.calls)

    names = ("no cache", "empty cache (all misses, stored)", "filled cache (all hits)")
    runs: dict[str, list[tuple[float, float, int]]] = {name: [] for name in names}
    for repeat in range(repeats):
        # A new file each time: the first run on it fills it, the second reads it.
        path = folder / f"judge-{concurrency}-{repeat}.db"
        for name, cache in zip(names, (None, SqliteCache(path), SqliteCache(path)), strict=True):
            runs[name].append(run(cache))
    ideal = evaluations * LATENCY / concurrency
    print(
        f"{evaluations} evaluations, 20 ms judge, abatch with max_concurrency={concurrency} "
        f"(ideal without a cache: {ideal:.2f} s), best of {repeats}:"
    )
    for name, timings in runs.items():
        wall = min(wall for wall, _, _ in timings)
        cpu = min(cpu for _, cpu, _ in timings)
        calls = {calls for _, _, calls in timings}
        assert calls == ({0} if name.startswith("filled") else {evaluations}), (name, calls)
        print(
            f"  {name:34} {wall:6.2f} s wall, {cpu / evaluations * 1000:5.2f} ms CPU "
            f"per evaluation, {calls.pop()} judge calls"
        )


def sequential_hits(folder: Path, evaluations: int) -> None:
    from langchain_evals_port import prompts
    from langchain_evals_port.judge import LLMJudge, SqliteCache
    from langchain_evals_port.testing import ScriptedChatModel

    cache = SqliteCache(folder / "judge-64-0.db")
    requests = [
        {
            "inputs": f"What is {i} plus {i}?",
            "outputs": f"{2 * i}",
            "reference_outputs": f"The sum is {2 * i}.",
        }
        for i in range(evaluations)
    ]

    def per_evaluation(judge: Any) -> float:
        return median_us(evaluations, lambda n: judge.invoke(requests[n])) / 1000

    times = {}
    for name, latency in (("no cache, a 0 ms judge", 0.0), ("a hit (of a 20 ms judge)", LATENCY)):
        model = ScriptedChatModel(responder=lambda messages: REPLY, latency=latency)
        judge = LLMJudge(
            prompt=prompts.CORRECTNESS_PROMPT, model=model, cache=cache if latency else None
        )
        times[name] = per_evaluation(judge)
        assert len(model.calls) == (0 if latency else evaluations)
    print("one evaluation at a time (invoke), median:")
    for name, ms in times.items():
        print(f"  {name:26} {ms:5.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--evaluations", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    prompt, llm_string, reply = captured_call()
    with tempfile.TemporaryDirectory() as folder:
        per_call(Path(folder), args.calls, prompt, llm_string, reply)
        processes(Path(folder), args.calls, prompt, llm_string, reply)
        for concurrency in (64, 8):
            judge_runs(Path(folder), args.evaluations, concurrency, args.repeats)
        sequential_hits(Path(folder), args.evaluations)


if __name__ == "__main__":
    main()
