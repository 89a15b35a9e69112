"""``ScriptedChatModel``: a real LangChain chat model that answers from a script and
records the calls it receives."""

from __future__ import annotations

import asyncio
import copy
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableLambda
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from ._replies import (
    ScriptedReply,
    as_chunk,
    checked_reply,
    estimate_usage,
    parse_structured,
    reply_message,
)

if TYPE_CHECKING:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForLLMRun,
        CallbackManagerForLLMRun,
    )
    from langchain_core.tools import BaseTool

__all__ = ["ScriptExhaustedError", "ScriptedCall", "ScriptedChatModel"]

# The bound keyword that tells ``_generate`` a call comes from ``with_structured_output``.
# It travels through ``bind`` so the call still runs through LangChain's callbacks, usage
# accounting and async path exactly like a provider call.
_STRUCTURED_KWARG = "scripted_structured_output"


class ScriptExhaustedError(RuntimeError):
    """A ``ScriptedChatModel`` was called after its scripted replies ran out."""


@dataclass(frozen=True)
class ScriptedCall:
    """What a ``ScriptedChatModel`` was sent in one call.

    Args:
        messages: The messages of the call, in order.
        kind: ``"structured"`` for a ``with_structured_output`` call, else ``"chat"``.
        schema: The schema given to ``with_structured_output``, as given.
        method: The ``method`` given to ``with_structured_output``, as given.
        kwargs: The other keyword arguments of the call: bound ``tools`` and ``tool_choice``,
            ``stop``, and ``with_structured_output``'s ``strict`` and extra keywords.
    """

    messages: list[BaseMessage]
    kind: Literal["chat", "structured"]
    schema: dict[str, Any] | type | None = None
    method: str | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Script:
    """The replies of a ``ScriptedChatModel``, how many were taken, and the calls received."""

    replies: list[ScriptedReply]
    next_reply: int = 0
    calls: list[ScriptedCall] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass(frozen=True)
class _StructuredRequest:
    schema: dict[str, Any] | type
    method: str | None
    kwargs: dict[str, Any]


class ScriptedChatModel(BaseChatModel):
    """A chat model that replies from a script, for offline tests, benchmarks and examples.

    Replies are consumed in order, one per call, whether the call is ``invoke``,
    ``ainvoke``, ``batch``, ``stream`` or a ``with_structured_output`` runnable; concurrent
    calls each take a different reply. A copy (``model_copy``, e.g. with a ``cache``) shares
    the script and the record of calls with its original. A reply may be:

    * a ``str``: an ``AIMessage`` with that text;
    * an ``AIMessage``: a copy of it;
    * a ``ToolCallReply``, a LangChain ``ToolCall`` dict, or a list of them: an ``AIMessage``
      with those ``tool_calls``;
    * a ``dict`` or pydantic model instance: the structured object a
      ``with_structured_output`` runnable returns (validated into the schema when it is a
      pydantic class); a plain call gets its JSON text. A plain call reads a dict that looks
      like a tool call (``name``, ``args`` and optionally ``id``, ``type``) as a tool call;
    * an exception instance: raised by that call, e.g. ``ScriptedProviderError.rate_limited()``.

    A ``str`` reply to a structured call is parsed as JSON, and text that is not a JSON
    object raises ``OutputParserException``, as a provider's structured output does.

    Args:
        replies: The scripted replies, consumed in order.
        responder: Answers every call once ``replies`` are used up, from the call's
            messages; it may be called from several threads at once. Without it, a call
            after the last reply raises ``ScriptExhaustedError``.
        latency: Seconds each call waits before answering (``asyncio.sleep`` on the async
            path).
        model_name: Reported in each reply's ``response_metadata``.
        usage: Token usage reported by every reply; by default it is estimated at four
            characters a token. An ``AIMessage`` reply's own ``usage_metadata`` wins.
        **kwargs: Other ``BaseChatModel`` fields (``callbacks``, ``tags``, ...).

    Example:
        >>> from pydantic import BaseModel
        >>> class Verdict(BaseModel):
        ...     score: bool
        ...     reasoning: str
        >>> judge = ScriptedChatModel(replies=[{"score": True, "reasoning": "It matches."}])
        >>> judge.with_structured_output(Verdict).invoke("Is 'Paris' the capital of France?")
        Verdict(score=True, reasoning='It matches.')
        >>> call = judge.calls[0]
        >>> call.kind, call.schema is Verdict, call.messages[0].content
        ('structured', True, "Is 'Paris' the capital of France?")
    """

    responder: Callable[[list[BaseMessage]], ScriptedReply] | None = None
    """Answers every call once the scripted replies are used up."""
    latency: float = Field(default=0.0, ge=0.0)
    """Seconds each call waits before answering."""
    model_name: str = "scripted"
    """Reported in each reply's ``response_metadata``."""
    usage: UsageMetadata | None = None
    """Token usage reported by every reply; estimated from the text when ``None``."""

    # A misspelt knob must fail loudly rather than be ignored, as BaseChatModel would do.
    model_config = ConfigDict(extra="forbid")

    # One script object, which ``model_copy`` shares: a copy (``model_copy(update=...)``,
    # as ``with_cache`` makes) is the same scripted provider, so it takes the next reply
    # rather than replaying the script, and its calls are recorded with the original's.
    _script: _Script = PrivateAttr(default_factory=lambda: _Script([]))

    def __init__(
        self,
        replies: Iterable[ScriptedReply] = (),
        *,
        responder: Callable[[list[BaseMessage]], ScriptedReply] | None = None,
        latency: float = 0.0,
        model_name: str = "scripted",
        usage: UsageMetadata | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            responder=responder, latency=latency, model_name=model_name, usage=usage, **kwargs
        )
        self._script = _Script(
            [checked_reply(reply, f"replies[{i}]") for i, reply in enumerate(replies)]
        )

    @property
    def _llm_type(self) -> str:
        return "scripted-chat-model"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name, "latency": self.latency}

    @property
    def calls(self) -> list[ScriptedCall]:
        """A snapshot of the calls received so far, in order, including failed ones."""
        with self._script.lock:
            return list(self._script.calls)

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | dict[str, Any] | bool | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools, in OpenAI format, as a provider integration would.

        The tools and ``tool_choice`` are recorded in each call's ``kwargs``; they do not
        change the scripted replies.
        """
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=[convert_to_openai_tool(tool) for tool in tools], **kwargs)

    def with_structured_output(
        self,
        schema: dict[str, Any] | type,
        *,
        method: str | None = None,
        include_raw: bool = False,
        strict: bool | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, dict[str, Any] | BaseModel]:
        """Return a runnable that answers each call with the next scripted structured object.

        Args:
            schema: A pydantic class (the output is an instance of it), or a JSON schema,
                OpenAI tool schema or ``TypedDict`` (the output is a ``dict``). Recorded
                untouched in the call's ``schema``.
            method: Recorded in the call's ``method``; it does not change the reply.
            include_raw: Return ``{"raw": AIMessage, "parsed": ..., "parsing_error": ...}``
                and report a reply that cannot be parsed in ``parsing_error`` instead of
                raising it.
            strict: Recorded in the call's ``kwargs`` when given.
            **kwargs: Recorded in the call's ``kwargs``.
        """
        if strict is not None:
            kwargs["strict"] = strict
        bound = self.bind(
            **{_STRUCTURED_KWARG: _StructuredRequest(schema, method, kwargs)},
            # LangChain's own models send this so tracers can show the schema.
            ls_structured_output_format={"kwargs": {"method": method}, "schema": schema},
        )

        def parse(message: AIMessage) -> dict[str, Any] | BaseModel:
            try:
                parsed = parse_structured(message, schema)
            except OutputParserException as error:
                if include_raw:
                    return {"raw": message, "parsed": None, "parsing_error": error}
                raise
            if include_raw:
                return {"raw": message, "parsed": parsed, "parsing_error": None}
            return parsed

        async def aparse(message: AIMessage) -> dict[str, Any] | BaseModel:
            return parse(message)

        return bound | RunnableLambda(parse, afunc=aparse, name="ScriptedStructuredOutput")

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        number, call, reply = self._take_reply(messages, stop, kwargs)
        if self.latency:
            time.sleep(self.latency)
        return self._answer(number, call, reply)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        number, call, reply = self._take_reply(messages, stop, kwargs)
        if self.latency:
            await asyncio.sleep(self.latency)
        return self._answer(number, call, reply)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        yield as_chunk(self._generate(messages, stop, run_manager, **kwargs))

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        yield as_chunk(await self._agenerate(messages, stop, run_manager, **kwargs))

    def _take_reply(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> tuple[int, ScriptedCall, ScriptedReply]:
        """Record the call and claim its reply; returns the call's number, record and reply."""
        call_kwargs = dict(kwargs)
        request = call_kwargs.pop(_STRUCTURED_KWARG, None)
        if stop is not None:
            call_kwargs["stop"] = stop
        if isinstance(request, _StructuredRequest):
            call = ScriptedCall(
                list(messages),
                "structured",
                request.schema,
                request.method,
                {**request.kwargs, **call_kwargs},
            )
        else:
            call = ScriptedCall(list(messages), "chat", kwargs=call_kwargs)
        # Claiming the reply and recording the call under one lock keeps batch threads and
        # concurrent coroutines from taking the same reply; nothing here awaits, so the
        # lock never blocks an event loop for longer than a list append.
        script = self._script
        with script.lock:
            number = len(script.calls)
            script.calls.append(call)
            index = script.next_reply
            if index < len(script.replies):
                script.next_reply += 1
                return number, call, script.replies[index]
        if self.responder is None:
            raise ScriptExhaustedError(
                f"ScriptedChatModel {self.model_name!r} has no reply for call #{number + 1} "
                f"({call.kind}): {len(script.replies)} replies were scripted and {index} "
                "consumed. Script more replies, or pass responder= to answer every further call."
            )
        # The responder runs outside the lock: it is user code and may be slow.
        reply = checked_reply(self.responder(call.messages), "the responder's reply")
        return number, call, reply

    def _answer(self, number: int, call: ScriptedCall, reply: ScriptedReply) -> ChatResult:
        message = reply_message(reply, structured=call.kind == "structured", number=number)
        if message.usage_metadata is None:
            # A copy, so code that adds to one reply's usage cannot change the others'.
            message.usage_metadata = (
                copy.deepcopy(self.usage) if self.usage else estimate_usage(call.messages, message)
            )
        message.response_metadata = {
            "model_name": self.model_name,
            "finish_reason": "tool_calls" if message.tool_calls else "stop",
            **message.response_metadata,
        }
        return ChatResult(generations=[ChatGeneration(message=message)])
