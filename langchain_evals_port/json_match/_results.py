"""Aggregating scored entries into results, with OpenEvals' keys and arithmetic.

* ``aggregator=None``: one result per key, ``<feedback_key>:<key>``, sorted by key. Across
  the rows of two lists a key's scores are combined by ``list_aggregator``; a key scored in
  one row only keeps that score (and for a judged key, the judge's reasoning).
* ``aggregator="average"`` / ``"all"``: one result, ``<feedback_key>:<aggregator>``,
  aggregating each row's keys, then (for lists) the rows by ``list_aggregator``.

An aggregate over nothing — two empty objects, two empty lists, everything excluded — is 1:
every compared key agrees, vacuously (OpenEvals gives 1 for ``"all"`` but 0 for
``"average"``). With no aggregator there is no key to report under, so the one result is
``<feedback_key>``, inconclusive.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from langchain_evals_port.core import EvaluatorResult

from ._plan import Entry, Plan, Verdict

Aggregator = Literal["average", "all"]
"""How scores are combined: their mean, or 1 when every one is 1 (else 0)."""

_MAX_LISTED = 10
_NOTHING = "nothing to compare: no key is present outside exclude_keys"


def build_results(
    plan: Plan,
    verdicts: Mapping[str, Verdict],
    failures: Mapping[str, Exception],
    *,
    feedback_key: str,
    aggregator: Aggregator | None,
    list_aggregator: Aggregator,
) -> list[EvaluatorResult]:
    """The results, once the judge has graded every pending entry (``verdicts`` by raw key)
    or failed (``failures`` by key name)."""
    if aggregator is not None:
        key = f"{feedback_key}:{aggregator}"
        if failures:
            return [EvaluatorResult.of_error(key, next(iter(failures.values())))]
        return [_aggregate(plan, verdicts, key, aggregator, list_aggregator)]
    by_name: defaultdict[str, list[Entry]] = defaultdict(list)
    for entry in plan.entries:
        by_name[entry.name].append(entry)
    if not by_name:
        return [EvaluatorResult.inconclusive(feedback_key, _NOTHING)]
    results = []
    for name in sorted(by_name):
        key = f"{feedback_key}:{name}"
        if name in failures:
            results.append(EvaluatorResult.of_error(key, failures[name]))
        else:
            results.append(_key_result(key, by_name[name], verdicts, list_aggregator))
    return results


def _key_result(
    key: str, entries: list[Entry], verdicts: Mapping[str, Verdict], how: Aggregator
) -> EvaluatorResult:
    if len(entries) == 1 and entries[0].score is None:
        verdict = verdicts[entries[0].raw_key]
        return EvaluatorResult(key=key, score=verdict.score, comment=verdict.reasoning)
    scored = [(entry.raw_key, _value(entry, verdicts)) for entry in entries]
    return EvaluatorResult(
        key=key,
        score=combine([value for _, value in scored], how),
        comment=_misses(scored) if len(entries) > 1 else None,
        metadata=_reasonings(entries, verdicts),
    )


def _aggregate(
    plan: Plan,
    verdicts: Mapping[str, Verdict],
    key: str,
    aggregator: Aggregator,
    list_aggregator: Aggregator,
) -> EvaluatorResult:
    scored = [(entry.raw_key, _value(entry, verdicts)) for entry in plan.entries]
    metadata = _reasonings(plan.entries, verdicts)
    if plan.rows is None:
        score = combine([value for _, value in scored], aggregator)
    else:
        by_row: defaultdict[int | None, list[float]] = defaultdict(list)
        for entry, (_, value) in zip(plan.entries, scored, strict=True):
            by_row[entry.label].append(value)
        per_row = [combine(values, aggregator) for values in by_row.values()]
        score = combine(per_row, list_aggregator)
        metadata["pairs"] = [
            [row.output, row.reference]
            for row in plan.rows
            if row.output is not None and row.reference is not None
        ]
    comment = _misses(scored) if scored else _NOTHING
    return EvaluatorResult(key=key, score=score, comment=comment, metadata=metadata)


def combine(values: Sequence[float], how: Aggregator) -> float:
    """The mean of ``values``, or 1.0 when all of them are 1 (else 0.0); 1.0 for none.

    Example:
        >>> combine([1.0, 0.0, 1.0], "average"), combine([1.0, 0.5], "all"), combine([], "average")
        (0.6666666666666666, 0.0, 1.0)
    """
    if not values:
        return 1.0
    if how == "average":
        return sum(values) / len(values)
    return 1.0 if all(value == 1 for value in values) else 0.0


def _value(entry: Entry, verdicts: Mapping[str, Verdict]) -> float:
    if entry.score is not None:
        return entry.score
    return float(verdicts[entry.raw_key].score)


def _misses(scored: Sequence[tuple[str, float]]) -> str | None:
    misses = [raw_key for raw_key, value in scored if value < 1]
    if not misses:
        return None
    listed = ", ".join(misses[:_MAX_LISTED])
    more = f" and {len(misses) - _MAX_LISTED} more" if len(misses) > _MAX_LISTED else ""
    return f"not matching: {listed}{more}"


def _reasonings(entries: Sequence[Entry], verdicts: Mapping[str, Verdict]) -> dict[str, Any]:
    judged = {
        entry.raw_key: verdicts[entry.raw_key].reasoning
        for entry in entries
        if entry.score is None and verdicts[entry.raw_key].reasoning is not None
    }
    return {"reasoning": judged} if judged else {}
