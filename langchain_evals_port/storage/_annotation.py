"""What a person said about an interaction or an experiment case: an ``Annotation``.

Annotations are kept beside the evaluators' results, never in place of them: the ledger
stores them in a table of their own (``SqlLedger.annotate``), so a judge's verdict and the
human label for the same feedback key can be compared (``ledger_agreement``).
"""

from __future__ import annotations

import math
import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from langchain_evals_port.capture._records import utc_now
from langchain_evals_port.core.errors import EvalsError

__all__ = ["Annotation", "AnnotationConflictError", "AnnotationSubject", "case_subject"]

AnnotationSubject = Literal["interaction", "case"]
"""What an annotation is about: a recorded interaction (its id) or a run of an experiment's
case (``case_subject(experiment, case_id, trial)``)."""


def case_subject(experiment: str, case_id: str, trial: int = 0) -> str:
    """The subject id of one run (a case and a trial) of an experiment.

    Example:
        >>> case_subject("support-3", "c-17", 0)
        'support-3:c-17:0'
    """
    return f"{experiment}:{case_id}:{trial}"


class Annotation(BaseModel):
    """A person's label or score for one feedback key of one subject.

        ``score`` is a pass/fail (``True``/``False``) or a number (a 1-5 rating); ``label`` a
        category (``"helpful"``). At least one is given; the strings ``"pass"`` and ``"fail"``
        read as ``True`` and ``False`` when compared with a judge (``reporting.agreement``). An
    empty key, a score that is not a bool or a number, or neither a score nor a label is a
    ``pydantic.ValidationError``.

        Example:
            >>> note = Annotation(subject_kind="interaction", subject_id="i-1",
            ...                   key="correctness", score=False, annotator="ana")
            >>> note.value, note.subject_kind
            (False, 'interaction')
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    annotation_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    subject_kind: AnnotationSubject
    subject_id: str = Field(min_length=1)
    experiment: str | None = None
    """For a case: the experiment of the run (stored as a column of its own)."""
    case_id: str | None = None
    """For a case: the case id of the run."""
    trial: int | None = Field(default=None, ge=0)
    """For a case: the trial of the run."""
    key: str
    score: bool | float | None = None
    label: str | None = None
    note: str | None = None
    annotator: str | None = None
    created_at: datetime = Field(default_factory=utc_now)

    @field_validator("key")
    @classmethod
    def _key_named(cls, key: str) -> str:
        if not key.strip():
            raise ValueError("the feedback key is empty")
        return key

    @field_validator("score", mode="before")
    @classmethod
    def _score_kind(cls, score: object) -> object:
        # Strict: "0.5" or "yes" is a label, not a score; a score is a bool or a number.
        if score is not None and not isinstance(score, (bool, int, float)):
            raise ValueError(f"a score is a bool or a number, got {type(score).__name__}")
        if isinstance(score, float) and not math.isfinite(score):
            raise ValueError(f"a score is a finite number, got {score}")
        return score

    @model_validator(mode="before")
    @classmethod
    def _subject_of_run(cls, fields: Any) -> Any:
        # A case named by its run gets the run's subject id; the id never names the run.
        if isinstance(fields, dict) and fields.get("subject_kind") == "case":
            experiment, case_id = fields.get("experiment"), fields.get("case_id")
            if isinstance(experiment, str) and isinstance(case_id, str):
                if fields.get("trial") is None:
                    fields = {**fields, "trial": 0}
                if not fields.get("subject_id") and isinstance(fields["trial"], int):
                    subject = case_subject(experiment, case_id, fields["trial"])
                    fields = {**fields, "subject_id": subject}
        return fields

    @model_validator(mode="after")
    def _run_parts(self) -> Annotation:
        parts = (self.experiment, self.case_id, self.trial)
        if self.subject_kind == "interaction" and parts != (None, None, None):
            raise ValueError("an interaction's annotation has no experiment, case_id or trial")
        if self.subject_kind == "case" and self.experiment is not None:
            if self.case_id is None:
                raise ValueError("a case's annotation names the case_id of its run")
            expected = case_subject(self.experiment, self.case_id, self.trial or 0)
            if self.subject_id != expected:
                raise ValueError(
                    f"subject_id {self.subject_id!r} is not the run's {expected!r} "
                    "(experiment, case_id, trial); leave subject_id out"
                )
        return self

    @model_validator(mode="after")
    def _labelled(self) -> Annotation:
        if self.score is None and (self.label is None or not self.label.strip()):
            raise ValueError("an annotation needs a score (pass/fail or a number) or a label")
        return self

    @property
    def value(self) -> bool | float | str:
        """What the person gave: the score when there is one, else the label."""
        if self.score is not None:
            return self.score
        assert self.label is not None
        return self.label

    def same_content(self, other: Annotation) -> bool:
        """Whether ``other`` says the same as this one, whenever it was made: storing it
        again is a repeat, not a change."""
        return self.model_dump(exclude={"created_at"}) == other.model_dump(exclude={"created_at"})


class AnnotationConflictError(EvalsError, ValueError):
    """An annotation's id is stored already (or given twice) with different content; an
    annotation is never changed in place, so nothing is stored.

    Attributes:
        annotation_id: The id.
        differences: The fields that differ, as ``{field: (stored, given)}``.
    """

    def __init__(self, stored: Annotation, given: Annotation, *, twice: bool = False) -> None:
        old, new = stored.model_dump(), given.model_dump()
        self.annotation_id = given.annotation_id
        self.differences = {
            name: (old[name], new[name])
            for name in new
            if name != "created_at" and old[name] != new[name]
        }
        shown = ", ".join(f"{name} {a!r} -> {b!r}" for name, (a, b) in self.differences.items())
        super().__init__(
            f"annotation {self.annotation_id!r} is "
            + ("given twice" if twice else "stored already")
            + f" with other content ({shown}); give the changed annotation a new annotation_id"
        )
