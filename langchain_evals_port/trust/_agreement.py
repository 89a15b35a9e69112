"""``agreement``: how well a judge agrees with people, on two aligned sequences.

Labels are compared as categories: Cohen's κ is the agreement beyond what two raters giving
their classes at their own rates would reach by chance, ``(p_o - p_e) / (1 - p_e)``.

**The interval of κ** is the Wald interval ``κ ± z(0.975)·SE`` with the large-sample
standard error of Fleiss, Cohen and Everitt (1969), "Large sample standard errors of kappa
and weighted kappa", Psychological Bulletin 72(5) — the "ASE" of SAS PROC FREQ and
``statsmodels``' ``cohens_kappa(...).std_kappa``::

    Var(κ) = (A + B - C) / (n (1 - p_e)²)
    A = Σ_i p_ii (1 - (p_i. + p_.i)(1 - κ))²
    B = (1 - κ)² Σ_{i≠j} p_ij (p_.i + p_j.)²
    C = (κ - p_e (1 - κ))²

(rows ``i``: the judge's class, columns ``j``: the person's), clipped to [-1, 1]. It is
chosen over a bootstrap because it is a closed form: the same numbers on every machine with
no seed to choose, instant for the console, and checkable by hand (the tests do). Its
weakness, shared by every Wald interval, is small samples: with a few dozen labels it is
only a rough guide, and at κ = 1 its variance is exactly 0. A point [1, 1] would read as
certainty on any number of pairs (four, say), so there κ has no interval, as below.

**The degenerate case**: when judge and people both gave every pair one and the same class,
chance agreement ``p_e`` is 1 and κ is 0/0. ``kappa`` is then ``None`` (with
``kappa_undefined`` saying why), not 1 and not 0: there was nothing to disagree on, so the
sample cannot tell a judge that discriminates from one that always says the same thing.
Accuracy is still reported (1.0). When only one side gives a single class κ is defined and
0 (that side's answers cannot follow the other's), but it has no interval: the formula's
variance is exactly 0 there, and an interval of [0, 0] would read as certainty.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Literal

from langchain_evals_port.core import EvaluatorResult
from langchain_evals_port.reporting._render import figure
from langchain_evals_port.reporting._statistics import Interval

__all__ = ["Agreement", "Category", "agreement"]

Category = bool | float | str
"""A class compared: pass/fail, a numeric rating, or a label."""

Kind = Literal["pass/fail", "labels", "scores"]

_Z = NormalDist().inv_cdf(0.975)


@dataclass(frozen=True)
class Agreement:
    """A judge's agreement with people over the pairs where both gave a value.

    Attributes:
        n: Pairs compared (judge verdicts with a human value).
        kind: ``"pass/fail"`` (both sides bools, or numbers read through ``threshold``),
            ``"scores"`` (both sides numbers, each value a class) or ``"labels"``.
        accuracy: The share of pairs on which they agree; ``None`` without pairs.
        kappa: Cohen's κ; ``None`` when undefined (see ``kappa_undefined``).
        kappa_interval: Its 95 % interval (Fleiss-Cohen-Everitt standard error); ``None``
            with ``kappa``, when one side gave a single class, and at perfect agreement
            (where the formula's variance is 0, not the sample's certainty).
        kappa_undefined: Why ``kappa`` is ``None``, when it is.
        classes: The classes seen, in order (``False`` before ``True``).
        confusion: The count of every (judge, human) pair of classes, zeros included.
        fail_precision: Of the pairs the judge failed, the share people failed too.
        fail_recall: Of the pairs people failed, the share the judge failed too.
        spearman: Spearman's rho of the raw numbers, for numeric scores on both sides
            (``None`` otherwise, for fewer than two pairs, or when a side is constant).
        inconclusive: Judge outcomes that reached no verdict (in no figure above).
        failed: Judge outcomes that failed with an error (in no figure above).
    """

    n: int
    kind: Kind
    accuracy: float | None
    kappa: float | None
    kappa_interval: Interval | None
    kappa_undefined: str | None
    classes: tuple[Category, ...]
    confusion: Mapping[tuple[Category, Category], int] = field(repr=False)
    fail_precision: float | None
    fail_recall: float | None
    spearman: float | None
    inconclusive: int
    failed: int

    def __str__(self) -> str:
        parts = [f"n={self.n}", f"accuracy {_show(self.accuracy)}"]
        if self.kappa is None:
            parts.append(f"κ undefined ({self.kappa_undefined})")
        else:
            interval = "" if self.kappa_interval is None else f" {self.kappa_interval}"
            parts.append(f"κ {figure(self.kappa)}{interval}")
        if self.fail_precision is not None or self.fail_recall is not None:
            parts.append(
                f"fail precision {_show(self.fail_precision)} recall {_show(self.fail_recall)}"
            )
        if self.spearman is not None:
            parts.append(f"rho {figure(self.spearman)}")
        parts.append(f"{self.inconclusive} inconclusive, {self.failed} failed")
        return ", ".join(parts)

    def confusion_table(self) -> str:
        """The confusion matrix as text: a row per judge class, a column per human class.

        Example:
            >>> print(agreement([True, False, False], [True, True, False]).confusion_table())
            judge \\ human  fail  pass
            fail              1     1
            pass              0     1
        """
        names = [_name(c) for c in self.classes]
        corner = "judge \\ human"
        width = max([len(corner), *(len(n) for n in names)])
        cell = max([4, *(len(n) for n in names)])
        lines = [corner.ljust(width) + "".join(f"  {n:>{cell}}" for n in names)]
        for judged, name in zip(self.classes, names, strict=True):
            counts = [self.confusion[(judged, human)] for human in self.classes]
            lines.append(name.ljust(width) + "".join(f"  {c:>{cell}}" for c in counts))
        return "\n".join(lines)


def agreement(
    judge: Sequence[Category | EvaluatorResult | None],
    human: Sequence[Category],
    *,
    threshold: float | None = None,
) -> Agreement:
    """The judge's agreement with people: ``judge[i]`` and ``human[i]`` are about the same
    case.

    A judge value may be a core ``EvaluatorResult``: a verdict counts by its score, an
    inconclusive or failed one (or ``None``) is counted in ``inconclusive`` / ``failed``
    and left out of every figure, never read as a disagreement. The strings ``"pass"`` and
    ``"fail"`` (any case) read as ``True`` and ``False`` on both sides; ``False`` is the
    "fail" class of ``fail_precision`` and ``fail_recall``.

    Args:
        judge: The judge's values.
        human: The people's values, aligned with ``judge``.
        threshold: Read numbers as pass (``>= threshold``) or fail, for the class figures
            (Spearman's rho still uses the numbers). Without it, numbers on both sides are
            compared as classes (a 1-5 rating); numbers against pass/fail are an error.

    Raises:
        ValueError: The sequences differ in length, or numbers meet pass/fail without a
            ``threshold``.

    Example:
        >>> judged = agreement([True, True, False, False, True],
        ...                    ["pass", "fail", "fail", "fail", "pass"])
        >>> judged.accuracy, round(judged.kappa, 4), judged.fail_precision, judged.fail_recall
        (0.8, 0.6154, 1.0, 0.6666666666666666)
    """
    if len(judge) != len(human):
        raise ValueError(f"{len(judge)} judge values for {len(human)} human values")
    pairs: list[tuple[Category, Category]] = []
    inconclusive = failed = 0
    for judged, labelled in zip(judge, human, strict=True):
        if isinstance(judged, EvaluatorResult):
            if judged.outcome == "failed":
                failed += 1
                continue
            judged = None if judged.outcome == "inconclusive" else judged.score
        if judged is None:
            inconclusive += 1
            continue
        pairs.append((_read(judged), _read(labelled)))

    numeric = bool(pairs) and all(_is_number(j) and _is_number(h) for j, h in pairs)
    spearman = _spearman(pairs) if numeric else None
    if threshold is not None:
        pairs = [(_passed(j, threshold), _passed(h, threshold)) for j, h in pairs]
    elif not numeric and any(_is_number(v) for pair in pairs for v in pair):
        raise ValueError(
            "the judge and the people give numbers on one side only: pass threshold= to read "
            "the numbers as pass (>= threshold) or fail"
        )
    kind: Kind = (
        "pass/fail"
        if all(isinstance(v, bool) for pair in pairs for v in pair)
        else "scores"
        if numeric and threshold is None
        else "labels"
    )
    classes = tuple(sorted({v for pair in pairs for v in pair}, key=_order))
    counts = Counter(pairs)
    confusion = {(j, h): counts[(j, h)] for j in classes for h in classes}
    n = len(pairs)
    kappa, interval, undefined = _kappa(confusion, classes, n)
    fail_precision = fail_recall = None
    if False in classes and kind != "scores":
        both = confusion[(False, False)]
        judged_fail = sum(confusion[(False, h)] for h in classes)
        human_fail = sum(confusion[(j, False)] for j in classes)
        fail_precision = both / judged_fail if judged_fail else None
        fail_recall = both / human_fail if human_fail else None
    return Agreement(
        n=n,
        kind=kind,
        accuracy=sum(counts[(c, c)] for c in classes) / n if n else None,
        kappa=kappa,
        kappa_interval=interval,
        kappa_undefined=undefined,
        classes=classes,
        confusion=confusion,
        fail_precision=fail_precision,
        fail_recall=fail_recall,
        spearman=spearman,
        inconclusive=inconclusive,
        failed=failed,
    )


def _kappa(
    confusion: Mapping[tuple[Category, Category], int], classes: Sequence[Category], n: int
) -> tuple[float | None, Interval | None, str | None]:
    """Cohen's κ, its interval (module documentation), or why it is undefined."""
    if n == 0:
        return None, None, "no pairs with a judge verdict"
    p = {cell: count / n for cell, count in confusion.items()}
    rows = {c: sum(p[(c, h)] for h in classes) for c in classes}  # the judge's rates
    columns = {c: sum(p[(j, c)] for j in classes) for c in classes}  # the people's rates
    observed = sum(p[(c, c)] for c in classes)
    chance = sum(rows[c] * columns[c] for c in classes)
    if math.isclose(chance, 1.0):
        return None, None, "judge and people gave one and the same class throughout"
    kappa = (observed - chance) / (1 - chance)
    if sum(1 for c in classes if rows[c]) == 1 or sum(1 for c in classes if columns[c]) == 1:
        return kappa, None, None
    a = sum(p[(c, c)] * (1 - (rows[c] + columns[c]) * (1 - kappa)) ** 2 for c in classes)
    b = (1 - kappa) ** 2 * sum(
        p[(i, j)] * (columns[i] + rows[j]) ** 2 for i in classes for j in classes if i != j
    )
    c = (kappa - chance * (1 - kappa)) ** 2
    error = math.sqrt(max(a + b - c, 0.0) / (n * (1 - chance) ** 2))
    if error == 0:
        # Perfect agreement: the large-sample variance vanishes (module documentation).
        return kappa, None, None
    interval = Interval(max(-1.0, kappa - _Z * error), min(1.0, kappa + _Z * error))
    return kappa, interval, None


def _spearman(pairs: Sequence[tuple[Category, Category]]) -> float | None:
    judged = [float(j) for j, _ in pairs]
    labelled = [float(h) for _, h in pairs]
    if len(pairs) < 2 or len(set(judged)) < 2 or len(set(labelled)) < 2:
        return None
    from scipy.stats import spearmanr  # type: ignore[import-untyped]

    return float(spearmanr(judged, labelled).statistic)


def _read(value: Category) -> Category:
    if isinstance(value, str) and value.strip().lower() in ("pass", "fail"):
        return value.strip().lower() == "pass"
    if _is_number(value):
        return float(value)
    return value


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _passed(value: Category, threshold: float) -> Category:
    return value >= threshold if _is_number(value) else value  # type: ignore[operator]


def _order(value: Category) -> tuple[int, float, str]:
    if isinstance(value, bool):
        return 0, float(value), ""
    if isinstance(value, float):
        return 1, value, ""
    return 2, 0.0, value


def _name(value: Category) -> str:
    if isinstance(value, bool):
        return "pass" if value else "fail"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _show(value: float | None) -> str:
    return "—" if value is None else figure(value)
