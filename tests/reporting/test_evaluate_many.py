"""evaluate_many / aevaluate_many: input order, bounded concurrency, progress."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from typing import Any

import pytest

from langchain_evals_port import EvalInput, EvalRequest, Evaluator, ExactMatch, eval_scope
from langchain_evals_port.reporting import EvalReport, aevaluate_many, evaluate_many


class InFlight:
    """Counts evaluations running at once and remembers the peak."""

    def __init__(self) -> None:
        self.now = 0
        self.peak = 0
        self._lock = threading.Lock()

    def enter(self) -> None:
        with self._lock:
            self.now += 1
            self.peak = max(self.peak, self.now)

    def leave(self) -> None:
        with self._lock:
            self.now -= 1


def slow_identity(counter: InFlight) -> Evaluator:
    """Scores the case's ``outputs`` after a pause of 0 to 20 ms, so cases overlap and
    finish out of order."""

    def score(*, outputs: Any) -> float:
        counter.enter()
        try:
            time.sleep(0.01 * (outputs % 3))
            return float(outputs)
        finally:
            counter.leave()

    return Evaluator.from_function("slow", "value", score)


def cases(n: int) -> list[dict[str, Any]]:
    return [{"outputs": i} for i in range(n)]


def test_results_in_input_order_with_bounded_concurrency() -> None:
    counter = InFlight()
    outputs = evaluate_many(slow_identity(counter), cases(40), max_concurrency=4, progress=False)
    assert [result.score for result in outputs] == [float(i) for i in range(40)]  # type: ignore[union-attr]
    assert counter.peak == 4


async def test_async_results_in_input_order_with_bounded_concurrency() -> None:
    counter = InFlight()

    async def ascore(*, outputs: Any) -> float:
        counter.enter()
        try:
            await asyncio.sleep(0.01 * (outputs % 3))
            return float(outputs)
        finally:
            counter.leave()

    evaluator = Evaluator.from_function("slow", "value", ascore)
    outputs = await aevaluate_many(evaluator, cases(40), max_concurrency=5, progress=False)
    assert [result.score for result in outputs] == [float(i) for i in range(40)]  # type: ignore[union-attr]
    assert counter.peak == 5


def test_accepts_requests_and_reports_into_the_callers_scope() -> None:
    report = EvalReport()
    requests: list[EvalInput] = [
        EvalRequest(outputs=1, reference_outputs=1),
        {"outputs": 1, "reference_outputs": 2},
    ]
    with eval_scope(report):
        outputs = evaluate_many(ExactMatch(), requests, progress=False)
    assert [result.score for result in outputs] == [True, False]  # type: ignore[union-attr]
    assert report.summaries()["exact_match"].count == 2


async def test_async_reports_into_the_callers_scope() -> None:
    report = EvalReport()
    with eval_scope(report):
        await aevaluate_many(ExactMatch(), [{"outputs": 1, "reference_outputs": 1}] * 10)
    assert report.summaries()["exact_match"].count == 10


def test_an_error_propagates() -> None:
    def score(*, outputs: Any) -> bool:
        if outputs == 3:
            raise KeyError("boom")
        return True

    broken = Evaluator.from_function("broken", "value", score)
    with pytest.raises(Exception, match="boom"):
        evaluate_many(broken, cases(6), max_concurrency=2, progress=False)


async def test_an_async_error_propagates() -> None:
    async def ascore(*, outputs: Any) -> bool:
        if outputs == 3:
            raise KeyError("boom")
        return True

    broken = Evaluator.from_function("broken", "value", ascore)
    with pytest.raises(Exception, match="boom"):
        await aevaluate_many(broken, cases(6), max_concurrency=2, progress=False)


@pytest.mark.parametrize("limit", [0, -1])
def test_max_concurrency_must_be_positive(limit: int) -> None:
    with pytest.raises(ValueError, match="max_concurrency"):
        evaluate_many(ExactMatch(), cases(1), max_concurrency=limit)


def test_quiet_when_stderr_is_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    evaluate_many(ExactMatch(), [{"outputs": 1, "reference_outputs": 1}] * 3)
    assert capsys.readouterr().err == ""


def test_quiet_in_ci_even_on_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setenv("CI", "true")
    evaluate_many(ExactMatch(), [{"outputs": 1, "reference_outputs": 1}] * 3)
    assert capsys.readouterr().err == ""


def test_progress_counter_on_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.delenv("CI", raising=False)
    evaluate_many(ExactMatch(), [{"outputs": 1, "reference_outputs": 1}] * 3)
    err = capsys.readouterr().err
    assert err == "\rexact_match: 1/3\rexact_match: 2/3\rexact_match: 3/3\n"


def test_progress_false_is_quiet_on_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.delenv("CI", raising=False)
    evaluate_many(ExactMatch(), cases(0), progress=False)
    evaluate_many(ExactMatch(), [{"outputs": 1, "reference_outputs": 1}], progress=False)
    assert capsys.readouterr().err == ""
