"""The support-agent experiment of ``cookbook/support_experiment``, run as the command line
will run it: the target and the evaluators named ``module:attr`` from that folder."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from langchain_evals_port.experiments import Dataset, ExperimentResult, run_experiment

EXAMPLE = Path(__file__).resolve().parents[2] / "cookbook" / "support_experiment"
KEYS = ("correctness", "trajectory_unordered_match", "intent")


@pytest.fixture(scope="module")
def example() -> Iterator[tuple[ModuleType, ExperimentResult, int]]:
    """The example's evaluators module, one experiment over its dataset (all six cases at
    once), and how many calls its judge model received during that experiment."""
    sys.path.insert(0, str(EXAMPLE))
    try:
        evaluators = importlib.import_module("evaluators")
        calls_before = len(evaluators.JUDGE_MODEL.calls)
        result = run_experiment(
            "agent:target",
            Dataset.load(EXAMPLE / "cases.jsonl"),
            evaluators.EVALUATORS,
            name="support-agent",
            store=False,  # a module-scoped fixture: no per-test folder for the store yet
            progress=False,
        )
        yield evaluators, result, len(evaluators.JUDGE_MODEL.calls) - calls_before
    finally:
        sys.path.remove(str(EXAMPLE))
        for name in ("agent", "evaluators"):
            sys.modules.pop(name, None)


def scores(result: ExperimentResult) -> dict[str, dict[str, object]]:
    return {
        case_id: {r.key: r.score for r in results}
        for case_id, results in result.results_by_case().items()
    }


def test_the_wrong_case_fails_every_evaluator_and_the_others_pass(example) -> None:
    _, result, _ = example
    assert scores(result) == {
        case_id: dict.fromkeys(KEYS, case_id != "refund-missed")
        for case_id in ("shipped", "delayed", "cancel", "refund", "no-order-id", "refund-missed")
    }
    statistics = result.statistics()
    assert sorted(statistics) == sorted(KEYS)
    for key in KEYS:
        stats = statistics[key]
        assert (stats.kind, stats.mean, stats.verdicts) == ("pass rate", pytest.approx(5 / 6), 6)
        assert (stats.inconclusive, stats.failed) == (0, 0)
        assert stats.case_means["refund-missed"] == 0.0


def test_concurrent_cases_get_their_own_replies(example) -> None:
    _, result, _ = example
    outputs = {run.case.id: run.run.outputs for run in result.runs}
    assert outputs["cancel"] == {
        "answer": "Done: order A-1003 had not shipped yet, so I have cancelled it.",
        "intent": "cancellation",
    }
    assert outputs["refund-missed"] == {
        "answer": "Order A-1005 was delivered on 2 March.",
        "intent": "order_status",
    }
    for run in result.runs:
        question = run.case.inputs["question"]
        assert run.run.interaction.transcript_messages[0].text == question


def test_the_trajectory_evaluator_scores_the_captured_tool_calls(example) -> None:
    _, result, _ = example
    trajectory = {
        run.case.id: next(r for r in run.results if r.key == "trajectory_unordered_match")
        for run in result.runs
    }
    assert {case_id: r.metadata["agent_tool_calls"] for case_id, r in trajectory.items()} == {
        "shipped": 1,
        "delayed": 1,
        "cancel": 2,
        "refund": 1,
        "no-order-id": 0,
        "refund-missed": 1,
    }
    comment = trajectory["refund-missed"].comment
    assert 'reference call refund_order(order_id="A-1005")' in comment
    assert 'agent call lookup_order(order_id="A-1005")' in comment


def test_the_judge_is_called_once_per_case_and_explains_the_wrong_answer(example) -> None:
    evaluators, result, judge_calls = example
    assert judge_calls == 6
    judged = [call.messages[-1].text for call in evaluators.JUDGE_MODEL.calls[-6:]]
    for run in result.runs:
        question = run.case.inputs["question"]
        assert sum(question in prompt for prompt in judged) == 1
    (wrong,) = (run for run in result.runs if run.case.id == "refund-missed")
    correctness = next(r for r in wrong.results if r.key == "correctness")
    assert correctness.comment == "The reference states 3, 5; it does not."
