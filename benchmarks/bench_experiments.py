"""``run_experiment`` at scale, side by side with ``langsmith.evaluate``, measured in one run.

The app (``_experiment_app.py``) is an async function making one call of a scripted chat
model that takes 20 ms, so the capture machinery records a model call per case; the
evaluators are ``ExactMatch()`` and an ``LLMJudge`` (``CORRECTNESS_PROMPT``) on a scripted
judge that takes 20 ms and always says true. Every run is checked (all scores true, one app
call and one judge call per case) before its figures are printed. Printed:

1. ``--cases`` cases at ``--concurrency``, on a SQLite store: wall time against the ideal
   (cases x (20 ms app + 20 ms judge) / concurrency; target <= 1.2x) and process CPU per
   case (``time.process_time()``, all threads); at 32 runs in flight the event loop's CPU,
   not the models' latency, sets the pace (wall ~= cases x CPU per case). The same app and
   evaluator calls alone (``asyncio.gather``, no capture, no store) show how much of that
   CPU is LangChain's own (its Runnable configs, callbacks and chat-model plumbing). Then the same
   work through ``langsmith.evaluate(target, data=[Example, ...], evaluators=[...],
   max_concurrency=..., upload_results=False)`` against a LangSmith stand-in on 127.0.0.1, with OpenEvals'
   ``exact_match`` and ``create_llm_as_judge`` on the same scripted judge and a sync app
   calling the same scripted model; and through ``langsmith.aevaluate`` with the async app
   and OpenEvals' async judge. CPU per case ours / theirs (target <= 0.6x). LangSmith's CPU
   includes draining the runs its tracer still posts to the stand-in: LangChain model calls
   inside the target are uploaded even with ``upload_results=False`` (counted and printed).
2. The same experiment again under new names in the same store, so the judge cache
   (``judge-cache.db``) is warm: judge calls made (target 0) and wall as % of the first run
   (target <= 10 %). The app still runs on such a re-run, so it is measured twice: with the
   app's model calls made (its model given an empty ``SqliteCache``, which this re-run
   fills) and with them answered from that cache too: the "unchanged re-run" of an app
   whose cost is its model calls. What is left is CPU: the runs' capture, scoring, cache
   lookups and store writes, so the re-run's wall is bounded by CPU per case x cases.
3. Resume after a kill: the experiment (app and evaluators as ``"module:attr"``) runs in a
   subprocess, SIGKILLed once the store shows half its runs finished, then started again
   under the same name to completion; every app call appends a line to a file, so the
   total app calls / cases is counted across both processes (target <= 1.02), over
   ``--kills`` rounds. A run keeps its output while it is scored, so only the runs whose
   app call was under way at the kill call the app again: at most ``--concurrency`` of
   them, and how many depends on where the kill lands (with every app call taking the same
   20 ms, runs move in step, so either none or nearly all of those in flight).

Run: ``.venv/bin/python benchmarks/bench_experiments.py [--cases N] [--concurrency C]
[--skip-langsmith]`` (about 30 s with the defaults on two cores; ``--cases 20`` for a smoke
run of a few seconds).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import _experiment_app as app
from _timing import langsmith_stand_in

from langchain_evals_port.core import EvalRequest
from langchain_evals_port.experiments import ExperimentStore, run_experiment
from langchain_evals_port.judge import SqliteCache

os.environ.pop("LANGSMITH_TRACING", None)
os.environ.pop("LANGCHAIN_TRACING_V2", None)

HERE = Path(__file__).resolve().parent
T = TypeVar("T")

# The resumable experiment, as a process of its own: argv is the store, cases, concurrency.
RESUMABLE = """
import sys
import _experiment_app as app
from langchain_evals_port.experiments import run_experiment

store, cases, concurrency = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
run_experiment(
    "_experiment_app:answer", app.dataset(cases), "_experiment_app:EVALUATORS",
    name="resumed", store=store, max_concurrency=concurrency, progress=False,
)
"""


def timed(run: Callable[[], T]) -> tuple[float, float, T]:
    """Wall and process CPU seconds of ``run()``, and what it returned."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = run()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def figures(label: str, wall: float, cpu: float, cases: int, extra: str = "") -> None:
    print(f"  {label:44} {wall:6.2f} s wall, {cpu / cases * 1e3:5.2f} ms CPU per case{extra}")


class Ours:
    """Experiments of the app over one dataset in one store, each with fresh counters."""

    def __init__(self, folder: Path, cases: int, concurrency: int) -> None:
        self.store = folder / "experiments.db"
        self.dataset = app.dataset(cases)
        self.cases = cases
        self.concurrency = concurrency
        self.judge = app.judge_model()
        self.evaluators = app.make_evaluators(self.judge)

    def run(self, name: str, model: Any, store: Any = None) -> tuple[float, float, int, int]:
        """Wall, CPU, app model calls and judge calls of experiment ``name``."""
        calls, judged = len(model.calls), len(self.judge.calls)
        wall, cpu, result = timed(
            lambda: run_experiment(
                app.make_app(model),
                self.dataset,
                self.evaluators,
                name=name,
                max_concurrency=self.concurrency,
                store=self.store if store is None else store,
                progress=False,
            )
        )
        assert len(result.runs) == self.cases, (name, len(result.runs))
        assert all(
            r.outcome == "verdict" and r.score is True for c in result.runs for r in c.results
        )
        return wall, cpu, len(model.calls) - calls, len(self.judge.calls) - judged


def langsmith_runs(cases: int, concurrency: int) -> dict[str, tuple[float, float]]:
    """Wall (until ``evaluate`` returns) and CPU (until the posted runs are drained) of
    ``langsmith.evaluate`` and ``aevaluate`` over the same cases; prints what was posted."""
    from langchain_core.tracers.langchain import wait_for_all_tracers
    from langsmith import aevaluate, evaluate
    from langsmith.schemas import Example
    from openevals.exact import exact_match
    from openevals.llm import create_async_llm_as_judge, create_llm_as_judge

    from langchain_evals_port import prompts

    dataset = uuid.uuid4()
    examples = [
        Example(
            id=uuid.uuid4(),
            dataset_id=dataset,
            inputs={"question": app.question(n)},
            outputs={"answer": str(2 * n)},
        )
        for n in range(cases)
    ]

    def sync_side(model: Any, judge: Any) -> Callable[[], list[Any]]:
        def target(inputs: dict[str, str]) -> dict[str, str]:
            return {"answer": str(model.invoke(inputs["question"]).content)}

        correctness = create_llm_as_judge(
            prompt=prompts.CORRECTNESS_PROMPT, judge=judge, feedback_key="correctness"
        )
        return lambda: list(
            evaluate(
                target,
                data=examples,
                evaluators=[exact_match, correctness],
                max_concurrency=concurrency,
                upload_results=False,
            )
        )

    def async_side(model: Any, judge: Any) -> Callable[[], list[Any]]:
        async def target(inputs: dict[str, str]) -> dict[str, str]:
            return {"answer": str((await model.ainvoke(inputs["question"])).content)}

        correctness = create_async_llm_as_judge(
            prompt=prompts.CORRECTNESS_PROMPT, judge=judge, feedback_key="correctness"
        )

        async def run() -> list[Any]:
            results = await aevaluate(
                target,
                data=examples,
                evaluators=[exact_match, correctness],
                max_concurrency=concurrency,
                upload_results=False,
            )
            return [row async for row in results]

        return lambda: asyncio.run(run())

    logging.getLogger("langsmith").setLevel(logging.ERROR)
    measured = {}
    with langsmith_stand_in() as paths:
        for name, side in (("langsmith.evaluate", sync_side), ("langsmith.aevaluate", async_side)):
            model, judge = app.app_model(), app.judge_model()
            posted = len(paths)
            # LangSmith's chatter (a beta warning, the experiment's name) is not a figure.
            with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                wall, cpu, rows = timed(side(model, judge))
            _, drained, _ = timed(wait_for_all_tracers)
            assert len(rows) == len(model.calls) == len(judge.calls) == cases
            assert all(
                r.score is True for row in rows for r in row["evaluation_results"]["results"]
            )
            uploads = sum("/runs" in path for path in paths[posted:])
            measured[name] = (wall, cpu + drained)
            figures(name, wall, cpu + drained, cases, f", {uploads} run uploads posted")
    return measured


def resume_after_kill(folder: Path, cases: int, concurrency: int) -> float:
    """Kill the experiment at half way, resume it; app calls in all / cases."""
    folder.mkdir()
    store = folder / "resumed.db"
    calls_file = folder / "app-calls.txt"
    env = {
        **os.environ,
        "BENCH_TARGET_CALLS": str(calls_file),
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
    }
    command = [sys.executable, "-c", RESUMABLE, str(store), str(cases), str(concurrency)]

    def finished() -> int:
        listing = ExperimentStore(store)
        try:
            found = [s.finished for s in listing.experiments() if s.info.name == "resumed"]
        finally:
            listing.close()
        return found[0] if found else 0

    def app_calls() -> int:
        return len(calls_file.read_text().splitlines()) if calls_file.exists() else 0

    first = subprocess.Popen(command, env=env)
    while finished() < cases // 2:
        if first.poll() is not None:
            raise RuntimeError(f"the experiment ended before the kill (exit {first.returncode})")
        time.sleep(0.01)
    first.send_signal(signal.SIGKILL)
    first.wait()
    at_kill, killed_calls = finished(), app_calls()
    wall, _, _ = timed(lambda: subprocess.run(command, env=env, check=True))
    total, after = app_calls(), finished()
    assert after == cases, (after, cases)
    print(
        f"  {folder.name}: finished at the kill {at_kill}, app calls by the killed process "
        f"{killed_calls}; the resumed process {total - killed_calls} app calls, {wall:.2f} s "
        f"wall; app calls in all / cases: {total}/{cases} = {total / cases:.3f}"
    )
    return total / cases


def bare_calls(ours: Ours) -> tuple[float, float]:
    """Wall and CPU of the same app and evaluator calls with nothing else: ``asyncio.gather``
    under a semaphore, no trajectory capture, no store (what LangChain itself costs)."""
    run = app.make_app(app.app_model())

    async def all_cases() -> None:
        limit = asyncio.Semaphore(ours.concurrency)

        async def one(case: Any) -> None:
            async with limit:
                outputs = await run(case.inputs)
                request = EvalRequest(
                    inputs=case.inputs, outputs=outputs, reference_outputs=case.reference_outputs
                )
                await asyncio.gather(*(ev.ainvoke(request) for ev in ours.evaluators))

        await asyncio.gather(*(one(case) for case in ours.dataset))

    wall, cpu, _ = timed(lambda: asyncio.run(all_cases()))
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--skip-langsmith", action="store_true")
    parser.add_argument("--kills", type=int, default=3, help="kill-and-resume rounds")
    args = parser.parse_args()
    cases, concurrency = args.cases, args.concurrency
    ideal = cases * 2 * app.LATENCY / concurrency

    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        ours = Ours(folder, cases, concurrency)
        # Warm up (first-use imports and schema building), in a store and judge cache of
        # its own.
        (folder / "warm-up").mkdir()
        ours.run("warm-up", app.app_model(), store=folder / "warm-up" / "experiments.db")
        print(
            f"{cases} cases, 20 ms app + 20 ms judge, concurrency {concurrency} "
            f"(ideal {ideal:.2f} s):"
        )
        wall, cpu, calls, judged = ours.run("first", app.app_model())
        assert calls == judged == cases, (calls, judged)
        figures("run_experiment", wall, cpu, cases, f", {wall / ideal:.2f}x ideal (target <= 1.2x)")
        first_wall, first_cpu = wall, cpu
        wall, cpu = bare_calls(ours)
        figures("the same calls alone (no capture, no store)", wall, cpu, cases)
        if not args.skip_langsmith:
            theirs = langsmith_runs(cases, concurrency)
            for label, (their_wall, their_cpu) in theirs.items():
                print(
                    f"  ours / {label:20} CPU per case {first_cpu / their_cpu:.2f}x "
                    f"(target <= 0.6x), wall {first_wall / their_wall:.2f}x"
                )

        print("re-run under a new name in the same store (judge cache warm):")
        cached_model = app.app_model(cache=SqliteCache(folder / "app-cache.db"))
        for label, name in (
            ("app model called (its cache filled)", "rerun"),
            ("app model answered from its cache", "rerun-app-cached"),
        ):
            wall, cpu, calls, judged = ours.run(name, cached_model)
            figures(
                label,
                wall,
                cpu,
                cases,
                f", {wall / first_wall:4.0%} of the first run (target <= 10 %); "
                f"judge calls {judged} (target 0), app model calls {calls}",
            )
            assert judged == 0, judged
        print(
            f"  with both caches warm no run waits on a model: what is left is the runs' CPU "
            f"({cpu:.2f} s of it in {wall:.2f} s)"
        )

        print(f"resume after a SIGKILL at >= 50 % (a subprocess each, concurrency {concurrency}):")
        ratios = [
            resume_after_kill(folder / f"kill-{n}", cases, concurrency)
            for n in range(1, args.kills + 1)
        ]
        print(
            f"  app calls in all / cases: worst {max(ratios):.3f}, mean "
            f"{sum(ratios) / len(ratios):.3f} (target <= 1.02; at most 1 + concurrency / cases)"
        )


if __name__ == "__main__":
    main()
