"""The SQL ledgers' annotations: people's labels and scores, in ``ledger_annotations``.

An annotation is a row of its own, never a change to an evaluation record: the judge's
result and the person's label for the same key stay side by side, to be compared.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from langchain_evals_port.runtime._annotation import Annotation, AnnotationSubject
from langchain_evals_port.runtime._records import InteractionRecord

from ._pages import epoch
from ._reconnect import retried

if TYPE_CHECKING:
    from ._sql import Session

__all__ = ["Annotations"]

T = TypeVar("T")


class Annotations(ABC):
    """The annotation table's reads and writes, written once for the SQL ledgers."""

    @abstractmethod
    def _rows(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of one statement."""

    @abstractmethod
    def _transaction(self) -> AbstractContextManager[Session]:
        """A connection inside one transaction."""

    @abstractmethod
    def _retry(self, call: Callable[[], T]) -> T:
        """``call()``, again after a lost connection (``@retried``)."""

    @abstractmethod
    def get_interaction(self, interaction_id: str) -> InteractionRecord:
        """The interaction with this id; ``InteractionNotFoundError`` when there is none."""

    def annotate(
        self,
        subject_id: str,
        key: str,
        *,
        score: bool | float | None = None,
        label: str | None = None,
        note: str | None = None,
        annotator: str | None = None,
        subject_kind: AnnotationSubject = "interaction",
        annotation_id: str | None = None,
        created_at: datetime | None = None,
    ) -> Annotation:
        """Store a person's label or score for feedback ``key`` of a subject; the
        ``Annotation`` stored. Evaluation records are left as they are.

        Args:
            subject_id: The interaction's id, or for ``subject_kind="case"`` the run's
                ``case_subject(experiment, case_id, trial)``.
            key: The feedback key labelled (the judge's ``EvaluatorResult.key``).
            score: Pass/fail (``True``/``False``) or a number.
            label: A category, when there is no score.
            note: Why, in the person's words.
            annotator: Who labelled it.
            subject_kind: ``"interaction"`` (the default) or ``"case"``.
            annotation_id: The id (default: a new random one); an id already stored is
                kept as it was.
            created_at: When (default: now).

        Raises:
            InteractionNotFoundError: An interaction subject the ledger does not hold.
            pydantic.ValidationError: An empty key, a score that is not a bool or a number,
                or neither a score nor a label.
        """
        fields: dict[str, Any] = {
            "subject_kind": subject_kind,
            "subject_id": subject_id,
            "key": key,
            "score": score,
            "label": label,
            "note": note,
            "annotator": annotator,
        }
        if annotation_id is not None:
            fields["annotation_id"] = annotation_id
        if created_at is not None:
            fields["created_at"] = created_at
        annotation = Annotation(**fields)
        if subject_kind == "interaction":
            self.get_interaction(subject_id)
        self.record_annotations([annotation])
        return annotation

    @retried
    def record_annotations(self, annotations: Sequence[Annotation]) -> int:
        """Store ``annotations`` in one transaction (ids already stored are kept as they
        were); the number stored."""
        if not annotations:
            return 0
        with self._transaction() as tx:
            return tx.change_many(_INSERT, [_row(annotation) for annotation in annotations])

    def annotations(
        self,
        *,
        subject_kind: AnnotationSubject | None = None,
        subject_id: str | None = None,
        key: str | None = None,
        since: datetime | None = None,
    ) -> list[Annotation]:
        """The annotations (of one kind of subject, one subject, one key, made at or after
        ``since``: each filter when given), oldest first."""
        conditions: list[str] = []
        parameters: list[Any] = []
        for column, value in (
            ("subject_kind", subject_kind),
            ("subject_id", subject_id),
            ("feedback_key", key),
        ):
            if value is not None:
                conditions.append(f"{column} = %s")
                parameters.append(value)
        if since is not None:
            conditions.append("created_at >= %s")
            parameters.append(epoch(since))
        where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
        rows = self._rows(
            f"SELECT record FROM ledger_annotations {where} ORDER BY created_at, annotation_id",
            parameters,
        )
        return [Annotation.model_validate_json(text) for (text,) in rows]


_INSERT = """
INSERT INTO ledger_annotations
    (annotation_id, subject_kind, subject_id, feedback_key, label, score, note, annotator,
     created_at, record)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (annotation_id) DO NOTHING
"""


def _row(annotation: Annotation) -> tuple[Any, ...]:
    score = annotation.score
    return (
        annotation.annotation_id,
        annotation.subject_kind,
        annotation.subject_id,
        annotation.key,
        annotation.label,
        None if score is None else float(score),
        annotation.note,
        annotation.annotator,
        epoch(annotation.created_at),
        annotation.model_dump_json(),
    )
