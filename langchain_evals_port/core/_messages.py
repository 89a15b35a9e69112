"""Normalise chat messages between LangChain objects and OpenAI-style dicts.

``to_openai_messages`` and ``to_langchain_messages`` accept one message, a list or tuple of
messages, or a LangGraph state ``{"messages": [...]}``. A message may be a LangChain
``HumanMessage``/``AIMessage``/``SystemMessage``/``ToolMessage`` (chunks included), an
OpenAI-style dict (``role``: user, assistant, system, developer, tool) or a LangChain-style
dict (``type``: human, ai, system, tool; e.g. a ``model_dump()``), mixed freely.

Both directions keep role, content, tool calls (id, name, arguments), ``tool_call_id``,
``name`` and ``id``; other keys are transport metadata and are dropped. Content passes
through as the same object, so provider blocks (thinking, reasoning, tool_use, ...) are
never flattened; only a missing content becomes ``""``. Tool-call arguments may be a JSON
string or a mapping; in OpenAI form they are always ``json.dumps(args, ensure_ascii=False)``.
``developer`` becomes a ``SystemMessage`` carrying LangChain's marker
``additional_kwargs["__openai_role__"] = "developer"``, and converts back. Malformed input
raises ``MessageFormatError`` naming the message index (for a tool call also its index and
tool name) and what was expected.

LangChain's ``convert_to_messages``/``convert_to_openai_messages`` are not used: they rewrite
or drop content blocks (joining text blocks, removing ``tool_use``, ...) and silently turn
malformed tool calls into ``invalid_tool_calls`` or drop them, with no message index.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final, NamedTuple

from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.tool import ToolCall

from .errors import MessageFormatError

__all__ = ["message_to_openai", "to_langchain_messages", "to_openai_messages"]

# Both vocabularies are accepted under either key, as LangChain itself does.
_ROLES: Final[dict[str, str]] = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "system": "system",
    "developer": "developer",
    "tool": "tool",
}

# Chunk classes subclass these, so ``isinstance`` covers them too.
_CLASS_ROLES: Final[tuple[tuple[type[BaseMessage], str], ...]] = (
    (HumanMessage, "user"),
    (AIMessage, "assistant"),
    (SystemMessage, "system"),
    (ToolMessage, "tool"),
)

# LangChain's marker for a system message that was an OpenAI ``developer`` message.
_OPENAI_ROLE_KEY: Final = "__openai_role__"

_EXCERPT_CHARS: Final = 120


class _Message(NamedTuple):
    """A validated message, whichever shape it came in."""

    role: str
    content: str | list[Any]
    tool_calls: list[ToolCall]
    tool_call_id: str | None
    name: str | None
    id: str | None


# --- public API ------------------------------------------------------------------------


def to_openai_messages(messages: Any) -> list[dict[str, Any]]:
    """Normalise messages of any accepted shape into OpenAI-style dicts.

    Raises ``MessageFormatError`` for anything malformed (see the module docstring).

    Example:
        >>> from langchain_core.messages import AIMessage
        >>> call = {"name": "weather", "args": {"city": "Paris"}, "id": "call_1"}
        >>> oai = to_openai_messages([
        ...     {"role": "user", "content": "Weather in Paris?"},
        ...     AIMessage("", tool_calls=[call]),
        ... ])
        >>> oai[1]["tool_calls"][0]["function"]
        {'name': 'weather', 'arguments': '{"city": "Paris"}'}
    """
    return [message_to_openai(m, i) for i, m in enumerate(_message_list(messages))]


def to_langchain_messages(messages: Any) -> list[BaseMessage]:
    """Normalise messages of any accepted shape into LangChain ``BaseMessage`` objects.

    ``BaseMessage`` inputs are validated and returned as the same objects; dicts are built
    into ``HumanMessage``/``AIMessage``/``SystemMessage``/``ToolMessage``.

    Example:
        >>> msgs = to_langchain_messages({"messages": [
        ...     {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1",
        ...      "type": "function", "function": {"name": "weather",
        ...      "arguments": '{"city": "Paris"}'}}]},
        ...     {"role": "tool", "content": "sunny", "tool_call_id": "call_1"},
        ... ]})
        >>> msgs[0].tool_calls[0]["args"], type(msgs[1]).__name__
        ({'city': 'Paris'}, 'ToolMessage')
    """
    result: list[BaseMessage] = []
    for index, message in enumerate(_message_list(messages)):
        parsed = _parse(message, index)
        result.append(message if isinstance(message, BaseMessage) else _to_langchain(parsed))
    return result


def message_to_openai(message: BaseMessage | Mapping[str, Any], index: int = 0) -> dict[str, Any]:
    """Convert one message to an OpenAI-style dict; ``index`` is used in error messages.

    Example:
        >>> from langchain_core.messages import ToolMessage
        >>> message_to_openai(ToolMessage("sunny", tool_call_id="call_1"))
        {'role': 'tool', 'content': 'sunny', 'tool_call_id': 'call_1'}
    """
    return _to_openai(_parse(message, index), index)


# --- reading ---------------------------------------------------------------------------


def _message_list(messages: Any) -> Sequence[Any]:
    if isinstance(messages, (list, tuple)):
        return messages
    # A message never has a ``messages`` key, but a graph state may well have ``type``.
    if isinstance(messages, Mapping) and "messages" in messages and "role" not in messages:
        inner = messages["messages"]
        if not isinstance(inner, (list, tuple)):
            msg = f'state["messages"] must be a list of messages, got {type(inner).__name__}'
            raise MessageFormatError(msg)
        return inner
    if isinstance(messages, (BaseMessage, Mapping)):
        return [messages]
    msg = (
        "expected a message list (a list or tuple of messages, a single message, or "
        f'{{"messages": [...]}}), got {_got(messages)}'
    )
    raise MessageFormatError(msg)


def _parse(message: object, index: int) -> _Message:
    where = f"messages[{index}]"
    if isinstance(message, Mapping):
        return _parse_dict(message, where)
    if not isinstance(message, BaseMessage):
        msg = f"{where}: expected a LangChain BaseMessage or a message dict, got {_got(message)}"
        raise MessageFormatError(msg)
    role = next((role for cls, role in _CLASS_ROLES if isinstance(message, cls)), None)
    if role is None:
        msg = (
            f"{where}: unsupported message class {type(message).__name__}; expected "
            "HumanMessage, AIMessage, SystemMessage or ToolMessage (or their chunks)"
        )
        raise MessageFormatError(msg)
    # A message's fields are the keys of its ``model_dump()``, which the dict reader reads;
    # only the role comes from the class. ``vars`` shares the values, copying nothing.
    fields = {**vars(message), "role": role}
    if isinstance(message, AIMessageChunk):
        # A chunk derives ``tool_calls`` with a partial-JSON parser that turns truncated
        # text such as '{"q": "wea' into partial arguments; read the raw text strictly.
        fields["tool_calls"] = message.tool_call_chunks
    return _parse_dict(fields, where)


def _parse_dict(message: Mapping[str, Any], where: str) -> _Message:
    key = "role" if "role" in message else "type"
    if key not in message:
        msg = (
            f"{where}: a message dict needs 'role' (OpenAI style) or 'type' (LangChain "
            f"style); got keys {list(message)}"
        )
        raise MessageFormatError(msg)
    raw_role = message[key]
    role = _ROLES.get(raw_role) if isinstance(raw_role, str) else None
    if role is None:
        msg = f"{where}: unknown {key} {raw_role!r}; expected one of {', '.join(map(repr, _ROLES))}"
        raise MessageFormatError(msg)
    extra = message.get("additional_kwargs")
    if (
        role == "system"
        and isinstance(extra, Mapping)
        and extra.get(_OPENAI_ROLE_KEY) == "developer"
    ):
        role = "developer"

    content = "" if message.get("content") is None else message["content"]
    _check_content(content, where)

    raw_calls = message.get("tool_calls") or []
    if raw_calls and role != "assistant":
        msg = f"{where}: only assistant messages can have tool_calls, not {raw_role!r}"
        raise MessageFormatError(msg)
    if not isinstance(raw_calls, (list, tuple)):
        msg = f"{where}: tool_calls must be a list, got {type(raw_calls).__name__}"
        raise MessageFormatError(msg)
    tool_calls = [
        _parse_tool_call(call, f"{where}: tool_calls[{j}]") for j, call in enumerate(raw_calls)
    ]

    # An AIMessage (or its ``model_dump()``) files the calls it could not parse here.
    invalid = message.get("invalid_tool_calls")
    if invalid:
        at = f"{where}: invalid_tool_calls[0]"
        first = invalid[0] if isinstance(invalid, (list, tuple)) else invalid
        _parse_tool_call(first, at)  # raises naming the bad arguments or name, the usual cause
        msg = f"{at} (tool {first['name']!r}): LangChain could not parse this tool call"
        raise MessageFormatError(f"{msg} ({first.get('error')})")

    tool_call_id = None
    if role == "tool":  # elsewhere a stray tool_call_id answers nothing, so it is dropped
        tool_call_id = message.get("tool_call_id")
        if not isinstance(tool_call_id, str) or not tool_call_id:
            msg = (
                f"{where}: a tool message needs a non-empty string 'tool_call_id' (the id "
                f"of the tool call it answers), got {tool_call_id!r}"
            )
            raise MessageFormatError(msg)

    return _Message(
        role=role,
        content=content,
        tool_calls=tool_calls,
        tool_call_id=tool_call_id,
        name=_optional_str(message.get("name"), where, "name"),
        id=_optional_str(message.get("id"), where, "id"),
    )


def _parse_tool_call(call: Any, at: str) -> ToolCall:
    if not isinstance(call, Mapping):
        msg = f"{at}: expected a tool call dict, got {type(call).__name__}"
        raise MessageFormatError(msg)
    # OpenAI nests name and arguments under ``function``; LangChain keeps them flat.
    source = call.get("function", call)
    if not isinstance(source, Mapping):
        msg = f"{at}: 'function' must be a dict, got {type(source).__name__}"
        raise MessageFormatError(msg)
    name = source.get("name")
    if not isinstance(name, str) or not name:
        msg = f"{at}: a tool call needs a non-empty string 'name'; got keys {list(source)}"
        raise MessageFormatError(msg)
    at = f"{at} (tool {name!r})"
    raw = source.get("arguments") if "function" in call else source.get("args")
    call_id = _optional_str(call.get("id"), at, "id")
    return ToolCall(name=name, args=_parse_arguments(raw, at), id=call_id, type="tool_call")


def _parse_arguments(raw: Any, at: str) -> dict[str, Any]:
    if raw is None or raw == "":
        return {}
    if isinstance(raw, Mapping):
        return raw if isinstance(raw, dict) else dict(raw)
    if not isinstance(raw, str):
        msg = f"{at}: arguments must be a JSON object string or a dict, got {type(raw).__name__}"
        raise MessageFormatError(msg)
    try:
        # ``strict=False`` as LangChain does: models put raw newlines inside strings.
        parsed = json.loads(raw, strict=False)
    except json.JSONDecodeError as error:
        msg = (
            f"{at}: arguments are not valid JSON ({error.msg} at char {error.pos}); "
            f"expected a JSON object, got {_excerpt(raw)}"
        )
        raise MessageFormatError(msg) from None
    if not isinstance(parsed, dict):
        raise MessageFormatError(f"{at}: arguments must be a JSON object, got {_excerpt(raw)}")
    return parsed


def _check_content(content: Any, where: str) -> None:
    if not isinstance(content, (str, list)):
        msg = (
            f"{where}: content must be a string or a list of content blocks, "
            f"got {type(content).__name__}"
        )
        raise MessageFormatError(msg)
    for k, block in enumerate(content if isinstance(content, list) else ()):
        if not isinstance(block, (str, Mapping)):
            msg = (
                f"{where}: content[{k}] must be a string or a content block dict, "
                f"got {type(block).__name__}"
            )
            raise MessageFormatError(msg)


def _optional_str(value: Any, where: str, key: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise MessageFormatError(f"{where}: {key!r} must be a string, got {type(value).__name__}")


def _got(value: object) -> str:
    if isinstance(value, (str, bytes)):
        return f'a bare {type(value).__name__}; wrap it as {{"role": "user", "content": ...}}'
    return "None" if value is None else type(value).__name__


def _excerpt(text: str) -> str:
    if len(text) <= _EXCERPT_CHARS:
        return repr(text)
    return f"{text[:_EXCERPT_CHARS]!r}... ({len(text)} chars)"


# --- writing ---------------------------------------------------------------------------


def _to_openai(message: _Message, index: int) -> dict[str, Any]:
    result: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        result["tool_calls"] = [
            _openai_tool_call(call, f"messages[{index}]: tool_calls[{j}]")
            for j, call in enumerate(message.tool_calls)
        ]
    for key in ("tool_call_id", "name", "id"):
        if getattr(message, key) is not None:
            result[key] = getattr(message, key)
    return result


def _openai_tool_call(call: ToolCall, at: str) -> dict[str, Any]:
    try:
        arguments = json.dumps(call["args"], ensure_ascii=False)
    except (TypeError, ValueError) as error:
        msg = f"{at} (tool {call['name']!r}): arguments are not JSON-serialisable: {error}"
        raise MessageFormatError(msg) from error
    function = {"name": call["name"], "arguments": arguments}
    return {"id": call["id"], "type": "function", "function": function}


def _to_langchain(message: _Message) -> BaseMessage:
    # Everything LangChain's constructors validate has been checked while reading.
    common: dict[str, Any] = {"content": message.content, "name": message.name, "id": message.id}
    if message.role == "user":
        return HumanMessage(**common)
    if message.role == "assistant":
        return AIMessage(**common, tool_calls=message.tool_calls)
    if message.role == "developer":
        return SystemMessage(**common, additional_kwargs={_OPENAI_ROLE_KEY: "developer"})
    if message.role == "system":
        return SystemMessage(**common)
    return ToolMessage(**common, tool_call_id=message.tool_call_id)
