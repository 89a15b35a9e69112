"""What to score: every key of every row, before the judge is asked.

Every key present in either object of a row gets an entry: 1 or 0 when compared by
equality, 0 when the other object lacks it, or a pending grade for the judge (rubric keys
present in both). A row with one object only (nothing to pair it with) scores each of its
keys 0, and an empty one scores 0 under OpenEvals' key ``__openevals_empty_record``, so a
missing or extra object always costs something. A key absent from both objects of a row is
not scored there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from langchain_evals_port.core.errors import EvaluatorInputError

from ._objects import Item, KeyPaths, split_object
from ._pairing import ListMatchMode, Row, pair_items

EMPTY_RECORD = "__openevals_empty_record"
"""The key under which an unpaired object with nothing to score is scored (OpenEvals')."""

_ABSENT = object()


class Entry(NamedTuple):
    """One key of one row: its score, or (``score is None``) the values for the judge."""

    name: str
    label: int | None
    score: float | None
    output: Any = None
    reference: Any = None

    @property
    def raw_key(self) -> str:
        """The key as the judge sees it: ``name``, or ``name_<row>`` in lists (OpenEvals')."""
        return self.name if self.label is None else f"{self.name}_{self.label}"


@dataclass(frozen=True)
class Verdict:
    """The judge's grade of one raw key."""

    score: bool
    reasoning: str | None


@dataclass(frozen=True)
class Plan:
    """Everything decided before the judge is asked: the entries, and the rows of lists."""

    entries: list[Entry]
    rows: list[Row] | None


def build_plan(
    outputs: Any, references: Any, paths: KeyPaths, mode: ListMatchMode, *, evaluator: str
) -> Plan:
    """Split, pair and score two objects or two lists of objects."""
    if isinstance(outputs, Mapping) and isinstance(references, Mapping):
        output = split_object(outputs, paths, where="outputs")
        reference = split_object(references, paths, where="reference_outputs")
        return Plan(_score_row(output, reference, None), None)
    if isinstance(outputs, (list, tuple)) and isinstance(references, (list, tuple)):
        out_items = [split_object(o, paths, where=f"outputs[{i}]") for i, o in enumerate(outputs)]
        ref_items = [
            split_object(r, paths, where=f"reference_outputs[{j}]")
            for j, r in enumerate(references)
        ]
        rows = pair_items(out_items, ref_items, mode)
        entries = [
            entry
            for row in rows
            for entry in _score_row(
                None if row.output is None else out_items[row.output],
                None if row.reference is None else ref_items[row.reference],
                row.label,
            )
        ]
        return Plan(entries, rows)
    raise EvaluatorInputError(
        f"{evaluator} compares an object with an object, or a list of objects with a list of "
        f"objects; got outputs of type {type(outputs).__name__} and reference_outputs of type "
        f"{type(references).__name__}"
    )


def _score_row(output: Item | None, reference: Item | None, label: int | None) -> list[Entry]:
    if output is None or reference is None:
        alone = output if output is not None else reference
        assert alone is not None, "a row holds at least one object"
        return _score_alone(alone, label)
    entries = [
        Entry(name, label, 1.0 if reference.compared.get(name, _ABSENT) == token else 0.0)
        for name, token in output.compared.items()
    ]
    entries += [
        Entry(name, label, 0.0) for name in reference.compared if name not in output.compared
    ]
    for name, value in output.judged.items():
        if name in reference.judged:
            entries.append(Entry(name, label, None, value, reference.judged[name]))
        else:
            entries.append(Entry(name, label, 0.0))
    entries += [Entry(name, label, 0.0) for name in reference.judged if name not in output.judged]
    return entries


def _score_alone(item: Item, label: int | None) -> list[Entry]:
    if item.is_empty:
        return [Entry(EMPTY_RECORD, label, 0.0)]
    return [Entry(name, label, 0.0) for name in (*item.compared, *item.judged)]
