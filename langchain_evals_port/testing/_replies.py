"""What a ``ScriptedChatModel`` replies with, and how a scripted reply becomes the AI
message, structured object or stream chunk a provider would return."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias, cast

from langchain_core.exceptions import OutputParserException
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import ToolCall, tool_call_chunk
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from pydantic import BaseModel, ValidationError

__all__ = [
    "ScriptedProviderError",
    "ScriptedReply",
    "ToolCallReply",
    "as_chunk",
    "checked_reply",
    "estimate_usage",
    "parse_structured",
    "reply_message",
]

_TOOL_CALL_KEYS = frozenset({"name", "args", "id", "type"})


class ScriptedProviderError(Exception):
    """A scripted provider failure that carries an HTTP ``status_code``, like the errors of
    the OpenAI and Anthropic clients.

    Args:
        message: The provider's error message.
        status_code: The HTTP status the provider answered with.
    """

    def __init__(self, message: str, *, status_code: int) -> None:
        super().__init__(f"Error code: {status_code} - {message}")
        self.message = message
        self.status_code = status_code

    @classmethod
    def bad_request(cls, message: str = "bad request") -> ScriptedProviderError:
        """A 400 error, e.g. a provider rejecting a structured-output schema."""
        return cls(message, status_code=400)

    @classmethod
    def rate_limited(cls, message: str = "rate limit exceeded") -> ScriptedProviderError:
        """A 429 error."""
        return cls(message, status_code=429)

    @classmethod
    def server_error(cls, message: str = "internal server error") -> ScriptedProviderError:
        """A 500 error."""
        return cls(message, status_code=500)


@dataclass(frozen=True)
class ToolCallReply:
    """A scripted reply that asks for a tool call.

    Args:
        name: The tool to call.
        args: The call's arguments.
        id: The tool-call id; when ``None`` a unique one is made from the call's number.
    """

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    id: str | None = None


ScriptedReply: TypeAlias = (
    str
    | AIMessage
    | ToolCallReply
    | Sequence[ToolCallReply | ToolCall | dict[str, Any]]
    | dict[str, Any]
    | BaseModel
    | BaseException
)
"""One scripted answer: text, a message, tool call(s), a structured object or an exception."""


def _is_tool_call_dict(value: object) -> bool:
    return (
        isinstance(value, dict)
        and value.keys() <= _TOOL_CALL_KEYS
        and isinstance(value.get("name"), str)
        and isinstance(value.get("args"), dict)
    )


def checked_reply(reply: object, where: str) -> ScriptedReply:
    """Return ``reply`` if it is a supported scripted reply, so mistakes fail where made."""
    if isinstance(reply, BaseMessage) and not isinstance(reply, AIMessage):
        raise TypeError(f"{where}: a model reply must be an AIMessage, not {type(reply).__name__}")
    if isinstance(reply, (str, AIMessage, ToolCallReply, dict, BaseModel, BaseException)):
        return reply
    if (
        isinstance(reply, (list, tuple))
        and reply
        and all(isinstance(item, ToolCallReply) or _is_tool_call_dict(item) for item in reply)
    ):
        return list(reply)
    raise TypeError(
        f"{where}: unsupported scripted reply {reply!r}; expected a str, AIMessage, "
        "ToolCallReply or list of tool calls, dict, pydantic model or exception instance"
    )


def reply_message(reply: ScriptedReply, *, structured: bool, number: int) -> AIMessage:
    """The AI message a scripted reply stands for (an exception reply is raised); tool calls
    without an id get one made from the call's ``number``."""
    if isinstance(reply, BaseException):
        raise reply
    if isinstance(reply, str):
        return AIMessage(content=reply)
    if isinstance(reply, AIMessage):
        # LangChain stamps ids and metadata on the returned message, which must not leak
        # into the script when the same reply object is returned again.
        return reply.model_copy(deep=True)
    if isinstance(reply, BaseModel):
        return AIMessage(content=reply.model_dump_json())
    if isinstance(reply, dict) and (structured or not _is_tool_call_dict(reply)):
        return AIMessage(content=json.dumps(reply))
    calls = [reply] if isinstance(reply, (ToolCallReply, dict)) else reply
    tool_calls: list[ToolCall] = []
    for position, item in enumerate(calls):
        if isinstance(item, ToolCallReply):
            name, args, call_id = item.name, item.args, item.id
        else:
            name, args, call_id = item["name"], item["args"], item.get("id")
        tool_calls.append(
            ToolCall(
                name=name,
                args=dict(args),
                id=call_id or f"call_{number}_{position}",
                type="tool_call",
            )
        )
    return AIMessage(content="", tool_calls=tool_calls)


def _message_chars(message: BaseMessage) -> int:
    chars = len(message.text)
    if isinstance(message, AIMessage):
        chars += sum(
            len(call["name"]) + len(json.dumps(call["args"])) for call in message.tool_calls
        )
    return chars


def estimate_usage(messages: list[BaseMessage], reply: AIMessage) -> UsageMetadata:
    """Token usage of a call, estimated at four characters a token."""
    # Four characters a token is the usual rule of thumb for English text; tests only need
    # counts that are positive and grow with the text.
    input_tokens = -(-sum(_message_chars(message) for message in messages) // 4)
    output_tokens = -(-_message_chars(reply) // 4)
    usage = {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "total_tokens": input_tokens + output_tokens,
    }
    # langchain-core marks the detail keys ``typing.NotRequired``, which mypy cannot see when
    # it checks for Python 3.10, so it would demand them; the cast states the real shape.
    return cast("UsageMetadata", usage)


def parse_structured(
    message: AIMessage, schema: dict[str, Any] | type
) -> dict[str, Any] | BaseModel:
    """The structured object a reply's JSON text holds, validated into ``schema`` when it is
    a pydantic class; ``OutputParserException`` when it does not parse or match."""
    text = message.text
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise OutputParserException(
            f"The scripted reply is not valid JSON: {error}", llm_output=text
        ) from error
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        try:
            return schema.model_validate(value)
        except ValidationError as error:
            raise OutputParserException(
                f"The scripted reply does not match {schema.__name__}: {error}", llm_output=text
            ) from error
    if not isinstance(value, dict):
        raise OutputParserException(
            f"The scripted reply is JSON but not an object: {text}", llm_output=text
        )
    return value


def as_chunk(result: ChatResult) -> ChatGenerationChunk:
    """A reply as the one (and last) chunk of a stream."""
    message = cast("AIMessage", result.generations[0].message)
    chunk = AIMessageChunk(
        content=message.content,
        additional_kwargs=message.additional_kwargs,
        response_metadata=message.response_metadata,
        usage_metadata=message.usage_metadata,
        id=message.id,
        tool_call_chunks=[
            tool_call_chunk(
                name=call["name"], args=json.dumps(call["args"]), id=call["id"], index=i
            )
            for i, call in enumerate(message.tool_calls)
        ],
        # The whole reply is one chunk, so it is also the last one.
        chunk_position="last",
    )
    return ChatGenerationChunk(message=chunk)
