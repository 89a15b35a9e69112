"""assert_passed, assert_failed and assert_score_at_least: what they accept and what they say."""

from __future__ import annotations

import pytest

from langchain_evals_port import EvaluatorResult
from langchain_evals_port.testing import assert_failed, assert_passed, assert_score_at_least

PASS = EvaluatorResult(key="concise", score=True, comment="two sentences")
FAIL = EvaluatorResult(key="concise", score=False, comment="three paragraphs of filler")
NUMBER = EvaluatorResult(key="correct", score=0.6, comment="misses the second fact")
INCONCLUSIVE = EvaluatorResult.inconclusive("concise", "the answer was empty")
FAILED = EvaluatorResult.failed("concise", "timeout", "judge did not answer in 30s")


def test_passing_results_pass() -> None:
    assert_passed(PASS)
    assert_passed([PASS, PASS])
    assert_failed(FAIL)
    assert_failed([FAIL])
    assert_score_at_least(0.6, NUMBER)
    assert_score_at_least(0.5, [NUMBER, PASS])


def test_assert_passed_says_key_score_and_reasoning() -> None:
    with pytest.raises(AssertionError) as caught:
        assert_passed(FAIL)
    assert str(caught.value) == (
        "concise: expected to pass, but scored False; reasoning: three paragraphs of filler"
    )


def test_assert_failed_says_key_score_and_reasoning() -> None:
    with pytest.raises(
        AssertionError, match="concise: expected to fail, but scored True; reasoning: two sentences"
    ):
        assert_failed(PASS)


def test_assert_score_at_least_says_key_score_threshold_and_reasoning() -> None:
    with pytest.raises(AssertionError) as caught:
        assert_score_at_least(0.8, NUMBER)
    assert str(caught.value) == "correct: score 0.6 is below 0.8; reasoning: misses the second fact"


def test_booleans_count_as_0_and_1_against_a_threshold() -> None:
    assert_score_at_least(1.0, PASS)
    with pytest.raises(AssertionError, match=r"score False is below 0\.1"):
        assert_score_at_least(0.1, FAIL)


def test_missing_reasoning_is_said() -> None:
    with pytest.raises(AssertionError, match="the judge gave no reasoning"):
        assert_passed(EvaluatorResult(key="k", score=False))


@pytest.mark.parametrize(
    "check",
    [assert_passed, assert_failed, lambda result: assert_score_at_least(0.0, result)],
)
def test_no_verdict_never_satisfies_an_assertion(check: object) -> None:
    assert callable(check)
    with pytest.raises(AssertionError) as caught:
        check(INCONCLUSIVE)
    assert str(caught.value) == ("concise: no verdict, outcome inconclusive: the answer was empty")
    with pytest.raises(AssertionError) as caught:
        check(FAILED)
    assert str(caught.value) == (
        "concise: no verdict, outcome failed (timeout): judge did not answer in 30s"
    )


def test_every_miss_in_a_list_is_listed() -> None:
    with pytest.raises(AssertionError) as caught:
        assert_passed([PASS, FAIL, INCONCLUSIVE])
    lines = str(caught.value).splitlines()
    assert len(lines) == 2
    assert "three paragraphs of filler" in lines[0]
    assert "the answer was empty" in lines[1]


def test_an_empty_list_is_an_assertion_error() -> None:
    with pytest.raises(AssertionError, match="empty"):
        assert_passed([])


@pytest.mark.parametrize("check", [assert_passed, assert_failed])
def test_a_numeric_score_points_to_assert_score_at_least(check: object) -> None:
    assert callable(check)
    with pytest.raises(TypeError, match=r"'correct' scored 0.6; use assert_score_at_least"):
        check(NUMBER)
