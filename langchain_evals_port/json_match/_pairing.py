"""Pairing the objects of two lists, the way each ``list_match_mode`` asks.

* ``ordered``: by position.
* ``same_elements``: every output with a reference; references left over are rows of their
  own (and score 0), as are outputs left over.
* ``subset``: every output with a reference; references left over do not count.
* ``superset``: every reference with an output; outputs left over do not count.

Outside ``ordered``, the pairs maximise the total *agreement*: the number of keys compared
by equality that are equal in both objects of a pair. OpenEvals pairs greedily (each object
in turn takes the best partner still free), which can strand a later object with a poor
partner; here the greedy pairing is kept only when it is optimal (so results stay
OpenEvals' wherever OpenEvals is right), and an optimal assignment from SciPy's
``linear_sum_assignment`` replaces it otherwise.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ._objects import Fingerprint, Item

ListMatchMode = Literal["same_elements", "subset", "superset", "ordered"]
"""How the objects of two lists are paired (see ``JsonMatch``)."""

Matrix = list[list[int]]


@dataclass(frozen=True)
class Row:
    """One scored position: an output and/or a reference, by their index in their list.

    ``label`` numbers the row as OpenEvals numbers its ``<key>_<n>`` keys.
    """

    label: int
    output: int | None
    reference: int | None


def pair_items(
    outputs: Sequence[Item], references: Sequence[Item], mode: ListMatchMode
) -> list[Row]:
    """The rows to score for two lists of objects (see the module docstring).

    Example:
        >>> a, b = Item({"k": "a"}, {}), Item({"k": "b"}, {})
        >>> pair_items([a, b], [b, a], "same_elements")
        [Row(label=0, output=0, reference=1), Row(label=1, output=1, reference=0)]
    """
    if mode == "ordered":
        return [
            Row(i, i if i < len(outputs) else None, i if i < len(references) else None)
            for i in range(max(len(outputs), len(references)))
        ]
    if mode == "superset":
        partners = _partners(references, outputs, exact_first=False)
        return [Row(j, partner, j) for j, partner in enumerate(partners)]
    partners = _partners(outputs, references, exact_first=mode == "same_elements")
    rows = [Row(i, i, partner) for i, partner in enumerate(partners)]
    if mode == "same_elements":
        taken = set(partners)
        leftovers = [j for j in range(len(references)) if j not in taken]
        rows += [Row(len(outputs) + k, None, j) for k, j in enumerate(leftovers)]
    return rows


def _partners(
    drivers: Sequence[Item], others: Sequence[Item], *, exact_first: bool
) -> list[int | None]:
    """For each driver, the index of its partner among ``others`` (None when none is left)."""
    if exact_first:
        exact = _exact_partners(drivers, others)
        if exact is not None:
            return exact
    agreement = _agreement(drivers, others)
    greedy = _greedy(agreement, len(others))
    total = _total(agreement, greedy)
    if total >= _upper_bound(agreement, len(others)):
        return greedy
    return _optimal(agreement, greedy, total)


def _signature(item: Item) -> frozenset[tuple[str, Fingerprint]]:
    return frozenset(item.compared.items())


def _exact_partners(drivers: Sequence[Item], others: Sequence[Item]) -> list[int | None] | None:
    """A pairing in which every pair is equal on every compared key, if one exists.

    OpenEvals tries this first in ``same_elements``: each output takes the first free
    reference equal to it. Equality is an equivalence, so first-fit finds a complete
    pairing whenever there is one.
    """
    if len(drivers) != len(others):
        return None
    pools: defaultdict[frozenset[tuple[str, Fingerprint]], deque[int]] = defaultdict(deque)
    for j, item in enumerate(others):
        pools[_signature(item)].append(j)
    partners: list[int | None] = []
    for item in drivers:
        pool = pools.get(_signature(item))
        if not pool:
            return None
        partners.append(pool.popleft())
    return partners


def _agreement(drivers: Sequence[Item], others: Sequence[Item]) -> Matrix:
    """``matrix[i][j]``: how many compared keys driver ``i`` and other ``j`` share equal.

    Built from an index of (key, fingerprint) → others, so the work grows with the number
    of equal values, not with the number of pairs times keys.
    """
    holders: defaultdict[tuple[str, Fingerprint], list[int]] = defaultdict(list)
    for j, item in enumerate(others):
        for entry in item.compared.items():
            holders[entry].append(j)
    matrix = [[0] * len(others) for _ in drivers]
    for row, item in zip(matrix, drivers, strict=True):
        for entry in item.compared.items():
            for j in holders.get(entry, ()):
                row[j] += 1
    return matrix


def _greedy(agreement: Matrix, width: int) -> list[int | None]:
    """OpenEvals' pairing: each driver in turn takes the free partner it agrees with most,
    the first one on a tie."""
    free = list(range(width))
    partners: list[int | None] = []
    for row in agreement:
        if not free:
            partners.append(None)
            continue
        best = max(free, key=row.__getitem__)
        free.remove(best)
        partners.append(best)
    return partners


def _total(agreement: Matrix, partners: Sequence[int | None]) -> int:
    return sum(row[j] for row, j in zip(agreement, partners, strict=True) if j is not None)


def _upper_bound(agreement: Matrix, width: int) -> int:
    """A cheap bound on the best total: no assignment beats the best partner of each of the
    ``k`` best-served rows, nor that of each of the ``k`` best-served columns (``k`` pairs in
    all). Reaching it proves a pairing optimal without solving (or importing) anything."""
    pairs = min(len(agreement), width)
    if pairs == 0:
        return 0
    by_row: list[int] = sorted((max(row) for row in agreement), reverse=True)[:pairs]
    by_column: list[int] = sorted(
        (max(column) for column in zip(*agreement, strict=True)), reverse=True
    )[:pairs]
    return min(sum(by_row), sum(by_column))


def _optimal(agreement: Matrix, greedy: list[int | None], greedy_total: int) -> list[int | None]:
    """The assignment with the highest total agreement; the greedy one when it ties."""
    # SciPy and NumPy take a third of a second to import and most lists never get here.
    import numpy as np
    from scipy.optimize import linear_sum_assignment  # type: ignore[import-untyped]

    scores = np.array(agreement, dtype=np.int64)
    rows, columns = linear_sum_assignment(scores, maximize=True)
    if int(scores[rows, columns].sum()) <= greedy_total:
        return greedy
    partners: list[int | None] = [None] * len(agreement)
    for i, j in zip(rows.tolist(), columns.tolist(), strict=True):
        partners[i] = j
    return partners
