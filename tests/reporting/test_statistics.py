"""reporting.statistics: intervals checked against hand computations, paired comparisons,
the gate, edge cases, bad input, and properties over generated data."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from scipy.stats import binomtest

from langchain_evals_port import EvaluatorResult
from langchain_evals_port.reporting import (
    Interval,
    KeyComparison,
    KeyStatistics,
    compare,
    gate,
    summarize,
    wilson_interval,
)

# Quantiles from printed tables, so the tests do not lean on the library they check.
Z_975 = 1.959963984540054
T_975 = {2: 4.302652729749464, 3: 3.182446305284263, 4: 2.776445105197799}

PASS = EvaluatorResult(key="k", score=True)
FAIL = EvaluatorResult(key="k", score=False)


def verdict(score: bool | float, key: str = "k") -> EvaluatorResult:
    return EvaluatorResult(key=key, score=score)


def one_each(*scores: bool | float, key: str = "k") -> dict[str, KeyStatistics]:
    """``summarize`` of one verdict per case, cases named ``c0``, ``c1``, ..."""
    return summarize({f"c{n}": [verdict(s, key)] for n, s in enumerate(scores)})


def t_by_hand(values: Sequence[float]) -> tuple[float, float]:
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = T_975[n - 1] * sd / math.sqrt(n)
    return mean - half, mean + half


def assert_interval(
    interval: Interval | None, low: float, high: float, *, printed: bool = False
) -> None:
    """``interval`` is ``[low, high]``; ``printed`` bounds are rounded to four decimals."""
    tolerance = 5e-5 if printed else 1e-12
    assert interval is not None
    assert interval.low == pytest.approx(low, abs=tolerance)
    assert interval.high == pytest.approx(high, abs=tolerance)


# --- summarize: the three intervals ---------------------------------------------------------


def test_a_pass_rate_of_8_in_10_has_the_wilson_interval() -> None:
    figures = one_each(*[True] * 8, False, False)["k"]
    n, p = 10, 0.8
    centre = (p + Z_975**2 / (2 * n)) / (1 + Z_975**2 / n)
    half = Z_975 / (1 + Z_975**2 / n) * math.sqrt(p * (1 - p) / n + Z_975**2 / (4 * n**2))
    assert (figures.kind, figures.method, figures.mean) == ("pass rate", "wilson", 0.8)
    assert_interval(figures.interval, centre - half, centre + half)
    assert_interval(
        figures.interval, 0.4902, 0.9433, printed=True
    )  # the published 8/10 Wilson interval
    assert str(figures) == "0.800 [0.490, 0.943]"


def test_wilson_does_not_collapse_at_all_passed() -> None:
    figures = one_each(*[True] * 10)["k"]
    assert_interval(figures.interval, 0.7225, 1.0, printed=True)
    assert figures.interval is not None
    assert figures.interval.high == 1.0


def test_numeric_scores_have_the_t_interval() -> None:
    # Scores above 1: no bounds to keep within (see the tests of bounds below).
    figures = one_each(1.5, 1.7, 1.9)["k"]
    assert (figures.kind, figures.method) == ("mean", "t")
    assert figures.mean == pytest.approx(1.7)
    assert_interval(figures.interval, *t_by_hand([1.5, 1.7, 1.9]))
    assert_interval(figures.interval, 1.2032, 2.1968, printed=True)


def test_trials_are_clustered_by_case() -> None:
    trials = {"a": [0.2, 0.4], "b": [0.6, 0.8], "c": [0.5, 0.5], "d": [0.9, 0.7]}
    figures = summarize({case: [verdict(s) for s in scores] for case, scores in trials.items()})[
        "k"
    ]
    case_means = [0.3, 0.7, 0.5, 0.8]
    assert (figures.method, figures.cases, figures.verdicts) == ("clustered t", 4, 8)
    assert figures.mean == pytest.approx(0.575)
    assert dict(figures.case_means) == pytest.approx(dict(zip("abcd", case_means, strict=True)))
    assert_interval(figures.interval, *t_by_hand(case_means))
    # Eight "independent" verdicts would claim a narrower interval than four cases allow.
    flat = [s for scores in trials.values() for s in scores]
    naive = summarize({f"v{n}": [verdict(s)] for n, s in enumerate(flat)})["k"].interval
    assert figures.interval is not None
    assert naive is not None
    assert naive.high - naive.low < figures.interval.high - figures.interval.low


def test_pass_fail_trials_that_disagree_are_clustered_and_kept_within_0_and_1() -> None:
    trials = {"a": [1, 1, 0], "b": [1, 0, 0], "c": [1, 1, 1], "d": [0, 0, 1]}
    figures = summarize(
        {case: [verdict(bool(s)) for s in scores] for case, scores in trials.items()}
    )["k"]
    low, high = t_by_hand([2 / 3, 1 / 3, 1, 1 / 3])
    assert high > 1  # the t interval runs past 1; a pass rate cannot
    assert (figures.kind, figures.method) == ("pass rate", "clustered logit t")
    assert figures.mean == pytest.approx(7 / 12)
    assert figures.interval is not None
    assert low < figures.interval.low < figures.mean < figures.interval.high < 1.0


def test_pass_fail_trials_that_agree_within_each_case_are_wilson_over_cases() -> None:
    figures = summarize({"a": [PASS] * 3, "b": [PASS] * 3, "c": [FAIL] * 3})["k"]
    expected = binomtest(2, 3).proportion_ci(0.95, method="wilson")
    assert (figures.method, figures.cases, figures.verdicts) == ("wilson", 3, 9)
    assert_interval(figures.interval, expected.low, expected.high)


def test_with_unequal_trials_every_case_weighs_the_same() -> None:
    figures = summarize({"a": [verdict(1.0)] * 3, "b": [verdict(0.0)]})["k"]
    assert figures.mean == 0.5  # not 0.75, the mean of the four verdicts


def test_the_t_interval_follows_the_clustered_method_quantile_by_case_count() -> None:
    # Four cases of five trials: three degrees of freedom, not nineteen.
    trials = {"a": [0.1] * 5, "b": [0.4] * 5, "c": [0.6] * 5, "d": [0.7] * 5}
    figures = summarize({case: [verdict(s) for s in scores] for case, scores in trials.items()})[
        "k"
    ]
    assert_interval(figures.interval, *t_by_hand([0.1, 0.4, 0.6, 0.7]))


# --- summarize: counts and edge cases -------------------------------------------------------


def test_inconclusive_and_failed_are_counted_never_averaged() -> None:
    figures = summarize(
        {
            "a": [PASS, EvaluatorResult.inconclusive("k", "no answer")],
            "b": [FAIL],
            "c": [EvaluatorResult.failed("k", "timeout", "judge too slow")],
        }
    )["k"]
    assert (figures.mean, figures.cases, figures.verdicts) == (0.5, 2, 2)
    assert (figures.inconclusive, figures.failed) == (1, 1)
    assert dict(figures.case_means) == {"a": 1.0, "b": 0.0}


def test_a_key_with_only_inconclusive_results_has_no_mean() -> None:
    figures = summarize({"a": [EvaluatorResult.inconclusive("k", "nothing to judge")]})["k"]
    assert (figures.mean, figures.interval, figures.method) == (None, None, None)
    assert (figures.cases, figures.verdicts, figures.inconclusive) == (0, 0, 1)
    assert str(figures) == "—"


def test_no_cases_is_no_keys() -> None:
    assert summarize({}) == {}
    assert summarize({"a": []}) == {}


def test_one_numeric_case_has_a_mean_but_no_interval() -> None:
    figures = one_each(0.5)["k"]
    assert (figures.mean, figures.interval, figures.method) == (0.5, None, None)
    assert str(figures) == "0.500"


def test_one_pass_fail_case_still_has_a_wilson_interval() -> None:
    figures = one_each(False)["k"]
    assert_interval(figures.interval, 0.0, 0.7935, printed=True)


def test_identical_numeric_scores_have_a_point_interval() -> None:
    figures = one_each(0.25, 0.25, 0.25)["k"]
    assert figures.interval == Interval(0.25, 0.25)


def test_keys_are_summarised_apart_in_sorted_order() -> None:
    figures = summarize({"a": [verdict(True, "z"), verdict(0.5, "m")], "b": [verdict(0.7, "m")]})
    assert list(figures) == ["m", "z"]
    assert figures["m"].mean == pytest.approx(0.6)
    assert (figures["z"].cases, figures["m"].cases) == (1, 2)


def test_booleans_mixed_with_numbers_are_a_mean_not_a_pass_rate() -> None:
    figures = one_each(True, 0.5, False)["k"]
    assert (figures.kind, figures.method, figures.mean) == ("mean", "logit t", 0.5)


@pytest.mark.parametrize(
    ("results_by_case", "error", "message"),
    [
        ([PASS], TypeError, "results_by_case must be a mapping of case id to that case's"),
        ({1: [PASS]}, TypeError, "results_by_case keys are case ids \\(str\\), got 1"),
        (
            {"a": PASS},
            TypeError,
            "results_by_case\\['a'\\] must be an iterable of EvaluatorResult .* got "
            "EvaluatorResult",
        ),
        ({"a": "pass"}, TypeError, "results_by_case\\['a'\\] must be an iterable"),
        (
            {"a": [{"key": "k", "score": 1.0}]},
            TypeError,
            "results_by_case\\['a'\\] must hold EvaluatorResult objects, got dict",
        ),
        (
            # Results refuse an infinite score; one built around validation still is refused here.
            {"a": [EvaluatorResult.model_construct(key="k", score=math.inf)]},
            ValueError,
            "results_by_case\\['a'\\] has a 'k' score of inf; statistics need finite scores",
        ),
    ],
    ids=["list", "int-case", "bare-result", "string", "dict-result", "infinite"],
)
def test_bad_input_names_the_field_and_the_expectation(
    results_by_case: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        summarize(results_by_case)  # type: ignore[arg-type]


# --- compare --------------------------------------------------------------------------------


def test_an_injected_regression_is_worse_with_the_paired_t_interval() -> None:
    before = one_each(0.9, 0.8, 0.9, 0.7, 0.8)
    after = one_each(0.7, 0.7, 0.8, 0.6, 0.6)
    comparison = compare(before, after)["k"]
    differences = [-0.2, -0.1, -0.1, -0.1, -0.2]
    assert comparison.difference == pytest.approx(-0.14)
    assert_interval(comparison.interval, *t_by_hand(differences))
    assert (comparison.verdict, comparison.shared) == ("worse", 5)
    assert comparison.worse == ("c0", "c4", "c1", "c2", "c3")  # the largest fall first
    assert comparison.better == ()
    assert str(comparison) == "-0.140 [-0.208, -0.072] worse"


def test_a_regression_in_a_few_cases_among_noise_is_found() -> None:
    rng = random.Random(6)
    base = [rng.uniform(0.4, 0.9) for _ in range(30)]
    noisy = [s + rng.uniform(-0.05, 0.05) for s in base]
    broken = [s - 0.3 if n % 3 == 0 else s for n, s in enumerate(noisy)]
    assert compare(one_each(*base), one_each(*noisy))["k"].verdict == "no detectable change"
    comparison = compare(one_each(*base), one_each(*broken))["k"]
    assert comparison.verdict == "worse"
    assert set(comparison.worse[:10]) == {f"c{n}" for n in range(0, 30, 3)}


def test_an_improvement_is_better() -> None:
    comparison = compare(one_each(0.7, 0.7, 0.8, 0.6), one_each(0.9, 0.8, 0.9, 0.7))["k"]
    assert comparison.verdict == "better"
    assert str(comparison) == "+0.125 [+0.045, +0.205] better"


def test_a_reshuffle_of_the_same_scores_across_cases_is_no_detectable_change() -> None:
    # The same scores, dealt to different cases: the total is unchanged; cases moved both
    # ways, and they are named, but nothing changed overall.
    comparison = compare(one_each(1.0, 0.8, 0.6, 0.4), one_each(0.6, 1.0, 0.4, 0.8))["k"]
    assert comparison.difference == pytest.approx(0.0)
    assert comparison.verdict == "no detectable change"
    assert (comparison.worse, comparison.better) == (("c0", "c2"), ("c3", "c1"))
    assert comparison.case_changes() == (
        "worse: c0 (-0.400), c2 (-0.200); better: c3 (+0.400), c1 (+0.200)"
    )


def test_the_same_scores_in_another_arrival_order_are_identical() -> None:
    forward = summarize({"a": [PASS, FAIL, PASS], "b": [FAIL, FAIL, PASS], "c": [PASS] * 3})
    backward = summarize({"c": [PASS] * 3, "b": [PASS, FAIL, FAIL], "a": [PASS, PASS, FAIL]})
    assert forward == backward
    comparison = compare(forward, backward)["k"]
    assert comparison.interval == Interval(0.0, 0.0)
    assert (comparison.verdict, comparison.case_changes()) == ("no detectable change", "")


def test_every_case_shifted_alike_is_a_point_interval_and_a_change() -> None:
    comparison = compare(one_each(1.0, 0.5, 0.75), one_each(0.75, 0.25, 0.5))["k"]
    assert comparison.interval == Interval(-0.25, -0.25)
    assert comparison.verdict == "worse"


def test_cases_on_one_side_only_are_named_not_paired() -> None:
    before = summarize({"a": [verdict(0.9)], "b": [verdict(0.8)], "gone": [verdict(0.1)]})
    after = summarize(
        {
            "a": [verdict(0.9)],
            "b": [verdict(0.6)],
            "new": [verdict(0.0)],
            "gone": [EvaluatorResult.inconclusive("k", "no answer")],
        }
    )
    comparison = compare(before, after)["k"]
    assert comparison.shared == 2
    assert comparison.difference == pytest.approx(-0.1)
    assert (comparison.only_baseline, comparison.only_candidate) == (("gone",), ("new",))
    assert comparison.case_changes() == (
        "worse: b (-0.200); only in the baseline: gone; only in the candidate: new"
    )


def test_one_shared_case_has_a_difference_but_no_interval() -> None:
    comparison = compare(one_each(1.0), one_each(0.0))["k"]
    assert (comparison.difference, comparison.interval) == (-1.0, None)
    assert comparison.verdict == "no detectable change"
    assert str(comparison) == "-1.000 (one shared case, no interval)"


def test_no_shared_case_has_no_difference() -> None:
    comparison = compare(summarize({"a": [PASS]}), summarize({"b": [FAIL]}))["k"]
    assert (comparison.difference, comparison.interval, comparison.shared) == (None, None, 0)
    assert str(comparison) == "no shared cases"


def test_only_keys_on_both_sides_are_compared() -> None:
    before = summarize({"a": [verdict(1.0, "kept"), verdict(1.0, "dropped")]})
    after = summarize({"a": [verdict(1.0, "kept"), verdict(1.0, "added")]})
    assert list(compare(before, after)) == ["kept"]


def test_compare_rejects_what_summarize_did_not_make() -> None:
    with pytest.raises(TypeError, match=r"candidate\['k'\] must be KeyStatistics .* got dict"):
        compare(one_each(1.0), {"k": {"mean": 1.0}})  # type: ignore[dict-item]


# --- gate -----------------------------------------------------------------------------------


def comparison_of(before: Sequence[float], after: Sequence[float]) -> KeyComparison:
    return compare(one_each(*before), one_each(*after))["k"]


def test_the_gate_fails_a_drop_beyond_the_limit_and_outside_the_noise() -> None:
    result = gate(comparison_of([0.9, 0.8, 0.9, 0.7], [0.7, 0.7, 0.8, 0.6]), max_drop=0.05)
    assert (result.dropped, result.passed) == (True, False)
    assert str(result) == (
        "k: -0.125 [-0.205, -0.045] worse: a drop of more than 0.05 outside the noise"
    )


def test_the_gate_lets_a_large_drop_within_the_noise_through_and_says_so() -> None:
    # The mean fell by 0.125, more than the limit, but the cases disagree about it.
    comparison = comparison_of(
        [1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0]
    )
    assert comparison.difference == pytest.approx(-0.125)
    result = gate(comparison, max_drop=0.05)
    assert (result.dropped, result.passed) == (True, True)
    assert result.reason.endswith(
        "no detectable change: a drop of more than 0.05, within the noise"
    )


def test_the_gate_lets_a_real_drop_within_the_limit_through() -> None:
    comparison = comparison_of([0.9, 0.8, 0.9, 0.7], [0.7, 0.7, 0.8, 0.6])
    assert comparison.verdict == "worse"
    result = gate(comparison, max_drop=0.2)
    assert (result.dropped, result.passed) == (False, True)
    assert result.reason == "-0.125 [-0.205, -0.045] worse"


def test_a_drop_of_exactly_the_limit_passes_despite_rounding() -> None:
    comparison = comparison_of([0.8, 0.8, 0.8], [0.7, 0.7, 0.7])  # -0.10000000000000009
    assert gate(comparison, max_drop=0.1).passed
    assert not gate(comparison, max_drop=0.099).passed


def test_the_gate_cannot_tell_a_drop_over_one_shared_case_from_noise() -> None:
    result = gate(comparison_of([1.0], [0.0]), max_drop=0.05)
    assert result.passed
    assert result.reason.endswith("too few shared cases to tell it from noise")


def test_the_gate_fails_a_key_that_lost_all_its_verdicts() -> None:
    before = summarize({"a": [PASS], "b": [PASS]})
    after = summarize({"a": [EvaluatorResult.failed("k", "timeout", "judge too slow")]})
    result = gate(compare(before, after)["k"], max_drop=0.5)
    assert (result.dropped, result.passed) == (True, False)
    assert str(result) == "k: no verdicts now (was 1.000 [0.342, 1.000])"


@pytest.mark.parametrize("max_drop", [-0.1, math.nan, math.inf, True, "0.1"])
def test_the_gate_rejects_a_bad_max_drop(max_drop: object) -> None:
    with pytest.raises(ValueError, match=r"max_drop must be a finite number >= 0, got"):
        gate(comparison_of([1.0, 1.0], [1.0, 1.0]), max_drop=max_drop)  # type: ignore[arg-type]


def test_the_gate_ignores_noise_that_the_plain_mean_rule_fails_on() -> None:
    # Runs of 20 cases whose scores only jitter: the plain rule "the mean fell more than
    # 0.02" fails a good share of them; the gate fails about the 2.5 % its interval allows.
    rng = random.Random(15)
    plain = gated = 0
    runs = 400
    for _ in range(runs):
        quality = [rng.uniform(0.3, 0.9) for _ in range(20)]
        before = [q + rng.gauss(0, 0.1) for q in quality]
        after = [q + rng.gauss(0, 0.1) for q in quality]
        comparison = comparison_of(before, after)
        assert comparison.difference is not None
        plain += comparison.difference < -0.02
        gated += not gate(comparison, max_drop=0.02).passed
    assert plain / runs > 0.2
    assert gated / runs < 0.05


# --- coverage: the intervals are right as often as they claim ----------------------------


def test_the_clustered_interval_covers_the_true_rate_about_95_percent_of_the_time() -> None:
    # Cases differ in difficulty and each is tried five times: trials of a case agree more
    # than trials of different cases, which an interval over independent verdicts ignores.
    rng = random.Random(15)
    rates = [0.1, 0.3, 0.5, 0.7, 0.9, 0.95]
    truth = sum(rates) / len(rates)
    clustered = independent = 0
    runs = 400
    for _ in range(runs):
        cases = {}
        for case in range(20):
            rate = rng.choice(rates)
            cases[f"c{case}"] = [PASS if rng.random() < rate else FAIL for _ in range(5)]
        figures = summarize(cases)["k"]
        assert figures.interval is not None
        clustered += figures.interval.low <= truth <= figures.interval.high
        wrong = binomtest(sum(r.score is True for rs in cases.values() for r in rs), 100)
        bounds = wrong.proportion_ci(0.95, method="wilson")
        independent += bounds.low <= truth <= bounds.high
    assert 0.92 <= clustered / runs <= 0.98
    assert independent / runs < 0.88


# --- rendering ------------------------------------------------------------------------------


def test_figures_render_with_three_decimals_and_no_negative_zero() -> None:
    assert str(Interval(0.71, 0.9)) == "[0.710, 0.900]"
    assert Interval(-0.0004, 0.05).format(signed=True) == "[+0.000, +0.050]"
    assert str(Interval(-0.0004, 0.05)) == "[0.000, 0.050]"
    assert str(one_each(0.25, 0.25)["k"]) == "0.250 [0.250, 0.250]"


# --- properties -----------------------------------------------------------------------------

scores = st.floats(min_value=-1000, max_value=1000, allow_nan=False, allow_infinity=False)


@given(
    st.integers(min_value=1, max_value=400).flatmap(
        lambda n: st.tuples(st.just(n), st.integers(0, n))
    )
)
def test_wilson_lies_within_0_and_1_and_holds_the_rate(case: tuple[int, int]) -> None:
    trials, passed = case
    figures = one_each(*[True] * passed, *[False] * (trials - passed))["k"]
    assert figures.interval is not None
    assert figures.mean is not None
    assert 0.0 <= figures.interval.low <= figures.mean <= figures.interval.high <= 1.0
    assert figures.interval.high - figures.interval.low > 0


@given(st.lists(scores, min_size=2, max_size=40))
@example([0.0, 1.1125369292536007e-308])  # a logit far below -709: exp overflowed
def test_the_t_interval_holds_the_mean(values: list[float]) -> None:
    figures = one_each(*values)["k"]
    assert figures.interval is not None
    assert figures.mean is not None
    assert figures.interval.low <= figures.mean <= figures.interval.high


@given(st.lists(st.lists(st.booleans(), min_size=1, max_size=5), min_size=2, max_size=15))
def test_a_clustered_pass_rate_lies_within_0_and_1_and_holds_the_rate(
    trials: list[list[bool]],
) -> None:
    figures = summarize({f"c{n}": [verdict(s) for s in case] for n, case in enumerate(trials)})["k"]
    assert figures.interval is not None
    assert figures.mean is not None
    assert 0.0 <= figures.interval.low <= figures.mean <= figures.interval.high <= 1.0


@given(st.lists(scores, min_size=2, max_size=30), st.randoms(use_true_random=False))
def test_any_reshuffle_of_scores_across_cases_is_no_detectable_change(
    values: list[float], rng: random.Random
) -> None:
    shuffled = list(values)
    rng.shuffle(shuffled)
    comparison = comparison_of(values, shuffled)
    assert comparison.verdict == "no detectable change"
    assert comparison.difference == pytest.approx(0.0, abs=1e-9)


@given(
    st.lists(st.tuples(scores, scores), min_size=2, max_size=30),
)
def test_comparing_the_other_way_mirrors_the_comparison(pairs: list[tuple[float, float]]) -> None:
    before, after = [a for a, _ in pairs], [b for _, b in pairs]
    forward, backward = comparison_of(before, after), comparison_of(after, before)
    assert forward.interval is not None
    assert backward.interval is not None
    assert forward.difference == pytest.approx(-(backward.difference or 0.0), abs=1e-9)
    assert forward.interval.low == pytest.approx(-backward.interval.high, abs=1e-9)
    assert (forward.worse, forward.better) == (backward.better, backward.worse)
    mirrored = {"worse": "better", "better": "worse"}
    assert backward.verdict == mirrored.get(forward.verdict, forward.verdict)


@pytest.mark.parametrize(
    ("successes", "trials"), [(0, 1), (1, 1), (3, 7), (8, 10), (50, 51), (0, 400)]
)
def test_the_closed_form_wilson_interval_is_scipys(successes: int, trials: int) -> None:
    from scipy.stats import binomtest

    expected = binomtest(successes, trials).proportion_ci(0.95, method="wilson")
    got = wilson_interval(successes, trials)
    assert got.low == pytest.approx(expected.low, abs=1e-12)
    assert got.high == pytest.approx(expected.high, abs=1e-12)


# --- bounds, rounding noise and keys scored per field (issue 21, item 19) ---------------------


def test_a_mean_of_scores_within_0_and_1_never_leaves_them() -> None:
    # The t interval of these is [0.980, 1.007]: above the largest possible score.
    figures = one_each(*[1.0] * 15, 0.95, 0.96)["k"]
    assert figures.bounds == (0.0, 1.0)
    assert figures.method == "logit t"
    assert figures.interval is not None
    assert figures.interval.low < figures.mean < figures.interval.high <= 1.0
    # Inside the bounds the t interval stands.
    assert one_each(0.9, 0.8, 0.9, 0.7, 0.8)["k"].method == "t"
    # Unbounded scores keep the t interval wherever it goes.
    wide = one_each(*[10.0] * 15, 9.5, 9.6)["k"]
    assert (wide.bounds, wide.method) == (None, "t")
    assert wide.interval is not None
    assert wide.interval.high > 10.0


def test_a_clustered_pass_rate_stays_within_0_and_1_by_its_logit_not_by_clipping() -> None:
    cases = {f"c{n}": [PASS, PASS] for n in range(6)} | {"c6": [PASS, FAIL]}
    figures = summarize(cases)["k"]
    assert figures.method == "clustered logit t"
    assert figures.interval is not None
    assert figures.interval.high < 1.0


def test_a_change_of_pass_rates_never_leaves_minus_1_to_1() -> None:
    # The paired t interval of ten rises and one tie is [+0.707, +1.112].
    before = one_each(*[False] * 11)
    after = one_each(*[True] * 10, False)
    comparison = compare(before, after)["k"]
    assert comparison.method == "logit t"
    assert comparison.interval is not None
    assert 0 < comparison.interval.low < comparison.difference < comparison.interval.high <= 1.0
    assert comparison.verdict == "better"


def test_rounding_noise_is_no_change_of_a_case() -> None:
    # fmean([0.1, 0.2]) is 0.15000000000000002.
    before = summarize({"a": [verdict(0.1), verdict(0.2)], "b": [verdict(0.5)]})
    after = summarize({"a": [verdict(0.15)], "b": [verdict(0.5)]})
    comparison = compare(before, after)["k"]
    assert (comparison.worse, comparison.better) == ((), ())
    assert comparison.case_changes() == ""
    assert comparison.difference == 0.0


def test_a_key_without_verdicts_is_counted_under_its_field_keys() -> None:
    raised = EvaluatorResult.inconclusive("json_match", "the target raised")
    broken = EvaluatorResult.failed("json_match", "evaluator_error", "not an object")
    figures = summarize(
        {
            "c0": [verdict(1.0, "json_match:a"), verdict(0.0, "json_match:b")],
            "c1": [raised],
            "c2": [broken],
        }
    )
    assert list(figures) == ["json_match:a", "json_match:b"]
    assert (figures["json_match:a"].inconclusive, figures["json_match:a"].failed) == (1, 1)
    # A key of its own with no verdict is still listed.
    alone = summarize({"c0": [raised]})
    assert list(alone) == ["json_match"]
    assert alone["json_match"].inconclusive == 1
