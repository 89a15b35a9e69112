"""Reading a trajectory: the role of each message and the tool calls, with parsed arguments.

A trajectory may be a list of LangChain messages, OpenAI-style dicts, ``{"messages": [...]}``
or a LangGraph state (a dict with a ``messages`` key and others), mixed freely — whatever
the core's ``to_openai_messages`` accepts.

Matching reads only roles and tool calls, so the common message shapes are read directly:
LangChain's own message classes (already validated by LangChain, with parsed arguments)
and OpenAI-style user, assistant and tool dicts. Everything else, and anything irregular
in those, goes through the core's ``message_to_openai``, which validates the whole message
and raises ``MessageFormatError`` naming the message and the tool. The direct path exists
because the core's full normalisation costs 5 to 20 µs a message, which would make matching a
long trajectory slower than OpenEvals.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, cast

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langchain_evals_port.core import canonical_json, message_to_openai
from langchain_evals_port.core.errors import MessageFormatError


@dataclass(eq=False, slots=True)
class Call:
    """One tool call of a trajectory.

    Args:
        index: Its position among the trajectory's tool calls.
        message: The index of the message that made it.
        name: The tool's name.
        args: The parsed arguments.
    """

    index: int
    message: int
    name: str
    args: dict[str, Any]
    _keys: dict[str, Hashable] | None = field(default=None, repr=False)

    @property
    def arg_keys(self) -> dict[str, Hashable]:
        """Each argument's equality key (see ``value_key``), computed once."""
        if self._keys is None:
            # A string is its own key; most arguments are strings, so skip the call.
            self._keys = {
                name: value if type(value) is str else value_key(value)
                for name, value in self.args.items()
            }
        return self._keys


@dataclass(frozen=True, slots=True)
class Trajectory:
    """The roles of a trajectory's messages and its tool calls, in order."""

    roles: tuple[str, ...]
    calls: tuple[Call, ...]


def read_trajectory(value: Any, side: str) -> Trajectory:
    """Read ``value`` (any accepted message-list shape); ``side`` names it in errors.

    Example:
        >>> read_trajectory([{"role": "assistant", "content": "", "tool_calls": [
        ...     {"function": {"name": "weather", "arguments": '{"city": "Paris"}'}}]}],
        ...     "outputs").calls[0].args
        {'city': 'Paris'}
    """
    roles: list[str] = []
    calls: list[Call] = []
    for index, message in enumerate(_message_list(value, side)):
        kind = type(message)
        role = _SIMPLE_ROLES.get(kind)
        if role is not None:
            roles.append(role)
        elif kind is AIMessage and not message.invalid_tool_calls:
            roles.append("assistant")
            for call in message.tool_calls:
                calls.append(Call(len(calls), index, call["name"], call["args"]))
        else:
            role, tool_calls = _read_message(message, index, side)
            roles.append(role)
            for name, args in tool_calls:
                calls.append(Call(len(calls), index, name, args))
    return Trajectory(tuple(roles), tuple(calls))


def _message_list(value: Any, side: str) -> Sequence[Any]:
    if isinstance(value, (list, tuple)):
        return value
    if isinstance(value, Mapping) and "messages" in value and "role" not in value:
        inner = value["messages"]
        if isinstance(inner, (list, tuple)):
            return inner
        raise MessageFormatError(
            f'{side}: state["messages"] must be a list of messages, got {type(inner).__name__}'
        )
    # A single message: the core reads it or names the problem.
    if isinstance(value, (BaseMessage, Mapping)):
        return [value]
    raise MessageFormatError(
        f"{side}: expected a message list (a list of messages, a single message, or a "
        f'state {{"messages": [...]}}), got {type(value).__name__}'
    )


_ToolCalls = Sequence[tuple[str, dict[str, Any]]]

# LangChain's own classes, exactly: subclasses and chunks (whose tool calls need strict
# re-parsing) and system messages (which may carry the developer-role marker) go through
# the core, and so does an ``AIMessage`` with invalid tool calls, for the core's error.
_SIMPLE_ROLES: Final[dict[type, str]] = {HumanMessage: "user", ToolMessage: "tool"}
_DICT_ROLES: Final = frozenset({"user", "assistant", "tool"})
# ``strict=False`` as the core and LangChain read arguments: models put raw newlines in
# strings. One decoder, because ``json.loads(strict=False)`` builds a new one per call.
_DECODER: Final = json.JSONDecoder(strict=False)


class _Irregular(Exception):
    """The direct path does not handle this message; the core reads it instead."""


def _read_message(message: Any, index: int, side: str) -> tuple[str, _ToolCalls]:
    if type(message) is dict:
        try:
            return _read_dict(message)
        except _Irregular:
            pass
    try:
        data = message_to_openai(message, index)
    except MessageFormatError as error:
        raise MessageFormatError(f"{side}: {error}") from None
    return data["role"], [
        (call["function"]["name"], _DECODER.decode(call["function"]["arguments"]))
        for call in data.get("tool_calls", ())
    ]


def _read_dict(message: dict[str, Any]) -> tuple[str, _ToolCalls]:
    role = message.get("role")
    if role not in _DICT_ROLES or message.get("invalid_tool_calls"):
        raise _Irregular
    raw_calls = message.get("tool_calls")
    if not raw_calls:
        return role, ()
    if role != "assistant" or type(raw_calls) is not list:
        raise _Irregular
    return role, [_read_dict_call(call) for call in raw_calls]


def _read_dict_call(call: Any) -> tuple[str, dict[str, Any]]:
    if type(call) is not dict:
        raise _Irregular
    function = call.get("function")
    if function is None:
        name, raw = call.get("name"), call.get("args")
    elif type(function) is dict:
        name, raw = function.get("name"), function.get("arguments")
    else:
        raise _Irregular
    if type(name) is not str or not name:
        raise _Irregular
    if type(raw) is dict:
        return name, raw
    if type(raw) is not str or not raw:
        raise _Irregular
    try:
        args = _DECODER.decode(raw)
    except json.JSONDecodeError:
        raise _Irregular from None
    if type(args) is not dict:
        raise _Irregular
    return name, args


# Tags keep keys of different JSON types apart: ``True`` is not ``1``.
_NUMBER: Final = "number"
_BOOLEAN: Final = "boolean"
_NAN: Final = (_NUMBER, "NaN")
_ARRAY: Final = "array"
_OBJECT: Final = "object"
_JSON: Final = "json"


def value_key(value: Any) -> Hashable:
    """A hashable key with ``value_key(a) == value_key(b)`` exactly when
    ``canonical_equal(a, b)``.

    Plain JSON data, which tool arguments almost always are, is keyed without serialising:
    a string is its own key, ``1`` and ``1.0`` share one, ``True`` and ``1`` do not, NaN
    equals NaN, lists and tuples are keyed item by item and dicts key by key. Anything else
    is put in its canonical JSON form first, and a dict with a ``role`` key (which the rule
    may read as a chat message) is keyed by its canonical JSON text.

    Example:
        >>> value_key(1) == value_key(1.0), value_key(True) == value_key(1)
        (True, False)
        >>> value_key({"a": [1, 2.0]}) == value_key({"a": (1.0, 2)})
        True
    """
    kind = type(value)
    if kind is str or value is None:
        return cast(Hashable, value)
    if kind is bool:
        return (_BOOLEAN, value)
    if kind is int:
        return (_NUMBER, value)
    if kind is float:
        if value != value:
            return _NAN
        return (_NUMBER, int(value) if value.is_integer() else value)
    try:
        if kind is list or kind is tuple:
            return (_ARRAY, tuple([value_key(item) for item in value]))
        if kind is dict:
            if "role" in value:
                return (_JSON, canonical_json(value))
            items = []
            for key, item in value.items():
                if type(key) is not str:
                    break
                items.append((key, value_key(item)))
            else:
                return (_OBJECT, frozenset(items))
    except RecursionError:
        pass  # circular or too deep: the canonical rule says which
    # Everything else (sets, dates, models, other mappings...) is keyed by its canonical
    # form read back as plain JSON, so it gets the same key as equal plain data.
    return value_key(json.loads(canonical_json(value)))
