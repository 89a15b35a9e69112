"""What one interaction recorded: the sink it goes to, its model and tool events, and the
``InteractionRecord`` built from them once the call has ended."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Literal, Protocol
from uuid import UUID

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    BaseMessageChunk,
    HumanMessage,
    ToolMessage,
    convert_to_messages,
    message_chunk_to_message,
)
from langchain_core.outputs import ChatGeneration, LLMResult
from langchain_core.prompt_values import PromptValue
from langchain_core.runnables.utils import Output
from langgraph.errors import GraphBubbleUp, GraphInterrupt

from langchain_evals_port.capture._records import (
    InteractionFailure,
    InteractionRecord,
    InteractionStatus,
    ModelResponse,
    TokenUsage,
    ToolCallRecord,
    utc_now,
)

__all__ = [
    "DetailedReply",
    "InteractionSink",
    "Origin",
    "RunCapture",
    "optional_str",
    "shows_interrupt",
]

logger = logging.getLogger("langchain_evals_port.runtime")
# The key LangGraph (1.x, stream format v1) puts in an output or stream chunk when the
# graph stopped at an interrupt.
_INTERRUPT_KEY = "__interrupt__"


class InteractionSink(Protocol):
    """Where captured interactions go; the runtime stores each record and enqueues its
    evaluations before the method returns."""

    def record(self, record: InteractionRecord) -> None:
        """Take one finished interaction (sync call paths)."""

    async def arecord(self, record: InteractionRecord) -> None:
        """Take one finished interaction (async call paths)."""


@dataclass(frozen=True)
class DetailedReply(Generic[Output]):
    """A bound agent's output together with the id of the interaction it recorded."""

    output: Output
    interaction_id: str


# --- what one interaction recorded ------------------------------------------------------


@dataclass(frozen=True)
class Origin:
    """Who ran an interaction, in which session and flow, and when it started."""

    interaction_id: str
    agent_id: str
    roles: tuple[str, ...]
    run_id: str | None
    thread_id: str | None
    flow_id: str | None
    evaluation_id: str | None
    started_at: datetime = field(default_factory=utc_now)


@dataclass
class _ModelCall:
    prompt: list[BaseMessage]
    started_at: datetime
    model_name: str | None


@dataclass
class _ToolRun:
    name: str
    call_id: str | None
    args: dict[str, Any]
    result: str | None = None
    status: Literal["success", "error", "not_run"] = "not_run"


class RunCapture:
    """The model and tool events of one interaction, fed from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: dict[UUID, _ModelCall] = {}
        self._responses: list[ModelResponse] = []
        self._tools: dict[UUID, _ToolRun] = {}
        self._system_message: str | None = None
        # The transcript: the prompt of the model call that started last, its reply, and
        # the tool messages recorded after that reply.
        self._last_call: UUID | None = None
        self._last_prompt: list[BaseMessage] | None = None
        self._last_reply: AIMessage | None = None
        self._tool_messages: list[ToolMessage] = []
        self.interrupted = False

    def model_started(
        self, run_id: UUID, prompt: list[BaseMessage], model_name: str | None
    ) -> None:
        call = _ModelCall(prompt, utc_now(), model_name)
        with self._lock:
            self._calls[run_id] = call
            self._last_call, self._last_prompt, self._last_reply = run_id, prompt, None
            self._tool_messages = []
            if self._system_message is None:
                self._system_message = _system_text(prompt)

    def model_ended(self, run_id: UUID, result: LLMResult) -> None:
        ended_at = utc_now()
        with self._lock:
            call = self._calls.pop(run_id, None)
        generation = (
            result.generations[0][0] if result.generations and result.generations[0] else None
        )
        if call is None or not isinstance(generation, ChatGeneration):
            return
        message = generation.message
        if isinstance(message, BaseMessageChunk):
            message = message_chunk_to_message(message)
        if not isinstance(message, AIMessage):
            return
        metadata = message.response_metadata
        usage = message.usage_metadata
        response = ModelResponse(
            message=message,
            model_name=metadata.get("model_name") or metadata.get("model") or call.model_name,
            usage=None
            if usage is None
            else TokenUsage(
                input_tokens=usage["input_tokens"],
                output_tokens=usage["output_tokens"],
                total_tokens=usage["total_tokens"],
            ),
            finish_reason=metadata.get("finish_reason")
            or (generation.generation_info or {}).get("finish_reason"),
            started_at=call.started_at,
            ended_at=ended_at,
        )
        with self._lock:
            self._responses.append(response)
            if run_id == self._last_call:
                self._last_reply = message
                self._tool_messages = []

    def model_failed(self, run_id: UUID) -> None:
        with self._lock:
            self._calls.pop(run_id, None)

    def tool_started(self, run_id: UUID, name: str, call_id: str | None, args: Any) -> None:
        run = _ToolRun(name, call_id, args if isinstance(args, dict) else {})
        with self._lock:
            self._tools[run_id] = run

    def tool_ended(self, run_id: UUID, output: Any) -> None:
        with self._lock:
            run = self._tools.get(run_id)
            if run is None:
                return
            if isinstance(output, ToolMessage):
                run.call_id = output.tool_call_id
                run.result, run.status = output.text, output.status
                self._tool_messages.append(output)
            else:
                run.result, run.status = str(output), "success"

    def tool_failed(self, run_id: UUID, error: BaseException) -> None:
        with self._lock:
            run = self._tools.get(run_id)
            if run is not None:
                run.result, run.status = str(error) or type(error).__name__, "error"

    def record(
        self,
        origin: Origin,
        input: Any,
        output: Any = None,
        error: BaseException | None = None,
        *,
        abandoned: bool = False,
    ) -> InteractionRecord:
        """The interaction's record; ``output`` is what it returned (or streamed so far)."""
        status, failure = self._ending(output, error, abandoned)
        input_messages = _input_messages(input)
        with self._lock:
            responses = list(self._responses)
            tool_calls = _tool_calls(responses, list(self._tools.values()))
            if self._last_prompt is None:
                conversation: list[BaseMessage] = input_messages
            else:
                reply = [] if self._last_reply is None else [self._last_reply]
                conversation = [*self._last_prompt, *reply, *self._tool_messages]
            system_message = self._system_message or _system_text(input_messages)
        metadata: dict[str, Any] = {}
        if origin.evaluation_id is not None:
            metadata["evaluation_id"] = origin.evaluation_id
        if abandoned:
            metadata["stream_abandoned"] = True
        return InteractionRecord(
            interaction_id=origin.interaction_id,
            agent_id=origin.agent_id,
            roles=origin.roles,
            thread_id=origin.thread_id,
            flow_id=origin.flow_id,
            status=status,
            system_message=system_message,
            input_messages=input_messages,
            responses=responses,
            tool_calls=tool_calls,
            transcript=[m for m in conversation if m.type != "system"],
            output_text=_output_text(output),
            failure=failure,
            started_at=origin.started_at,
            ended_at=utc_now(),
            run_id=origin.run_id,
            evaluation_traffic=origin.evaluation_id is not None,
            metadata=metadata,
        )

    def _ending(
        self, output: Any, error: BaseException | None, abandoned: bool
    ) -> tuple[InteractionStatus, InteractionFailure | None]:
        if abandoned or isinstance(error, GraphInterrupt):
            return "interrupted", None
        # Other bubble-ups (a ``Command`` to the parent graph) are control flow, not errors.
        if error is not None and not isinstance(error, GraphBubbleUp):
            return "failed", InteractionFailure(reason=type(error).__name__, summary=str(error))
        if self.interrupted or shows_interrupt(output):
            return "interrupted", None
        return "completed", None


# --- helpers ----------------------------------------------------------------------------


def optional_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _system_text(messages: Sequence[BaseMessage]) -> str | None:
    for message in messages:
        if message.type == "system":
            return message.text
    return None


def _input_messages(value: Any) -> list[BaseMessage]:
    """The messages of an interaction's input: text, a message, messages or a state."""
    if isinstance(value, dict):
        value = value.get("messages")
    if isinstance(value, str):
        return [HumanMessage(value)]
    if isinstance(value, BaseMessage):
        return [value]
    if isinstance(value, PromptValue):
        return value.to_messages()
    if isinstance(value, list):
        try:
            return convert_to_messages(value)
        except (ValueError, TypeError, NotImplementedError):
            return []
    return []


def _output_text(output: Any) -> str | None:
    """The output's text: a string, an AI message, or a state ending in an AI message."""
    if isinstance(output, str):
        return output
    if isinstance(output, AIMessage):
        return output.text
    if isinstance(output, dict):
        messages = output.get("messages")
        if isinstance(messages, list) and messages and isinstance(messages[-1], AIMessage):
            return messages[-1].text
    return None


def shows_interrupt(value: Any) -> bool:
    """Whether a LangGraph output or stream chunk reports an interrupt.

    A chunk is a dict, or a tuple ending in one when several stream modes or subgraphs
    are streamed.
    """
    if isinstance(value, tuple) and value:
        value = value[-1]
    return isinstance(value, dict) and _INTERRUPT_KEY in value


def _tool_calls(responses: list[ModelResponse], runs: list[_ToolRun]) -> list[ToolCallRecord]:
    """The tool calls the model requested, each with the run that answered it (matched on
    the tool call id, else on the name in order), then any tool runs nobody requested."""
    unmatched = list(runs)
    records = []
    for response in responses:
        for call in response.message.tool_calls:
            run = next((r for r in unmatched if r.call_id == call["id"]), None) or next(
                (r for r in unmatched if r.call_id is None and r.name == call["name"]), None
            )
            if run is not None:
                unmatched.remove(run)
            records.append(
                ToolCallRecord(
                    id=call["id"],
                    name=call["name"],
                    args=call["args"],
                    result=None if run is None else run.result,
                    status="not_run" if run is None else run.status,
                )
            )
    records.extend(
        ToolCallRecord(id=r.call_id, name=r.name, args=r.args, result=r.result, status=r.status)
        for r in unmatched
    )
    return records
