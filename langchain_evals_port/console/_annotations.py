"""The annotation forms of the interaction and case pages, read once for both.

A form gives a feedback key, a verdict (pass or fail) or a score, a label, a note and who
annotates; what it gives wrong is a ``ValueError`` whose message is the page's 400.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

__all__ = ["AnnotationForm", "problem"]


@dataclass(frozen=True)
class AnnotationForm:
    """What an annotation form asks to store."""

    key: str
    score: bool | float | None
    label: str | None
    note: str | None
    annotator: str | None

    @classmethod
    def read(cls, form: Any) -> AnnotationForm:
        """The fields of a posted ``form``; a ``ValueError`` naming a bad verdict or score."""
        fields = {
            name: str(form.get(name, "")).strip()
            for name in ("key", "verdict", "score", "label", "note", "annotator")
        }
        return cls(
            key=fields["key"],
            score=_score(fields["verdict"], fields["score"]),
            label=fields["label"] or None,
            note=fields["note"] or None,
            annotator=fields["annotator"] or None,
        )

    def values(self) -> dict[str, Any]:
        """The keyword arguments of ``annotate`` after the key."""
        return {
            "score": self.score,
            "label": self.label,
            "note": self.note,
            "annotator": self.annotator,
        }


def problem(error: ValidationError) -> str:
    """The first problem of a rejected annotation, as a 400 names it (``key: ...``)."""
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"])
    message = first["msg"].removeprefix("Value error, ")
    return f"{field}: {message}" if field else message


def _score(verdict: str, score: str) -> bool | float | None:
    """A form's score: its pass/fail choice, else its number, else none."""
    if verdict:
        if verdict not in ("pass", "fail"):
            raise ValueError(f"verdict: expected pass or fail, got {verdict!r}")
        if score:
            raise ValueError("give a verdict or a score, not both")
        return verdict == "pass"
    if not score:
        return None
    try:
        number = float(score)
    except ValueError:
        raise ValueError(f"score: expected a number, got {score!r}") from None
    if not math.isfinite(number):
        raise ValueError(f"score: expected a finite number, got {score!r}")
    return number
