"""Offline models and helpers for tests, benchmarks and examples.

``ScriptedChatModel`` is a real LangChain chat model that answers from a script instead of
calling a provider, so a judge or an agent can be exercised without network access or API keys.
It records every call it receives, reports token usage, honours ``with_structured_output`` and
``bind_tools``, and can replay provider failures through ``ScriptedProviderError``.

``HashingEmbeddings`` is a real LangChain ``Embeddings`` that needs no model: texts sharing
words get similar vectors. ``RecordingTracer`` keeps every evaluation event it sees.

``assert_passed``, ``assert_failed`` and ``assert_score_at_least`` check evaluator results in
a test and, when they fail, say why: the key, the score and the judge's reasoning.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
import threading
import time
import zlib
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, cast

from langchain_core.embeddings import Embeddings
from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import ToolCall, tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableLambda
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from langchain_evals_port.core import EvaluatorResult, RecordingTracer, TraceEvent

if TYPE_CHECKING:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForLLMRun,
        CallbackManagerForLLMRun,
    )
    from langchain_core.tools import BaseTool

__all__ = [
    "HashingEmbeddings",
    "RecordingTracer",
    "ScriptExhaustedError",
    "ScriptedCall",
    "ScriptedChatModel",
    "ScriptedProviderError",
    "ScriptedReply",
    "ToolCallReply",
    "TraceEvent",
    "assert_failed",
    "assert_passed",
    "assert_score_at_least",
]

# The bound keyword that tells ``_generate`` a call comes from ``with_structured_output``.
# It travels through ``bind`` so the call still runs through LangChain's callbacks, usage
# accounting and async path exactly like a provider call.
_STRUCTURED_KWARG = "scripted_structured_output"
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


class ScriptExhaustedError(RuntimeError):
    """A ``ScriptedChatModel`` was called after its scripted replies ran out."""


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
            [_checked_reply(reply, f"replies[{i}]") for i, reply in enumerate(replies)]
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
                parsed = _parse_structured(message, schema)
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
        yield _as_chunk(self._generate(messages, stop, run_manager, **kwargs))

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        yield _as_chunk(await self._agenerate(messages, stop, run_manager, **kwargs))

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
        reply = _checked_reply(self.responder(call.messages), "the responder's reply")
        return number, call, reply

    def _answer(self, number: int, call: ScriptedCall, reply: ScriptedReply) -> ChatResult:
        message = _reply_message(reply, structured=call.kind == "structured", number=number)
        if message.usage_metadata is None:
            # A copy, so code that adds to one reply's usage cannot change the others'.
            message.usage_metadata = (
                copy.deepcopy(self.usage) if self.usage else _estimate_usage(call.messages, message)
            )
        message.response_metadata = {
            "model_name": self.model_name,
            "finish_reason": "tool_calls" if message.tool_calls else "stop",
            **message.response_metadata,
        }
        return ChatResult(generations=[ChatGeneration(message=message)])


def _is_tool_call_dict(value: object) -> bool:
    return (
        isinstance(value, dict)
        and value.keys() <= _TOOL_CALL_KEYS
        and isinstance(value.get("name"), str)
        and isinstance(value.get("args"), dict)
    )


def _checked_reply(reply: object, where: str) -> ScriptedReply:
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


def _reply_message(reply: ScriptedReply, *, structured: bool, number: int) -> AIMessage:
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


def _estimate_usage(messages: list[BaseMessage], reply: AIMessage) -> UsageMetadata:
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


def _parse_structured(
    message: AIMessage, schema: dict[str, Any] | type
) -> dict[str, Any] | BaseModel:
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


def _as_chunk(result: ChatResult) -> ChatGenerationChunk:
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


class HashingEmbeddings(Embeddings):
    """Offline embeddings by feature hashing: each lower-cased word adds 1 to one of
    ``size`` dimensions (chosen by CRC-32, so vectors are the same in every process).

    Identical texts get identical vectors, texts that share words get similar ones, and a
    text without words gets the zero vector. Good enough to exercise embedding evaluators
    without a model; not a semantic model.

    Example:
        >>> emb = HashingEmbeddings(size=8)
        >>> emb.embed_query("a cat") == emb.embed_query("A  cat!")
        True
    """

    def __init__(self, size: int = 256) -> None:
        if size < 1:
            raise ValueError(f"size must be a positive number of dimensions, got {size}")
        self.size = size

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One vector per text."""
        return [self.embed_query(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        """The vector of one text."""
        vector = [0.0] * self.size
        for word in re.findall(r"\w+", text.lower()):
            vector[zlib.crc32(word.encode()) % self.size] += 1.0
        return vector


# --- assertions ------------------------------------------------------------------------


def _results(result: EvaluatorResult | Sequence[EvaluatorResult]) -> list[EvaluatorResult]:
    results = [result] if isinstance(result, EvaluatorResult) else list(result)
    if not results:
        raise AssertionError("no evaluator results to check: the list is empty")
    return results


def _reasoning(result: EvaluatorResult) -> str:
    return f"; reasoning: {result.comment}" if result.comment else "; the judge gave no reasoning"


def _no_verdict(result: EvaluatorResult) -> str | None:
    """The message for a result without a verdict, or ``None`` for a verdict."""
    if result.outcome == "verdict":
        return None
    code = f" ({result.error_code})" if result.error_code else ""
    return f"{result.key}: no verdict, outcome {result.outcome}{code}: {result.reason}"


def _check_all(
    result: EvaluatorResult | Sequence[EvaluatorResult],
    problem: Callable[[EvaluatorResult], str | None],
) -> None:
    # Every result is checked, so one failing test run shows all the keys that missed.
    messages = [m for r in _results(result) if (m := _no_verdict(r) or problem(r)) is not None]
    if messages:
        raise AssertionError("\n".join(messages))


def _boolean_score(result: EvaluatorResult, assertion: str) -> bool:
    if not isinstance(result.score, bool):
        raise TypeError(
            f"{assertion} needs a pass/fail (boolean) score, but {result.key!r} scored "
            f"{result.score!r}; use assert_score_at_least(threshold, result) for numbers"
        )
    return result.score


def assert_passed(result: EvaluatorResult | Sequence[EvaluatorResult]) -> None:
    """Assert that every result is a verdict with the boolean score ``True``.

    A result that is ``inconclusive`` or ``failed`` does not pass; the message gives its
    outcome and reason. A failing verdict's message gives the key, the score and the judge's
    reasoning (the comment).

    Raises:
        AssertionError: Some result did not pass (all of them are listed).
        TypeError: A verdict has a numeric score, which has no pass/fail meaning without a
            threshold: use ``assert_score_at_least``.

    Example:
        >>> assert_passed(EvaluatorResult(key="concise", score=True))
    """
    __tracebackhide__ = True

    def problem(r: EvaluatorResult) -> str | None:
        if _boolean_score(r, "assert_passed"):
            return None
        return f"{r.key}: expected to pass, but scored False{_reasoning(r)}"

    _check_all(result, problem)


def assert_failed(result: EvaluatorResult | Sequence[EvaluatorResult]) -> None:
    """Assert that every result is a verdict with the boolean score ``False``.

    "Failed" here is the verdict (the judge said no), not the ``failed`` outcome: a result
    whose evaluation raised an error reached no verdict, so this assertion fails on it.

    Raises:
        AssertionError: Some result is not a ``False`` verdict (all of them are listed).
        TypeError: A verdict has a numeric score.

    Example:
        >>> assert_failed(EvaluatorResult(key="concise", score=False, comment="rambles"))
    """
    __tracebackhide__ = True

    def problem(r: EvaluatorResult) -> str | None:
        if not _boolean_score(r, "assert_failed"):
            return None
        return f"{r.key}: expected to fail, but scored True{_reasoning(r)}"

    _check_all(result, problem)


def assert_score_at_least(
    threshold: float, result: EvaluatorResult | Sequence[EvaluatorResult]
) -> None:
    """Assert that every result is a verdict scoring at least ``threshold``.

    A boolean score counts as 1.0 (``True``) or 0.0 (``False``), as in report means.

    Raises:
        AssertionError: Some result scored below ``threshold`` or reached no verdict (all
            of them are listed, with key, score and reasoning or outcome and reason).

    Example:
        >>> assert_score_at_least(0.8, EvaluatorResult(key="correctness", score=0.9))
    """
    __tracebackhide__ = True

    def problem(r: EvaluatorResult) -> str | None:
        if r.score is not None and float(r.score) >= threshold:
            return None
        return f"{r.key}: score {r.score!r} is below {threshold}{_reasoning(r)}"

    _check_all(result, problem)
