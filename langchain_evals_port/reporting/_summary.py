"""The entries of a report, and how its figures and results read in words."""

from __future__ import annotations

from dataclasses import dataclass

from langchain_evals_port.core import EvaluatorResult


@dataclass(frozen=True)
class ReportEntry:
    """One result the report received, with the name of the evaluator that produced it and
    the case it was reported under (``None`` outside any case)."""

    evaluator: str
    result: EvaluatorResult
    case: str | None = None


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
