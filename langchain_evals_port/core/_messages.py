"""Normalise chat messages between LangChain objects and OpenAI-style dicts.

Evaluators receive conversations in whatever shape the application produced, so both
``to_openai_messages`` and ``to_langchain_messages`` accept:

* a single message, a list or tuple of messages, or a LangGraph state mapping
  ``{"messages": [...]}`` (other state keys are ignored);
* as a message, any of (mixed freely within one list):

  - a LangChain ``BaseMessage``: ``HumanMessage``, ``AIMessage``, ``SystemMessage``,
    ``ToolMessage``, their ``...Chunk`` variants, or a ``ChatMessage`` whose role is one of
    the known roles;
  - an OpenAI-style dict ``{"role": "user" | "assistant" | "system" | "developer" | "tool",
    "content": ..., "tool_calls": [...], "tool_call_id": ..., "name": ..., "id": ...}``;
  - a LangChain-style dict ``{"type": "human" | "ai" | "system" | "tool", ...}``, e.g. a
    ``message.model_dump()`` (``"AIMessageChunk"`` and the other chunk types included).

The OpenAI form produced has the keys ``role``, ``content``, ``tool_calls`` (assistant
messages with tool calls), ``tool_call_id`` (tool messages), ``name`` and ``id`` (when
set), in that order. Other keys (``additional_kwargs``, ``response_metadata``, ``status``,
``artifact``, ``refusal``, ...) are not carried over: evaluators compare what was said and
which tools were called, not transport metadata.

Rules that hold in both directions:

* ``content`` is passed through as the same object: a string stays that string and a list
  of provider content blocks (text, images, Anthropic ``thinking``/``redacted_thinking``,
  OpenAI ``reasoning``, ``tool_use``, ...) is never flattened, filtered or rewritten. Only
  a missing or ``None`` content (an assistant message that only calls tools) becomes
  ``""``, because a LangChain message cannot hold ``None``. (Building a LangChain message
  lets pydantic copy a content *list* and its block dicts shallowly; the strings inside
  are shared, nothing is deep-copied.)
* tool calls keep their id, name and arguments. OpenAI-shaped calls
  (``{"id", "type": "function", "function": {"name", "arguments"}}``, arguments a JSON
  string or already a mapping) and LangChain-shaped calls (``{"name", "args", "id"}``) are
  both accepted. In OpenAI form ``arguments`` is always
  ``json.dumps(args, ensure_ascii=False)`` of the parsed arguments (key order kept), so
  the same call has the same text whichever shape it came in. As LangChain does, an
  empty or ``None`` arguments value means a call without arguments (``{}``) and JSON
  strings are decoded with ``strict=False`` (raw control characters inside strings are
  tolerated).
* malformed input raises ``MessageFormatError`` naming the message index (and for tool
  calls the call index and tool name) and what was expected: arguments text that is not
  JSON or not a JSON object, a tool message without ``tool_call_id``, an unknown role,
  an ``AIMessage`` carrying ``invalid_tool_calls``, a bare string instead of a message.
* the ``developer`` role survives a round trip: it becomes a ``SystemMessage`` marked with
  ``additional_kwargs["__openai_role__"] = "developer"``, LangChain's own convention, and
  such a message converts back to ``developer``. A plain ``SystemMessage`` is ``system``.

Why not ``langchain_core.messages.convert_to_messages`` / ``convert_to_openai_messages``
(checked against langchain-core 1.8):

* ``convert_to_openai_messages`` rewrites content: with the default
  ``text_format="string"`` a list of only text blocks is joined into one string; text
  blocks lose every key but ``type``/``text`` (annotations, ids); Anthropic ``tool_use``
  blocks are removed from the content, ``image``/``media``/Bedrock blocks become
  ``image_url``, ``json`` blocks become text, text-less ``refusal`` blocks are dropped and
  ``tool_result`` blocks are split out into separate tool messages. (``thinking`` and
  ``reasoning`` blocks do pass through.) It also silently drops ``invalid_tool_calls``
  (an ``AIMessage`` whose only call had malformed arguments comes out with no call at
  all) and omits message ids unless asked.
* ``convert_to_messages`` turns a bare string into a human message (so a string passed
  where a list was expected becomes one message per character), replaces empty-list
  content with ``""``, raises a bare ``JSONDecodeError``/``KeyError``/pydantic error for
  malformed arguments or a missing ``tool_call_id`` with no message index, and for a dict
  carrying OpenAI tool calls in ``additional_kwargs`` lets ``AIMessage`` silently file the
  malformed ones under ``invalid_tool_calls``.
* ``AIMessageChunk`` parses its ``tool_call_chunks`` with a lenient partial-JSON parser,
  so truncated arguments text such as ``'{"q": "wea'`` silently becomes a tool call with
  partial arguments. We re-check the chunk's raw arguments text strictly.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final, NamedTuple

import pydantic
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.tool import ToolCall

from .errors import MessageFormatError

__all__ = ["message_to_openai", "to_langchain_messages", "to_openai_messages"]

_OPENAI_ROLES: Final[tuple[str, ...]] = ("user", "assistant", "system", "developer", "tool")
_LANGCHAIN_TYPES: Final[tuple[str, ...]] = ("human", "ai", "system", "tool")

# Both vocabularies are accepted under either key (as LangChain itself does), plus the
# chunk type names that ``model_dump()`` of a streamed message carries.
_ROLE_ALIASES: Final[dict[str, str]] = {
    "user": "user",
    "human": "user",
    "HumanMessageChunk": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "AIMessageChunk": "assistant",
    "system": "system",
    "SystemMessageChunk": "system",
    "developer": "developer",
    "tool": "tool",
    "ToolMessageChunk": "tool",
}

# LangChain's marker for a system message that was an OpenAI ``developer`` message.
_OPENAI_ROLE_KEY: Final = "__openai_role__"

_EXCERPT_CHARS: Final = 120
_STRING_HINT: Final = 'wrap it as {"role": "user", "content": ...}'
_EXPECTED_LIST: Final = (
    "expected a message list (a list or tuple of messages, a single message, "
    'or {"messages": [...]})'
)


class _ToolCall(NamedTuple):
    id: str | None
    name: str
    args: dict[str, Any]


class _Message(NamedTuple):
    """A validated message dict, independent of which style it was written in."""

    role: str
    content: str | list[Any]
    tool_calls: list[_ToolCall]
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
        if isinstance(message, BaseMessage):
            _check_langchain_message(message, index)
            result.append(message)
        elif isinstance(message, Mapping):
            result.append(_build_langchain(_parse_dict(message, index), index))
        else:
            raise _not_a_message(message, index)
    return result


def message_to_openai(message: BaseMessage | Mapping[str, Any], index: int = 0) -> dict[str, Any]:
    """Convert one message to an OpenAI-style dict; ``index`` is used in error messages.

    Example:
        >>> from langchain_core.messages import ToolMessage
        >>> message_to_openai(ToolMessage("sunny", tool_call_id="call_1"))
        {'role': 'tool', 'content': 'sunny', 'tool_call_id': 'call_1'}
    """
    if isinstance(message, BaseMessage):
        return _langchain_to_openai(message, index)
    if isinstance(message, Mapping):
        return _parsed_to_openai(_parse_dict(message, index), index)
    raise _not_a_message(message, index)


# --- input shapes ----------------------------------------------------------------------


def _message_list(messages: Any) -> Sequence[Any]:
    if isinstance(messages, (list, tuple)):
        return messages
    if isinstance(messages, BaseMessage):
        return [messages]
    if isinstance(messages, Mapping):
        # ``role`` wins over ``messages`` (a message never has a ``messages`` key), and
        # ``messages`` over ``type`` (a graph state may well have a ``type`` field).
        if "role" in messages:
            return [messages]
        if "messages" in messages:
            inner = messages["messages"]
            if isinstance(inner, (list, tuple)):
                return inner
            msg = (
                f'state["messages"] must be a list or tuple of messages, got {type(inner).__name__}'
            )
            raise MessageFormatError(msg)
        if "type" in messages:
            return [messages]
        msg = (
            f"{_EXPECTED_LIST}; got a dict with keys {_keys(messages)}: a message dict needs "
            f"'role' (OpenAI style) or 'type' (LangChain style)"
        )
        raise MessageFormatError(msg)
    if messages is None:
        raise MessageFormatError(f"{_EXPECTED_LIST}, got None")
    if isinstance(messages, (str, bytes)):
        msg = f"{_EXPECTED_LIST}, got a bare {type(messages).__name__}; {_STRING_HINT}"
        raise MessageFormatError(msg)
    raise MessageFormatError(f"{_EXPECTED_LIST}, got {type(messages).__name__}")


def _not_a_message(message: object, index: int) -> MessageFormatError:
    msg = (
        f"messages[{index}]: expected a LangChain BaseMessage or a message dict, "
        f"got {type(message).__name__}"
    )
    if isinstance(message, (str, bytes)):
        msg += f"; {_STRING_HINT}"
    return MessageFormatError(msg)


# --- dict messages ---------------------------------------------------------------------


def _parse_dict(message: Mapping[str, Any], index: int) -> _Message:
    where = f"messages[{index}]"
    if "role" in message:
        key = "role"
    elif "type" in message:
        key = "type"
    else:
        msg = (
            f"{where}: a message dict needs 'role' (OpenAI style) or 'type' (LangChain "
            f"style); got keys {_keys(message)}"
        )
        if "messages" in message:
            msg += ' (a {"messages": [...]} state goes to to_openai_messages/to_langchain_messages)'
        raise MessageFormatError(msg)
    raw_role = message[key]
    role = _ROLE_ALIASES.get(raw_role) if isinstance(raw_role, str) else None
    if role is None:
        msg = (
            f"{where}: unknown {key} {raw_role!r}; expected one of the roles "
            f"{', '.join(map(repr, _OPENAI_ROLES))} or the LangChain types "
            f"{', '.join(map(repr, _LANGCHAIN_TYPES))}"
        )
        raise MessageFormatError(msg)

    if role == "system":
        # A ``model_dump()`` of a developer SystemMessage keeps LangChain's marker.
        extra = message.get("additional_kwargs")
        if isinstance(extra, Mapping) and extra.get(_OPENAI_ROLE_KEY) == "developer":
            role = "developer"

    content = message.get("content")
    if content is None:
        content = ""
    _check_content(content, where)

    raw_calls = message.get("tool_calls")
    tool_calls: list[_ToolCall] = []
    if raw_calls:
        if role != "assistant":
            msg = f"{where}: only assistant messages can have tool_calls, not {raw_role!r}"
            raise MessageFormatError(msg)
        if not isinstance(raw_calls, (list, tuple)):
            msg = f"{where}: tool_calls must be a list, got {type(raw_calls).__name__}"
            raise MessageFormatError(msg)
        tool_calls = [_parse_tool_call(call, where, j) for j, call in enumerate(raw_calls)]
    # A ``model_dump()`` of an AIMessage records unparseable calls here.
    invalid = message.get("invalid_tool_calls")
    if invalid:
        first = invalid[0] if isinstance(invalid, (list, tuple)) else invalid
        raise _invalid_tool_call_error(first, where)

    # Only a tool message answers a call; elsewhere a stray tool_call_id means nothing.
    tool_call_id = (
        _check_tool_call_id(message.get("tool_call_id"), where) if role == "tool" else None
    )

    return _Message(
        role=role,
        content=content,
        tool_calls=tool_calls,
        tool_call_id=tool_call_id,
        name=_optional_str(message.get("name"), where, "name"),
        id=_optional_str(message.get("id"), where, "id"),
    )


def _parse_tool_call(call: Any, where: str, j: int) -> _ToolCall:
    at = f"{where}: tool_calls[{j}]"
    if not isinstance(call, Mapping):
        msg = (
            f"{at}: expected a tool call dict (OpenAI {{'id', 'type': 'function', "
            f"'function': {{'name', 'arguments'}}}} or LangChain {{'name', 'args', 'id'}}), "
            f"got {type(call).__name__}"
        )
        raise MessageFormatError(msg)
    if "function" in call:
        function = call["function"]
        if not isinstance(function, Mapping):
            msg = (
                f"{at}: 'function' must be a dict with 'name' and 'arguments', "
                f"got {type(function).__name__}"
            )
            raise MessageFormatError(msg)
        name, raw_args, source = function.get("name"), function.get("arguments"), function
    else:
        name, raw_args, source = call.get("name"), call.get("args"), call
    if not isinstance(name, str) or not name:
        msg = f"{at}: a tool call needs a non-empty string 'name'; got keys {_keys(source)}"
        raise MessageFormatError(msg)
    at = f"{at} (tool {name!r})"
    call_id = _optional_str(call.get("id"), at, "id")
    return _ToolCall(call_id, name, _parse_arguments(raw_args, at))


def _parse_arguments(raw: Any, at: str) -> dict[str, Any]:
    # ``None``/``""`` mean "no arguments", as in LangChain's own OpenAI tool-call parser.
    if raw is None or raw == "":
        return {}
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, Mapping):
        return dict(raw)
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
        msg = (
            f"{at}: arguments must be a JSON object, got a JSON {_json_kind(parsed)}: "
            f"{_excerpt(raw)}"
        )
        raise MessageFormatError(msg)
    return parsed


def _parsed_to_openai(message: _Message, index: int) -> dict[str, Any]:
    result: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        result["tool_calls"] = [
            _openai_tool_call(call.id, call.name, call.args, f"messages[{index}]: tool_calls[{j}]")
            for j, call in enumerate(message.tool_calls)
        ]
    if message.tool_call_id is not None:
        result["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        result["name"] = message.name
    if message.id is not None:
        result["id"] = message.id
    return result


def _build_langchain(message: _Message, index: int) -> BaseMessage:
    kwargs: dict[str, Any] = {}
    if message.name is not None:
        kwargs["name"] = message.name
    if message.id is not None:
        kwargs["id"] = message.id
    role = message.role
    try:
        if role == "user":
            return HumanMessage(content=message.content, **kwargs)
        if role == "assistant":
            tool_calls = [
                ToolCall(name=call.name, args=call.args, id=call.id, type="tool_call")
                for call in message.tool_calls
            ]
            return AIMessage(content=message.content, tool_calls=tool_calls, **kwargs)
        if role == "developer":
            kwargs["additional_kwargs"] = {_OPENAI_ROLE_KEY: "developer"}
            return SystemMessage(content=message.content, **kwargs)
        if role == "system":
            return SystemMessage(content=message.content, **kwargs)
        return ToolMessage(content=message.content, tool_call_id=message.tool_call_id, **kwargs)
    except pydantic.ValidationError as error:
        # Our own checks should have caught everything; keep the index if they did not.
        msg = f"messages[{index}]: cannot build a LangChain {role} message: {error}"
        raise MessageFormatError(msg) from error


# --- LangChain messages ----------------------------------------------------------------


def _check_langchain_message(message: BaseMessage, index: int) -> str:
    """Validate a ``BaseMessage`` and return its OpenAI role."""
    where = f"messages[{index}]"
    if isinstance(message, AIMessage):
        if message.invalid_tool_calls:
            raise _invalid_tool_call_error(message.invalid_tool_calls[0], where)
        if isinstance(message, AIMessageChunk):
            _check_tool_call_chunks(message, where)
        for j, call in enumerate(message.tool_calls):
            if not call["name"]:
                msg = f"{where}: tool_calls[{j}] has an empty tool name"
                raise MessageFormatError(msg)
        return "assistant"
    if isinstance(message, HumanMessage):
        return "user"
    if isinstance(message, SystemMessage):
        # LangChain's marker for a message that was an OpenAI ``developer`` message.
        return (
            "developer"
            if message.additional_kwargs.get(_OPENAI_ROLE_KEY) == "developer"
            else "system"
        )
    if isinstance(message, ToolMessage):
        _check_tool_call_id(message.tool_call_id, where)
        return "tool"
    if isinstance(message, ChatMessage):
        role = _ROLE_ALIASES.get(message.role)
        # A ChatMessage has no tool_call_id or tool_calls, so only plain roles fit.
        if role in ("user", "system", "developer", "assistant"):
            return role
        msg = (
            f"{where}: ChatMessage role {message.role!r} is not supported; expected one of "
            "'user', 'assistant', 'system', 'developer' (use ToolMessage for tool results)"
        )
        raise MessageFormatError(msg)
    msg = (
        f"{where}: unsupported message class {type(message).__name__}; expected "
        "HumanMessage, AIMessage, SystemMessage, ToolMessage (or their chunks) or ChatMessage"
    )
    raise MessageFormatError(msg)


def _check_tool_call_chunks(message: AIMessageChunk, where: str) -> None:
    # ``AIMessageChunk`` derives ``tool_calls`` from these with a partial-JSON parser that
    # turns truncated text into partial arguments; insist on the full text being JSON.
    for j, chunk in enumerate(message.tool_call_chunks):
        raw = chunk["args"]
        if raw:
            _parse_arguments(raw, f"{where}: tool_calls[{j}] (tool {chunk['name']!r})")


def _langchain_to_openai(message: BaseMessage, index: int) -> dict[str, Any]:
    role = _check_langchain_message(message, index)
    result: dict[str, Any] = {"role": role, "content": message.content}
    if isinstance(message, AIMessage) and message.tool_calls:
        where = f"messages[{index}]: "
        result["tool_calls"] = [
            _openai_tool_call(call["id"], call["name"], call["args"], f"{where}tool_calls[{j}]")
            for j, call in enumerate(message.tool_calls)
        ]
    if isinstance(message, ToolMessage):
        result["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        result["name"] = message.name
    if message.id is not None:
        result["id"] = message.id
    return result


def _openai_tool_call(
    call_id: str | None, name: str, args: dict[str, Any], at: str
) -> dict[str, Any]:
    try:
        arguments = json.dumps(args, ensure_ascii=False)
    except (TypeError, ValueError) as error:
        msg = f"{at} (tool {name!r}): arguments are not JSON-serialisable: {error}"
        raise MessageFormatError(msg) from error
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


# --- helpers ---------------------------------------------------------------------------


def _invalid_tool_call_error(call: Any, where: str) -> MessageFormatError:
    if isinstance(call, Mapping):
        name, args, error = call.get("name"), call.get("args"), call.get("error")
    else:
        name, args, error = None, call, None
    msg = (
        f"{where}: invalid_tool_calls[0] (tool {name!r}): the tool call's arguments could "
        f"not be parsed as a JSON object"
    )
    if error:
        msg += f" ({error})"
    if isinstance(args, str):
        msg += f": {_excerpt(args)}"
    return MessageFormatError(msg)


def _check_content(content: Any, where: str) -> None:
    if isinstance(content, str):
        return
    if isinstance(content, list):
        for k, block in enumerate(content):
            if not isinstance(block, (str, Mapping)):
                msg = (
                    f"{where}: content[{k}] must be a string or a content block dict, "
                    f"got {type(block).__name__}"
                )
                raise MessageFormatError(msg)
        return
    msg = (
        f"{where}: content must be a string or a list of content blocks, "
        f"got {type(content).__name__}"
    )
    raise MessageFormatError(msg)


def _check_tool_call_id(value: Any, where: str) -> str:
    if isinstance(value, str) and value:
        return value
    msg = (
        f"{where}: a tool message needs a non-empty string 'tool_call_id' (the id of the "
        f"tool call it answers), got {value!r}"
    )
    raise MessageFormatError(msg)


def _optional_str(value: Any, where: str, key: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    msg = f"{where}: {key!r} must be a string, got {type(value).__name__}"
    raise MessageFormatError(msg)


def _keys(mapping: Mapping[Any, Any]) -> list[str]:
    return sorted(str(k) for k in mapping)


def _json_kind(value: object) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return "number"


def _excerpt(text: str) -> str:
    if len(text) <= _EXCERPT_CHARS:
        return repr(text)
    return f"{text[:_EXCERPT_CHARS]!r}... ({len(text)} chars)"
