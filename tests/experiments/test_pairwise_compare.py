"""pairwise_compare: a pairwise judge over the cases two experiments share, the candidate's
win rate with its Wilson interval, ties, inconclusive and failed cases counted apart."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from scipy.stats import binomtest  # type: ignore[import-untyped]

from langchain_evals_port import PairwiseLLMJudge
from langchain_evals_port.experiments import (
    Dataset,
    ExperimentResult,
    PairwiseComparison,
    apairwise_compare,
    pairwise_compare,
    run_experiment,
)
from langchain_evals_port.testing import ScriptedChatModel, ScriptedProviderError

ANSWER = re.compile(r"<answer_(a|b)>\n(.*?)\n</answer_\1>", re.DOTALL)

# Case id -> (candidate's answer, baseline's answer), and whose answer the judge prefers.
ANSWERS = {
    **{f"win{n}": ("good", "bad") for n in range(7)},
    **{f"loss{n}": ("bad", "good") for n in range(2)},
    "tie": ("good", "good"),
    "flip": ("FLIP", "good"),
    "boom": ("BOOM", "good"),
}


def judge_reply(messages: list[BaseMessage]) -> Any:
    """Prefers the answer that says "good"; always the first shown for FLIP; fails on BOOM."""
    a, b = dict(ANSWER.findall("\n".join(m.text for m in messages))).values()
    if "BOOM" in (a, b):
        return ScriptedProviderError.server_error()
    if "FLIP" in (a, b):
        return {"reasoning": "The first one.", "preferred": "A"}
    if a == b:
        return {"reasoning": "Equally good.", "preferred": "tie"}
    return {"reasoning": "One is good.", "preferred": "A" if a == "good" else "B"}


def experiments(trials: int = 1) -> tuple[ExperimentResult, ExperimentResult]:
    records = [{"id": case_id, "inputs": {"case": case_id}} for case_id in ANSWERS]
    crash = {"id": "crash", "inputs": {"case": "crash"}}
    # The candidate also ran a case the baseline did not, and the target raised on "crash".
    new_case = {"id": "new", "inputs": {"case": "new"}}

    def candidate(inputs: dict[str, str]) -> str:
        if inputs["case"] == "crash":
            raise RuntimeError("the candidate crashed")
        return "good" if inputs["case"] == "new" else ANSWERS[inputs["case"]][0]

    def baseline(inputs: dict[str, str]) -> str:
        return "good" if inputs["case"] == "crash" else ANSWERS[inputs["case"]][1]

    old = run_experiment(
        baseline,
        Dataset.from_records([*records, crash]),
        [],
        name="baseline",
        store=False,
        progress=False,
    )
    new = run_experiment(
        candidate,
        Dataset.from_records([*records, crash, new_case]),
        [],
        name="candidate",
        trials=trials,
        store=False,
        progress=False,
    )
    return old, new


def check(comparison: PairwiseComparison) -> None:
    assert (comparison.baseline, comparison.candidate) == ("baseline", "candidate")
    by_case = {case.case_id: case for case in comparison.cases}
    assert set(by_case) == set(ANSWERS)  # shared cases only, the crashed one skipped
    assert comparison.skipped == ("crash",)
    assert {by_case[f"win{n}"].preferred for n in range(7)} == {"candidate"}
    assert {by_case[f"loss{n}"].preferred for n in range(2)} == {"baseline"}
    assert by_case["tie"].preferred == "tie"
    assert by_case["flip"].preferred is None
    assert by_case["flip"].result.reason.startswith("position-inconsistent")
    assert by_case["boom"].preferred is None
    assert by_case["boom"].result.error_code == "provider_error"
    # The candidate is output A: its score is the candidate's preference.
    assert by_case["win0"].result.metadata["scores"] == [1.0, 0.0]
    assert by_case["loss0"].result.score == 0.0

    counts = (
        comparison.wins,
        comparison.losses,
        comparison.ties,
        comparison.inconclusive,
        comparison.failed,
    )
    assert counts == (7, 2, 1, 1, 1)
    # Ties are left out: 7 wins of 9 decided cases.
    assert comparison.win_rate == pytest.approx(7 / 9)
    expected = binomtest(7, 9).proportion_ci(method="wilson")
    assert comparison.interval is not None
    assert comparison.interval.low == pytest.approx(expected.low)
    assert comparison.interval.high == pytest.approx(expected.high)
    # By hand: centre (p + z²/2n) / (1 + z²/n), half-width z/(1 + z²/n) · √(p(1-p)/n + z²/4n²).
    assert (round(comparison.interval.low, 3), round(comparison.interval.high, 3)) == (
        0.453,
        0.937,
    )
    assert str(comparison) == (
        "candidate vs baseline: win rate 0.778 [0.453, 0.937]; 7 wins, 2 losses, 1 ties, "
        "1 inconclusive, 1 failed"
    )


def test_the_candidates_win_rate_and_interval_on_a_known_set() -> None:
    old, new = experiments()
    judge = PairwiseLLMJudge(model=ScriptedChatModel(responder=judge_reply))
    check(pairwise_compare(old, new, judge, max_concurrency=3))
    # The judge passed in is left as it was: it still raises on a failure.
    assert judge.on_error == "raise"


def test_the_async_twin_gives_the_same_comparison() -> None:
    old, new = experiments()
    judge = PairwiseLLMJudge(model=ScriptedChatModel(responder=judge_reply))
    check(asyncio.run(apairwise_compare(old, new, judge)))


def test_only_the_first_trial_of_each_case_is_judged() -> None:
    old, new = experiments(trials=2)
    model = ScriptedChatModel(responder=judge_reply)
    comparison = pairwise_compare(old, new, PairwiseLLMJudge(model=model))
    assert len(comparison.cases) == len(ANSWERS)
    # Two asks per case, but one for the case whose first ask failed (asked in turn).
    assert len(model.calls) == 2 * len(ANSWERS) - 1


def test_nothing_decided_has_no_win_rate() -> None:
    old, new = experiments()
    flipping = ScriptedChatModel(responder=lambda messages: {"reasoning": "r", "preferred": "A"})
    comparison = pairwise_compare(old, new, PairwiseLLMJudge(model=flipping))
    assert comparison.inconclusive == len(ANSWERS)
    assert (comparison.win_rate, comparison.interval) == (None, None)
    assert "win rate —" in str(comparison)


def test_max_concurrency_must_be_positive() -> None:
    old, new = experiments()
    with pytest.raises(ValueError, match="max_concurrency"):
        pairwise_compare(old, new, PairwiseLLMJudge(model=ScriptedChatModel()), max_concurrency=0)
