"""``Dataset``: the cases an experiment runs, from a list, a file or LangSmith."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, overload

from ._case import Case, Located, case_at, content_id
from ._errors import DatasetError, Location, did_you_mean

__all__ = ["Dataset"]


class Dataset(Sequence[Case]):
    """The cases an experiment runs: an immutable sequence of ``Case`` with unique ids.

    Build one from cases, or from a list of dicts (``from_records``). Every row is checked
    as it is read: a bad one raises ``DatasetError`` naming the row, the field, what was
    expected and the closest valid name of a misspelt key; nothing is skipped. Cases keep
    the order of their source; ``dataset[i]`` is the i-th case, ``dataset["id"]`` the case
    with that id, and a slice is a smaller dataset.

    Args:
        cases: The cases; their ids must be unique.
        name: What to call the dataset.

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
