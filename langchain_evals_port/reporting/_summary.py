"""The figures of a report: entries, per-key summaries, and how they are written out."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langchain_evals_port.core import EvaluatorResult

from ._statistics import KeyStatistics, summarize


@dataclass(frozen=True)
class ReportEntry:
    """One result the report received, with the name of the evaluator that produced it and
    the case it was reported under (``None`` outside any case)."""

    evaluator: str
    result: EvaluatorResult
    case: str | None = None


def baseline_means(report: Mapping[str, Any] | None) -> dict[str, float]:
    """The numeric means of a JSON report, skipping whatever is missing or malformed."""
    keys = report.get("keys") if report is not None else None
    if not isinstance(keys, Mapping):
        return {}
    means: dict[str, float] = {}
    for key, figures in keys.items():
        mean = figures.get("mean") if isinstance(figures, Mapping) else None
        if isinstance(mean, (int, float)) and not isinstance(mean, bool):
            means[str(key)] = float(mean)
    return means


def baseline_statistics(report: Mapping[str, Any] | None) -> dict[str, KeyStatistics]:
    """The statistics of a JSON report's keys that carry their per-case scores (``cases``).

    Keys without them (reports written before they were kept, or by results outside any
    case) or with malformed ones are left out; inconclusive and failed results are not kept
    per case, so the statistics count verdicts only.
    """
    keys = report.get("keys") if report is not None else None
    if not isinstance(keys, Mapping):
        return {}
    results_by_case: dict[str, list[EvaluatorResult]] = {}
    for key, figures in keys.items():
        cases = figures.get("cases") if isinstance(figures, Mapping) else None
        if not (isinstance(cases, Mapping) and all(map(_is_scores, cases.values()))):
            continue
        for case, scores in cases.items():
            results_by_case.setdefault(str(case), []).extend(
                EvaluatorResult(key=str(key), score=score) for score in scores
            )
    return summarize(results_by_case)


def _is_scores(scores: Any) -> bool:
    return isinstance(scores, list) and all(
        isinstance(score, (bool, int, float)) and math.isfinite(score) for score in scores
    )


def format_mean(mean: float | None) -> str:
    """A mean with three decimals, or an em dash when there is none."""
    return "—" if mean is None else f"{mean:.3f}"


def format_change(mean: float | None, baseline: float | None) -> str:
    """``+0.050`` / ``-0.100`` against the baseline; blank when either side is missing."""
    if mean is None or baseline is None:
        return ""
    return f"{mean - baseline:+.3f}"


def describe(entry: ReportEntry) -> str:
    """One result in words: key, evaluator, score or outcome, and the reasoning."""
    result = entry.result
    head = f"{result.key} ({entry.evaluator}): "
    if result.outcome == "verdict":
        text = f"{head}score {result.score}"
        return f"{text} — {result.comment}" if result.comment else text
    code = f" [{result.error_code}]" if result.error_code else ""
    return f"{head}{result.outcome}{code} — {result.reason}"
