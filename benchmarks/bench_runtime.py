"""What the online evaluation runtime costs an agent, and how fast it records and evaluates.

Three measurements, each printed with its target:

1. Added latency of a bound agent. A compiled LangGraph agent (model -> ``lookup`` tool ->
   model, on a ``ScriptedChatModel`` with a zero-latency responder) is invoked unbound and
   bound (``runtime.bind``, one trivial evaluator bound by configuration, ``SqliteLedger`` in
   a temporary directory, WAL), calls interleaved (ABBA) after a warm-up. Reported: median and
   p99 of each side and their differences (bound - unbound). Targets: median added <= 1 ms,
   p99 added <= 5 ms, recording and enqueueing included. Run twice: with the background worker
   evaluating meanwhile (realistic: it competes for the GIL and the ledger), and with
   ``start=False`` (capture + record + enqueue only).
2. SQLite recording throughput: ``SqliteLedger.record_interaction`` of records captured from
   that agent (4 messages, 2 model responses, 1 tool call) with 2 work units each, in a loop.
   Target >= 2,000 interactions/s.
3. Background throughput: 1,000 interactions recorded with ``start=False``, each queueing one
   evaluation by an ``LLMJudge`` (registered as it is) whose ``ScriptedChatModel`` judge
   answers after 20 ms; then the runtime starts with concurrency 4 (the latency-bound
   regime real judges live in) and is timed until every outcome is recorded. Against the
   concurrency-limited ideal 4 / 20 ms = 200/s.
   Target >= 80 % of it. Also prints process CPU time per evaluation (all threads) and, for
   reference, the same judge calls without the runtime (``LLMJudge.ainvoke`` behind an
   ``asyncio.Semaphore``): a fixed latency keeps in-flight calls in lockstep, so even that
   reaches only about ideal + evaluations x CPU per evaluation (see ``bench_judge.py``).

``--profile latency|record|background`` runs one part under cProfile (process CPU time)
and prints where the time goes (functions by own and cumulative share).

Run: ``.venv/bin/python benchmarks/bench_runtime.py [--samples N] [--records N]
[--evaluations N] [--concurrency C]`` (about a minute with the defaults on two cores).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from langchain_evals_port import LLMJudge, evaluator
from langchain_evals_port.runtime import (
    EvaluationRuntime,
    InteractionRecord,
    SqliteLedger,
    WorkUnit,
)
from langchain_evals_port.testing import ScriptedChatModel, ToolCallReply

os.environ.pop("LANGSMITH_TRACING", None)
os.environ.pop("LANGCHAIN_TRACING_V2", None)

JUDGE_LATENCY = 0.020
QUESTION = {"messages": [HumanMessage("Where is order A-1001?")]}


# --- the agent and the evaluators ---------------------------------------------------------


@tool
def lookup(order_id: str) -> str:
    """The shipping status of an order."""
    return f"order {order_id} shipped on 3 March"


def answer(messages: list[BaseMessage]) -> Any:
    """The agent model: call the tool first, then answer from its result."""
    if messages[-1].type == "tool":
        return f"Your {messages[-1].text}; it should arrive within three days."
    return ToolCallReply("lookup", {"order_id": "A-1001"}, id="call-1")


def agent_graph() -> Any:
    model = ScriptedChatModel(responder=answer).bind_tools([lookup])

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", call_model)
    graph.add_node("tools", ToolNode([lookup]))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    return graph.compile()


@evaluator
def reply_given(outputs: str) -> tuple[bool, str]:
    """A trivial evaluator: checks that the interaction has a reply."""
    return bool(outputs), "reply present"


JUDGE_ID = "helpfulness-judge"


def judge_evaluator() -> LLMJudge:
    judge = ScriptedChatModel(
        responder=lambda messages: {"reasoning": "It answers. Score: true.", "score": True},
        latency=JUDGE_LATENCY,
    )
    return LLMJudge(prompt="Is this reply helpful?\n{inputs}\n{outputs}", model=judge)


def binding(evaluator_id: str) -> dict[str, Any]:
    return {"evaluation": {"evaluators": {evaluator_id: {"agents": {"support-agent": {}}}}}}


@contextmanager
def temporary_ledger() -> Iterator[SqliteLedger]:
    with tempfile.TemporaryDirectory() as folder:
        ledger = SqliteLedger(Path(folder) / "ledger.db")
        try:
            yield ledger
        finally:
            ledger.close()


def wait_until_done(ledger: SqliteLedger, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while ledger.pending_work():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{ledger.pending_work()} evaluations still pending")
        time.sleep(0.005)


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:8.3f} ms"


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


# --- 1. added latency -------------------------------------------------------------------------


@dataclass(frozen=True)
class Latency:
    unbound: list[float]
    bound: list[float]
    evaluations: int

    @staticmethod
    def p99(values: list[float]) -> float:
        return statistics.quantiles(values, n=100, method="inclusive")[98]


def measure_latency(samples: int, *, start: bool, warmup: int = 300) -> Latency:
    with temporary_ledger() as ledger:
        runtime = EvaluationRuntime(
            binding("reply-given"),
            evaluators={"reply-given": reply_given},
            ledger=ledger,
            start=start,
        )
        graph = agent_graph()
        bound = runtime.bind(graph, agent_id="support-agent")
        sides: tuple[Callable[..., Any], Callable[..., Any]] = (graph.invoke, bound.invoke)
        for _ in range(warmup):
            for call in sides:
                call(QUESTION)
        times: tuple[list[float], list[float]] = ([], [])
        gc.collect()
        for i in range(samples):
            # ABBA: each side runs first half of the time, so drift hits both alike.
            order = (0, 1) if i % 2 == 0 else (1, 0)
            for side in order:
                started = time.perf_counter()
                sides[side](QUESTION)
                times[side].append(time.perf_counter() - started)
        if start:
            wait_until_done(ledger)
        evaluations = ledger.query_evaluations(limit=100_000).items
        assert all(record.is_verdict for record in evaluations), evaluations
        count = len(ledger.query_interactions(limit=100_000).items)
        runtime.close()
    assert count == warmup + samples, count
    assert len(evaluations) == (count if start else 0), len(evaluations)
    return Latency(times[0], times[1], len(evaluations))


def report_latency(samples: int) -> list[tuple[str, bool]]:
    print(
        f"1. Added latency: LangGraph agent model -> tool -> model, {samples:,} interleaved "
        "calls per side after warm-up; SqliteLedger (WAL), one trivial evaluator bound"
    )
    print(f"   {'':<44} {'median':>11} {'p99':>11}")
    results = []
    for start, name in ((True, "evaluating in the background"), (False, "start=False")):
        latency = measure_latency(samples, start=start)
        median = (statistics.median(latency.unbound), statistics.median(latency.bound))
        p99 = (Latency.p99(latency.unbound), Latency.p99(latency.bound))
        print(f"   {name}")
        print(f"     {'unbound graph.invoke':<42} {ms(median[0])} {ms(p99[0])}")
        print(f"     {'bound agent.invoke':<42} {ms(median[1])} {ms(p99[1])}")
        added_median, added_p99 = median[1] - median[0], p99[1] - p99[0]
        ok_median, ok_p99 = added_median <= 0.001, added_p99 <= 0.005
        print(
            f"     {'added (bound - unbound)':<42} {ms(added_median)} {ms(added_p99)}"
            f"   median <= 1 ms: {verdict(ok_median)}, p99 <= 5 ms: {verdict(ok_p99)}"
        )
        if start:
            print(f"     ({latency.evaluations:,} evaluations recorded meanwhile)")
        results += [(f"added latency median ({name})", ok_median)]
        results += [(f"added latency p99 ({name})", ok_p99)]
    return results


# --- 2. recording throughput ------------------------------------------------------------------


def captured_record() -> InteractionRecord:
    """A record as the runtime captures it from the agent."""
    with temporary_ledger() as ledger:
        runtime = EvaluationRuntime(None, ledger=ledger, start=False)
        reply = runtime.bind(agent_graph(), agent_id="support-agent").invoke_detailed(QUESTION)
        record = ledger.get_interaction(reply.interaction_id)
        runtime.close()
    assert len(record.responses) == 2, record
    assert len(record.tool_calls) == 1, record
    return record


def records_with_units(
    count: int, prefix: str = "interaction"
) -> list[tuple[InteractionRecord, list[WorkUnit]]]:
    template = captured_record()
    now = time.time()
    batch = []
    for i in range(count):
        record = template.model_copy(update={"interaction_id": f"{prefix}-{i:06d}"})
        units = [
            WorkUnit(
                evaluation_id=f"{evaluator}-{prefix}-{i:06d}",
                evaluator_id=evaluator,
                interaction_id=record.interaction_id,
                agent_id=record.agent_id,
                enqueued_at=now,
            )
            for evaluator in ("reply-given", JUDGE_ID)
        ]
        batch.append((record, units))
    return batch


def measure_recording(count: int) -> tuple[float, float, int]:
    batch = records_with_units(count)
    with temporary_ledger() as ledger:
        ledger.record_interaction(*records_with_units(1, "warm-up")[0])
        gc.collect()
        wall, cpu = time.perf_counter(), time.process_time()
        for record, units in batch:
            ledger.record_interaction(record, units)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        queued = ledger.pending_work()
        size = len(batch[0][0].model_dump_json())
    assert queued == 2 * count + 2, queued
    return wall, cpu, size


def report_recording(count: int) -> list[tuple[str, bool]]:
    wall, cpu, size = measure_recording(count)
    rate = count / wall
    print(
        f"2. SqliteLedger.record_interaction: {count:,} captured records "
        f"({size:,} bytes of JSON each) with 2 work units each, one at a time"
    )
    print(
        f"   {rate:9,.0f} interactions/s   {wall / count * 1e6:7.1f} us wall and "
        f"{cpu / count * 1e6:7.1f} us CPU per interaction   target >= 2,000/s: "
        f"{verdict(rate >= 2000)}"
    )
    return [("recording throughput", rate >= 2000)]


# --- 3. background throughput ---------------------------------------------------------------


@dataclass(frozen=True)
class Background:
    wall: float
    cpu: float
    evaluations: int
    concurrency: int

    @property
    def rate(self) -> float:
        return self.evaluations / self.wall

    @property
    def ideal(self) -> float:
        return self.concurrency / JUDGE_LATENCY


def measure_background(evaluations: int, concurrency: int) -> Background:
    judge = judge_evaluator()
    with temporary_ledger() as ledger:
        runtime = EvaluationRuntime(
            binding(JUDGE_ID),
            evaluators={JUDGE_ID: judge},
            ledger=ledger,
            concurrency=concurrency,
            start=False,
        )
        agent = runtime.bind(agent_graph(), agent_id="support-agent")
        ids = [agent.invoke_detailed(QUESTION).interaction_id for _ in range(evaluations)]
        assert ledger.pending_work() == evaluations
        gc.collect()
        wall, cpu = time.perf_counter(), time.process_time()
        runtime.start()
        wait_until_done(ledger)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        runtime.close()
        for interaction_id in ids[:: max(1, evaluations // 50)]:
            [record] = ledger.get_evaluations(interaction_id)
            assert record.passed, record
    return Background(wall, cpu, evaluations, concurrency)


def measure_bare_judge(evaluations: int, concurrency: int) -> Background:
    """The same judge calls without the runtime: ``LLMJudge.ainvoke`` behind a semaphore."""
    import asyncio

    from langchain_evals_port.core import EvalRequest

    judge = judge_evaluator()  # the same evaluator the runtime runs
    request = EvalRequest.of(inputs=QUESTION["messages"][0].text, outputs=answer_text())

    async def run_all() -> list[Any]:
        semaphore = asyncio.Semaphore(concurrency)

        async def one() -> Any:
            async with semaphore:
                return await judge.ainvoke(request)

        return await asyncio.gather(*(one() for _ in range(evaluations)))

    asyncio.run(run_all())  # warm up
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    results = asyncio.run(run_all())
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert all(result.score is True for result in results), results[:3]
    return Background(wall, cpu, evaluations, concurrency)


def answer_text() -> str:
    return answer([HumanMessage("q"), ToolMessage("order A-1001 shipped", tool_call_id="c")])


def report_background(evaluations: int, concurrency: int) -> list[tuple[str, bool]]:
    result = measure_background(evaluations, concurrency)
    bare = measure_bare_judge(evaluations, concurrency)
    ratio = result.rate / result.ideal
    print(
        f"3. Background evaluations: {evaluations:,} LLMJudge evaluations (judge latency "
        f"{JUDGE_LATENCY * 1e3:.0f} ms), concurrency {concurrency}, SqliteLedger"
    )
    print(
        f"   wall {result.wall:6.2f} s (ideal {evaluations * JUDGE_LATENCY / concurrency:.2f} s)"
        f"   {result.rate:7.1f} evaluations/s of ideal {result.ideal:.0f}/s = {ratio:5.1%}"
        f"   target >= 80 %: {verdict(ratio >= 0.8)}"
    )
    print(
        f"   CPU {result.cpu:6.2f} s = {result.cpu / evaluations * 1e3:.2f} ms per evaluation"
        f" (all threads; at {concurrency} in flight every {JUDGE_LATENCY * 1e3:.0f} ms, "
        f"{JUDGE_LATENCY / concurrency * 1e3:.1f} ms per evaluation is the whole budget)"
    )
    print(
        f"   reference, no runtime: the same LLMJudge.ainvoke behind asyncio.Semaphore"
        f"({concurrency}): wall {bare.wall:5.2f} s, {bare.rate:6.1f}/s = "
        f"{bare.rate / bare.ideal:5.1%} of ideal, CPU {bare.cpu / evaluations * 1e3:.2f} ms "
        "per evaluation"
    )
    return [("background throughput", ratio >= 0.8)]


# --- profiling --------------------------------------------------------------------------------


def _where(function: tuple[str, int, str]) -> str:
    file, line, name = function
    for marker in ("langchain_evals_port/", "site-packages/", "lib/python3"):
        if marker in file:
            file = file.split(marker)[-1].lstrip("./0123456789")
            break
    else:
        file = os.path.basename(file)
    return f"{file}:{line} {name}" if line else name


def print_profile(profiler: cProfile.Profile, label: str, per: int, top: int = 25) -> None:
    stats: Any = pstats.Stats(profiler)
    total = stats.total_tt
    print(f"{label}: {total:.3f} s profiled CPU, {total / per * 1e3:.3f} ms per item")
    rows = [(c, t, n, _where(f)) for f, (_, n, t, c, _) in stats.stats.items()]
    print(f"  {'cumul.':>6} {'own':>6} {'calls':>8}  by cumulative share")
    for cumulative, own, calls, where in sorted(rows, reverse=True)[:top]:
        print(f"  {cumulative / total:6.1%} {own / total:6.1%} {calls:8d}  {where}")
    print(f"  {'own':>6} {'cumul.':>6} {'calls':>8}  by own share")
    for cumulative, own, calls, where in sorted(rows, key=lambda r: -r[1])[:top]:
        print(f"  {own / total:6.1%} {cumulative / total:6.1%} {calls:8d}  {where}")


def profile(part: str, samples: int, evaluations: int, concurrency: int) -> None:
    if part == "latency":
        # Only the bound calls, with the worker off: the capture + record + enqueue path.
        with temporary_ledger() as ledger:
            runtime = EvaluationRuntime(
                binding("reply-given"),
                evaluators={"reply-given": reply_given},
                ledger=ledger,
                start=False,
            )
            graph = agent_graph()
            bound = runtime.bind(graph, agent_id="support-agent")
            for _ in range(200):
                bound.invoke(QUESTION)
                graph.invoke(QUESTION)
            for name, call in (("unbound graph.invoke", graph.invoke), ("bound", bound.invoke)):
                profiler = cProfile.Profile(time.process_time)
                profiler.enable()
                for _ in range(samples):
                    call(QUESTION)
                profiler.disable()
                print_profile(profiler, name, samples)
            runtime.close()
    elif part == "record":
        batch = records_with_units(samples)
        with temporary_ledger() as ledger:
            profiler = cProfile.Profile(time.process_time)
            profiler.enable()
            for record, units in batch:
                ledger.record_interaction(record, units)
            profiler.disable()
        print_profile(profiler, "record_interaction", samples)
    else:
        # cProfile sees one thread; the runtime runs evaluations in its worker thread's event
        # loop, so that thread is profiled (ledger calls it sends to its pool are not).
        profiler = cProfile.Profile(time.process_time)
        judge = judge_evaluator()
        with temporary_ledger() as ledger:
            runtime = EvaluationRuntime(
                binding(JUDGE_ID),
                evaluators={JUDGE_ID: judge},
                ledger=ledger,
                concurrency=concurrency,
                start=False,
            )
            agent = runtime.bind(agent_graph(), agent_id="support-agent")
            for _ in range(evaluations):
                agent.invoke(QUESTION)
            # The worker runs in a thread started by runtime.start(): profile it there.
            original = runtime._dispatcher._serve  # benchmark instrumentation

            def profiled_serve() -> None:
                profiler.runcall(original)

            runtime._dispatcher._serve = profiled_serve  # type: ignore[method-assign]
            runtime.start()
            wait_until_done(ledger)
            runtime.close()
        print_profile(profiler, "background worker thread (event loop)", evaluations)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2000, help="calls per side (latency)")
    parser.add_argument("--records", type=int, default=5000, help="records (recording)")
    parser.add_argument("--evaluations", type=int, default=1000, help="(background)")
    parser.add_argument("--concurrency", type=int, default=4, help="(background)")
    parser.add_argument("--profile", choices=["latency", "record", "background"])
    args = parser.parse_args()
    if args.profile:
        count = args.records if args.profile == "record" else args.samples
        profile(args.profile, count, args.evaluations, args.concurrency)
        return
    results = report_latency(args.samples)
    print()
    results += report_recording(args.records)
    print()
    results += report_background(args.evaluations, args.concurrency)
    print()
    print("Targets:")
    for name, ok in results:
        print(f"  {verdict(ok):<7} {name}")


if __name__ == "__main__":
    main()
