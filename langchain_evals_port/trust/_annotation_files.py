"""``import_annotations``: people's labels from a CSV or JSONL file into a ledger.

Every row is read and checked before anything is written; a bad row raises
``AnnotationImportError`` naming the file, the line and the column, and nothing is stored.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from langchain_evals_port.core._documents import DocumentError, read_csv, read_json
from langchain_evals_port.core.errors import EvalsError
from langchain_evals_port.storage import SqlLedger
from langchain_evals_port.storage._annotation import (
    Annotation,
    AnnotationConflictError,
    case_subject,
)

__all__ = ["COLUMNS", "AnnotationImportError", "import_annotations"]

COLUMNS = (
    "subject_id",
    "key",
    "score",
    "label",
    "note",
    "annotator",
    "subject_kind",
    "annotation_id",
    "created_at",
    "experiment",
    "case_id",
    "trial",
)
"""The columns (CSV) or keys (JSONL) of an annotation file; ``key`` and a ``score`` or
``label`` are required, ``subject_kind`` defaults to ``"interaction"``. An interaction is named
by ``subject_id``; a case by ``experiment``, ``case_id`` and ``trial`` (default 0), or by a
``subject_id`` that exactly one run of the ledger joins to (``case_subject``)."""

_HASHED = COLUMNS[:8]
"""The columns a row's derived annotation id is made of (those of the first release)."""

_CSV_BOOLEANS = {"true": True, "false": False, "pass": True, "fail": False}


class AnnotationImportError(EvalsError, ValueError):
    """A row of an annotation file is malformed; the message says the file, the line and
    the column.

    Attributes:
        path: The file.
        line: Its line (counted from 1).
        field: The column at fault, when there is one.
    """

    def __init__(self, problem: str, *, path: str, line: int, field: str | None = None) -> None:
        where = f"{path}, line {line}"
        super().__init__(f"{where}: {field}: {problem}" if field else f"{where}: {problem}")
        self.problem = problem
        self.path = path
        self.line = line
        self.field = field


def import_annotations(ledger: SqlLedger, path: str | os.PathLike[str]) -> int:
    """Store the annotations of a ``.csv`` or ``.jsonl`` file in ``ledger``; the number
    stored.

    A row without ``annotation_id`` gets one derived from its content, so importing the same
    file again stores nothing new; an id given twice, or stored already, with other content
    is refused. Keys given twice in a JSONL object, ``NaN``, deep nesting, a CSV row with
    more cells than the header, a cell over 131,072 characters and text that is not UTF-8
    are refused too, each named by line. A CSV ``score`` is ``true``/``false`` (or ``pass``/
    ``fail``) or a number; an empty cell is no value.

    Raises:
        AnnotationImportError: A row is malformed or conflicts (nothing is stored).

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from langchain_evals_port.runtime import SqliteLedger
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "labels.csv").write_text(
        ...     "subject_kind,experiment,case_id,key,score,annotator\\n"
        ...     "case,exp-1,c-1,correctness,fail,ana\\n"
        ...     "case,exp-1,c-2,correctness,maybe,ana\\n")
        >>> ledger = SqliteLedger(folder / "ledger.db")
        >>> import_annotations(ledger, folder / "labels.csv")
        Traceback (most recent call last):
        ...
        langchain_evals_port.trust._annotation_files.AnnotationImportError: \
.../labels.csv, line 3: score: expected true, false, pass, fail or a number, got 'maybe'
        >>> ledger.close()
    """
    file = Path(path)
    rows = _csv_rows(file) if file.suffix.lower() == ".csv" else _jsonl_rows(file)
    first: dict[str, tuple[int, Annotation]] = {}  # each id's first line and annotation
    annotations: list[Annotation] = []
    for line, fields in rows:
        if fields.get("subject_kind") == "case" and "experiment" not in fields:
            fields = {**fields, **_run_of(ledger, fields, path=str(file), line=line)}
        annotation = _annotation(fields, path=str(file), line=line)
        seen, earlier = first.setdefault(annotation.annotation_id, (line, annotation))
        if not earlier.same_content(annotation):
            raise AnnotationImportError(
                f"annotation_id {annotation.annotation_id!r} is on line {seen} already, "
                "with other content; give each annotation its own id",
                path=str(file),
                line=line,
                field="annotation_id",
            )
        annotations.append(annotation)
    try:
        return ledger.record_annotations(annotations)
    except AnnotationConflictError as error:
        line = first[error.annotation_id][0]
        raise AnnotationImportError(
            str(error), path=str(file), line=line, field="annotation_id"
        ) from None


def _run_of(
    ledger: SqlLedger, fields: Mapping[str, Any], *, path: str, line: int
) -> dict[str, Any]:
    """The run of a case row named by its joined ``subject_id`` alone: the one run of the
    ledger whose joined id it is (never the id split at its colons)."""
    subject = fields.get("subject_id")
    if not isinstance(subject, str):
        return {}  # no subject: the row is refused for that
    runs = ledger.runs_joined_as(subject)
    if len(runs) == 1:
        experiment, case_id, trial = runs[0]
        return {"experiment": experiment, "case_id": case_id, "trial": trial}
    found = (
        "no run of this ledger has it"
        if not runs
        else "it is the run of " + " and of ".join(f"{e!r} / {c!r} / {t}" for e, c, t in runs)
    )
    raise AnnotationImportError(
        f"case {subject!r} names no single run ({found}); give the experiment, case_id and "
        "trial columns",
        path=path,
        line=line,
        field="subject_id",
    )


def _read_text(path: Path) -> str:
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise AnnotationImportError(
            f"not UTF-8 text (byte {error.start}); save the file as UTF-8",
            path=str(path),
            line=line,
        ) from None


def _located(path: Path, error: DocumentError) -> AnnotationImportError:
    problem = f"{error.problem} (column {error.column})" if error.column else error.problem
    return AnnotationImportError(problem, path=str(path), line=error.line or 1, field=error.field)


def _csv_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    header: list[str] | None = None
    try:
        for line, cells in read_csv(_read_text(path)):
            if header is None:
                header = cells
                _check_columns(header, path=str(path), line=line)
                continue
            if len(cells) != len(header):
                raise AnnotationImportError(
                    f"{len(cells)} cells, but the header (line 1) has {len(header)} columns",
                    path=str(path),
                    line=line,
                )
            fields: dict[str, Any] = {k: v for k, v in zip(header, cells, strict=True) if v != ""}
            if "score" in fields:
                fields["score"] = _csv_score(fields["score"], path=str(path), line=line)
            if "trial" in fields:
                fields["trial"] = _csv_trial(fields["trial"], path=str(path), line=line)
            yield line, fields
    except DocumentError as error:
        raise _located(path, error) from None


def _csv_score(text: str, *, path: str, line: int) -> bool | float:
    cleaned = text.strip().lower()
    if cleaned in _CSV_BOOLEANS:
        return _CSV_BOOLEANS[cleaned]
    try:
        return float(cleaned)
    except ValueError:
        raise AnnotationImportError(
            f"expected true, false, pass, fail or a number, got {text!r}",
            path=path,
            line=line,
            field="score",
        ) from None


def _csv_trial(text: str, *, path: str, line: int) -> int:
    if text.strip().isdigit():
        return int(text)
    raise AnnotationImportError(
        f"expected a whole number, got {text!r}", path=path, line=line, field="trial"
    )


def _jsonl_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, text in enumerate(_read_text(path).split("\n"), start=1):
        if not text.strip():
            continue
        try:
            fields = read_json(text, first_line=number)
        except DocumentError as error:
            raise _located(path, error) from None
        if not isinstance(fields, dict):
            raise AnnotationImportError(
                f"expected a JSON object, got {type(fields).__name__}",
                path=str(path),
                line=number,
            )
        _check_columns(list(fields), path=str(path), line=number)
        yield number, {k: v for k, v in fields.items() if v is not None}


def _check_columns(names: Sequence[str], *, path: str, line: int) -> None:
    for index, name in enumerate(names):
        if name in names[:index]:
            raise AnnotationImportError("column given twice", path=path, line=line, field=name)
        if name not in COLUMNS:
            close = difflib.get_close_matches(name, COLUMNS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise AnnotationImportError(
                f"unknown column{hint}; an annotation has {', '.join(COLUMNS)}",
                path=path,
                line=line,
                field=name,
            )


def _annotation(fields: Mapping[str, Any], *, path: str, line: int) -> Annotation:
    values = {"subject_kind": "interaction", **fields}
    if "annotation_id" not in values:
        # From what a row said before runs had columns of their own, so a file imported
        # then and again now is stored once: a run's parts count through its subject id.
        named = dict(values)
        if isinstance(named.get("experiment"), str) and isinstance(named.get("case_id"), str):
            trial = named.get("trial")
            named.setdefault(
                "subject_id",
                case_subject(named["experiment"], named["case_id"], trial or 0),
            )
        content = json.dumps([named.get(name) for name in _HASHED], default=str)
        values["annotation_id"] = hashlib.sha256(content.encode()).hexdigest()[:32]
    try:
        return Annotation.model_validate(values)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or None
        problem = first["msg"].removeprefix("Value error, ")
        raise AnnotationImportError(problem, path=path, line=line, field=field) from None
