"""Labelled cases: what a person decided about one output, read from JSONL.

One JSON object a line: ``label`` (``"pass"`` or ``"fail"``, or ``true``/``false``), the
prompt's variables (``inputs``, ``outputs``, ``reference_outputs``, ``context``, ...) and
optionally ``id``, ``rationale`` (one line: why the label) and ``kind`` (``"clear"`` or
``"borderline"``). The shipped sets under ``sets/`` were written for this project and are
licensed with it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from langchain_evals_port.core._documents import DocumentError, read_json
from langchain_evals_port.core.errors import EvaluatorInputError
from langchain_evals_port.prompts import CatalogEntry

CaseKind = Literal["clear", "borderline"]

SHIPPED_SETS: Mapping[str, str] = {
    "CORRECTNESS_PROMPT": "correctness.jsonl",
    "CONCISENESS_PROMPT": "conciseness.jsonl",
    "HALLUCINATION_PROMPT": "hallucination.jsonl",
    "RAG_GROUNDEDNESS_PROMPT": "rag_groundedness.jsonl",
    "TRAJECTORY_ACCURACY_PROMPT": "trajectory_accuracy.jsonl",
}
"""The catalog prompts with a labelled set shipped in this package, and its file."""

_FIELDS = frozenset({"id", "label", "rationale", "kind"})
_LABELS: Mapping[Any, bool] = {"pass": True, "fail": False, True: True, False: False}


class LabelsError(EvaluatorInputError):
    """A labelled set cannot be used: a malformed line, a missing label, a duplicate id, or
    a case that lacks a variable its prompt needs. The message names the file and line."""


@dataclass(frozen=True)
class LabelledCase:
    """One output and the label a person gave it.

    Attributes:
        id: Unique within its set.
        variables: What the prompt is filled with (``inputs``, ``outputs``, ...).
        passed: The human label: ``True`` for pass, ``False`` for fail.
        rationale: One line saying why.
        kind: ``"clear"`` or ``"borderline"``, when the set says.
    """

    id: str
    variables: Mapping[str, Any]
    passed: bool
    rationale: str = ""
    kind: CaseKind | None = None
    line: int | None = field(default=None, compare=False)

    @property
    def label(self) -> str:
        """``"pass"`` or ``"fail"``."""
        return "pass" if self.passed else "fail"


def load_labels(path: str | Path) -> tuple[LabelledCase, ...]:
    """The labelled cases of a JSONL file (see the module docstring for a line's fields).

    Raises:
        LabelsError: A line is not a JSON object, has no valid label, or repeats an id.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise LabelsError(f"cannot read labelled set {path}: {error}") from error
    return _parse(text, str(path))


def shipped_labels(prompt: str) -> tuple[LabelledCase, ...]:
    """The labelled set shipped for catalog prompt ``prompt`` (a key of ``SHIPPED_SETS``).

    Example:
        >>> cases = shipped_labels("CONCISENESS_PROMPT")
        >>> len(cases) >= 30, {case.label for case in cases} == {"pass", "fail"}
        (True, True)
    """
    if prompt not in SHIPPED_SETS:
        raise LabelsError(
            f"no labelled set is shipped for {prompt}; pass your own labels "
            f"(shipped: {', '.join(SHIPPED_SETS)})"
        )
    name = SHIPPED_SETS[prompt]
    text = resources.files(__package__).joinpath("sets").joinpath(name).read_text(encoding="utf-8")
    return _parse(text, f"sets/{name}")


def check_variables(cases: Sequence[LabelledCase], entry: CatalogEntry, source: str) -> None:
    """Every case fills the prompt's required variables and nothing the prompt lacks."""
    known = set(entry.variables)
    for case in cases:
        where = f"{source}: case {case.id!r}" + (f" (line {case.line})" if case.line else "")
        missing = [name for name in entry.required_variables if case.variables.get(name) is None]
        if missing:
            raise LabelsError(f"{where} lacks {', '.join(missing)}, which {entry.name} needs")
        unknown = sorted(set(case.variables) - known)
        if unknown:
            raise LabelsError(
                f"{where} has {', '.join(unknown)}, which {entry.name} does not use "
                f"(its variables: {', '.join(entry.variables)})"
            )


def _parse(text: str, source: str) -> tuple[LabelledCase, ...]:
    cases: list[LabelledCase] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        case = _case(line, f"{source} line {number}", number)
        if case.id in seen:
            raise LabelsError(f"{source} line {number}: id {case.id!r} appears twice")
        seen.add(case.id)
        cases.append(case)
    if not cases:
        raise LabelsError(f"{source} holds no labelled cases")
    return tuple(cases)


def _case(line: str, where: str, number: int) -> LabelledCase:
    try:
        record = read_json(line, first_line=number)
    except DocumentError as error:
        raise LabelsError(f"{where}: {error}") from None
    if not isinstance(record, dict):
        raise LabelsError(f"{where}: a line must be a JSON object")
    label = record.get("label")
    if not isinstance(label, (str, bool)) or label not in _LABELS:
        raise LabelsError(f"{where}: label must be 'pass' or 'fail', got {label!r}")
    kind = record.get("kind")
    if kind not in (None, "clear", "borderline"):
        raise LabelsError(f"{where}: kind must be 'clear' or 'borderline', got {kind!r}")
    rationale = record.get("rationale", "")
    if not isinstance(rationale, str):
        raise LabelsError(f"{where}: rationale must be a string")
    return LabelledCase(
        id=str(record.get("id", f"line-{number}")),
        variables={key: value for key, value in record.items() if key not in _FIELDS},
        passed=_LABELS[label],
        rationale=rationale,
        kind=kind,
        line=number,
    )
