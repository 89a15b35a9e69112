"""evaluate_many / aevaluate_many: input order, bounded concurrency, failures kept, progress."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

from langchain_evals_port import (
    EvalInput,
    EvalRequest,
    EvaluationFailure,
    Evaluator,
    EvaluatorInputError,
    ExactMatch,
    eval_scope,
)
from langchain_evals_port import EvaluatorResult as EvalResult
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


def timing_out_judge(bad_case: int) -> Evaluator:
    """A judge that times out on one case, as a provider does now and then."""

    def score(*, outputs: Any) -> bool:
        if outputs == bad_case:
            raise TimeoutError("the judge did not answer in 30 s")
        return True

    return Evaluator.from_function("judge", "quality", score)


def test_a_failure_among_many_cases_is_recorded_counted_and_loses_nothing() -> None:
    report = EvalReport()
    with eval_scope(report):
        outputs = evaluate_many(timing_out_judge(117), cases(200), progress=False)
    assert len(outputs) == 200
    failed = [o for o in outputs if isinstance(o, EvalResult) and o.outcome == "failed"]
    assert [(f.error_code, f.reason) for f in failed] == [
        ("timeout", "TimeoutError: the judge did not answer in 30 s")
    ]
    assert outputs[117] is failed[0]
    assert sum(o.score is True for o in outputs if isinstance(o, EvalResult)) == 199
    summary = report.summaries()["quality"]
    assert (summary.count, summary.failed, summary.mean) == (199, 1, 1.0)


async def test_an_async_failure_among_many_cases_is_recorded() -> None:
    outputs = await aevaluate_many(timing_out_judge(3), cases(50), progress=False)
    assert [o.outcome for o in outputs if isinstance(o, EvalResult)].count("failed") == 1
    assert len(outputs) == 50


def test_raising_is_opt_in() -> None:
    with pytest.raises(EvaluationFailure, match="did not answer") as caught:
        evaluate_many(timing_out_judge(3), cases(6), max_concurrency=2, on_error="raise")
    assert caught.value.code == "timeout"


async def test_raising_is_opt_in_async() -> None:
    with pytest.raises(EvaluationFailure, match="did not answer"):
        await aevaluate_many(timing_out_judge(3), cases(6), max_concurrency=2, on_error="raise")


def test_on_error_overrides_the_evaluator_s_own() -> None:
    recording = timing_out_judge(0).model_copy(update={"on_error": "record"})
    with pytest.raises(EvaluationFailure):
        evaluate_many(recording, cases(1), on_error="raise")
    assert evaluate_many(recording, cases(1))[0].outcome == "failed"  # type: ignore[union-attr]


def test_bad_input_from_the_caller_still_raises() -> None:
    with pytest.raises(EvaluatorInputError, match="exact_match requires"):
        evaluate_many(ExactMatch(), [{"outputs": 1}], progress=False)


def test_on_error_must_be_record_or_raise() -> None:
    with pytest.raises(ValueError, match="on_error must be 'record' or 'raise'"):
        evaluate_many(ExactMatch(), cases(1), on_error="ignore")  # type: ignore[arg-type]


@pytest.mark.parametrize("limit", [0, -1])
def test_max_concurrency_must_be_positive(limit: int) -> None:
    with pytest.raises(ValueError, match="max_concurrency"):
        evaluate_many(ExactMatch(), cases(1), max_concurrency=limit)


def test_quiet_when_stderr_is_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    evaluate_many(ExactMatch(), [{"outputs": 1, "reference_outputs": 1}] * 3)
    assert capsys.readouterr().err == ""


PROGRAM = """
import sys
from langchain_evals_port import ExactMatch
from langchain_evals_port.reporting import evaluate_many
progress = {"auto": None, "off": False, "on": True}[sys.argv[1]]
evaluate_many(ExactMatch(), [{"outputs": 1, "reference_outputs": 1}] * 3, progress=progress)
"""


def on_a_terminal(progress: str, **env: str) -> str:
    """What a run of ``evaluate_many`` draws on a real pseudo-terminal."""
    controller, terminal = os.openpty()
    environment = {k: v for k, v in os.environ.items() if k != "CI"}
    environment.update(TERM="xterm", COLUMNS="120", **env)
    child = subprocess.Popen(
        [sys.executable, "-c", PROGRAM, progress],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env=environment,
    )
    os.close(terminal)
    drawn = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the terminal closed with the child
            break
        if not chunk:
            break
        drawn += chunk
    os.close(controller)
    assert child.wait(timeout=60) == 0, drawn.decode(errors="replace")
    return drawn.decode(errors="replace")


def test_a_progress_bar_with_rate_and_eta_on_a_terminal() -> None:
    drawn = on_a_terminal("auto")
    assert "exact_match" in drawn
    assert "3/3" in drawn
    assert "/s" in drawn
    assert "eta" in drawn


@pytest.mark.parametrize(("progress", "env"), [("auto", {"CI": "true"}), ("off", {})])
def test_no_progress_bar_in_ci_or_when_turned_off(progress: str, env: dict[str, str]) -> None:
    assert on_a_terminal(progress, **env) == ""


def test_progress_on_draws_in_a_pipe_too() -> None:
    run = subprocess.run(
        [sys.executable, "-c", PROGRAM, "on"], capture_output=True, text=True, check=True
    )
    assert "3/3" in run.stderr
