"""``run_experiment`` at scale, side by side with pydantic-evals and ``langsmith.evaluate``,
measured in one run.

Figures (issue 22, item 7; medians of 9 runs, ``--repeats 9 --kills 3``; two cores shared
with other work, load average 0.8-1.3 over the run; "before" is main's package before the
item, run with this script then, so both sides of each row come from one run):

| anchors' workload, 1,000 cases, concurrency 32 | before | after |
|---|---|---|
| ours: wall (x ideal 1.25 s) | 1.60 s (1.28x) | 1.44 s (1.15x; target <= 1.15x) |
| ours: CPU per case | 0.77 ms | 0.32 ms (target: <= pydantic-evals') |
| pydantic-evals, same run: wall, CPU per case | 1.54 s (1.23x), 0.32 ms | 1.57 s (1.26x), 0.34 ms |
| ours / pydantic-evals: CPU, wall | 2.40x, 1.04x | 0.95x, 0.91x |
| the sleeps alone under a semaphore: wall | 1.34 s (1.07x) | 1.35 s (1.08x) |
| LangChain-shaped: ours, CPU per case, wall | 2.36 ms, 2.66 s | 1.49 ms, 1.74 s |
| ours / ``langsmith.aevaluate`` (same run): CPU | 0.32x | 0.26x |
| app calls / cases after a SIGKILL at half way | 1.007-1.017 | 1.025-1.030 |

Three more runs of part 1 alone (``--only-anchors --repeats 9``) the same hour: CPU 0.82x,
0.84x, 0.86x of pydantic-evals', wall 1.14x, 1.14x, 1.15x of the ideal (the bare sleeps
1.07-1.08x). The CPU per case of both sides varies by a third from run to run here: the
machine's other work, and Python's full garbage collections (about 100 ms each in this
process, about once a run, landing on whichever side is running). What went: LangChain's
four ``inspect.signature`` calls per call of a function target (read once now), its task
and context copy for a function no handler hears of, ``os.environ`` lookups of unset
variables per evaluation (each raises and catches a ``KeyError``), LangSmith's per-call
imports asking whether it traces, a task per evaluator that scores in microseconds
(``scores_in_loop``) and a task per run (a slot's task takes the next run once it has scored
one, so a run no longer waits for a turn of the claiming loop and every other run that ended
at the same moment), the JSON of a claimed case (read back only when this process did not
create it), private pydantic attributes read per call, frozen dataclasses made per row,
counts of finished runs read from every row's JSON, ``os.urandom`` per interaction id (a
system call that lets go of the GIL), and the store's trips to a thread: its writes and
claims are batched (a kept run within 10 ms, a record within 50 ms, or with the next claim)
and made on the event loop when the SQLite file is free (``without_waiting``). What is left
beyond pydantic-evals is what it does not do: each run's output written before it is scored
and its record after, the target's LangChain run and capture, the evaluators as Runnables.
The wall follows the CPU: the runs move in step (every call takes 20 ms), so each wave's
last run waits for the CPU of all the others.

Every figure is the median of ``--repeats`` runs (the CPU and the wall each on its own;
the spread is printed too), and the load average is printed at the start and the end: the
machine has two cores other work shares, so the wall varies with it more than the CPU does.

1. The anchors' workload (``_function_workload.py``), side by side with pydantic-evals in
   the same run, alternating: ``--cases`` cases, an async function target sleeping 20 ms,
   an exact match and a 20 ms async function judge (a plain function evaluator that sleeps,
   no model), ``--concurrency`` at a time; ideal wall = cases / concurrency x 40 ms
   (1.25 s; ceil(cases / concurrency) x 40 ms = 1.28 s is the least a semaphore allows).
   Ours is ``run_experiment`` on the default SQLite store in a temporary folder with the
   judge cache on; theirs ``pydantic_evals.Dataset(cases=...).evaluate(task,
   max_concurrency=...)`` with ``EqualsExpected`` and an ``Evaluator`` whose ``async def
   evaluate`` sleeps. Printed: wall, wall / ideal (target <= 1.15x), CPU per case (target:
   <= pydantic-evals') and ours / theirs; and the same sleeps under a semaphore with no
   framework at all, the least wall the loaded machine allows at that moment.

The LangChain-shaped workload (parts 2 to 4): the app (``_experiment_app.py``) is an async
function making one call of a scripted chat model that takes 20 ms, so the capture machinery
records a model call per case; the evaluators are ``ExactMatch()`` and an ``LLMJudge``
(``CORRECTNESS_PROMPT``) on a scripted judge that takes 20 ms and always says true. Every
run is checked (all scores true, one app call and one judge call per case) before its
figures are printed. Printed:

2. ``--cases`` cases at ``--concurrency``, on a SQLite store: wall time against the ideal
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
3. The same experiment again under new names in the same store, so the judge cache
   (``judge-cache.db``) is warm: judge calls made (target 0) and wall as % of the first run
   (target <= 10 %). The app still runs on such a re-run, so it is measured twice: with the
   app's model calls made (its model given an empty ``SqliteCache``, which this re-run
   fills) and with them answered from that cache too: the "unchanged re-run" of an app
   whose cost is its model calls. What is left is CPU: the runs' capture, scoring, cache
   lookups and store writes, so the re-run's wall is bounded by CPU per case x cases.
4. Resume after a kill: the experiment (app and evaluators as ``"module:attr"``) runs in a
   subprocess, SIGKILLed once the store shows half its runs finished, then started again
   under the same name to completion; every app call appends a line to a file, so the
   total app calls / cases is counted across both processes (target <= 1.02), over
   ``--kills`` rounds. A run keeps its output while it is scored, so only the runs whose
   app call was under way at the kill call the app again: at most ``--concurrency`` of
   them, and how many depends on where the kill lands (with every app call taking the same
   20 ms, runs move in step, so either none or nearly all of those in flight).

Run: ``.venv/bin/python benchmarks/bench_experiments.py [--cases N] [--concurrency C]
[--repeats R] [--skip-langsmith] [--only-anchors]`` (about 2 minutes with the defaults on two
cores; ``--cases 20 --repeats 1`` for a smoke run of a few seconds).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import io
import logging
import os
import signal
import statistics
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
import _function_workload as functions
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


def medians(samples: list[tuple[float, float]]) -> tuple[float, float]:
    """The median wall and the median CPU of ``(wall, cpu)`` samples (each on its own)."""
    return statistics.median(w for w, _ in samples), statistics.median(c for _, c in samples)


def spread(samples: list[tuple[float, float]], cases: int) -> str:
    walls = sorted(w for w, _ in samples)
    cpus = sorted(c / cases * 1e3 for _, c in samples)
    return (
        f" (of {len(samples)}: wall {walls[0]:.2f}-{walls[-1]:.2f} s, "
        f"CPU {cpus[0]:.2f}-{cpus[-1]:.2f} ms)"
    )


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} on {os.cpu_count()} cores"


def figures(label: str, wall: float, cpu: float, cases: int, extra: str = "") -> None:
    print(f"  {label:44} {wall:6.2f} s wall, {cpu / cases * 1e3:5.2f} ms CPU per case{extra}")


def anchors_workload(folder: Path, cases: int, concurrency: int, repeats: int) -> None:
    """The anchors' workload (``_function_workload.py``): ``run_experiment`` and
    pydantic-evals' ``Dataset.evaluate``, alternately, ``repeats`` times each; medians."""
    ideal = cases * 2 * functions.LATENCY / concurrency
    ours_cases, their_dataset = functions.ours_dataset(cases), functions.theirs_dataset(cases)
    # Warm up both (first-use imports, schema building) on a few cases.
    (folder / "warm-up").mkdir()
    functions.ours(functions.ours_dataset(50), folder / "warm-up", "warm-up", concurrency)
    functions.theirs(functions.theirs_dataset(50), concurrency)
    ours: list[tuple[float, float]] = []
    theirs: list[tuple[float, float]] = []
    bare: list[tuple[float, float]] = []
    for round_ in range(repeats):
        store = folder / f"round-{round_}"
        store.mkdir()
        wall, cpu, _ = timed(
            functools.partial(functions.ours, ours_cases, store, "anchors", concurrency)
        )
        ours.append((wall, cpu))
        wall, cpu, _ = timed(lambda: functions.theirs(their_dataset, concurrency))
        theirs.append((wall, cpu))
        wall, cpu, _ = timed(lambda: functions.floor(cases, concurrency))
        bare.append((wall, cpu))
    print(
        f"{cases} cases, a 20 ms async function target, exact match + a 20 ms async function "
        f"judge, concurrency {concurrency} (ideal {ideal:.2f} s); medians of {repeats} runs each, "
        "alternating:"
    )
    for label, samples, target in (
        ("run_experiment (SQLite, judge cache on)", ours, " (target <= 1.15x)"),
        ("pydantic_evals Dataset.evaluate", theirs, ""),
        ("the sleeps alone (semaphore, no framework)", bare, ""),
    ):
        wall, cpu = medians(samples)
        figures(
            label, wall, cpu, cases, f", {wall / ideal:.2f}x ideal{target}{spread(samples, cases)}"
        )
    (our_wall, our_cpu), (their_wall, their_cpu) = medians(ours), medians(theirs)
    print(
        f"  ours / pydantic-evals: CPU per case {our_cpu / their_cpu:.2f}x (target <= 1.0x), "
        f"wall {our_wall / their_wall:.2f}x"
    )


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


def langsmith_runs(
    cases: int, concurrency: int, repeats: int
) -> dict[str, list[tuple[float, float]]]:
    """Wall (until ``evaluate`` returns) and CPU (until the posted runs are drained) of
    ``langsmith.evaluate`` and ``aevaluate`` over the same cases, ``repeats`` times each
    (alternately); prints the medians and what was posted."""
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
    sides = (("langsmith.evaluate", sync_side), ("langsmith.aevaluate", async_side))
    measured: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in sides}
    uploads: dict[str, list[int]] = {name: [] for name, _ in sides}
    with langsmith_stand_in() as paths:
        for _ in range(repeats):
            for name, side in sides:
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
                uploads[name].append(sum("/runs" in path for path in paths[posted:]))
                measured[name].append((wall, cpu + drained))
    for name, samples in measured.items():
        wall, cpu = medians(samples)
        figures(
            name,
            wall,
            cpu,
            cases,
            f", {statistics.median(uploads[name]):.0f} run uploads posted{spread(samples, cases)}",
        )
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
    parser.add_argument("--repeats", type=int, default=5, help="runs of each, for medians")
    parser.add_argument("--skip-langsmith", action="store_true")
    parser.add_argument("--kills", type=int, default=3, help="kill-and-resume rounds")
    parser.add_argument(
        "--only-anchors", action="store_true", help="the anchors' workload alone (part 1)"
    )
    args = parser.parse_args()
    cases, concurrency, repeats = args.cases, args.concurrency, args.repeats
    ideal = cases * 2 * app.LATENCY / concurrency
    print(f"measured under {load()}")

    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        (folder / "anchors").mkdir()
        anchors_workload(folder / "anchors", cases, concurrency, repeats)
        if args.only_anchors:
            print(f"done under {load()}")
            return
        ours = Ours(folder, cases, concurrency)
        # Warm up (first-use imports and schema building), in a store and judge cache of
        # its own.
        (folder / "warm-up").mkdir()
        ours.run("warm-up", app.app_model(), store=folder / "warm-up" / "experiments.db")
        print(
            f"{cases} cases, an async app on a 20 ms chat model + ExactMatch and an LLMJudge on "
            f"a 20 ms judge, concurrency {concurrency} (ideal {ideal:.2f} s); medians of "
            f"{repeats} runs:"
        )
        firsts = []
        for round_ in range(repeats):
            # Each in a store (and judge cache) of its own; the first is re-run below.
            store = None
            if round_:
                (folder / f"first-{round_}").mkdir()
                store = folder / f"first-{round_}" / "experiments.db"
            wall, cpu, calls, judged = ours.run("first", app.app_model(), store=store)
            assert calls == judged == cases, (calls, judged)
            firsts.append((wall, cpu))
        first_wall, first_cpu = medians(firsts)
        figures(
            "run_experiment",
            first_wall,
            first_cpu,
            cases,
            f", {first_wall / ideal:.2f}x ideal (target <= 1.2x){spread(firsts, cases)}",
        )
        wall, cpu = medians([bare_calls(ours) for _ in range(repeats)])
        figures("the same calls alone (no capture, no store)", wall, cpu, cases)
        if not args.skip_langsmith:
            theirs = langsmith_runs(cases, concurrency, repeats)
            for label, samples in theirs.items():
                their_wall, their_cpu = medians(samples)
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

        if args.kills:
            print(
                f"resume after a SIGKILL at >= 50 % (a subprocess each, concurrency {concurrency}):"
            )
            ratios = [
                resume_after_kill(folder / f"kill-{n}", cases, concurrency)
                for n in range(1, args.kills + 1)
            ]
            print(
                f"  app calls in all / cases: worst {max(ratios):.3f}, mean "
                f"{sum(ratios) / len(ratios):.3f} (target <= 1.02; at most 1 + concurrency / "
                "cases)"
            )
    print(f"done under {load()}")


if __name__ == "__main__":
    main()
