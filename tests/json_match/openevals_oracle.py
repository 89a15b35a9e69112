"""Predicates for the documented differences between JsonMatch and OpenEvals' JSON match.

Each predicate says, from the inputs alone, whether one of the differences listed in
PARITY.md can change the result. They restate how OpenEvals 0.2.2 pairs list items
(``openevals_rows``) — independently of our own pairing code — so that the differential
tests compare everything else.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

from langchain_evals_port.core import canonical_equal

EMPTY_RECORD = "__openevals_empty_record"


@dataclass(frozen=True)
class Case:
    outputs: Any
    reference: Any
    aggregator: str | None
    list_aggregator: str
    mode: str
    exclude: tuple[str, ...]

    @property
    def is_list(self) -> bool:
        return isinstance(self.outputs, list)


Row = tuple[dict[str, Any] | None, dict[str, Any] | None]


def _agreement(x: dict[str, Any], y: dict[str, Any], exclude: tuple[str, ...]) -> int:
    return sum(1 for k in x if k in y and k not in exclude and x[k] == y[k])


def _greedy(drivers, others, exclude) -> list[int | None]:
    free = list(range(len(others)))
    partners: list[int | None] = []
    for x in drivers:
        if not free:
            partners.append(None)
            continue
        best = max(free, key=lambda j: _agreement(x, others[j], exclude))
        free.remove(best)
        partners.append(best)
    return partners


def _first_fit_equal(drivers, others, exclude) -> list[int | None] | None:
    def kept(d):
        return {k: v for k, v in d.items() if k not in exclude}

    if len(drivers) != len(others):
        return None
    free = list(range(len(others)))
    partners: list[int | None] = []
    for x in drivers:
        match = next((j for j in free if kept(x) == kept(others[j])), None)
        if match is None:
            return None
        free.remove(match)
        partners.append(match)
    return partners


def openevals_partners(case: Case) -> tuple[list, list, list[int | None]]:
    """(drivers, others, partner of each driver) as OpenEvals pairs them."""
    if case.mode == "superset":
        drivers, others = case.reference, case.outputs
    else:
        drivers, others = case.outputs, case.reference
    partners = None
    if case.mode == "same_elements":
        partners = _first_fit_equal(drivers, others, case.exclude)
    if partners is None:
        partners = _greedy(drivers, others, case.exclude)
    return drivers, others, partners


def openevals_rows(case: Case) -> list[Row]:
    """The (output, reference) rows OpenEvals scores, for lists."""
    outputs, reference = case.outputs, case.reference
    if case.mode == "ordered":
        return [
            (
                outputs[i] if i < len(outputs) else None,
                reference[i] if i < len(reference) else None,
            )
            for i in range(max(len(outputs), len(reference)))
        ]
    drivers, others, partners = openevals_partners(case)
    pairs = [(x, None if j is None else others[j]) for x, j in zip(drivers, partners, strict=True)]
    if case.mode == "superset":
        return [(y, x) for x, y in pairs]
    rows: list[Row] = list(pairs)
    if case.mode == "same_elements":
        rows += [(None, others[j]) for j in range(len(others)) if j not in set(partners)]
    return rows


def scored_names(row: Row, exclude: tuple[str, ...]) -> list[str]:
    """The keys OpenEvals scores in one row."""
    output, reference = row
    names = [k for side in (output, reference) if side for k in side if k not in exclude]
    if (output is None or reference is None) and not (output or reference):
        names.append(EMPTY_RECORD)
    return list(dict.fromkeys(names))


def _all_rows(case: Case) -> list[Row]:
    return openevals_rows(case) if case.is_list else [(case.outputs, case.reference)]


# --- the deviations -----------------------------------------------------------------------


def equality_differs(case: Case) -> bool:
    """Python ``==`` (OpenEvals) and the canonical rule disagree on a pair of values that
    OpenEvals compares (``True`` vs ``1``, ``NaN`` vs ``NaN``, ...)."""
    outputs = case.outputs if case.is_list else [case.outputs]
    reference = case.reference if case.is_list else [case.reference]
    return any(
        (x[k] == y[k]) != canonical_equal(x[k], y[k])
        for x, y in itertools.product(outputs, reference)
        for k in x
        if k in y and k not in case.exclude
    )


def greedy_is_beaten(case: Case) -> bool:
    """An assignment agrees on more keys in total than OpenEvals' greedy pairing."""
    if not case.is_list or case.mode == "ordered":
        return False
    drivers, others, partners = openevals_partners(case)
    greedy = sum(
        _agreement(x, others[j], case.exclude)
        for x, j in zip(drivers, partners, strict=True)
        if j is not None
    )
    size = min(len(drivers), len(others))
    best = max(
        (
            sum(
                _agreement(drivers[i], others[j], case.exclude)
                for i, j in zip(rows, cols, strict=True)
            )
            for rows in itertools.combinations(range(len(drivers)), size)
            for cols in itertools.permutations(range(len(others)), size)
        ),
        default=0,
    )
    return best > greedy


def nothing_scored(case: Case) -> bool:
    """No key is scored, so OpenEvals returns no result (no aggregator) or 0 for an average
    over nothing, where we return an inconclusive result or 1."""
    if any(scored_names(row, case.exclude) for row in _all_rows(case)):
        return False
    if case.aggregator is None:
        return True
    average_over_nothing = case.list_aggregator if case.is_list else case.aggregator
    return average_over_nothing == "average"


def zero_filled(case: Case) -> bool:
    """OpenEvals' synchronous evaluator (no aggregator, lists) scores 0 for a key at every
    row where it is absent from both objects, once the key is scored in two rows or more."""
    if not case.is_list or case.aggregator is not None:
        return False
    per_row = [scored_names(row, case.exclude) for row in openevals_rows(case)]
    rows_with_scores = [names for names in per_row if names]
    counts: dict[str, int] = {}
    for names in rows_with_scores:
        for name in names:
            counts[name] = counts.get(name, 0) + 1
    return any(count >= 2 and count < len(rows_with_scores) for count in counts.values())


def empty_key_split(case: Case) -> bool:
    """OpenEvals reports the empty key ``""`` of list items per row (``json_match:_0``,
    ``json_match:_1``) instead of once, when there is no aggregator."""
    return (
        case.is_list
        and case.aggregator is None
        and any("" in scored_names(row, case.exclude) for row in openevals_rows(case))
    )


def unpaired_item_of_excluded_keys(case: Case) -> bool:
    """An object left without a partner has keys, but only excluded ones: OpenEvals scores
    nothing for it, we score it 0 like an unpaired empty object."""
    if not case.is_list:
        return False
    return any(
        (output is None or reference is None)
        and (output or reference)
        and not scored_names((output, reference), case.exclude)
        for output, reference in openevals_rows(case)
    )


DEVIATIONS = {
    "equality_differs": equality_differs,
    "greedy_is_beaten": greedy_is_beaten,
    "nothing_scored": nothing_scored,
    "zero_filled": zero_filled,
    "empty_key_split": empty_key_split,
    "unpaired_item_of_excluded_keys": unpaired_item_of_excluded_keys,
}


def deviations(case: Case) -> list[str]:
    """The names of the documented deviations that apply to ``case``."""
    return [name for name, applies in DEVIATIONS.items() if applies(case)]


def same_score(a: float | bool | None, b: float | bool | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
