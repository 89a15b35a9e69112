"""What an evaluation produces: ``EvaluatorResult`` and the scorer-side ``Score``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_validator,
)

from .errors import (
    FAILURE_CODES,
    EvaluatorUsageError,
    FailureCode,
    failure_code,
    failure_reason,
)

Outcome = Literal["verdict", "inconclusive", "failed"]
"""``verdict``: scored. ``inconclusive``: ran, reached no verdict. ``failed``: an error."""


def plain_scalar(value: Any) -> Any:
    """``value``, or the Python bool, int or float of a NumPy scalar (``numpy.bool_``,
    ``numpy.int64``, ...), which is not a ``bool``/``int`` to ``isinstance``.

    Example:
        >>> import numpy
        >>> plain_scalar(numpy.bool_(True)), plain_scalar(numpy.int64(3)), plain_scalar("x")
        (True, 3, 'x')
    """
    if type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0:
        return value.item()
    return value


def _check_score(value: Any) -> Any:
    value = plain_scalar(value)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:
            number = math.inf if value > 0 else -math.inf
        if math.isnan(number):
            raise ValueError("score is NaN; return Score.unscored(reason) when there is no verdict")
        if math.isinf(number):
            # JSON has no infinity: stored, it would come back as a verdict without a score.
            raise ValueError(
                f"score is {number}; a score must be a finite number (return "
                "Score.unscored(reason) when there is no verdict)"
            )
        return number
    raise ValueError(f"score must be a bool, an int or a float, got {type(value).__name__}")


ScoreValue = Annotated[bool | float | None, BeforeValidator(_check_score)]
"""A score: a boolean pass/fail or a finite number (integers are stored as floats)."""


class EvaluatorResult(BaseModel):
    """The result of one evaluator for one key.

    Only a ``verdict`` carries a score; ``inconclusive`` and ``failed`` results carry a
    ``reason`` instead, and a failure also an ``error_code``. Means and pass rates count
    verdicts only, so nothing that could not be judged is ever read as a low score.

    Example:
        >>> EvaluatorResult(key="exact_match", score=True).to_dict()
        {'key': 'exact_match', 'score': True, 'comment': None, 'metadata': None}
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    score: ScoreValue = None
    comment: str | None = None
    # A factory, not ``{}``: pydantic deep-copies a mutable default per instance.
    metadata: dict[str, Any] = Field(default_factory=dict)
    source_run_id: str | None = None
    outcome: Outcome = "verdict"
    reason: str | None = None
    error_code: FailureCode | None = None
    passed: bool | None = None
    """Whether the verdict passed: a bool score as it is (set on its own), a number held to
    a ``pass_threshold`` (``with_passed``); ``None`` for a number no threshold applied to,
    and for non-verdicts. The dict form keeps it as ``metadata["passed"]`` for numbers."""

    @model_validator(mode="before")
    @classmethod
    def _passed_from_metadata(cls, data: Any) -> Any:
        # Records of earlier releases kept it as metadata["passed"].
        if isinstance(data, Mapping) and "passed" not in data:
            metadata = data.get("metadata")
            if isinstance(metadata, Mapping) and isinstance(metadata.get("passed"), bool):
                rest = {name: value for name, value in metadata.items() if name != "passed"}
                return {**data, "passed": metadata["passed"], "metadata": rest}
        return data

    @model_validator(mode="after")
    def _check_outcome(self) -> EvaluatorResult:
        if self.passed is not None and self.outcome != "verdict":
            raise ValueError(f"only a verdict passes or not; an {self.outcome} result has none")
        if self.passed is None and self.outcome == "verdict" and isinstance(self.score, bool):
            # A pass/fail score says whether it passed. (Set on the instance being built.)
            object.__setattr__(self, "passed", self.score)
        if self.outcome == "verdict":
            if self.score is None:
                raise ValueError("a verdict needs a score; use outcome='inconclusive' instead")
            if self.error_code is not None:
                raise ValueError("error_code is only for outcome='failed'")
        else:
            if self.score is not None:
                raise ValueError(f"an {self.outcome} result carries no score")
            if not self.reason:
                raise ValueError(f"an {self.outcome} result needs a reason")
            if self.outcome == "failed" and self.error_code not in FAILURE_CODES:
                raise ValueError(
                    f"a failed result needs an error_code from {sorted(FAILURE_CODES)}"
                )
        return self

    @classmethod
    def inconclusive(cls, key: str, reason: str, **fields: Any) -> EvaluatorResult:
        """A result that ran but reached no verdict, and says why."""
        return cls(key=key, outcome="inconclusive", reason=reason, **fields)

    @classmethod
    def failed(
        cls, key: str, error_code: FailureCode, reason: str, **fields: Any
    ) -> EvaluatorResult:
        """A result whose evaluator could not judge, with a reason code and message."""
        return cls(key=key, outcome="failed", error_code=error_code, reason=reason, **fields)

    @classmethod
    def of_error(cls, key: str, error: BaseException, **fields: Any) -> EvaluatorResult:
        """The ``failed`` result of ``error``: its reason code (``classify_failure``) and
        message (``failure_reason``). The one place an exception becomes a result.

        Example:
            >>> EvaluatorResult.of_error("quality", TimeoutError("judge")).error_code
            'timeout'
        """
        return cls.failed(key, failure_code(error), failure_reason(error), **fields)

    def with_passed(self, threshold: float | None) -> EvaluatorResult:
        """This result with ``passed`` decided: a bool score is its own, a number passes at
        ``threshold`` or above (undecided without one); a non-verdict stays as it is.

        Example:
            >>> EvaluatorResult(key="helpfulness", score=0.8).with_passed(0.5).passed
            True
        """
        if not self.is_verdict:
            return self
        if isinstance(self.score, bool):
            passed: bool | None = self.score
        elif threshold is None:
            passed = None
        else:
            passed = float(self.score) >= threshold  # type: ignore[arg-type]
        return self.model_copy(update={"passed": passed})

    @property
    def is_verdict(self) -> bool:
        """True when the result carries a score."""
        return self.outcome == "verdict"

    @property
    def feedback_comment(self) -> str | None:
        """The comment as feedback shows it: a non-verdict's outcome and reason come first.

        Example:
            >>> EvaluatorResult.failed("quality", "timeout", "judge timed out").feedback_comment
            '[failed: timeout] judge timed out'
        """
        if self.is_verdict:
            return self.comment
        code = f": {self.error_code}" if self.error_code else ""
        head = f"[{self.outcome}{code}] {self.reason}"
        return f"{head}\n{self.comment}" if self.comment else head

    def to_dict(self) -> dict[str, Any]:
        """The OpenEvals / LangSmith shape: ``key``, ``score``, ``comment``, ``metadata``.

        LangSmith rejects unknown keys, so a non-verdict outcome travels inside ``metadata``
        (``outcome``, ``reason`` and, for failures, ``error_code``) and its comment starts
        with them (``feedback_comment``), so the feedback does not look blank. ``metadata``
        is ``None`` when empty, as in OpenEvals; ``source_run_id`` is present only when set.

        Example:
            >>> EvaluatorResult.inconclusive("faithfulness", "no context").to_dict()["comment"]
            '[inconclusive] no context'
        """
        metadata = dict(self.metadata)
        if self.passed is not None and not isinstance(self.score, bool):
            metadata["passed"] = self.passed  # a number held to a threshold
        if self.outcome != "verdict":
            metadata["outcome"] = self.outcome
            metadata["reason"] = self.reason
            if self.error_code is not None:
                metadata["error_code"] = self.error_code
        result: dict[str, Any] = {
            "key": self.key,
            "score": self.score,
            "comment": self.feedback_comment,
            "metadata": metadata or None,
        }
        if self.source_run_id is not None:
            result["source_run_id"] = self.source_run_id
        return result


def _read_back(
    value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
) -> EvaluatorResult:
    try:
        return handler(value)  # type: ignore[no-any-return]
    except ValidationError as error:
        key = value.get("key") if isinstance(value, Mapping) else None
        if info.mode != "json" or not isinstance(key, str) or not key:
            raise
        reason = f"the stored result could not be read back: {failure_reason(error)}"
        return EvaluatorResult.failed(key, "storage_error", reason)


StoredResult = Annotated[EvaluatorResult, WrapValidator(_read_back)]
"""An ``EvaluatorResult`` read back from stored JSON. One that no longer validates (such as
a verdict whose score of inf was stored as ``null`` by versions that accepted it) reads
back as a ``failed`` result with code ``storage_error`` saying why, so it never makes the
record holding it, or its siblings, unreadable."""


@dataclass(frozen=True)
class Score:
    """What a scoring function returns when a bare number is not enough.

    Args:
        value: The score; ``None`` only together with ``inconclusive``.
        comment: Why this score (the result's comment).
        metadata: Extra facts for the result's metadata.
        inconclusive: Set to a reason to say that no verdict was reached.

    Example:
        >>> Score(0.5, comment="half the facts")
        Score(value=0.5, comment='half the facts', metadata={}, inconclusive=None)
        >>> Score.unscored("nothing to judge").inconclusive
        'nothing to judge'
    """

    value: bool | float | None
    comment: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    inconclusive: str | None = None

    def __post_init__(self) -> None:
        if self.inconclusive is None and self.value is None:
            raise EvaluatorUsageError(
                "Score(None) has no verdict; use Score.unscored(reason) to say why"
            )
        if self.inconclusive is not None and self.value is not None:
            raise EvaluatorUsageError(
                f"an unscored Score carries no value, got {self.value!r}; drop one of the two"
            )

    @classmethod
    def unscored(cls, reason: str, **metadata: Any) -> Score:
        """A score that says no verdict was reached, and why."""
        return cls(value=None, metadata=metadata, inconclusive=reason)

    def to_result(self, key: str) -> EvaluatorResult:
        """This score as an ``EvaluatorResult`` under ``key``."""
        if self.inconclusive is not None:
            return EvaluatorResult.inconclusive(
                key, self.inconclusive, comment=self.comment, metadata=dict(self.metadata)
            )
        return EvaluatorResult(
            key=key, score=self.value, comment=self.comment, metadata=dict(self.metadata)
        )
