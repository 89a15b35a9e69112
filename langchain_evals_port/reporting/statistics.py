"""Statistics you can trust: per-key means with 95 % intervals, paired comparisons, a gate.

``summarize`` turns results grouped by case into per-key figures (mean or pass rate, its
interval, inconclusive and failed counts); ``compare`` pairs two such summaries case by case;
``gate`` fails a key only on a drop larger than a threshold *and* outside the noise. The
terminal table, the reports and the console all render these objects with their ``str()``,
so a figure reads the same everywhere: ``0.820 [0.710, 0.900]``, ``-0.120 [-0.200, -0.040]
worse``.

The case is the unit throughout. A case's score for a key is the mean of its verdicts (its
trials, or every time the key was scored in it); inconclusive and failed results are counted,
never averaged in. Every interval is a 95 % interval.

How each interval is computed, and why:

- **Pass rates whose cases agree with themselves** (every verdict a ``bool``, and each case's
  verdicts all alike: one trial per case, or trials that agree): the Wilson score interval
  over cases (``k`` cases passed out of ``n``): ``wilson_interval``, the closed form of
  ``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")`` (the test suite checks they
  agree), cheap enough for every time bucket of the console. Wilson keeps its coverage for
  small ``n`` and for rates near 0 or 1, stays inside [0, 1], and does not collapse to a
  point at 0 % or 100 % as the textbook (Wald) interval does.
- **Numeric scores, one verdict per case**: the Student t interval, mean ± t(0.975, n-1)·s/√n,
  with the quantile from ``scipy.stats.t.ppf``. ``scipy.stats.ttest_1samp(...)
  .confidence_interval()`` computes the same, but warns on identical values and divides by
  zero for a single one, both cases we must answer, so the formula is written here, with
  ``statistics.fmean`` / ``statistics.stdev`` (exact for identical values).
- **Several verdicts in a case** (``trials > 1`` for numeric scores, or pass/fail trials that
  disagree within a case): clustered by case. Each case's verdicts are averaged and the t
  interval is taken over the case means, with n - 1 degrees of freedom for n cases. Trials
  of one case share its input and its difficulty, so counting them as independent
  observations would understate the noise. Averaging per case is the simplest cluster-robust
  estimate: with the same number of trials in every case its variance equals the CR1
  cluster-robust variance of the pooled mean, and when a trial is missing (inconclusive or
  failed) every case still weighs the same.
- **Bounded scores** (every verdict within 0 and 1: pass rates, shares, a judge's 0-1 score;
  ``KeyStatistics.bounds``): where the t interval would run past a bound (``0.994 [0.980,
  1.007]``), it is taken on the logit scale instead (the delta method: mean ± t·SE/(p(1-p))
  around logit(p), mapped back), which stays inside the bounds and leans away from the near
  one; the method then reads ``"logit t"`` (``"clustered logit t"`` over trials). Clipping
  would keep the figures in range but claim certainty at the bound. Inside the bounds the t
  interval stands, so the common case reads as before. Scores with any verdict outside 0-1
  are not bounded, and their t interval goes wherever it goes.

A t interval over values that are all the same is that point: the cases show no spread to
measure noise by. Numeric scores of a single case have no interval.

A key that has no verdict at all but field keys that do (``json_match`` beside
``json_match:a``: an evaluator scoring per field reports the runs it could not judge under
its own key) is no row of its own: its inconclusive and failed results count for each field.

The mean reported is therefore the mean of the case means: the plain mean of the verdicts
whenever every case has the same number of them.

``compare`` pairs the cases that have a verdict on both sides and takes the t interval over
the per-case differences (candidate minus baseline). With no shared case there is no
difference; with one there is a difference but no interval (one pair says nothing about the
noise); when every difference is the same the interval is that point (the cases show no
spread: a shift of every case alike is a change, not noise). The verdict is "worse" only when
the interval lies entirely below 0, "better" only when entirely above, and otherwise "no
detectable change". For pass/fail keys the per-case differences are -1, 0 and 1, and the
paired t interval is the usual large-sample interval for a change in paired proportions.
Differences of bounded keys are bounded too (within -1 and 1), and their interval is taken
on the logit scale where the t interval would leave that range (``KeyComparison.method``).
A per-case difference within rounding noise (1e-9) is 0: no case is listed as worse by
``+0.000``.

``gate`` fails a key only when its drop is larger than ``max_drop`` *and* outside the noise
(the interval lies below 0), or when a key that had verdicts has none any more.

Example:
    >>> from langchain_evals_port import EvaluatorResult
    >>> def run(*scores):
    ...     cases = enumerate(EvaluatorResult(key="quality", score=s) for s in scores)
    ...     return summarize({f"q{n}": [result] for n, result in cases})
    >>> before, after = run(0.9, 0.8, 0.9, 0.7, 0.8), run(0.7, 0.7, 0.8, 0.6, 0.6)
    >>> print(before["quality"], "->", after["quality"])
    0.820 [0.716, 0.924] -> 0.680 [0.576, 0.784]
    >>> print(compare(before, after)["quality"])
    -0.140 [-0.208, -0.072] worse
"""

from ._statistics import (
    CONFIDENCE,
    GateResult,
    Interval,
    KeyComparison,
    KeyStatistics,
    Method,
    Verdict,
    compare,
    gate,
    summarize,
    wilson_interval,
)

__all__ = [
    "CONFIDENCE",
    "GateResult",
    "Interval",
    "KeyComparison",
    "KeyStatistics",
    "Method",
    "Verdict",
    "compare",
    "gate",
    "summarize",
    "wilson_interval",
]
