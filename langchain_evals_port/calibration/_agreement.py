"""Accuracy and Cohen's κ of a judge's pass/fail verdicts against human labels.

Kept private and minimal so calibration stands on its own: the shared ``agreement()`` of
issue 17 (item 2) adds κ's interval, precision and recall of "fail" and numeric scores, and
calibration should report through it once that is merged.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class LabelAgreement:
    """How often the judge's verdicts match the human labels, on the cases it judged.

    Attributes:
        confusion: Counts keyed by ``(human, judge)`` labels, each ``"pass"`` or ``"fail"``.
    """

    confusion: dict[tuple[str, str], int]

    @property
    def judged(self) -> int:
        """Cases with both a human label and a judge verdict."""
        return sum(self.confusion.values())

    @property
    def agreed(self) -> int:
        """Cases where the judge said what the human said."""
        return self.confusion[("pass", "pass")] + self.confusion[("fail", "fail")]

    @property
    def accuracy(self) -> float | None:
        """The share of judged cases the judge got right; ``None`` when none were judged."""
        return self.agreed / self.judged if self.judged else None

    @property
    def kappa(self) -> float | None:
        """Cohen's κ: agreement beyond what the two label rates give by chance.

        ``None`` when chance agreement is already certain (both sides gave one and the same
        label to every case), where κ is 0/0, and when nothing was judged.
        """
        n = self.judged
        if not n:
            return None
        expected = 0.0
        for label in ("pass", "fail"):
            human = self.confusion[(label, "pass")] + self.confusion[(label, "fail")]
            judge = self.confusion[("pass", label)] + self.confusion[("fail", label)]
            expected += (human / n) * (judge / n)
        if expected >= 1.0:
            return None
        return (self.agreed / n - expected) / (1.0 - expected)


def label_agreement(pairs: Iterable[tuple[bool, bool]]) -> LabelAgreement:
    """The agreement of ``(human passed, judge passed)`` pairs.

    Example:
        >>> result = label_agreement([(True, True), (True, False), (False, False), (False, False)])
        >>> result.accuracy, round(result.kappa, 3)
        (0.75, 0.5)
    """
    confusion = {(h, j): 0 for h in ("pass", "fail") for j in ("pass", "fail")}
    for human, judge in pairs:
        confusion[(_label(human), _label(judge))] += 1
    return LabelAgreement(confusion)


def _label(passed: bool) -> str:
    return "pass" if passed else "fail"
