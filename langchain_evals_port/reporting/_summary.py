"""The figures of a report: entries, per-key summaries, and how they are written out."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langchain_evals_port.core import EvaluatorResult


@dataclass(frozen=True)
class ReportEntry:
    """One result the report received, with the name of the evaluator that produced it."""

    evaluator: str
    result: EvaluatorResult


@dataclass(frozen=True)
class KeySummary:
    """The figures of one feedback key.

    Args:
        key: The feedback key.
        mean: The mean of the verdicts' scores (booleans count as 0 and 1, so for pass/fail
            keys it is the pass rate); ``None`` when the key has no verdict.
        count: How many verdicts the mean is over.
        inconclusive: How many results reached no verdict (not in the mean).
        failed: How many results failed with an error (not in the mean).
    """

    key: str
    mean: float | None
    count: int
    inconclusive: int
    failed: int


def summarise(key: str, results: list[EvaluatorResult]) -> KeySummary:
    scores = [float(r.score) for r in results if r.outcome == "verdict" and r.score is not None]
    return KeySummary(
        key=key,
        mean=math.fsum(scores) / len(scores) if scores else None,
        count=len(scores),
        inconclusive=sum(r.outcome == "inconclusive" for r in results),
        failed=sum(r.outcome == "failed" for r in results),
    )


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
