"""Objects as the matcher sees them: keys compared by equality, and keys for the judge.

``rubric`` and ``exclude_keys`` name keys by path: a top-level key, or a dotted path into
nested objects (``"time.start"``). A path is first looked up as a literal key of the object,
so keys that contain dots still work as they do in OpenEvals.

A top-level key is compared as a whole, minus the listed paths beneath it; a key left empty
by that removal has nothing of its own to compare and is left out. Values compared by
equality are reduced once to a *fingerprint*, so pairing two lists compares hashable tokens
instead of re-serialising values for every candidate pair.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from langchain_evals_port.core import MISSING, canonical_json, get_path, without_paths
from langchain_evals_port.core.errors import EvaluatorInputError

Fingerprint = Hashable
"""A value under the canonical equality rule: equal values have equal fingerprints."""


def fingerprint(value: Any, *, where: str = "value") -> Fingerprint:
    """The value's fingerprint: a string is itself, anything else its canonical JSON text in
    a 1-tuple (so the text of ``1`` never equals the string ``"1"``).

    Example:
        >>> fingerprint(1.0) == fingerprint(1)
        True
        >>> fingerprint("1") == fingerprint(1)
        False
    """
    kind = type(value)
    if kind is str:
        return str(value)
    # The commonest scalars skip json.dumps: their canonical text is known.
    if kind is int:
        return (int.__repr__(value),)
    if value is None:
        return _NULL
    if kind is bool:
        return _TRUE if value else _FALSE
    return (canonical_json(value, name=where),)


_NULL, _TRUE, _FALSE = ("null",), ("true",), ("false",)


@dataclass(frozen=True)
class KeyPaths:
    """Which keys the judge grades and which are left out, resolved once per evaluator."""

    judged: frozenset[str]
    excluded: frozenset[str]
    dotted_judged: tuple[str, ...]
    beneath: Mapping[str, frozenset[str]]

    @classmethod
    def of(cls, rubric_keys: Iterable[str], exclude_keys: Iterable[str]) -> KeyPaths:
        """Resolve ``rubric`` and ``exclude_keys``; an excluded path wins over the rubric,
        including for every path beneath it."""
        excluded = frozenset(exclude_keys)
        judged = frozenset(
            path
            for path in rubric_keys
            if path not in excluded and not any(path.startswith(x + ".") for x in excluded)
        )
        beneath: defaultdict[str, set[str]] = defaultdict(set)
        for path in judged | excluded:
            parts = path.split(".")
            for cut in range(1, len(parts)):
                beneath[".".join(parts[:cut])].add(".".join(parts[cut:]))
        return cls(
            judged=judged,
            excluded=excluded,
            dotted_judged=tuple(sorted(path for path in judged if "." in path)),
            beneath={prefix: frozenset(paths) for prefix, paths in beneath.items()},
        )


@dataclass(frozen=True)
class Item:
    """One object, split: fingerprints of the keys compared by equality, and the values of
    the keys the judge grades."""

    compared: dict[str, Fingerprint]
    judged: dict[str, Any]

    @property
    def is_empty(self) -> bool:
        """True when nothing of the object is scored."""
        return not self.compared and not self.judged


def split_object(value: Any, paths: KeyPaths, *, where: str) -> Item:
    """Split one object into what is compared and what is judged (see the module docstring).

    Example:
        >>> paths = KeyPaths.of(rubric_keys=["time.start"], exclude_keys=["id"])
        >>> item = split_object(
        ...     {"id": 7, "name": "a", "time": {"start": 9}}, paths, where="outputs")
        >>> sorted(item.compared), item.judged
        (['name'], {'time.start': 9})
    """
    if not isinstance(value, Mapping):
        raise EvaluatorInputError(
            f"{where} must be an object (a mapping of key to value), got {type(value).__name__}"
        )
    compared: dict[str, Fingerprint] = {}
    judged: dict[str, Any] = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise EvaluatorInputError(
                f"{where} has a key of type {type(key).__name__} ({key!r}); the keys of a JSON "
                "object are strings"
            )
        if key in paths.excluded:
            continue
        if paths.beneath:
            item = _remainder(item, paths.beneath.get(key))
            if item is MISSING:
                continue
        if key in paths.judged:
            judged[key] = item
        else:
            try:
                compared[key] = fingerprint(item)
            except EvaluatorInputError:
                # Serialise again, naming the place, only on the error path.
                fingerprint(item, where=f"{where}[{key!r}]")
                raise
    for path in paths.dotted_judged:
        if path not in value:
            item = _remainder(get_path(value, path), paths.beneath.get(path))
            if item is not MISSING:
                judged[path] = item
    return Item(compared, judged)


def _remainder(value: Any, nested: frozenset[str] | None) -> Any:
    if not nested or not isinstance(value, Mapping):
        return value
    rest = without_paths(value, nested)
    return rest if rest else MISSING
