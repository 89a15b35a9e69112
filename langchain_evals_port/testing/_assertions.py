"""Assertions on evaluator results that say why they fail: the key, the score and the
judge's reasoning, or the outcome and reason of a result without a verdict."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from langchain_evals_port.core import EvaluatorResult

__all__ = ["assert_failed", "assert_passed", "assert_score_at_least"]


def _results(result: EvaluatorResult | Sequence[EvaluatorResult]) -> list[EvaluatorResult]:
    results = [result] if isinstance(result, EvaluatorResult) else list(result)
    if not results:
        raise AssertionError("no evaluator results to check: the list is empty")
    return results


def _reasoning(result: EvaluatorResult) -> str:
    return f"; reasoning: {result.comment}" if result.comment else "; the judge gave no reasoning"


def _no_verdict(result: EvaluatorResult) -> str | None:
    """The message for a result without a verdict, or ``None`` for a verdict."""
    if result.outcome == "verdict":
        return None
    code = f" ({result.error_code})" if result.error_code else ""
    return f"{result.key}: no verdict, outcome {result.outcome}{code}: {result.reason}"


def _check_all(
    result: EvaluatorResult | Sequence[EvaluatorResult],
    problem: Callable[[EvaluatorResult], str | None],
) -> None:
    # Every result is checked, so one failing test run shows all the keys that missed.
    messages = [m for r in _results(result) if (m := _no_verdict(r) or problem(r)) is not None]
    if messages:
        raise AssertionError("\n".join(messages))


def _boolean_score(result: EvaluatorResult, assertion: str) -> bool:
    if not isinstance(result.score, bool):
        raise TypeError(
            f"{assertion} needs a pass/fail (boolean) score, but {result.key!r} scored "
            f"{result.score!r}; use assert_score_at_least(threshold, result) for numbers"
        )
    return result.score


def assert_passed(result: EvaluatorResult | Sequence[EvaluatorResult]) -> None:
    """Assert that every result is a verdict with the boolean score ``True``.

    A result that is ``inconclusive`` or ``failed`` does not pass; the message gives its
    outcome and reason. A failing verdict's message gives the key, the score and the judge's
    reasoning (the comment).

    Raises:
        AssertionError: Some result did not pass (all of them are listed).
        TypeError: A verdict has a numeric score, which has no pass/fail meaning without a
            threshold: use ``assert_score_at_least``.

    Example:
        >>> assert_passed(EvaluatorResult(key="concise", score=True))
    """
    __tracebackhide__ = True

    def problem(r: EvaluatorResult) -> str | None:
        if _boolean_score(r, "assert_passed"):
            return None
        return f"{r.key}: expected to pass, but scored False{_reasoning(r)}"

    _check_all(result, problem)


def assert_failed(result: EvaluatorResult | Sequence[EvaluatorResult]) -> None:
    """Assert that every result is a verdict with the boolean score ``False``.

    "Failed" here is the verdict (the judge said no), not the ``failed`` outcome: a result
    whose evaluation raised an error reached no verdict, so this assertion fails on it.

    Raises:
        AssertionError: Some result is not a ``False`` verdict (all of them are listed).
        TypeError: A verdict has a numeric score.

    Example:
        >>> assert_failed(EvaluatorResult(key="concise", score=False, comment="rambles"))
    """
    __tracebackhide__ = True

    def problem(r: EvaluatorResult) -> str | None:
        if not _boolean_score(r, "assert_failed"):
            return None
        return f"{r.key}: expected to fail, but scored True{_reasoning(r)}"

    _check_all(result, problem)


def assert_score_at_least(
    threshold: float, result: EvaluatorResult | Sequence[EvaluatorResult]
) -> None:
    """Assert that every result is a verdict scoring at least ``threshold``.

    A boolean score counts as 1.0 (``True``) or 0.0 (``False``), as in report means.

    Raises:
        AssertionError: Some result scored below ``threshold`` or reached no verdict (all
            of them are listed, with key, score and reasoning or outcome and reason).

    Example:
        >>> assert_score_at_least(0.8, EvaluatorResult(key="correctness", score=0.9))
    """
    __tracebackhide__ = True

    def problem(r: EvaluatorResult) -> str | None:
        if r.score is not None and float(r.score) >= threshold:
            return None
        return f"{r.key}: score {r.score!r} is below {threshold}{_reasoning(r)}"

    _check_all(result, problem)
