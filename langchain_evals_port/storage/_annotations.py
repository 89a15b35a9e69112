"""The SQL ledgers' annotations: people's labels and scores, in ``ledger_annotations``.

An annotation is a row of its own, never a change to an evaluation record: the judge's
result and the person's label for the same key stay side by side, to be compared.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from langchain_evals_port.capture._records import InteractionRecord
from langchain_evals_port.storage._annotation import (
    Annotation,
    AnnotationConflictError,
    AnnotationSubject,
)

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
        subject_id: str | None,
        key: str,
        *,
        score: bool | float | None = None,
        label: str | None = None,
        note: str | None = None,
        annotator: str | None = None,
        subject_kind: AnnotationSubject = "interaction",
        annotation_id: str | None = None,
        created_at: datetime | None = None,
        experiment: str | None = None,
        case_id: str | None = None,
        trial: int | None = None,
    ) -> Annotation:
        """Store a person's label or score for feedback ``key`` of a subject; the
        ``Annotation`` stored. Evaluation records are left as they are.

        Args:
            subject_id: The interaction's id, or for ``subject_kind="case"`` the run's
                ``case_subject(experiment, case_id, trial)`` (or ``None``, given those).
            key: The feedback key labelled (the judge's ``EvaluatorResult.key``).
            score: Pass/fail (``True``/``False``) or a number.
            label: A category, when there is no score.
            note: Why, in the person's words.
            annotator: Who labelled it.
            subject_kind: ``"interaction"`` (the default) or ``"case"``.
            annotation_id: The id (default: a new random one); an id already stored with
                the same content is kept as it was, with other content refused
                (``AnnotationConflictError``).
            created_at: When (default: now).
            experiment: For a case, its run's experiment (required with ``case_id``).
            case_id: For a case, its run's case id.
            trial: For a case, its run's trial (default 0).

        Raises:
            InteractionNotFoundError: An interaction subject the ledger does not hold.
            ValueError: A case given by a joined ``subject_id`` that not exactly one run of
                the ledger joins to (pass ``experiment``, ``case_id`` and ``trial``).
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
        if subject_kind == "case":
            if experiment is None and subject_id is not None:
                runs = self.runs_joined_as(subject_id)
                if len(runs) != 1:
                    raise ValueError(
                        f"case {subject_id!r} names no single run ({len(runs)} runs join to "
                        "it); pass experiment=, case_id= and trial="
                    )
                experiment, case_id, trial = runs[0]
            fields.update(experiment=experiment, case_id=case_id, trial=trial)
        if annotation_id is not None:
            fields["annotation_id"] = annotation_id
        if created_at is not None:
            fields["created_at"] = created_at
        annotation = Annotation(**fields)
        if subject_kind == "interaction":
            self.get_interaction(annotation.subject_id)
        self.record_annotations([annotation])
        return annotation

    @retried
    def record_annotations(self, annotations: Sequence[Annotation]) -> int:
        """Store ``annotations`` in one transaction; the number stored. An id already
        stored with the same content is a repeat, kept as it was (not counted).

        Raises:
            AnnotationConflictError: An id is stored already, or given twice, with other
                content (nothing is stored).
            ValueError: A case annotation names no run (experiment, case id, trial).
        """
        if not annotations:
            return 0
        given: dict[str, Annotation] = {}
        for annotation in annotations:
            if annotation.subject_kind == "case" and annotation.experiment is None:
                raise ValueError(
                    f"the case annotation {annotation.annotation_id!r} of "
                    f"{annotation.subject_id!r} names no run: give its experiment, case_id "
                    "and trial"
                )
            first = given.setdefault(annotation.annotation_id, annotation)
            if not first.same_content(annotation):
                raise AnnotationConflictError(first, annotation, twice=True)
        with self._transaction() as tx:
            ids = list(given)
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ", ".join(["%s"] * len(chunk))
                for text, run, case_id, trial in tx.rows(
                    "SELECT record, experiment, case_id, trial FROM ledger_annotations "
                    f"WHERE annotation_id IN ({marks})",
                    chunk,
                ):
                    parts = {"experiment": run, "case_id": case_id, "trial": trial}
                    stored = Annotation.model_validate({**json.loads(text), **parts})
                    if not stored.same_content(given[stored.annotation_id]):
                        raise AnnotationConflictError(stored, given[stored.annotation_id])
            return tx.change_many(_INSERT, [_row(annotation) for annotation in given.values()])

    def runs_joined_as(self, subject_id: str) -> list[tuple[str, str, int]]:
        """The experiment runs (experiment, case id, trial) whose joined subject id
        (``case_subject``) is ``subject_id``: one, none, or several when names hold ``:``."""
        rows = self._rows(
            "SELECT experiment, case_id, trial FROM ledger_experiment_runs "
            "WHERE experiment || ':' || case_id || ':' || trial = %s "
            "ORDER BY experiment, case_id, trial",
            (subject_id,),
        )
        return [(str(run), str(case_id), int(trial)) for run, case_id, trial in rows]

    def annotations(
        self,
        *,
        subject_kind: AnnotationSubject | None = None,
        subject_id: str | None = None,
        key: str | None = None,
        since: datetime | None = None,
        experiment: str | None = None,
    ) -> list[Annotation]:
        """The annotations (of one kind of subject, one subject, one key, made at or after
        ``since``, of the runs of one experiment: each filter when given), oldest first."""
        conditions: list[str] = []
        parameters: list[Any] = []
        for column, value in (
            ("subject_kind", subject_kind),
            ("subject_id", subject_id),
            ("feedback_key", key),
            ("experiment", experiment),
        ):
            if value is not None:
                conditions.append(f"{column} = %s")
                parameters.append(value)
        if since is not None:
            conditions.append("created_at >= %s")
            parameters.append(epoch(since))
        where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
        rows = self._rows(
            f"SELECT record, experiment, case_id, trial FROM ledger_annotations {where} "
            "ORDER BY created_at, annotation_id",
            parameters,
        )
        # The columns name the run (a record stored before they existed has no parts).
        return [
            Annotation.model_validate(
                {**json.loads(text), "experiment": run, "case_id": case_id, "trial": trial}
            )
            for text, run, case_id, trial in rows
        ]


_INSERT = """
INSERT INTO ledger_annotations
    (annotation_id, subject_kind, subject_id, feedback_key, label, score, note, annotator,
     created_at, record, experiment, case_id, trial)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
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
        annotation.experiment,
        annotation.case_id,
        annotation.trial,
    )
