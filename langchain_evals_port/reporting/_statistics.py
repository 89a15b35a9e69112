"""The statistics of ``reporting.statistics``, computed here and nowhere else (the methods,
and why, are in that module's documentation)."""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from langchain_evals_port.core import EvaluatorResult

from ._render import figure

CONFIDENCE = 0.95
"""The confidence level of every interval."""

# A drop of exactly ``max_drop`` must not fail on the rounding of its subtraction.
_TOLERANCE = 1e-9

Method = Literal["wilson", "t", "clustered t", "logit t", "clustered logit t"]
"""How an interval was computed (see the module documentation)."""

Verdict = Literal["worse", "better", "no detectable change"]
"""What a comparison concludes: worse or better only when the interval excludes 0."""


@dataclass(frozen=True)
class Interval:
    """A 95 % confidence interval, ``low <= high``.

    Example:
        >>> str(Interval(0.71, 0.9))
        '[0.710, 0.900]'
    """

    low: float
    high: float

    def __str__(self) -> str:
        return self.format()

    def format(self, *, signed: bool = False) -> str:
        """``[low, high]`` with three decimals; ``signed`` adds ``+`` to positive bounds."""
        return f"[{figure(self.low, signed=signed)}, {figure(self.high, signed=signed)}]"


@dataclass(frozen=True)
class KeyStatistics:
    """The figures of one feedback key over a set of cases.

    ``str()`` renders the mean and its interval, e.g. ``0.820 [0.710, 0.900]``; the mean alone
    when there is no interval, and ``—`` without a verdict.

    Args:
        key: The feedback key.
        kind: ``"pass rate"`` when every verdict is a ``bool``, else ``"mean"``.
        mean: The mean of the case means (the pass rate for pass/fail keys); ``None`` without
            a verdict.
        interval: Its 95 % interval; ``None`` without a verdict, and for numeric scores of a
            single case.
        method: How ``interval`` was computed: ``"wilson"``, ``"t"``, ``"clustered t"``, or
            ``"logit t"`` / ``"clustered logit t"`` where the t interval would leave
            ``bounds``.
        cases: How many cases have at least one verdict (the ``n`` of the interval).
        verdicts: How many verdicts there are in all.
        inconclusive: How many results reached no verdict (not in the mean).
        failed: How many results failed with an error (not in the mean).
        case_means: Each case's mean verdict, by case id (what ``compare`` pairs).
        bounds: ``(0.0, 1.0)`` when every verdict lies within 0 and 1 (pass/fail keys, and
            scores such as a share or a judge's 0-1 score), else ``None``: no interval of a
            bounded key leaves its bounds.
    """

    key: str
    kind: Literal["pass rate", "mean"]
    mean: float | None
    interval: Interval | None
    method: Method | None
    cases: int
    verdicts: int
    inconclusive: int
    failed: int
    case_means: Mapping[str, float] = field(default_factory=dict, repr=False)
    bounds: tuple[float, float] | None = None

    def __str__(self) -> str:
        if self.mean is None:
            return "—"
        if self.interval is None:
            return figure(self.mean)
        return f"{figure(self.mean)} {self.interval}"


@dataclass(frozen=True)
class KeyComparison:
    """One key's change from a baseline to a candidate, paired case by case.

    ``str()`` renders the difference, its interval and the verdict, e.g. ``-0.120 [-0.200,
    -0.040] worse``; a difference over one shared case has no interval, and without a shared
    case it reads ``no shared cases``.

    Args:
        key: The feedback key.
        baseline: The key's figures before.
        candidate: The key's figures now.
        difference: The mean of the per-case differences (candidate minus baseline) over the
            shared cases; ``None`` without one.
        interval: Its 95 % paired t interval (logit-transformed where the t interval would
            leave the difference's bounds, see ``method``); ``None`` with fewer than two
            shared cases.
        verdict: ``"worse"`` when the interval lies below 0, ``"better"`` when above, else
            ``"no detectable change"``.
        shared: How many cases have a verdict on both sides (the pairs).
        worse: The shared cases whose score fell, the largest fall first.
        better: The shared cases whose score rose, the largest rise first.
        only_baseline: Cases with a verdict before and none now (not paired).
        only_candidate: Cases with a verdict now and none before (not paired).
        method: How ``interval`` was computed: ``"t"`` or ``"logit t"``; ``None`` without
            an interval.
    """

    key: str
    baseline: KeyStatistics
    candidate: KeyStatistics
    difference: float | None
    interval: Interval | None
    verdict: Verdict
    shared: int
    worse: tuple[str, ...]
    better: tuple[str, ...]
    only_baseline: tuple[str, ...]
    only_candidate: tuple[str, ...]
    method: Method | None = None

    def __str__(self) -> str:
        if self.difference is None:
            return "no shared cases"
        change = figure(self.difference, signed=True)
        if self.interval is None:
            return f"{change} (one shared case, no interval)"
        return f"{change} {self.interval.format(signed=True)} {self.verdict}"

    def case_changes(self) -> str:
        """The cases behind the figure, in one line; empty when no case changed.

        Example:
            >>> before = summarize({"a": [EvaluatorResult(key="k", score=True)]})
            >>> after = summarize({"a": [EvaluatorResult(key="k", score=False)],
            ...                    "b": [EvaluatorResult(key="k", score=True)]})
            >>> compare(before, after)["k"].case_changes()
            'worse: a (-1.000); only in the candidate: b'
        """

        def changed(cases: tuple[str, ...]) -> str:
            return ", ".join(
                f"{case} ({figure(self._case_difference(case), signed=True)})" for case in cases
            )

        parts = [
            ("worse", changed(self.worse)),
            ("better", changed(self.better)),
            ("only in the baseline", ", ".join(self.only_baseline)),
            ("only in the candidate", ", ".join(self.only_candidate)),
        ]
        return "; ".join(f"{label}: {cases}" for label, cases in parts if cases)

    def _case_difference(self, case: str) -> float:
        return self.candidate.case_means[case] - self.baseline.case_means[case]


@dataclass(frozen=True)
class GateResult:
    """Whether one key passed ``gate``, and why.

    ``str()`` is ``"<key>: <reason>"``.

    Args:
        comparison: The comparison the gate judged.
        max_drop: The largest drop it lets through.
        dropped: Whether the key fell by more than ``max_drop`` (outside the noise or not),
            or lost all its verdicts.
        passed: False only for a drop larger than ``max_drop`` outside the noise, or for a
            key that lost all its verdicts.
        reason: The comparison and the gate's reading of it, in words.
    """

    comparison: KeyComparison
    max_drop: float
    dropped: bool
    passed: bool
    reason: str

    def __str__(self) -> str:
        return f"{self.comparison.key}: {self.reason}"


def summarize(results_by_case: Mapping[str, Iterable[EvaluatorResult]]) -> dict[str, KeyStatistics]:
    """The figures of every feedback key in ``results_by_case``, keys in sorted order.

    Args:
        results_by_case: Each case id with every result of that case, of any keys. Several
            results of one key in a case are its trials: the case's score is their mean, and
            the interval is clustered by case. A key with no verdict at all whose results
            are counted under its field keys instead (``json_match`` under ``json_match:a``
            ...): an evaluator that scores per field reports a run it could not judge under
            its own key, and that run is inconclusive or failed for every field.

    Raises:
        TypeError: ``results_by_case`` is not a mapping of ``str`` case ids to iterables of
            ``EvaluatorResult``.
        ValueError: A verdict's score is not finite.

    Example:
        >>> passed = EvaluatorResult(key="correct", score=True)
        >>> failed = EvaluatorResult(key="correct", score=False)
        >>> cases = {f"q{n}": [passed] for n in range(8)} | {"q8": [failed], "q9": [failed]}
        >>> figures = summarize(cases)["correct"]
        >>> str(figures), figures.method, figures.cases
        ('0.800 [0.490, 0.943]', 'wilson', 10)
    """
    if not isinstance(results_by_case, Mapping):
        raise TypeError(
            "results_by_case must be a mapping of case id to that case's results, got "
            f"{type(results_by_case).__name__}"
        )
    scores: dict[str, dict[str, list[bool | float]]] = {}
    inconclusive: dict[str, int] = {}
    failed: dict[str, int] = {}
    for case, results in results_by_case.items():
        if not isinstance(case, str):
            raise TypeError(f"results_by_case keys are case ids (str), got {case!r}")
        # A result is itself iterable (a pydantic model), so one given without its list
        # would otherwise be read as its fields.
        if isinstance(results, (EvaluatorResult, str)) or not isinstance(results, Iterable):
            raise TypeError(
                f"results_by_case[{case!r}] must be an iterable of EvaluatorResult (e.g. a "
                f"list), got {type(results).__name__}"
            )
        for result in results:
            if not isinstance(result, EvaluatorResult):
                raise TypeError(
                    f"results_by_case[{case!r}] must hold EvaluatorResult objects, got "
                    f"{type(result).__name__}"
                )
            per_case = scores.setdefault(result.key, {})
            if result.outcome == "verdict":
                assert result.score is not None  # a verdict always carries one
                if not math.isfinite(result.score):
                    raise ValueError(
                        f"results_by_case[{case!r}] has a {result.key!r} score of "
                        f"{result.score}; statistics need finite scores"
                    )
                per_case.setdefault(case, []).append(result.score)
            elif result.outcome == "inconclusive":
                inconclusive[result.key] = inconclusive.get(result.key, 0) + 1
            else:
                failed[result.key] = failed.get(result.key, 0) + 1
    for key in [key for key, per_case in scores.items() if not per_case]:
        fields = [other for other in scores if other.startswith(f"{key}:") and scores[other]]
        if fields:
            del scores[key]
            for other in fields:
                inconclusive[other] = inconclusive.get(other, 0) + inconclusive.get(key, 0)
                failed[other] = failed.get(other, 0) + failed.get(key, 0)
    return {
        key: _key_statistics(key, scores[key], inconclusive.get(key, 0), failed.get(key, 0))
        for key in sorted(scores)
    }


def _key_statistics(
    key: str, scores: Mapping[str, list[bool | float]], inconclusive: int, failed: int
) -> KeyStatistics:
    case_means = {case: statistics.fmean(values) for case, values in sorted(scores.items())}
    verdicts = sum(len(values) for values in scores.values())
    is_pass_rate = verdicts > 0 and all(
        isinstance(score, bool) for values in scores.values() for score in values
    )
    means = list(case_means.values())
    bounds = (
        (0.0, 1.0)
        if verdicts and all(0 <= score <= 1 for values in scores.values() for score in values)
        else None
    )
    interval: Interval | None = None
    method: Method | None = None
    if is_pass_rate and all(mean in (0.0, 1.0) for mean in means):
        interval, method = wilson_interval(int(sum(means)), len(means)), "wilson"
    elif len(means) >= 2:
        interval, method = _mean_interval(means, bounds)
        if verdicts != len(means):
            method = "clustered t" if method == "t" else "clustered logit t"
    return KeyStatistics(
        key=key,
        kind="pass rate" if is_pass_rate else "mean",
        mean=statistics.fmean(means) if means else None,
        interval=interval,
        method=method,
        cases=len(means),
        verdicts=verdicts,
        inconclusive=inconclusive,
        failed=failed,
        case_means=case_means,
        bounds=bounds,
    )


def wilson_interval(successes: int, trials: int) -> Interval:
    """The 95 % Wilson score interval of ``successes`` out of ``trials`` (at least one).

    The closed form, with the normal quantile from ``scipy.stats.norm``: what
    ``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")`` returns, at a small
    fraction of its cost, for the console's many time buckets.

    Example:
        >>> print(wilson_interval(8, 10))
        [0.490, 0.943]
    """
    if trials < 1 or not 0 <= successes <= trials:
        raise ValueError(
            f"wilson_interval needs 0 <= successes <= trials >= 1, got {successes}, {trials}"
        )
    z = _normal_quantile()
    rate = successes / trials
    centre = (rate + z * z / (2 * trials)) / (1 + z * z / trials)
    half = (z / (1 + z * z / trials)) * math.sqrt(
        rate * (1 - rate) / trials + z * z / (4 * trials * trials)
    )
    # Exact at the ends (0 of n, n of n), where the formula's rounding would leave a hair.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return Interval(low, high)


@functools.cache
def _normal_quantile() -> float:
    from scipy.stats import norm  # type: ignore[import-untyped]

    return float(norm.ppf((1 + CONFIDENCE) / 2))


def _t_interval(values: list[float]) -> Interval:
    """The t interval of the mean of ``values`` (at least two)."""
    # mypy reports scipy's missing stubs once, at the import in ``_wilson``.
    from scipy.stats import t

    mean = statistics.fmean(values)
    half = float(t.ppf((1 + CONFIDENCE) / 2, len(values) - 1)) * (
        statistics.stdev(values) / math.sqrt(len(values))
    )
    return Interval(mean - half, mean + half)


def _mean_interval(
    values: list[float], bounds: tuple[float, float] | None
) -> tuple[Interval, Method]:
    """The t interval of the mean of ``values`` (at least two), or, where it would leave
    ``bounds``, the logit-transformed t interval, which never does."""
    interval = _t_interval(values)
    if bounds is None or (bounds[0] <= interval.low and interval.high <= bounds[1]):
        return interval, "t"
    return _logit_t_interval(values, bounds), "logit t"


def _logit_t_interval(values: list[float], bounds: tuple[float, float]) -> Interval:
    """The t interval of the mean of ``values`` taken on the logit scale of ``bounds``
    (the delta method) and mapped back: inside the bounds, asymmetric near them."""
    from scipy.stats import t

    low, high = bounds
    width = high - low
    share = (statistics.fmean(values) - low) / width
    if not 0 < share < 1:
        # Every value at one bound: no spread, the point itself (as the t interval says).
        return Interval(low + width * share, low + width * share)
    error = statistics.stdev(values) / math.sqrt(len(values)) / width
    half = float(t.ppf((1 + CONFIDENCE) / 2, len(values) - 1)) * error / (share * (1 - share))
    centre = math.log(share / (1 - share))

    def back(logit: float) -> float:
        # The logistic function in the form that cannot overflow for either sign.
        if logit >= 0:
            return low + width / (1 + math.exp(-logit))
        return low + width * math.exp(logit) / (1 + math.exp(logit))

    return Interval(back(centre - half), back(centre + half))


def compare(
    baseline: Mapping[str, KeyStatistics], candidate: Mapping[str, KeyStatistics]
) -> dict[str, KeyComparison]:
    """Each key of both ``baseline`` and ``candidate``, compared case by case.

    Args:
        baseline: ``summarize`` of the earlier results.
        candidate: ``summarize`` of the results to judge.

    Raises:
        TypeError: A value of either mapping is not ``KeyStatistics``.

    Example:
        >>> def run(*scores):
        ...     cases = enumerate(EvaluatorResult(key="quality", score=s) for s in scores)
        ...     return summarize({f"q{n}": [result] for n, result in cases})
        >>> before = run(0.9, 0.8, 0.9, 0.7, 0.8)
        >>> str(compare(before, run(0.7, 0.7, 0.8, 0.6, 0.6))["quality"])
        '-0.140 [-0.208, -0.072] worse'
        >>> str(compare(before, run(0.8, 0.9, 0.7, 0.9, 0.8))["quality"])
        '+0.000 [-0.196, +0.196] no detectable change'
    """
    for name, side in (("baseline", baseline), ("candidate", candidate)):
        for key, figures in side.items():
            if not isinstance(figures, KeyStatistics):
                raise TypeError(
                    f"{name}[{key!r}] must be KeyStatistics (from summarize), got "
                    f"{type(figures).__name__}"
                )
    return {
        key: _compare_key(key, baseline[key], candidate[key])
        for key in sorted(baseline.keys() & candidate.keys())
    }


def _compare_key(key: str, baseline: KeyStatistics, candidate: KeyStatistics) -> KeyComparison:
    before, after = baseline.case_means, candidate.case_means
    # A difference within rounding noise (0.15000000000000002 - 0.15) is no difference.
    differences = {
        case: difference if abs(difference := after[case] - before[case]) > _TOLERANCE else 0.0
        for case in sorted(before.keys() & after)
    }
    values = list(differences.values())
    bounds = None
    if baseline.bounds is not None and candidate.bounds is not None:
        bounds = (
            candidate.bounds[0] - baseline.bounds[1],
            candidate.bounds[1] - baseline.bounds[0],
        )
    interval, method = _mean_interval(values, bounds) if len(values) >= 2 else (None, None)
    verdict: Verdict = "no detectable change"
    if interval is not None and interval.high < 0:
        verdict = "worse"
    elif interval is not None and interval.low > 0:
        verdict = "better"
    by_size = sorted(differences, key=lambda case: (-abs(differences[case]), case))
    return KeyComparison(
        key=key,
        baseline=baseline,
        candidate=candidate,
        difference=statistics.fmean(values) if values else None,
        interval=interval,
        verdict=verdict,
        shared=len(values),
        worse=tuple(case for case in by_size if differences[case] < 0),
        better=tuple(case for case in by_size if differences[case] > 0),
        only_baseline=tuple(sorted(before.keys() - after.keys())),
        only_candidate=tuple(sorted(after.keys() - before.keys())),
        method=method,
    )


def gate(comparison: KeyComparison, max_drop: float) -> GateResult:
    """Pass ``comparison`` unless its key dropped by more than ``max_drop`` outside the noise.

    The key fails when the mean per-case difference is below ``-max_drop`` and the verdict is
    ``"worse"`` (its interval lies below 0), or when it had verdicts before and has none now.
    A drop within the noise, or over fewer than two shared cases, passes, and says so.

    Args:
        comparison: One key's comparison, from ``compare``.
        max_drop: The largest drop to let through, a number >= 0 (0.05 is five points of a
            pass rate).

    Raises:
        ValueError: ``max_drop`` is negative or not a finite number.

    Example:
        >>> def run(*scores):
        ...     cases = enumerate(EvaluatorResult(key="quality", score=s) for s in scores)
        ...     return summarize({f"q{n}": [result] for n, result in cases})
        >>> comparison = compare(run(0.9, 0.8, 0.9, 0.7), run(0.7, 0.7, 0.8, 0.6))["quality"]
        >>> result = gate(comparison, max_drop=0.05)
        >>> result.passed
        False
        >>> print(result)
        quality: -0.125 [-0.205, -0.045] worse: a drop of more than 0.05 outside the noise
    """
    if (
        isinstance(max_drop, bool)
        or not isinstance(max_drop, (int, float))
        or not math.isfinite(max_drop)
        or max_drop < 0
    ):
        raise ValueError(f"max_drop must be a finite number >= 0, got {max_drop!r}")
    if comparison.candidate.verdicts == 0 and comparison.baseline.verdicts > 0:
        reason = f"no verdicts now (was {comparison.baseline})"
        return GateResult(comparison, max_drop, dropped=True, passed=False, reason=reason)
    difference = comparison.difference
    if difference is None or difference >= -(max_drop + _TOLERANCE):
        return GateResult(comparison, max_drop, dropped=False, passed=True, reason=str(comparison))
    if comparison.verdict == "worse":
        reason = f"{comparison}: a drop of more than {max_drop:g} outside the noise"
        return GateResult(comparison, max_drop, dropped=True, passed=False, reason=reason)
    noise = (
        "too few shared cases to tell it from noise"
        if comparison.interval is None
        else "within the noise"
    )
    reason = f"{comparison}: a drop of more than {max_drop:g}, {noise}"
    return GateResult(comparison, max_drop, dropped=True, passed=True, reason=reason)
