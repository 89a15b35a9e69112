"""``ExactMatch``: equality under the canonical rule."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from langchain_core.runnables import RunnableConfig

from langchain_evals_port.core import (
    EvalRequest,
    Evaluator,
    Score,
    canonical_equal,
    canonical_value,
)


class ExactMatch(Evaluator):
    """Scores ``True`` when ``outputs`` equals ``reference_outputs`` under the canonical rule.

    Map key order is ignored, ``1`` equals ``1.0``, and dates, sets and pydantic models
    compare by their JSON form (see ``canonical_json``). Key ``exact_match``. A mismatch that
    is easy to miss says why in its comment: values of different types (``4`` and ``"4"``),
    or one side a mapping of one key whose value is the other side (``{"answer": "4"}``);
    ``explain=False`` leaves the comment out, as OpenEvals' ``exact_match`` does.

    Example:
        >>> ExactMatch()(outputs={"n": 1, "id": "a"}, reference_outputs={"id": "a", "n": 1.0})
        {'key': 'exact_match', 'score': True, 'comment': None, 'metadata': None}
        >>> print(ExactMatch()(outputs=4, reference_outputs="4")["comment"])
        ... # doctest: +NORMALIZE_WHITESPACE
        outputs is a number and reference_outputs is a string (both read 4); values of
        different types never match
    """

    feedback_key: str = "exact_match"
    default_name: ClassVar[str | None] = "exact_match"
    scores_in_loop: ClassVar[bool] = True  # microseconds of CPU
    explain: bool = True
    """Say in the comment why an easily missed mismatch failed (``False``: no comment)."""

    def _score(self, request: EvalRequest, config: RunnableConfig) -> bool | Score:
        outputs, reference = request.require(
            "outputs", "reference_outputs", evaluator=self.get_name()
        )
        names = ("outputs", "reference_outputs")
        if canonical_equal(outputs, reference, names=names):
            return True
        if not self.explain:
            return False
        why = _why_unequal(
            canonical_value(outputs, name=names[0]), canonical_value(reference, name=names[1])
        )
        return False if why is None else Score(False, comment=why)


def _why_unequal(outputs: Any, reference: Any) -> str | None:
    """Why two unequal canonical values differ, when it is a mistake easily made; else None."""
    for name, mapping, other, other_name in (
        ("reference_outputs", reference, outputs, "outputs"),
        ("outputs", outputs, reference, "reference_outputs"),
    ):
        if isinstance(mapping, Mapping) and len(mapping) == 1:
            (key, value), *_ = mapping.items()
            if canonical_equal(value, other):
                return (
                    f"{name} is a mapping with one key, {key!r}, and {other_name} is not; "
                    f"{name}[{key!r}] equals {other_name}"
                )
    kinds = _kind(outputs), _kind(reference)
    if kinds[0] == kinds[1]:
        return None
    same = _plain_text(outputs) == _plain_text(reference)
    both = f" (both read {_plain_text(outputs)})" if same else ""
    return (
        f"outputs is a {kinds[0]} and reference_outputs is a {kinds[1]}{both}; values of "
        "different types never match"
    )


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "mapping"
    if isinstance(value, list):
        return "list"
    return "null" if value is None else type(value).__name__


def _plain_text(value: Any) -> str:
    """A scalar as one would type it: ``4``, ``true``, ``Paris``."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
