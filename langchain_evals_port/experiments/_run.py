"""``run_experiment``: run a target over a dataset's cases and score every output.

Each case runs ``trials`` times; each run is the target (with its trajectory captured) and
then every evaluator, at most ``max_concurrency`` runs at once. An evaluator gets the case's
``inputs`` and ``reference_outputs``, the target's return value as ``outputs`` — or its
transcript as LangChain messages for evaluators that judge trajectories — and the variables
``interaction`` (the captured ``InteractionRecord``), ``case_id`` and ``metadata``. Nothing is
lost to an exception: a target that raised leaves its evaluators ``inconclusive`` (nothing to
judge, the reason says why), and an evaluator that fails is a ``failed`` result with its
reason code. Statistics come from ``reporting.statistics``, the one place they are computed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_evals_port.core import EvalRequest, Evaluator, EvaluatorResult
from langchain_evals_port.core.errors import (
    EvaluatorUsageError,
    classify_failure,
    failure_reason,
)
from langchain_evals_port.reporting import KeyComparison, KeyStatistics, compare, summarize
from langchain_evals_port.reporting._display import Progress

from ._case import Case
from ._target import Target, TargetLike, TargetRun

__all__ = ["CaseResult", "ExperimentResult", "arun_experiment", "run_experiment"]


@dataclass(frozen=True)
class CaseResult:
    """One run of one case: what the target did and every evaluator's results."""

    case: Case
    trial: int
    run: TargetRun
    results: tuple[EvaluatorResult, ...]


@dataclass(frozen=True)
class ExperimentResult:
    """Every run of an experiment, in dataset order (trials of a case together)."""

    name: str
    runs: tuple[CaseResult, ...]

    def results_by_case(self) -> dict[str, list[EvaluatorResult]]:
        """Each case id with all its results (several trials: several per key)."""
        by_case: dict[str, list[EvaluatorResult]] = {}
        for run in self.runs:
            by_case.setdefault(run.case.id, []).extend(run.results)
        return by_case

    def statistics(self) -> dict[str, KeyStatistics]:
        """Per feedback key: the mean or pass rate with its 95 % interval, and the counts of
        inconclusive and failed results (intervals clustered by case over trials)."""
        return summarize(self.results_by_case())

    def compare(self, baseline: ExperimentResult) -> dict[str, KeyComparison]:
        """Per feedback key, this experiment against ``baseline``, paired case by case."""
        return compare(baseline.statistics(), self.statistics())


async def arun_experiment(
    target: TargetLike | Target,
    dataset: Iterable[Case],
    evaluators: Sequence[Evaluator],
    *,
    name: str | None = None,
    trials: int = 1,
    max_concurrency: int = 8,
    progress: bool | None = None,
) -> ExperimentResult:
    """Run ``target`` on every case of ``dataset`` ``trials`` times and score each run.

    Args:
        target: A ``Target``, or anything ``Target`` takes (a Runnable, a compiled graph, a
            function of the inputs, ``"module:attr"``).
        dataset: A ``Dataset`` or any iterable of ``Case``.
        evaluators: The evaluators scoring each run.
        name: The experiment's name (default: the target's).
        trials: How many times each case runs.
        max_concurrency: Runs (target and its evaluators) at once.
        progress: ``None`` shows a progress bar on a terminal or in a notebook, never under
            ``CI`` or in a pipe; ``False`` never, ``True`` always.

    Example:
        >>> import asyncio
        >>> from langchain_evals_port import ExactMatch
        >>> from langchain_evals_port.experiments import Dataset
        >>> dataset = Dataset.from_records([
        ...     {"inputs": {"q": "2 + 2"}, "reference_outputs": "4"},
        ...     {"inputs": {"q": "3 + 3"}, "reference_outputs": "6"},
        ... ])
        >>> result = asyncio.run(arun_experiment(lambda inputs: "4", dataset, [ExactMatch()]))
        >>> result.statistics()["exact_match"].mean
        0.5
    """
    runnable = target if isinstance(target, Target) else Target(target)
    cases = _cases(dataset)
    checked = _evaluators(evaluators)
    if not isinstance(trials, int) or isinstance(trials, bool) or trials < 1:
        raise EvaluatorUsageError(f"trials must be a whole number of at least 1, got {trials!r}")
    if not isinstance(max_concurrency, int) or max_concurrency < 1:
        raise EvaluatorUsageError(
            f"max_concurrency must be a whole number of at least 1, got {max_concurrency!r}"
        )
    limit = asyncio.Semaphore(max_concurrency)
    experiment = name or runnable.name
    shown = Progress(experiment, len(cases) * trials, progress)

    async def one(case: Case, trial: int) -> CaseResult:
        async with limit:
            run = await runnable.arun(case.inputs, case_id=case.id, trial=trial)
            scored = await asyncio.gather(*(_score(ev, case, run) for ev in checked))
        shown.advance()
        return CaseResult(case, trial, run, tuple(r for results in scored for r in results))

    try:
        runs = await asyncio.gather(
            *(one(case, trial) for case in cases for trial in range(trials))
        )
    finally:
        shown.close()
    return ExperimentResult(experiment, tuple(runs))


def run_experiment(
    target: TargetLike | Target,
    dataset: Iterable[Case],
    evaluators: Sequence[Evaluator],
    *,
    name: str | None = None,
    trials: int = 1,
    max_concurrency: int = 8,
    progress: bool | None = None,
) -> ExperimentResult:
    """``arun_experiment`` for synchronous code (in a running event loop, await that)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(
            arun_experiment(
                target,
                dataset,
                evaluators,
                name=name,
                trials=trials,
                max_concurrency=max_concurrency,
                progress=progress,
            )
        )
    raise EvaluatorUsageError(
        "run_experiment was called inside a running event loop; "
        "use `await arun_experiment(...)` instead"
    )


async def _score(evaluator: Evaluator, case: Case, run: TargetRun) -> list[EvaluatorResult]:
    """``evaluator``'s results for one run; never raises for the run's sake."""
    key = evaluator.feedback_key
    if run.failed:
        failure = run.interaction.failure
        reason = f"the target raised {failure.reason}: {failure.summary}" if failure else ""
        return [EvaluatorResult.inconclusive(key, reason or "the target raised")]
    outputs = (
        run.interaction.transcript_messages if evaluator.outputs_kind == "messages" else run.outputs
    )
    request = EvalRequest(
        inputs=case.inputs,
        outputs=outputs,
        reference_outputs=case.reference_outputs,
        variables={"interaction": run.interaction, "case_id": case.id, "metadata": case.metadata},
    )
    try:
        output = await evaluator.ainvoke(request)
    except Exception as error:
        # One case's bad output (or a judge that gave up) must not end the experiment.
        return [EvaluatorResult.failed(key, classify_failure(error).code, failure_reason(error))]
    return output if isinstance(output, list) else [output]


def _cases(dataset: Iterable[Case]) -> list[Case]:
    cases = list(dataset)
    for index, case in enumerate(cases):
        if not isinstance(case, Case):
            raise EvaluatorUsageError(
                f"dataset[{index}] is a {type(case).__name__}, not a Case; build the dataset "
                "with Dataset.from_records(...), Dataset.load(...) or Case(inputs=...)"
            )
    return cases


def _evaluators(evaluators: Sequence[Evaluator] | Mapping[str, Any]) -> list[Evaluator]:
    if isinstance(evaluators, (Mapping, str)) or not isinstance(evaluators, Sequence):
        raise EvaluatorUsageError(
            f"evaluators must be a list of evaluators, got {type(evaluators).__name__}"
        )
    for index, evaluator in enumerate(evaluators):
        if not isinstance(evaluator, Evaluator):
            raise EvaluatorUsageError(
                f"evaluators[{index}] is {evaluator!r}, not an Evaluator (wrap a function "
                "with @evaluator)"
            )
    return list(evaluators)
