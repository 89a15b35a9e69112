"""``agreement``: accuracy, Cohen's κ and its Fleiss-Cohen-Everitt interval, the confusion
matrix, "fail" precision and recall and Spearman's rho, each checked against a computation
written out by hand; the degenerate cases; judge outcomes without a verdict counted apart."""

from __future__ import annotations

import math

import pytest

from langchain_evals_port.core import EvaluatorResult
from langchain_evals_port.trust import agreement

# 20 pairs, rows the judge, columns the person:
#                human pass  human fail
#   judge pass        8           2
#   judge fail        4           6
JUDGE = [True] * 10 + [False] * 10
HUMAN = [True] * 8 + [False] * 2 + [True] * 4 + [False] * 6


def test_kappa_accuracy_and_the_interval_match_the_hand_computation() -> None:
    judged = agreement(JUDGE, HUMAN)

    # Proportions: p_pp = .4, p_pf = .1, p_fp = .2, p_ff = .3.
    # The judge's rates (rows): pass .5, fail .5; the person's (columns): pass .6, fail .4.
    # p_o = .4 + .3 = .7; p_e = .5 * .6 + .5 * .4 = .5; κ = (.7 - .5) / (1 - .5) = .4.
    assert judged.n == 20
    assert judged.accuracy == pytest.approx(0.7)
    assert judged.kappa == pytest.approx(0.4)
    # Fleiss-Cohen-Everitt, with 1 - κ = .6:
    #   A = .4 (1 - (.5 + .6) .6)² + .3 (1 - (.5 + .4) .6)² = .4 · .1156 + .3 · .2116 = .10972
    #   B = .6² (.1 (.6 + .5)² + .2 (.4 + .5)²) = .36 · (.121 + .162) = .10188
    #   C = (.4 - .5 · .6)² = .01
    #   Var = (A + B - C) / (n (1 - p_e)²) = .2016 / (20 · .25) = .04032
    half_width = 1.959964 * math.sqrt(0.04032)  # 0.393557
    assert judged.kappa_interval is not None
    assert judged.kappa_interval.low == pytest.approx(0.4 - half_width, abs=1e-6)
    assert judged.kappa_interval.high == pytest.approx(0.4 + half_width, abs=1e-6)
    assert str(judged.kappa_interval) == "[0.006, 0.794]"
    assert judged.kappa_undefined is None


def test_confusion_and_fail_precision_and_recall() -> None:
    judged = agreement(JUDGE, HUMAN)

    assert judged.classes == (False, True)
    assert dict(judged.confusion) == {
        (True, True): 8,
        (True, False): 2,
        (False, True): 4,
        (False, False): 6,
    }
    # The judge failed 10, of which people failed 6; people failed 8, the judge 6 of them.
    assert judged.fail_precision == pytest.approx(6 / 10)
    assert judged.fail_recall == pytest.approx(6 / 8)
    assert judged.spearman is None  # pass/fail, not scores
    assert judged.confusion_table() == (
        "judge \\ human  fail  pass\nfail              6     4\npass              2     8"
    )


def test_pass_and_fail_labels_read_as_booleans() -> None:
    labels = ["pass" if h else "FAIL" for h in HUMAN]

    assert agreement(JUDGE, labels) == agreement(JUDGE, HUMAN)


def test_all_one_class_on_both_sides_leaves_kappa_undefined() -> None:
    # p_o = 1 and p_e = 1 · 1 = 1: κ = 0 / 0. Reported as undefined, not as 1 or 0.
    judged = agreement([True] * 6, [True] * 6)

    assert judged.accuracy == 1.0
    assert judged.kappa is None
    assert judged.kappa_interval is None
    assert judged.kappa_undefined == "judge and people gave one and the same class throughout"
    assert judged.fail_precision is None
    assert judged.fail_recall is None
    assert "κ undefined" in str(judged)


def test_a_judge_that_always_passes_has_kappa_zero_without_an_interval() -> None:
    # p_o = 4/5 = p_e = 1 · .8 + 0 · .2: κ = 0. The variance is exactly 0 here:
    # A = .8 (1 - 1.8)² = .512, B = .2 (.8 + 0)² = .128, C = (0 - .8)² = .64.
    judged = agreement([True] * 5, [True, True, False, True, True])

    assert judged.accuracy == pytest.approx(0.8)
    assert judged.kappa == pytest.approx(0.0)
    assert judged.kappa_interval is None
    assert judged.fail_precision is None  # the judge never said fail
    assert judged.fail_recall == 0.0


def test_perfect_agreement_has_kappa_one_and_no_point_interval() -> None:
    judged = agreement([True, False, True, False], [True, False, True, False])

    assert judged.kappa == pytest.approx(1.0)
    # Four pairs cannot make κ = 1 certain: the Wald interval's [1, 1] is not shown.
    assert judged.kappa_interval is None
    assert "κ 1.000," in str(judged)


def test_inconclusive_and_failed_judge_outcomes_are_counted_apart() -> None:
    unsure = EvaluatorResult.inconclusive("correctness", "the answer is cut off")
    broken = EvaluatorResult(
        key="correctness", outcome="failed", reason="timeout", error_code="timeout"
    )
    judge = [*JUDGE, unsure, broken, None, unsure]
    human = [*HUMAN, False, False, True, True]

    judged = agreement(judge, human)

    assert (judged.inconclusive, judged.failed) == (3, 1)
    expected = agreement(JUDGE, HUMAN)
    assert (judged.n, judged.accuracy, judged.kappa) == (20, expected.accuracy, expected.kappa)
    assert judged.confusion == expected.confusion


def test_verdicts_given_as_results_count_by_their_score() -> None:
    results = [EvaluatorResult(key="correctness", score=value) for value in JUDGE]

    assert agreement(results, HUMAN).kappa == pytest.approx(0.4)


def test_spearman_rho_of_numeric_scores() -> None:
    # Ranks 1..5 against 2 1 4 3 5: d = -1 1 -1 1 0, Σd² = 4;
    # rho = 1 - 6 Σd² / (n (n² - 1)) = 1 - 24 / 120 = 0.8.
    judged = agreement([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])

    assert judged.kind == "scores"
    assert judged.spearman == pytest.approx(0.8)
    # Each rating a class: one agreement in five, p_e = 5 · (1/5 · 1/5) = .2, κ = 0.
    assert judged.accuracy == pytest.approx(0.2)
    assert judged.kappa == pytest.approx(0.0)
    assert judged.fail_precision is None  # ratings have no "fail" class


def test_a_threshold_reads_numbers_as_pass_or_fail() -> None:
    judged = agreement([0.9, 0.8, 0.2, 0.6], [1.0, 0.3, 0.1, 0.7], threshold=0.5)

    assert judged.kind == "pass/fail"
    # pass/pass, pass/fail, fail/fail, pass/pass: 3 of 4 agree.
    assert judged.accuracy == pytest.approx(0.75)
    assert judged.confusion[(True, False)] == 1
    # rho on the numbers themselves: ranks 4 3 1 2 against 4 2 1 3, Σd² = 2, rho = 1 - 12/60.
    assert judged.spearman == pytest.approx(0.8)


def test_numbers_against_pass_fail_need_a_threshold() -> None:
    with pytest.raises(ValueError, match="threshold="):
        agreement([0.9, 0.2], [True, False])


def test_the_sequences_must_be_aligned() -> None:
    with pytest.raises(ValueError, match="3 judge values for 2 human values"):
        agreement([True, False, True], [True, False])


def test_no_pairs() -> None:
    judged = agreement([None], [True])

    assert (judged.n, judged.accuracy, judged.kappa, judged.inconclusive) == (0, None, None, 1)
    assert judged.kappa_undefined == "no pairs with a judge verdict"
