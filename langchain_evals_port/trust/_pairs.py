"""Stored judge results paired with people's annotations, and their agreement per key.

A judge result and an annotation pair when they are about the same subject (an interaction,
or an experiment's run of a case) and the same feedback key. When a subject has several of
either for a key, the latest counts: the last result given (evaluations are read oldest
first) and the most recent annotation (a person correcting themselves).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from langchain_evals_port.core import EvaluatorResult
from langchain_evals_port.storage import SqlLedger
from langchain_evals_port.storage._annotation import Annotation
from langchain_evals_port.storage._pages import epoch

from ._agreement import Agreement, agreement

__all__ = ["JudgedPair", "agreement_by_key", "ledger_agreement", "pair_annotations"]


@dataclass(frozen=True)
class JudgedPair:
    """A judge's result and a person's annotation of one subject and key."""

    subject_id: str
    result: EvaluatorResult
    annotation: Annotation

    @property
    def judge_value(self) -> bool | float | str | EvaluatorResult:
        """The judge's value in the person's terms: for a pass/fail annotation, whether the
        verdict passed (``EvaluatorResult.passed``); for a label, the result's
        ``metadata["label"]`` when it has one; else its score. A result without a verdict is
        handed on as it is, to be counted apart."""
        result = self.result
        if result.outcome != "verdict" or result.score is None:
            return result
        human = self.annotation.value
        if _pass_fail(human) and result.passed is not None:
            return result.passed
        label = result.metadata.get("label")
        if isinstance(human, str) and not _pass_fail(human) and isinstance(label, str):
            return label
        return result.score


def pair_annotations(
    results: Iterable[tuple[str, EvaluatorResult]], annotations: Iterable[Annotation]
) -> dict[str, list[JudgedPair]]:
    """The judge results (subject id, result) and annotations of the same subject and key,
    paired, by feedback key (keys in order, pairs in the order of the results).

    Example:
        >>> from langchain_evals_port.core import EvaluatorResult
        >>> results = [("i-1", EvaluatorResult(key="correct", score=True)),
        ...            ("i-2", EvaluatorResult(key="correct", score=True))]
        >>> labels = [Annotation(subject_kind="interaction", subject_id="i-2",
        ...                      key="correct", score=False)]
        >>> [(p.subject_id, p.judge_value, p.annotation.value)
        ...  for p in pair_annotations(results, labels)["correct"]]
        [('i-2', True, False)]
    """
    latest: dict[tuple[str, str], Annotation] = {}
    for annotation in annotations:
        known = latest.get((annotation.subject_id, annotation.key))
        if known is None or annotation.created_at >= known.created_at:
            latest[(annotation.subject_id, annotation.key)] = annotation
    judged: dict[tuple[str, str], EvaluatorResult] = {}
    for subject_id, result in results:
        judged.pop((subject_id, result.key), None)  # the latest, in the order of the latest
        judged[(subject_id, result.key)] = result
    paired: dict[str, list[JudgedPair]] = {}
    for (subject_id, key), result in judged.items():
        found = latest.get((subject_id, key))
        if found is not None:
            paired.setdefault(key, []).append(JudgedPair(subject_id, result, found))
    return dict(sorted(paired.items()))


def agreement_by_key(
    paired: Mapping[str, Sequence[JudgedPair]], *, threshold: float | None = None
) -> dict[str, Agreement]:
    """``reporting.agreement`` of each key's pairs (``threshold`` as it takes it)."""
    return {
        key: agreement(
            [pair.judge_value for pair in pairs],
            [pair.annotation.value for pair in pairs],
            threshold=threshold,
        )
        for key, pairs in paired.items()
    }


def ledger_agreement(
    ledger: SqlLedger,
    *,
    evaluator_id: str | None = None,
    since: datetime | None = None,
    threshold: float | None = None,
) -> dict[str, Agreement]:
    """Per feedback key, the agreement of the ledger's evaluations of interactions (of one
    evaluator, recorded at or after ``since``: when given) with the annotations of those
    interactions (experiment cases: ``ExperimentStore.agreement``).

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from langchain_evals_port.runtime import SqliteLedger
        >>> ledger = SqliteLedger(Path(tempfile.mkdtemp()) / "ledger.db")
        >>> ledger_agreement(ledger)
        {}
        >>> ledger.close()
    """
    annotations = ledger.annotations(subject_kind="interaction")
    results: list[tuple[str, EvaluatorResult]] = []
    for subject_id in dict.fromkeys(a.subject_id for a in annotations):
        for record in ledger.get_evaluations(subject_id):
            if evaluator_id is not None and record.evaluator_id != evaluator_id:
                continue
            if since is not None and epoch(record.timestamp) < epoch(since):
                continue
            results.extend((subject_id, result) for result in record.results)
    return agreement_by_key(pair_annotations(results, annotations), threshold=threshold)


def _pass_fail(value: object) -> bool:
    return isinstance(value, bool) or (
        isinstance(value, str) and value.strip().lower() in ("pass", "fail")
    )
