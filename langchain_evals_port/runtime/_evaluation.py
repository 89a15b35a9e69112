"""What an online evaluator returns: an ``Evaluation`` (the verdict) inside an ``Effect``.

Two meanings of "failed" must not be confused:

* ``Evaluation.failed(explanation)`` is a **verdict** — the evaluator judged the interaction and
  the agent did badly. It is recorded as a ``Verdict`` outcome with ``passed=False``.
* A **Failed outcome** is an **error** — an exception escaped ``evaluate`` (or the evaluation
  timed out), so nothing was judged. The runtime records it with the error's type and message.

Pass rates and score means count verdicts only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, overload

from pydantic import BaseModel, ConfigDict, field_validator

__all__ = [
    "Complete",
    "Effect",
    "Effects",
    "Evaluation",
    "InconclusiveEffect",
    "complete",
    "inconclusive",
]


class Evaluation(BaseModel):
    """A verdict: whether the interaction passed, why, and optional score, label, attributes.

    Build one with ``Evaluation.passed(...)``, ``Evaluation.failed(...)`` or
    ``Evaluation.of(passed, ...)`` and the fluent ``with_*`` methods, which return a new value.

    Example:
        >>> e = Evaluation.passed("accurate").with_score(0.92).with_label("good")
        >>> e.with_attribute("model", "gpt-4o").attributes
        {'model': 'gpt-4o'}
        >>> Evaluation.failed("no reply").passed  # a failing verdict, not an error
        False
    """

    model_config = ConfigDict(frozen=True)

    if TYPE_CHECKING:
        passed: _VerdictOrFactory
        failed: ClassVar[_VerdictOrFactory]
    else:
        passed: bool
    explanation: str
    score: float | None = None
    label: str | None = None
    attributes: dict[str, str] = {}

    @field_validator("score", mode="before")
    @classmethod
    def _check_score(cls, value: Any) -> Any:
        if isinstance(value, bool) or not (value is None or isinstance(value, (int, float))):
            raise ValueError(f"score must be a number, got {value!r}")
        return value

    @classmethod
    def of(cls, passed: bool, explanation: str) -> Evaluation:
        """A verdict that passed or not, with its explanation."""
        if not isinstance(passed, bool):
            raise TypeError(f"passed must be a bool, got {passed!r}")
        return cls(passed=passed, explanation=explanation)

    @classmethod
    def passed_with(cls, explanation: str) -> Evaluation:
        """A passing verdict (``Evaluation.passed`` is the same, spelt as in the seed)."""
        return cls(passed=True, explanation=explanation)

    @classmethod
    def failed_with(cls, explanation: str) -> Evaluation:
        """A failing verdict — the agent did badly; not an error (``Evaluation.failed``)."""
        return cls(passed=False, explanation=explanation)

    def with_score(self, score: float) -> Evaluation:
        """This verdict with a numeric ``score``."""
        return self.model_copy(update={"score": self._check_score(score)})

    def with_label(self, label: str) -> Evaluation:
        """This verdict with a categorical ``label``."""
        if not isinstance(label, str):
            raise TypeError(f"label must be a str, got {label!r}")
        return self.model_copy(update={"label": label})

    def with_attribute(self, key: str, value: str | int | float | bool) -> Evaluation:
        """This verdict with one more attribute; the value is stored as text."""
        if not isinstance(key, str):
            raise TypeError(f"attribute key must be a str, got {key!r}")
        return self.model_copy(update={"attributes": {**self.attributes, key: str(value)}})


# ``passed`` is both the verdict field (on an instance) and, on the class, the factory the API
# names (``Evaluation.passed("...")``). Pydantic keeps field values in the instance ``__dict__``,
# which wins over a descriptor without ``__set__``, so one descriptor on the class serves both.
class _VerdictOrFactory:
    def __init__(self, factory: Callable[[str], Evaluation], *, negate: bool) -> None:
        self._factory = factory
        self._negate = negate

    @overload
    def __get__(self, instance: None, owner: type) -> Callable[[str], Evaluation]: ...

    @overload
    def __get__(self, instance: object, owner: type) -> bool: ...

    def __get__(self, instance: object | None, owner: type) -> Any:
        if instance is None:
            return self._factory
        return instance.__dict__["passed"] is not self._negate


Evaluation.passed = _VerdictOrFactory(Evaluation.passed_with, negate=False)
Evaluation.failed = _VerdictOrFactory(Evaluation.failed_with, negate=True)


@dataclass(frozen=True)
class Complete:
    """The effect that records ``evaluation`` as the verdict."""

    evaluation: Evaluation

    def __post_init__(self) -> None:
        if not isinstance(self.evaluation, Evaluation):
            raise TypeError(f"complete() takes an Evaluation, got {self.evaluation!r}")


@dataclass(frozen=True)
class InconclusiveEffect:
    """The effect that records that the evaluator ran but reached no verdict, and why."""

    reason: str

    def __post_init__(self) -> None:
        if not isinstance(self.reason, str) or not self.reason:
            raise TypeError(f"inconclusive() takes a non-empty reason, got {self.reason!r}")


Effect = Complete | InconclusiveEffect
"""What ``OnlineEvaluator.evaluate`` returns."""


def complete(evaluation: Evaluation) -> Complete:
    """Record ``evaluation`` as the verdict."""
    return Complete(evaluation)


def inconclusive(reason: str) -> InconclusiveEffect:
    """Record that the evaluator reached no verdict (nothing to judge, not applicable)."""
    return InconclusiveEffect(reason)


class Effects:
    """The effect builder returned by ``OnlineEvaluator.effects()``."""

    @staticmethod
    def complete(evaluation: Evaluation) -> Complete:
        """Record ``evaluation`` as the verdict."""
        return complete(evaluation)

    @staticmethod
    def inconclusive(reason: str) -> InconclusiveEffect:
        """Record that the evaluator reached no verdict, and why."""
        return inconclusive(reason)
