"""Dotted paths into nested mappings (``"time.start"``), shared by the matchers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MISSING: Any = object()
"""Returned by ``get_path`` when a path does not exist."""


def get_path(value: Any, path: str) -> Any:
    """The value at ``path`` (keys separated by dots) inside nested mappings, or ``MISSING``.

    Example:
        >>> get_path({"time": {"start": 9}}, "time.start")
        9
        >>> get_path({"time": {}}, "time.start") is MISSING
        True
    """
    for key in path.split("."):
        if not isinstance(value, Mapping) or key not in value:
            return MISSING
        value = value[key]
    return value


def without_paths(value: Mapping[str, Any], paths: frozenset[str]) -> dict[str, Any]:
    """A copy of ``value`` without the keys at ``paths`` (nested mappings are copied on the
    way down; everything else is shared).

    Example:
        >>> without_paths({"id": 1, "a": {"b": 2, "c": 3}}, frozenset({"id", "a.b"}))
        {'a': {'c': 3}}
    """
    result: dict[str, Any] = {}
    for key, item in value.items():
        if key in paths:
            continue
        prefix = key + "."
        nested = frozenset(p[len(prefix) :] for p in paths if p.startswith(prefix))
        result[key] = without_paths(item, nested) if nested and isinstance(item, Mapping) else item
    return result
