"""What loading a dataset raises: ``DatasetError``, located at the row it is about."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from langchain_evals_port.core.errors import EvalsError

__all__ = ["DatasetError", "Location", "closest", "did_you_mean"]


@dataclass(frozen=True)
class Location:
    """Where a row sits, as a reader names it: ``qa.jsonl, line 3``, ``records[2]``."""

    text: str
    path: str | None = None
    line: int | None = None

    @classmethod
    def at_line(cls, path: str | Path, line: int) -> Location:
        """Line ``line`` (counted from 1) of the file at ``path``."""
        return cls(f"{path}, line {line}", str(path), line)

    @classmethod
    def in_file(cls, path: str | Path) -> Location:
        """The file at ``path`` as a whole."""
        return cls(str(path), str(path))


class DatasetError(EvalsError, ValueError):
    """A dataset, or one of its cases, is malformed: a bad row, a misspelt key, a missing
    column, a duplicate case id, a dataset that holds no cases.

    The message says where (the file and line, or the case's index or LangSmith example),
    which field, what was expected and, for a misspelt name, the closest valid one.

    Attributes:
        field: The key, column or option at fault, when there is one.
        path: The file, for a dataset read from a file.
        line: The line of that file (counted from 1), for line-based files.
        location: Where the problem is, as the message names it.

    Example:
        >>> from langchain_evals_port.experiments import Dataset, DatasetError
        >>> try:
        ...     Dataset.from_records([{"inputs": "hi", "reference_output": "hello"}])
        ... except DatasetError as error:
        ...     print(error.field, "-", error)
        reference_output - records[0]: unknown key 'reference_output' (did you mean \
'reference_outputs'?); a case has the keys id, inputs, reference_outputs, metadata
    """

    def __init__(
        self, problem: str, *, field: str | None = None, location: Location | None = None
    ) -> None:
        super().__init__(f"{location.text}: {problem}" if location else problem)
        self.problem = problem
        self.field = field
        self.location = location.text if location else None
        self.path = location.path if location else None
        self.line = location.line if location else None

    def at(self, location: Location) -> DatasetError:
        """The same problem, located at ``location``."""
        return DatasetError(self.problem, field=self.field, location=location)


def closest(
    name: str, valid: Iterable[str], synonyms: Mapping[str, str] | None = None
) -> str | None:
    """The valid name ``name`` is a synonym or a typo of, if any.

    Example:
        >>> closest("reference_output", ["inputs", "reference_outputs"])
        'reference_outputs'
        >>> closest("expected", ["inputs", "reference_outputs"], {"expected": "reference_outputs"})
        'reference_outputs'
    """
    if synonyms and name in synonyms:
        return synonyms[name]
    close = difflib.get_close_matches(name, list(valid), n=1, cutoff=0.6)
    return close[0] if close else None


def did_you_mean(name: str, valid: Iterable[str], synonyms: Mapping[str, str] | None = None) -> str:
    """`` (did you mean 'x'?)`` naming ``closest(name, valid, synonyms)``, or ``""``."""
    found = closest(name, valid, synonyms)
    return f" (did you mean {found!r}?)" if found else ""
