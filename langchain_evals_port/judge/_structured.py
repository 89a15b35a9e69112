"""Getting a valid JSON object out of a judge, and never silently failing.

Three modes:

* ``native`` — the schema goes to the provider untouched through ``with_structured_output``
  (``method="json_schema"`` for OpenAI-style providers, the provider's default otherwise);
  a provider that rejects the schema is an error that suggests ``prompted``.
* ``prompted`` — the schema goes into the prompt and the JSON is recovered from the reply
  text by a brace-balanced scan that ignores braces inside string literals (so fenced,
  chatty replies with trailing prose work), then validated.
* ``auto`` (default) — ``native``, falling back to ``prompted`` only when the provider
  rejects or cannot apply the schema (an HTTP 400/422, or no structured-output support) —
  never on a timeout, a rate limit or a network error, which propagate. A fallback that
  then succeeds is remembered for that model.

A reply that is not valid (no JSON, no score, wrong type, out of range, empty) gets one
repair prompt quoting the problem; after that ``JudgeOutputError`` carries the raw reply.

The conversation with the model is written once, as a generator that yields each model call
and receives its answer; ``run_sync`` and ``run_async`` drive it with ``invoke`` and
``ainvoke``, so the sync and async paths cannot drift apart.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import Runnable, RunnableConfig
from pydantic import BaseModel

from langchain_evals_port.core.errors import EvaluationFailure, JudgeOutputError

from ._cache_scope import CacheLabels, astore, held_writes, labelled, store
from ._model import ResolvedJudge

T = TypeVar("T")

StructuredOutputMode = Literal["auto", "native", "prompted"]

Validator = Callable[[Any], str | None]
"""Checks a parsed reply; returns what is wrong with it, or None when it is valid."""


@dataclass(frozen=True)
class ModelCall:
    """One call the conversation asks the driver to make."""

    runnable: Runnable[Any, Any]
    messages: list[BaseMessage]


@dataclass
class JudgeReply:
    """A validated reply and how it was obtained."""

    parsed: dict[str, Any]
    path: str
    repairs: int = 0
    usage: dict[str, int] = field(default_factory=dict)


Conversation = Generator[ModelCall, Any, JudgeReply]


def ask_for_json(
    judge: ResolvedJudge,
    messages: list[BaseMessage],
    *,
    schema: Any,
    schema_json: dict[str, Any],
    validate: Validator,
    mode: StructuredOutputMode,
) -> Conversation:
    """The conversation that gets a valid object from ``judge`` (see the module docstring).

    In ``auto`` mode a rejected schema marks ``judge.prompted``, so later evaluations with
    the same model go straight to the prompted path.
    """
    reply = JudgeReply(parsed={}, path="prompted")
    if mode == "native" or (mode == "auto" and not judge.prompted):
        try:
            structured = judge.structured(schema)
            answer = yield ModelCall(structured, messages)
        except Exception as error:
            if not _rejects_schema(error):
                raise
            if mode == "native":
                raise EvaluationFailure(
                    f"the provider rejected or cannot apply the output schema ({error}); use "
                    "structured_output_mode='prompted' to put the schema in the prompt instead",
                    code="provider_error",
                ) from error
        else:
            reply.path = judge.method or "provider_default"
            return (yield from _settle_native(structured, messages, answer, validate, reply))
        # Only a rejection that the prompted path then gets past is remembered, so one odd
        # 400 does not switch the model off native structured output for good.
        reply = yield from _prompted(judge.model, messages, schema_json, validate, reply)
        judge.prompted = True
        return reply
    return (yield from _prompted(judge.model, messages, schema_json, validate, reply))


def _settle_native(
    structured: Runnable[Any, Any],
    messages: list[BaseMessage],
    answer: Any,
    validate: Validator,
    reply: JudgeReply,
) -> Conversation:
    for attempt in range(2):
        _add_usage(reply, answer.get("raw"))
        parsed = _as_plain(answer.get("parsed"))
        problem = (
            f"the reply could not be parsed ({answer['parsing_error']})"
            if answer.get("parsing_error") is not None
            else validate(parsed)
        )
        if problem is None:
            reply.parsed = parsed
            return reply
        raw_text = _raw_text(answer.get("raw"), parsed)
        if attempt == 1:
            raise JudgeOutputError(
                f"judge reply invalid after one repair: {problem}", raw_reply=raw_text
            )
        reply.repairs += 1
        answer = yield ModelCall(structured, _repair(messages, raw_text, problem))
    raise AssertionError("unreachable")  # pragma: no cover


def _prompted(
    model: Runnable[Any, Any],
    messages: list[BaseMessage],
    schema_json: dict[str, Any],
    validate: Validator,
    reply: JudgeReply,
) -> Conversation:
    reply.path = "prompted"
    asked = _with_schema_instructions(messages, schema_json)
    message = yield ModelCall(model, asked)
    for attempt in range(2):
        _add_usage(reply, message)
        text = _raw_text(message, None)
        parsed = extract_json(text)
        problem = "the reply contains no JSON object" if parsed is None else validate(parsed)
        if problem is None and parsed is not None:
            reply.parsed = parsed
            return reply
        if attempt == 1:
            raise JudgeOutputError(
                f"judge reply invalid after one repair: {problem}", raw_reply=text
            )
        reply.repairs += 1
        message = yield ModelCall(model, _repair(asked, text, problem or ""))
    raise AssertionError("unreachable")  # pragma: no cover


def run_sync(
    conversation: Generator[ModelCall, Any, T],
    config: RunnableConfig,
    labels: CacheLabels | None = None,
) -> T:
    """Drive a conversation with ``invoke``.

    Every model call a judge makes goes through here or ``run_async``. What the judge's
    cache is asked to store during the conversation is held back (``AcceptedRepliesCache``)
    and stored only when the conversation ends with a reply it accepts, so a re-run replays
    it whole (repairs included), while one that ends in an error leaves nothing behind to
    fail the same way again. Stored entries carry ``labels`` (the judge and its prompt).
    """
    with labelled(labels):
        with held_writes() as held:
            try:
                call = next(conversation)
                while True:
                    try:
                        answer = call.runnable.invoke(call.messages, config)
                    except Exception as error:
                        call = conversation.throw(error)
                    else:
                        call = conversation.send(answer)
            except StopIteration as done:
                accepted: T = done.value
        store(held)
    return accepted


async def run_async(
    conversation: Generator[ModelCall, Any, T],
    config: RunnableConfig,
    labels: CacheLabels | None = None,
) -> T:
    """Drive a conversation with ``ainvoke`` (see ``run_sync``)."""
    with labelled(labels):
        with held_writes() as held:
            try:
                call = next(conversation)
                while True:
                    try:
                        answer = await call.runnable.ainvoke(call.messages, config)
                    except Exception as error:
                        call = conversation.throw(error)
                    else:
                        call = conversation.send(answer)
            except StopIteration as done:
                accepted: T = done.value
        await astore(held)
    return accepted


def extract_json(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text``, found by a brace-balanced scan that ignores braces
    inside string literals; None when there is none.

    Example:
        >>> extract_json('Sure! ```json {"score": true, "reasoning": "a {curly} word"} ``` Bye.')
        {'score': True, 'reasoning': 'a {curly} word'}
    """
    start = text.find("{")
    while start != -1:
        end = _object_end(text, start)
        if end is not None:
            try:
                value = json.loads(text[start:end])
            except ValueError:
                value = None
            if isinstance(value, dict):
                return value
        start = text.find("{", start + 1)
    return None


def _object_end(text: str, start: int) -> int | None:
    depth = 0
    in_string = False
    escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


_SCHEMA_PARAMETERS = ("response_format", "tools", "tool_choice", "functions")


def _rejects_schema(error: BaseException) -> bool:
    # A 400/422 is the provider refusing the request as formed; when the provider names the
    # offending parameter (OpenAI does), only the structured-output ones count, so a context
    # too long or a bad image is not mistaken for a rejected schema. 429s, 5xx, timeouts and
    # connection errors say nothing about the schema and must propagate.
    if isinstance(error, NotImplementedError):
        return True
    if getattr(error, "status_code", None) not in (400, 422):
        return False
    parameter = getattr(error, "param", None)
    return (
        not parameter or not isinstance(parameter, str) or parameter.startswith(_SCHEMA_PARAMETERS)
    )


def _with_schema_instructions(
    messages: list[BaseMessage], schema_json: dict[str, Any]
) -> list[BaseMessage]:
    instructions = (
        "Respond with only a JSON object that conforms to this JSON schema:\n```json\n"
        + json.dumps(schema_json, ensure_ascii=False, indent=2)
        + "\n```"
    )
    return [*messages, HumanMessage(instructions)]


def _repair(messages: list[BaseMessage], raw_text: str, problem: str) -> list[BaseMessage]:
    return [
        *messages,
        AIMessage(raw_text),
        HumanMessage(
            f"Your reply was not valid: {problem}. Reply again with only a JSON object that "
            "follows the requested schema."
        ),
    ]


def _as_plain(parsed: Any) -> Any:
    return parsed.model_dump() if isinstance(parsed, BaseModel) else parsed


def _raw_text(message: Any, parsed: Any) -> str:
    if isinstance(message, BaseMessage):
        text = message.text
        if text:
            return text
        if isinstance(message, AIMessage) and message.tool_calls:
            return json.dumps(message.tool_calls[0]["args"], ensure_ascii=False)
        refusal = message.additional_kwargs.get("refusal")
        if isinstance(refusal, str) and refusal:
            # OpenAI puts a structured-output refusal beside the (empty) content.
            return refusal
    return "" if parsed is None else json.dumps(parsed, ensure_ascii=False, default=str)


def _add_usage(reply: JudgeReply, message: Any) -> None:
    usage = getattr(message, "usage_metadata", None)
    if usage:
        for key in ("input_tokens", "output_tokens", "total_tokens"):
            reply.usage[key] = reply.usage.get(key, 0) + int(usage.get(key, 0))
