"""What an experiment produced: ``CaseResult`` per run, ``ExperimentResult`` for them all.

Statistics come from ``reporting.statistics``, the one place they are computed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from langchain_evals_port.core import EvaluatorResult
from langchain_evals_port.reporting import KeyComparison, KeyStatistics, compare, summarize

from ._case import Case
from ._target import TargetRun

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["CaseResult", "ExperimentResult", "JudgeCacheUse"]


@dataclass(frozen=True)
class CaseResult:
    """One run of one case: what the target did and every evaluator's results."""

    case: Case
    trial: int
    run: TargetRun
    results: tuple[EvaluatorResult, ...]


@dataclass(frozen=True)
class JudgeCacheUse:
    """How the judge calls of an experiment's run in this process were answered: from the
    cache (``hits``) or by the judge's model (``misses``: the calls actually made)."""

    hits: int
    misses: int


@dataclass(frozen=True, repr=False)
class ExperimentResult:
    """Every run of an experiment, in dataset order (trials of a case together); how the
    judges' cache answered (when there was one), the experiment's address in LangSmith
    (when it was uploaded) and, for a result of ``run_experiment`` or ``rescore``, how many
    runs that call finished (``ran``: 0 when the experiment was already complete and
    nothing ran; ``None`` for an experiment loaded from its store)."""

    name: str
    runs: tuple[CaseResult, ...]
    judge_cache: JudgeCacheUse | None = None
    langsmith_url: str | None = None
    ran: int | None = None

    def __repr__(self) -> str:
        # Short: a notebook shows it, and asyncio formats a finished task's result.
        return f"ExperimentResult({self.name!r}, {len(self.runs)} runs)"

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

    def print(
        self, *, baseline: ExperimentResult | None = None, console: Console | None = None
    ) -> None:
        """Print the figures of every feedback key (and the change against ``baseline``),
        with why results did not pass under them, as ``langchain-evals run`` does."""
        from ._report import print_summary

        print_summary(self, baseline=baseline, console=console)

    def write(
        self,
        directory: str | os.PathLike[str],
        *,
        baseline: ExperimentResult | None = None,
        plotly: bool = True,
    ) -> list[Path]:
        """Write ``report.md``, ``report.json`` and ``report.html`` into ``directory`` (as
        ``langchain-evals run --report DIR``); the paths written."""
        from ._report import write_report

        return write_report(self, directory, baseline=baseline, plotly=plotly)
