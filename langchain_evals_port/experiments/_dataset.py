"""``Dataset``: the cases an experiment runs, from a list, a file or LangSmith."""

from __future__ import annotations

import datetime
import functools
import inspect
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, overload

import langsmith

from ._case import Case, Located, case_at, content_id
from ._errors import DatasetError, Location, did_you_mean
from ._files import csv_cases, json_cases, jsonl_cases
from ._langsmith import langsmith_cases

__all__ = ["Dataset"]

StrPath = str | os.PathLike[str]

_LOADERS = {".jsonl": "from_jsonl", ".csv": "from_csv", ".json": "from_json"}


class Dataset(Sequence[Case]):
    """The cases an experiment runs: an immutable sequence of ``Case`` with unique ids.

    Build one from a list of dicts (``from_records``), a JSONL, JSON or CSV file
    (``from_jsonl``, ``from_json``, ``from_csv``), a LangSmith dataset (``from_langsmith``),
    or let ``load`` choose by the file's suffix. Every row is checked as it is read: a bad
    one raises ``DatasetError`` naming the file and line, the field, what was expected and
    the closest valid name of a misspelt key; nothing is skipped. Cases keep the order of
    their source; ``dataset[i]`` is the i-th case, ``dataset["id"]`` the case with that id,
    and a slice is a smaller dataset.

    Args:
        cases: The cases; their ids must be unique.
        name: What to call the dataset (the loaders use the file's stem or the LangSmith
            dataset's name).

    Example:
        >>> dataset = Dataset.from_records(
        ...     [
        ...         {"id": "fr", "inputs": {"country": "France"}, "reference_outputs": "Paris"},
        ...         {"inputs": {"country": "Peru"}, "reference_outputs": "Lima"},
        ...     ],
        ...     name="capitals",
        ... )
        >>> len(dataset), dataset[0].id, dataset[1].id
        (2, 'fr', 'c925568945d5152d')
        >>> dataset["fr"].reference_outputs
        'Paris'
        >>> [case.inputs["country"] for case in dataset]
        ['France', 'Peru']
    """

    __slots__ = ("_by_id", "_cases", "_name")

    def __init__(self, cases: Iterable[Case], *, name: str | None = None) -> None:
        self._fill(_checked_cases(cases), name)

    @property
    def name(self) -> str | None:
        """The dataset's name, if it has one."""
        return self._name

    @property
    def cases(self) -> tuple[Case, ...]:
        """The cases, in the order of their source."""
        return self._cases

    @classmethod
    def from_records(
        cls, records: Iterable[Mapping[str, Any]], *, name: str | None = None
    ) -> Dataset:
        """A dataset of mappings with the keys ``id`` (optional), ``inputs``,
        ``reference_outputs`` (optional) and ``metadata`` (optional).

        Raises:
            DatasetError: A record is malformed (named by its index, ``records[2]``), two
                cases share an id, or there are no records.
        """
        located = ((Location(f"records[{i}]"), row) for i, row in enumerate(records))
        cases = ((where, case_at(row, where)) for where, row in located)
        return cls._read(cases, name=name, empty=Location("records"))

    @classmethod
    def from_jsonl(cls, path: StrPath, *, name: str | None = None) -> Dataset:
        """A dataset from a JSONL file: one JSON object per line, with the keys of
        ``from_records``. Blank lines are allowed. The name defaults to the file's stem.

        Raises:
            DatasetError: A line is not valid JSON or not a valid case (the error names the
                file and the line), two cases share an id, or the file holds no cases.

        Example:
            >>> import tempfile
            >>> from pathlib import Path
            >>> with tempfile.TemporaryDirectory() as folder:
            ...     path = Path(folder) / "qa.jsonl"
            ...     _ = path.write_text('{"inputs": "2 + 2?", "reference_outputs": "4"}\\n'
            ...                         '{"inputs": "3 + 3?", "reference_output": "6"}\\n')
            ...     try:
            ...         Dataset.from_jsonl(path)
            ...     except DatasetError as error:
            ...         print(error.line, error.field)
            2 reference_output
        """
        return cls._read_file(jsonl_cases, path, name)

    @classmethod
    def from_json(cls, path: StrPath, *, name: str | None = None) -> Dataset:
        """A dataset from a JSON file holding an array of case objects (the keys of
        ``from_records``), or an object whose one key, ``cases``, holds that array. The name
        defaults to the file's stem.

        Raises:
            DatasetError: The file is not valid JSON (the error names the line), a case is
                malformed (named by its index: ``qa.json, at [2]``), two cases share an id, or
                the file holds no cases.
        """
        return cls._read_file(json_cases, path, name)

    @classmethod
    def from_csv(
        cls,
        path: StrPath,
        *,
        inputs: str | Sequence[str] | None = None,
        reference_outputs: str | Sequence[str] | None = None,
        metadata: str | Sequence[str] | None = None,
        id_column: str | None = None,
        name: str | None = None,
    ) -> Dataset:
        """A dataset from a CSV file with a header row (UTF-8, a byte-order mark allowed).

        Columns map to a case's fields in one of two ways:

        * by name, when ``inputs`` is given (as in LangSmith's ``upload_csv``): the listed
          columns become the keys of the ``inputs``, ``reference_outputs`` and ``metadata``
          dicts (``inputs=["question"]`` makes ``{"question": <cell>}``). Every column must
          be listed, or be the id column: none is left out silently.
        * otherwise by their header: ``inputs.<key>``, ``reference_outputs.<key>`` and
          ``metadata.<key>`` columns fill those dicts; a column named ``inputs`` or
          ``reference_outputs`` is the whole value (a string). Any other column is an error.

        Cells are kept as the strings they are. The case's id comes from ``id_column`` (by
        default a column named ``id``, if there is one); an empty id cell means no id was
        given, so the case gets its content id.

        Args:
            path: The CSV file.
            inputs: The columns holding the inputs (a single name or a list).
            reference_outputs: The columns holding the reference outputs.
            metadata: The columns holding metadata.
            id_column: The column holding case ids.
            name: The dataset's name (default: the file's stem).

        Raises:
            DatasetError: A column is unknown or unmapped (naming the closest valid name), a
                row has the wrong number of cells (naming its line), two cases share an
                id, or the file holds no cases.

        Example:
            >>> import tempfile
            >>> from pathlib import Path
            >>> with tempfile.TemporaryDirectory() as folder:
            ...     path = Path(folder) / "qa.csv"
            ...     _ = path.write_text("id,question,answer,level\\nq1,2 + 2?,4,easy\\n")
            ...     dataset = Dataset.from_csv(
            ...         path, inputs=["question"], reference_outputs="answer", metadata=["level"]
            ...     )
            >>> dataset["q1"].inputs, dataset["q1"].reference_outputs, dataset["q1"].metadata
            ({'question': '2 + 2?'}, {'answer': '4'}, {'level': 'easy'})
        """
        read = functools.partial(
            csv_cases,
            inputs=inputs,
            reference_outputs=reference_outputs,
            metadata=metadata,
            id_column=id_column,
        )
        return cls._read_file(read, path, name)

    @classmethod
    def from_langsmith(
        cls,
        name: str,
        *,
        client: langsmith.Client | None = None,
        splits: Sequence[str] | None = None,
        as_of: datetime.datetime | str | None = None,
    ) -> Dataset:
        """The examples of a LangSmith dataset, read with langsmith's client: each example's
        id (as a string), ``inputs``, ``outputs`` (as ``reference_outputs``) and
        ``metadata``. Attachments are not read.

        Args:
            name: The dataset's name in LangSmith.
            client: The client to read with; by default one configured from the environment
                (``LANGSMITH_ENDPOINT``, ``LANGSMITH_API_KEY``) that gives up within seconds
                when LangSmith cannot be reached.
            splits: Only the examples of these splits (``["test"]``).
            as_of: The dataset's version: a tag (``"prod"``) or a time.

        Raises:
            DatasetError: LangSmith has no dataset of that name, an example is not a valid
                case (named by its id), or no example matches.
        """
        cases = langsmith_cases(name, client=client, splits=splits, as_of=as_of)
        return cls._read(cases, name=name, empty=Location(f"LangSmith dataset {name!r}"))

    @classmethod
    def load(cls, source: StrPath, **options: Any) -> Dataset:
        """A dataset from a file chosen by its suffix (``.jsonl``, ``.csv``, ``.json``), or
        from LangSmith when ``source`` is any other string: the dataset's name. A ``Path``,
        an existing file and a name whose suffix is a near miss (``qa.jsnl``) are files, so
        a typo is an error here rather than a LangSmith request.

        Args:
            source: A file path, or the name of a LangSmith dataset.
            **options: The keyword arguments of the loader ``source`` selects (``from_csv``'s
                ``inputs=``, ``from_langsmith``'s ``splits=``, ...); others are refused.

        Raises:
            DatasetError: As the selected loader does; also for an option it does not take
                and for a file whose suffix is none of the three.

        Example:
            >>> import tempfile
            >>> from pathlib import Path
            >>> with tempfile.TemporaryDirectory() as folder:
            ...     path = Path(folder) / "capitals.json"
            ...     _ = path.write_text('{"cases": [{"id": "fr", "inputs": "France"}]}')
            ...     dataset = Dataset.load(path)
            >>> dataset.name, dataset["fr"].inputs
            ('capitals', 'France')
        """
        loader: Callable[..., Dataset] = getattr(cls, _loader_name(source))
        if loader.__name__ == "from_langsmith" and "client" not in options:
            _check_langsmith_configured(str(source))
        valid = [
            parameter.name
            for parameter in inspect.signature(loader).parameters.values()
            if parameter.kind is inspect.Parameter.KEYWORD_ONLY
        ]
        for option in options:
            if option not in valid:
                raise DatasetError(
                    f"unknown option {option!r}{did_you_mean(option, valid)} for "
                    f"{source!s}; Dataset.{loader.__name__} takes {', '.join(valid)}",
                    field=option,
                )
        return loader(source, **options)

    @overload
    def __getitem__(self, index: int) -> Case: ...

    @overload
    def __getitem__(self, index: str) -> Case: ...

    @overload
    def __getitem__(self, index: slice) -> Dataset: ...

    def __getitem__(self, index: int | str | slice) -> Case | Dataset:
        """The case at a position, the case with an id, or a slice as a dataset."""
        if isinstance(index, str):
            if index not in self._by_id:
                raise KeyError(f"no case with id {index!r}{did_you_mean(index, self._by_id)}")
            return self._by_id[index]
        if isinstance(index, slice):
            return Dataset(self._cases[index], name=self._name)
        return self._cases[index]

    def __len__(self) -> int:
        return len(self._cases)

    def __iter__(self) -> Iterator[Case]:
        return iter(self._cases)

    def __repr__(self) -> str:
        return f"Dataset(name={self._name!r}, cases={len(self._cases)})"

    @classmethod
    def _read_file(
        cls, read: Callable[[Path], Iterable[Located]], path: StrPath, name: str | None
    ) -> Dataset:
        path = Path(path)
        name = path.stem if name is None else name
        return cls._read(read(path), name=name, empty=Location.in_file(path))

    @classmethod
    def _read(cls, cases: Iterable[Located], *, name: str | None, empty: Location) -> Dataset:
        dataset = cls.__new__(cls)
        dataset._fill(cases, name)
        if not dataset:
            raise DatasetError("holds no cases", location=empty)
        return dataset

    def _fill(self, located: Iterable[Located], name: str | None) -> None:
        first_seen: dict[str, Location] = {}
        by_id: dict[str, Case] = {}
        for location, case in located:
            if case.id in by_id:
                raise DatasetError(
                    f"duplicate case id {case.id!r}, already used at "
                    f"{first_seen[case.id].text}{_why_same(case)}",
                    field="id",
                    location=location,
                )
            first_seen[case.id] = location
            by_id[case.id] = case
        self._by_id = by_id
        self._cases = tuple(by_id.values())
        self._name = name


def _checked_cases(cases: Iterable[Case]) -> Iterator[Located]:
    for index, case in enumerate(cases):
        location = Location(f"cases[{index}]")
        if not isinstance(case, Case):
            raise DatasetError(
                f"expected a Case, got {type(case).__name__} (Dataset.from_records reads mappings)",
                location=location,
            )
        yield location, case


def _why_same(case: Case) -> str:
    if case.id != content_id(case.inputs, case.reference_outputs):
        return ""
    return (
        " (a content id: both cases have the same inputs and reference_outputs; remove one, "
        "or give each its own id)"
    )


def _check_langsmith_configured(name: str) -> None:
    """Refuse a name that would go to LangSmith when nothing says where or as whom: most
    likely a file that is not there, and otherwise a request bound to fail."""
    configured = ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "LANGSMITH_ENDPOINT")
    if not any(os.environ.get(variable) for variable in configured):
        raise DatasetError(
            "not a file; to read a LangSmith dataset set LANGSMITH_API_KEY",
            location=Location(name),
        )


def _loader_name(source: StrPath) -> str:
    path = Path(source)
    suffix = path.suffix.lower()
    if suffix in _LOADERS:
        return _LOADERS[suffix]
    hint = did_you_mean(suffix, _LOADERS) if suffix else ""
    if isinstance(source, os.PathLike) or path.is_file() or hint:
        raise DatasetError(
            f"unknown file type {suffix or '(no suffix)'}{hint}; Dataset.load reads .jsonl, "
            ".csv and .json files, and takes any other string for a LangSmith dataset's name",
            location=Location.in_file(path),
        )
    return "from_langsmith"
