"""What an experiment produced: ``CaseResult`` per run, ``ExperimentResult`` for them all.

Both are frozen pydantic models that write and read themselves as JSON (with ``TargetRun``
and the ``Case``, they are the one record of a run from its claim to the report: the store
keeps a run's ``PendingRun`` and then its ``CaseResult``'s results, no translation between).
Statistics come from ``reporting.statistics``, the one place they are computed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationInfo, model_validator

from langchain_evals_port.core import EvaluatorResult
from langchain_evals_port.core._result import StoredResult
from langchain_evals_port.reporting import KeyComparison, KeyStatistics, compare, summarize

from ._case import Case
from ._target import TargetRun

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["CaseResult", "ExperimentResult", "JudgeCacheUse"]


class CaseResult(BaseModel):
    """One run of one case: what the target did and every evaluator's results.

    The store keeps a finished run's ``results`` beside its work (``PendingRun``: the case
    and what the target did): ``stored_results()`` writes them, ``from_stored`` reads them
    back with the rest (a stored result that no longer validates reads back ``failed``,
    code ``storage_error``)."""

    model_config = ConfigDict(frozen=True)

    case: Case
    trial: int
    run: TargetRun
    results: tuple[StoredResult, ...]

    def stored_results(self) -> str:
        """The JSON the store keeps of this run once it is finished: its results."""
        return self.model_dump_json(include={"results"}, fallback=repr)

    @classmethod
    def from_stored(cls, stored: str, *, case: Case, trial: int, run: TargetRun) -> CaseResult:
        """The run whose ``stored_results()`` is ``stored``, of ``case`` and ``trial``, that
        ``run`` is what the target did for."""
        return cls.model_validate_json(
            stored, context={_STORED: {"case": case, "trial": trial, "run": run}}
        )

    @model_validator(mode="before")
    @classmethod
    def _with_stored_run(cls, data: Any, info: ValidationInfo) -> Any:
        given = info.context.get(_STORED) if isinstance(info.context, dict) else None
        if given is not None and isinstance(data, dict):
            return {**data, **given}
        return data


_STORED = "langchain_evals_port.stored_run"
"""The validation context key ``CaseResult.from_stored`` hands the run's other fields in."""


class JudgeCacheUse(BaseModel):
    """How the judge calls of an experiment's run in this process were answered: from the
    cache (``hits``) or by the judge's model (``misses``: the calls actually made)."""

    model_config = ConfigDict(frozen=True)

    hits: int
    misses: int


class ExperimentResult(BaseModel):
    """Every run of an experiment, in dataset order (trials of a case together); how the
    judges' cache answered (when there was one), the experiment's address in LangSmith
    (when it was uploaded) and, for a result of ``run_experiment`` or ``rescore``, how many
    runs that call finished (``ran``: 0 when the experiment was already complete and
    nothing ran; ``None`` for an experiment loaded from its store). It writes and reads
    itself as JSON (``model_dump_json``, ``model_validate_json``), outputs that were
    LangChain messages coming back as messages."""

    model_config = ConfigDict(frozen=True)

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
