"""``run_experiment``: a target over a dataset, scored, with statistics and comparisons."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from test_target import QUESTION, order_agent

from langchain_evals_port import (
    EvaluatorUsageError,
    ExactMatch,
    LLMJudge,
    Score,
    TrajectoryMatch,
    evaluator,
)
from langchain_evals_port.experiments import (
    Case,
    Dataset,
    ExperimentResult,
    arun_experiment,
    run_experiment,
)
from langchain_evals_port.testing import ScriptedChatModel

ARITHMETIC = Dataset.from_records(
    [
        {"id": "add", "inputs": {"q": "2 + 2"}, "reference_outputs": "4"},
        {"id": "mul", "inputs": {"q": "3 * 3"}, "reference_outputs": "9"},
        {"id": "sub", "inputs": {"q": "5 - 1"}, "reference_outputs": "4"},
    ]
)


def calculator(inputs: dict[str, str]) -> str:
    return str(eval(inputs["q"]))  # the app under test: a tiny calculator


def test_every_case_is_run_and_scored_with_statistics_per_key() -> None:
    result = run_experiment(calculator, ARITHMETIC, [ExactMatch()], name="calc", progress=False)
    assert result.name == "calc"
    assert [(run.case.id, run.run.outputs) for run in result.runs] == [
        ("add", "4"),
        ("mul", "9"),
        ("sub", "4"),
    ]
    stats = result.statistics()["exact_match"]
    assert (stats.mean, stats.verdicts, stats.kind) == (1.0, 3, "pass rate")


def test_trials_run_each_case_several_times_and_cluster_the_interval_by_case() -> None:
    attempts: dict[str, int] = {}
    lock = threading.Lock()

    def flaky(inputs: dict[str, str]) -> str:
        # Case "add" is right on its first trial only; the others always.
        with lock:
            attempts[inputs["q"]] = attempts.get(inputs["q"], 0) + 1
            first = attempts[inputs["q"]] == 1
        answer = calculator(inputs)
        return answer if first or inputs["q"] != "2 + 2" else "5"

    result = run_experiment(flaky, ARITHMETIC, [ExactMatch()], trials=2, progress=False)
    assert sorted(attempts.values()) == [2, 2, 2]
    assert sorted((run.case.id, run.trial) for run in result.runs) == [
        ("add", 0),
        ("add", 1),
        ("mul", 0),
        ("mul", 1),
        ("sub", 0),
        ("sub", 1),
    ]
    stats = result.statistics()["exact_match"]
    # Case means 0.5, 1, 1: the mean of case means, with a t interval over 3 cases, taken on
    # the logit scale as the plain one would run past 1.
    assert stats.cases == 3
    assert stats.mean == pytest.approx((0.5 + 1 + 1) / 3)
    assert stats.method == "clustered logit t"


def test_a_target_that_raises_leaves_its_evaluators_inconclusive_and_the_run_goes_on() -> None:
    def picky(inputs: dict[str, str]) -> str:
        if "*" in inputs["q"]:
            raise ConnectionError("the multiplication service is down")
        return calculator(inputs)

    result = run_experiment(picky, ARITHMETIC, [ExactMatch()], progress=False)
    by_case = {run.case.id: run for run in result.runs}
    assert by_case["mul"].run.failed
    [inconclusive] = by_case["mul"].results
    assert inconclusive.outcome == "inconclusive"
    assert inconclusive.reason == (
        "the target raised ConnectionError: the multiplication service is down"
    )
    stats = result.statistics()["exact_match"]
    assert (stats.verdicts, stats.inconclusive, stats.mean) == (2, 1, 1.0)


def test_an_evaluator_that_fails_is_a_failed_result_not_an_aborted_experiment() -> None:
    judge = LLMJudge(
        prompt="Is {outputs} right for {inputs}?",
        feedback_key="right",
        model=ScriptedChatModel(
            responder=lambda messages: (
                TimeoutError("judge timed out")
                if "3 * 3" in messages[-1].text
                else {"reasoning": "fine", "score": True}
            )
        ),
    )
    result = run_experiment(calculator, ARITHMETIC, [judge, ExactMatch()], progress=False)
    by_case = {run.case.id: {r.key: r for r in run.results} for run in result.runs}
    assert by_case["mul"]["right"].outcome == "failed"
    assert by_case["mul"]["right"].error_code == "timeout"
    assert by_case["mul"]["exact_match"].score is True
    assert result.statistics()["right"].failed == 1


async def test_a_graph_target_s_trajectory_reaches_a_trajectory_evaluator() -> None:
    @evaluator(feedback_key="looked_up")
    def looked_up(interaction: Any) -> bool:
        return [call.name for call in interaction.tool_calls] == ["lookup_order"]

    reference = [
        {"role": "user", "content": "Where is my order A-17?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "1",
                    "function": {"name": "lookup_order", "arguments": {"order_id": "A-17"}},
                }
            ],
        },
        {"role": "tool", "content": "order A-17 shipped on Monday", "tool_call_id": "1"},
        {"role": "assistant", "content": "Your order shipped on Monday."},
    ]
    dataset = [Case(id="order", inputs=QUESTION, reference_outputs=reference)]
    result = await arun_experiment(
        order_agent(), dataset, [TrajectoryMatch(mode="strict"), looked_up], progress=False
    )
    [run] = result.runs
    scores = {r.key: r.score for r in run.results}
    assert scores == {"trajectory_strict_match": True, "looked_up": True}, run.results


def test_compare_flags_an_injected_regression_and_not_an_unchanged_run() -> None:
    cases = Dataset.from_records(
        [
            {"id": f"c{i}", "inputs": {"q": f"{i} + 1"}, "reference_outputs": str(i + 1)}
            for i in range(12)
        ]
    )
    before = run_experiment(calculator, cases, [ExactMatch()], name="before", progress=False)
    again = run_experiment(calculator, cases, [ExactMatch()], name="again", progress=False)

    def broken(inputs: dict[str, str]) -> str:
        number = int(inputs["q"].split()[0])
        return calculator(inputs) if number < 4 else "?"

    worse = run_experiment(broken, cases, [ExactMatch()], name="worse", progress=False)
    assert worse.compare(before)["exact_match"].verdict == "worse"
    assert set(worse.compare(before)["exact_match"].worse) == {f"c{i}" for i in range(4, 12)}
    assert again.compare(before)["exact_match"].verdict == "no detectable change"


def test_concurrency_is_bounded() -> None:
    running = 0
    peak = 0

    async def slow(inputs: dict[str, str]) -> str:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1
        return calculator(inputs)

    many = Dataset.from_records(
        [{"inputs": {"q": f"{i} + 0"}, "reference_outputs": str(i)} for i in range(20)]
    )
    result = run_experiment(slow, many, [ExactMatch()], max_concurrency=3, progress=False)
    assert len(result.runs) == 20
    assert peak == 3


class InFlight:
    """Counts calls running at once, on any thread, and remembers the peak."""

    def __init__(self) -> None:
        self.now = 0
        self.peak = 0
        self._lock = threading.Lock()

    def __enter__(self) -> None:
        with self._lock:
            self.now += 1
            self.peak = max(self.peak, self.now)

    def __exit__(self, *_: object) -> None:
        with self._lock:
            self.now -= 1


def test_concurrency_is_bounded_for_sync_targets_and_evaluators_on_threads() -> None:
    targets, evaluators = InFlight(), InFlight()

    def slow(inputs: dict[str, int]) -> int:
        with targets:
            time.sleep(0.02)
            return inputs["n"]

    @evaluator(feedback_key="echo")
    def echo(outputs: int) -> float:
        with evaluators:
            time.sleep(0.01 * (outputs % 3))  # runs finish out of order
            return float(outputs)

    many = Dataset.from_records([{"id": f"c{i}", "inputs": {"n": i}} for i in range(40)])
    result = run_experiment(slow, many, [echo], max_concurrency=4, progress=False)
    assert [(run.case.id, run.results[0].score) for run in result.runs] == [
        (f"c{i}", float(i)) for i in range(40)
    ]
    assert targets.peak == 4
    assert 1 <= evaluators.peak <= 4


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"trials": 0}, "trials must be a whole number of at least 1"),
        ({"max_concurrency": 0}, "max_concurrency must be a whole number of at least 1"),
        ({"evaluators": {"exact": ExactMatch()}}, "evaluators must be a list of evaluators"),
        ({"evaluators": [lambda outputs: True]}, r"evaluators\[0\] is .* not an Evaluator"),
        ({"dataset": [{"inputs": {}}]}, r"dataset\[0\] is a dict, not a Case"),
    ],
)
def test_bad_arguments_are_clear_errors(options: dict[str, Any], message: str) -> None:
    arguments: dict[str, Any] = {"dataset": ARITHMETIC, "evaluators": [ExactMatch()], **options}
    dataset, evaluators = arguments.pop("dataset"), arguments.pop("evaluators")
    with pytest.raises(EvaluatorUsageError, match=message):
        run_experiment(calculator, dataset, evaluators, progress=False, **arguments)


async def test_run_experiment_inside_an_event_loop_says_to_await_the_async_twin() -> None:
    with pytest.raises(EvaluatorUsageError, match="await arun_experiment"):
        run_experiment(calculator, ARITHMETIC, [ExactMatch()], progress=False)


def test_a_score_from_a_plain_function_evaluator_with_case_variables() -> None:
    @evaluator(feedback_key="tagged")
    def tagged(metadata: dict[str, Any], case_id: str) -> Score:
        return Score(metadata.get("tag") == "easy", f"case {case_id}")

    dataset = [Case(id="a", inputs={"q": "1 + 1"}, reference_outputs="2", metadata={"tag": "easy"})]
    result: ExperimentResult = run_experiment(calculator, dataset, [tagged], progress=False)
    [run] = result.runs
    assert [(r.score, r.comment) for r in run.results] == [(True, "case a")]
