"""The anchors' workload ``bench_experiments.py`` runs side by side with pydantic-evals: an
async *function* target that sleeps 20 ms, an exact match and a 20 ms async function
"judge" (a plain function evaluator that sleeps, no model), on cases ``{"n": n}`` whose
reference output is ``str(2 * n)``.

``ours`` runs it through ``run_experiment`` (the default SQLite store in a folder given, the
judge cache on, as a user gets it); ``theirs`` through
``pydantic_evals.Dataset(cases=...).evaluate(task, max_concurrency=...)`` with pydantic-evals'
own ``EqualsExpected`` and an ``Evaluator`` dataclass whose ``async def evaluate`` sleeps,
which is how its documentation writes a custom evaluator. Both check every score is true.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_evals_port import ExactMatch, evaluator
from langchain_evals_port.experiments import Dataset, run_experiment

LATENCY = 0.020


async def target(inputs: dict[str, int]) -> str:
    await asyncio.sleep(LATENCY)
    return str(2 * inputs["n"])


@evaluator(feedback_key="judge")
async def judge(outputs: str, reference_outputs: str) -> bool:
    await asyncio.sleep(LATENCY)
    return outputs == reference_outputs


def ours_dataset(cases: int) -> Dataset:
    return Dataset.from_records(
        [{"inputs": {"n": n}, "reference_outputs": str(2 * n)} for n in range(cases)]
    )


def ours(dataset: Dataset, folder: Path, name: str, concurrency: int) -> None:
    """One experiment of the workload in the store ``folder/experiments.db``."""
    result = run_experiment(
        target,
        dataset,
        [ExactMatch(), judge],
        name=name,
        store=folder / "experiments.db",
        max_concurrency=concurrency,
        progress=False,
    )
    assert len(result.runs) == len(dataset), (len(result.runs), len(dataset))
    assert all(r.score is True for run in result.runs for r in run.results)
    assert all(len(run.results) == 2 for run in result.runs)


def theirs_dataset(cases: int) -> Any:
    from pydantic_evals import Case
    from pydantic_evals import Dataset as PydanticDataset
    from pydantic_evals.evaluators import EqualsExpected, Evaluator, EvaluatorContext

    @dataclass
    class Judge(Evaluator[dict[str, int], str, None]):
        async def evaluate(self, ctx: EvaluatorContext[dict[str, int], str, None]) -> bool:
            await asyncio.sleep(LATENCY)
            return ctx.output == ctx.expected_output

    return PydanticDataset(
        name="bench",
        cases=[
            Case(name=f"case-{n}", inputs={"n": n}, expected_output=str(2 * n))
            for n in range(cases)
        ],
        evaluators=[EqualsExpected(), Judge()],
    )


def theirs(dataset: Any, concurrency: int) -> None:
    report = asyncio.run(
        dataset.evaluate(target, max_concurrency=concurrency, progress=False, name="bench")
    )
    assert not report.failures, report.failures[:1]
    assert len(report.cases) == len(dataset.cases), len(report.cases)
    assert all(
        len(case.assertions) == 2 and all(a.value is True for a in case.assertions.values())
        for case in report.cases
    )


def floor(cases: int, concurrency: int) -> None:
    """The same sleeps under a semaphore and nothing else: the least wall this machine
    allows at the moment (the event loop's own wake-ups under its current load)."""

    async def one(limit: asyncio.Semaphore, n: int) -> None:
        async with limit:
            output = await target({"n": n})
            await asyncio.gather(asyncio.sleep(LATENCY), asyncio.sleep(0))
            assert output == str(2 * n)

    async def every() -> None:
        limit = asyncio.Semaphore(concurrency)
        await asyncio.gather(*(one(limit, n) for n in range(cases)))

    asyncio.run(every())
