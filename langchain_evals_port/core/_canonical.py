"""The one equality rule: two values are equal when their canonical JSON texts are equal.

Exact, JSON and trajectory matching all compare through ``canonical_json``, so "equal"
means the same thing everywhere. The rule, value by value:

* mappings: key order is ignored; keys become strings as JSON makes them (``1`` → ``"1"``,
  ``True`` → ``"true"``, ``None`` → ``"null"``); other key types are an error.
* lists and tuples are both JSON arrays (``(1, 2)`` equals ``[1, 2]``); order matters.
* sets and frozensets are arrays in sorted canonical order, so their order never matters.
* numbers compare by value: ``1 == 1.0`` and ``0.0 == -0.0``; ``Decimal`` and other
  ``numbers.Real`` values likewise. ``NaN`` equals ``NaN`` and infinities equal themselves
  (unlike IEEE comparison, because an output that is NaN twice is the same output).
  Floats are compared exactly: ``0.1 + 0.2`` is not ``0.3``.
* booleans are not numbers: ``True`` does not equal ``1`` (JSON keeps them apart).
* strings compare exactly (no case folding, no Unicode normalisation).
* ``datetime``, ``date`` and ``time`` become ISO 8601 strings, ``UUID`` and paths their
  string, an ``Enum`` its value: a value equals its JSON serialisation, the form in which
  LangSmith datasets and most APIs store it.
* pydantic models and dataclasses compare field by field. Chat messages — LangChain
  messages and OpenAI-style dicts (a ``role`` of user/assistant/system/developer/tool and
  only message keys) alike — compare by role, content, name and tool calls (name and parsed
  arguments); message ids, tool-call ids and ``tool_call_id`` are ignored, because providers
  make them up anew on every run. A malformed message raises ``MessageFormatError``.
* anything else (bytes, arbitrary objects, circular structures) raises
  ``CanonicalizationError`` naming where in the value it sits.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import json
import math
import numbers
import uuid
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from pydantic import BaseModel

from .errors import CanonicalizationError, MessageFormatError

_PLAIN = (str, int, float, bool, type(None))


def canonical_json(value: Any, *, name: str = "value") -> str:
    """The canonical JSON text of ``value`` (see the module docstring for the rule).

    Args:
        value: Any JSON-like value.
        name: How to call the value in an error message (e.g. ``"outputs"``).

    Example:
        >>> canonical_json({"b": 1.0, "a": {2, 1}})
        '{"a":[1,2],"b":1}'
    """
    return json.dumps(
        canonical_value(value, name=name),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=True,
    )


def canonical_text(value: Any, *, name: str = "value") -> str:
    """``value`` itself when it is a string, else its canonical JSON text.

    Text evaluators (edit distance, embeddings) compare this form, so values that are equal
    under the rule always compare as identical texts.
    """
    return value if isinstance(value, str) else canonical_json(value, name=name)


def canonical_equal(left: Any, right: Any, *, names: tuple[str, str] = ("left", "right")) -> bool:
    """Whether two values are equal under the canonical equality rule.

    Example:
        >>> canonical_equal({"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1.0})
        True
        >>> canonical_equal(True, 1)
        False
    """
    if type(left) is str and type(right) is str:
        return left == right
    return canonical_json(left, name=names[0]) == canonical_json(right, name=names[1])


def canonical_value(value: Any, *, name: str = "value") -> Any:
    """``value`` rewritten into plain JSON types, ready for ``json.dumps(sort_keys=True)``."""
    try:
        return _canonical(value)
    except _NoJsonForm as error:
        where = name + "".join(reversed(error.segments))
        if error.problem is not None:
            raise MessageFormatError(f"{where} is not a valid message: {error.problem}") from None
        raise CanonicalizationError(error.describe(where)) from None
    except RecursionError:
        raise CanonicalizationError(
            f"{name} contains itself or is nested too deeply to compare"
        ) from None


class _NoJsonForm(Exception):
    """Raised deep inside a value; containers add their index on the way out, so the
    path is only built when there is an error (the common case builds no strings)."""

    def __init__(self, value: Any, *, as_key: bool = False, problem: str | None = None) -> None:
        super().__init__()
        self.value = value
        self.as_key = as_key
        self.problem = problem
        self.segments: list[str] = []

    def describe(self, where: str) -> str:
        kind = type(self.value).__name__
        if isinstance(self.value, _KeyCollision):
            return f"{where} has keys {self.value} that are the same key in JSON"
        if self.as_key:
            return (
                f"{where} has a key of type {kind} ({self.value!r}); "
                "mapping keys must be strings, numbers, booleans or None"
            )
        hint = " (decode bytes to str first)" if isinstance(self.value, (bytes, bytearray)) else ""
        return (
            f"{where} is a {kind}, which has no JSON form{hint}; pass JSON-like data (dict, "
            "list, str, number, bool, None), a pydantic model or a dataclass"
        )


_AS_IS = frozenset({str, int, bool, type(None)})


def _canonical(value: Any) -> Any:
    kind = type(value)
    if kind in _AS_IS:
        return value
    if kind is float:
        return _number(value)
    if kind is dict or (kind is not list and isinstance(value, Mapping)):
        return _message(value) if _is_message_dict(value) else _mapping(value)
    if kind is list or kind is tuple:
        return _items(value)
    if kind is set or kind is frozenset:
        return _set_items(value)
    return _other(value)


def _number(value: float) -> int | float:
    if math.isfinite(value) and value == int(value):
        return int(value)
    return value


class _KeyCollision(str):
    """Two keys of one mapping that JSON would write the same (``1`` and ``"1"``)."""


def _mapping(value: Mapping[Any, Any]) -> dict[str, Any]:
    result = {}
    for key, item in value.items():
        name = key if type(key) is str else _key(key)
        if name in result:
            raise _NoJsonForm(_KeyCollision(f"{name!r} and {key!r}"))
        try:
            result[name] = _canonical(item)
        except _NoJsonForm as error:
            error.segments.append(f"[{key!r}]")
            raise
    return result


def _items(value: Any) -> list[Any]:
    result = []
    for index, item in enumerate(value):
        try:
            result.append(_canonical(item))
        except _NoJsonForm as error:
            error.segments.append(f"[{index}]")
            raise
    return result


def _set_items(value: Any) -> list[Any]:
    items = _items(value)
    items.sort(key=lambda item: json.dumps(item, sort_keys=True, allow_nan=True))
    return items


def _key(key: Any) -> str:
    if isinstance(key, str):
        return str(key)
    if isinstance(key, bool) or key is None:
        return json.dumps(key)
    if isinstance(key, enum.Enum):
        return _key(key.value)
    if isinstance(key, (numbers.Real, decimal.Decimal)):
        return json.dumps(_canonical(key), allow_nan=True)
    raise _NoJsonForm(key, as_key=True)


def _other(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return _canonical(value.value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, (numbers.Real, decimal.Decimal)):
        return _number(float(value))
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (uuid.UUID, PurePath)):
        return str(value)
    if isinstance(value, BaseModel):
        return _model_data(value)
    if isinstance(value, (list, tuple)):
        return _items(value)
    if isinstance(value, (set, frozenset)):
        return _set_items(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _canonical({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
    raise _NoJsonForm(value)


_ROLES = frozenset({"user", "assistant", "system", "developer", "tool"})
_MESSAGE_KEYS = frozenset({"role", "content", "tool_calls", "tool_call_id", "name", "id"})


def _is_message_dict(value: Mapping[Any, Any]) -> bool:
    role = value.get("role")
    return isinstance(role, str) and role in _ROLES and value.keys() <= _MESSAGE_KEYS


def _message(message: Any) -> dict[str, Any]:
    """A chat message (LangChain or OpenAI-style dict) in the form it is compared in: role,
    content, name and tool calls by name and parsed arguments. Message ids, tool-call ids
    and ``tool_call_id`` are left out: providers make them up anew on every run."""
    from ._messages import message_to_openai

    try:
        data = message_to_openai(message)
    except MessageFormatError as error:
        raise _NoJsonForm(message, problem=str(error)) from None
    form: dict[str, Any] = {"role": data["role"], "content": _canonical(data["content"])}
    if "name" in data:
        form["name"] = data["name"]
    if "tool_calls" in data:
        form["tool_calls"] = [
            {
                "name": call["function"]["name"],
                "arguments": _canonical(json.loads(call["function"]["arguments"])),
            }
            for call in data["tool_calls"]
        ]
    return form


def _model_data(model: BaseModel) -> Any:
    from langchain_core.messages import BaseMessage

    if isinstance(model, BaseMessage):
        return _message(model)
    # Python mode keeps sets as sets, so they compare unordered like everywhere else.
    return _canonical(model.model_dump())
