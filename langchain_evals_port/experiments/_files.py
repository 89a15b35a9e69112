"""Reading cases from JSONL, JSON and CSV files, each case with the place it came from."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from langchain_evals_port.core._documents import DocumentError, read_csv, read_json

from ._case import Located, case_at
from ._errors import DatasetError, Location, closest, did_you_mean

__all__ = ["csv_cases", "json_cases", "jsonl_cases"]


def jsonl_cases(path: Path) -> Iterator[Located]:
    """One case per line, each a JSON object; blank lines are allowed."""
    for number, line in enumerate(_read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        location = Location.at_line(path, number)
        yield location, case_at(_json(path, line, first_line=number), location)


def json_cases(path: Path) -> Iterator[Located]:
    """An array of case objects, or an object whose only key, ``cases``, holds one."""
    document = _json(path, _read_text(path))
    prefix = ""
    if isinstance(document, dict):
        for key in document:
            if key != "cases":
                raise DatasetError(
                    f"unknown key {key!r}{did_you_mean(key, ['cases'])}; a dataset object "
                    "has one key, 'cases', holding the array of cases",
                    field=key,
                    location=Location.in_file(path),
                )
        if "cases" not in document:
            raise DatasetError(
                "no 'cases' key; a dataset object holds its array of cases under 'cases'",
                field="cases",
                location=Location.in_file(path),
            )
        document, prefix = document["cases"], "cases"
    if not isinstance(document, list):
        expected = "'cases' must hold" if prefix else "expected"
        raise DatasetError(
            f"{expected} an array of case objects, got {_json_kind(document)}",
            field=prefix or None,
            location=Location.in_file(path),
        )
    for index, row in enumerate(document):
        location = Location(f"{path}, at {prefix}[{index}]", str(path))
        yield location, case_at(row, location)


_FIELDS = ("inputs", "reference_outputs", "metadata")
_CONVENTION = (
    "columns are named id, inputs, inputs.<key>, reference_outputs, "
    "reference_outputs.<key> or metadata.<key>; or map columns by name with inputs=[...], "
    "reference_outputs=[...] and metadata=[...] (--inputs, --reference and --metadata on "
    "the command line)"
)


def csv_cases(
    path: Path,
    *,
    inputs: str | Sequence[str] | None,
    reference_outputs: str | Sequence[str] | None,
    metadata: str | Sequence[str] | None,
    id_column: str | None,
) -> Iterator[Located]:
    """Cases from a CSV file with a header row; see ``Dataset.from_csv`` for the mapping."""
    header: list[str] | None = None
    plan: list[tuple[str, str | None]] = []
    for start, cells in _csv(path):
        location = Location.at_line(path, start)
        if header is None:
            header = cells
            lists = {"inputs": inputs, "reference_outputs": reference_outputs, "metadata": metadata}
            plan = _plan(header, lists, id_column, location)
            continue
        if len(cells) != len(header):
            raise DatasetError(
                f"{len(cells)} cells, but the header (line 1) has {len(header)} columns",
                location=location,
            )
        row: dict[str, Any] = {}
        for (field, key), cell in zip(plan, cells, strict=True):
            if key is None:
                if field != "id" or cell:  # an empty id cell: no id given
                    row[field] = cell
            else:
                row.setdefault(field, {})[key] = cell
        yield location, case_at(row, location)
    if header is None:
        raise DatasetError("empty file; expected a header row", location=Location.in_file(path))


def _plan(
    header: list[str],
    lists: dict[str, str | Sequence[str] | None],
    id_column: str | None,
    location: Location,
) -> list[tuple[str, str | None]]:
    """For each column, the field it fills and the key within it (``None``: the whole
    field)."""
    seen: set[str] = set()
    for column in header:
        if column in seen or not column:
            problem = "a column without a name" if not column else f"column {column!r} twice"
            raise DatasetError(f"the header has {problem}", field=column, location=location)
        seen.add(column)
    if id_column is not None and id_column not in seen:
        raise DatasetError(
            f"no column {id_column!r} for id_column={id_column!r}"
            f"{did_you_mean(id_column, header)}; the columns are {', '.join(header)}",
            field=id_column,
            location=location,
        )
    id_column = id_column or ("id" if "id" in seen else None)
    by_name = {
        field: [names] if isinstance(names, str) else list(names)
        for field, names in lists.items()
        if names is not None
    }
    if by_name:
        plan = _plan_by_name(header, by_name, id_column, location)
    else:
        plan = [_by_convention(column, id_column, location) for column in header]
    fields = {field for field, _ in plan}
    if "inputs" not in fields:
        raise DatasetError("no inputs column; " + _CONVENTION, field="inputs", location=location)
    for field in fields - {"id"}:
        whole = (field, None) in plan
        if whole and sum(f == field for f, _ in plan) > 1:
            raise DatasetError(
                f"both a {field!r} column and {field}.<key> columns; use one or the other",
                field=field,
                location=location,
            )
    return plan


def _by_convention(
    column: str, id_column: str | None, location: Location
) -> tuple[str, str | None]:
    if column == id_column:
        return "id", None
    field, dot, key = column.partition(".")
    if field in _FIELDS:
        if key:
            return field, key
        if not dot and field != "metadata":
            return field, None
        raise DatasetError(
            f"column {column!r} names no key; name it {field}.<key>",
            field=column,
            location=location,
        )
    found = closest(field, ["id", *_FIELDS])
    hint = f" (did you mean {found + dot + key!r}?)" if found else ""
    raise DatasetError(
        f"unknown column {column!r}{hint}; " + _CONVENTION, field=column, location=location
    )


def _plan_by_name(
    header: list[str],
    by_name: dict[str, list[str]],
    id_column: str | None,
    location: Location,
) -> list[tuple[str, str | None]]:
    if not by_name.get("inputs"):
        raise DatasetError(
            "inputs= names no column; name the columns that hold the inputs",
            field="inputs",
            location=location,
        )
    owner: dict[str, str] = {}
    for field, names in by_name.items():
        for name in names:
            if name not in header:
                raise DatasetError(
                    f"{field}= names column {name!r}, which the header lacks"
                    f"{did_you_mean(name, header)}; the columns are {', '.join(header)}",
                    field=name,
                    location=location,
                )
            if name in owner or name == id_column:
                other = "id_column" if name == id_column else owner[name]
                raise DatasetError(
                    f"column {name!r} is named by both {other}= and {field}=",
                    field=name,
                    location=location,
                )
            owner[name] = field
    plan: list[tuple[str, str | None]] = []
    for column in header:
        if column == id_column:
            plan.append(("id", None))
        elif column in owner:
            plan.append((owner[column], column))
        else:
            raise DatasetError(
                f"column {column!r} is not mapped; add it to inputs=, reference_outputs= "
                "or metadata=",
                field=column,
                location=location,
            )
    return plan


def _json(path: Path, text: str, *, first_line: int = 1) -> Any:
    try:
        return read_json(text, first_line=first_line)
    except DocumentError as error:
        raise _located(path, error) from None


def _csv(path: Path) -> Iterator[tuple[int, list[str]]]:
    try:
        yield from read_csv(_read_text(path))
    except DocumentError as error:
        raise _located(path, error) from None


def _located(path: Path, error: DocumentError) -> DatasetError:
    location = Location.at_line(path, error.line) if error.line else Location.in_file(path)
    problem = f"{error} (column {error.column})" if error.column else str(error)
    return DatasetError(problem, field=error.field, location=location)


class _MissingFile(DatasetError, FileNotFoundError):
    """A dataset file that is not there: a ``DatasetError`` naming it (and the closest file
    in its folder), and the ``FileNotFoundError`` it always was."""


def _read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        folder = path.parent if path.parent.is_dir() else Path()
        siblings = [str(path.parent / sibling.name) for sibling in folder.iterdir()]
        raise _MissingFile(
            f"no such file{did_you_mean(str(path), siblings)}", location=Location.in_file(path)
        ) from None
    except IsADirectoryError:
        raise DatasetError(
            "a directory; expected a .jsonl, .csv or .json file", location=Location.in_file(path)
        ) from None
    try:
        return raw.decode("utf-8-sig")  # a byte-order mark, as spreadsheets write, is dropped
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise DatasetError(
            f"not UTF-8 text (byte {error.start}); save the file as UTF-8",
            location=Location.at_line(path, line),
        ) from None


def _json_kind(value: object) -> str:
    names = {dict: "an object", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")
