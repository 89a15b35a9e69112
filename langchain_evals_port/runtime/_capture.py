"""Capture: turn one invocation of an agent into an ``InteractionRecord`` for the ledger.

``BoundAgent`` wraps a runnable (typically a compiled LangGraph graph). Each call adds a
small callback handler to the call's config that records every chat model call and tool
call of that run tree; when the call ends — returned, raised, interrupted or a stream
abandoned — the record is built once and handed to the ``InteractionSink`` before the
call returns or raises. ``InteractionCallbackHandler`` does the same for code that
cannot wrap its runnable: each root run it sees is one interaction.
"""

from __future__ import annotations

import logging
import threading
import uuid
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Literal, Protocol
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager, Callbacks
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
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config
from langchain_core.runnables.graph import Graph
from langchain_core.runnables.utils import ConfigurableFieldSpec, Input, Output
from langchain_core.utils.pydantic import TypeBaseModel
from langgraph.errors import GraphBubbleUp, GraphInterrupt

from ._records import (
    InteractionFailure,
    InteractionRecord,
    InteractionStatus,
    ModelResponse,
    TokenUsage,
    ToolCallRecord,
    utc_now,
)
from ._scope import current_evaluation_id

try:
    # LangGraph 1.1+ reports interrupts to graph callback handlers, whatever the stream mode.
    from langgraph.callbacks import GraphCallbackHandler as _HandlerBase
except ImportError:  # pragma: no cover - older LangGraph: interrupts are seen in outputs only
    _HandlerBase = BaseCallbackHandler  # type: ignore[assignment,misc]

try:
    # The time-ordered run ids LangChain itself makes since langchain-core 1.1.
    from langchain_core.utils.uuid import uuid7 as _new_run_id
except ImportError:  # pragma: no cover - older langchain-core made uuid4 run ids
    from uuid import uuid4 as _new_run_id  # type: ignore[assignment]

__all__ = ["BoundAgent", "DetailedReply", "InteractionCallbackHandler", "InteractionSink"]

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
class _Origin:
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


class _Capture:
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
        origin: _Origin,
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
        if self.interrupted or _shows_interrupt(output):
            return "interrupted", None
        return "completed", None


# --- callback handlers ------------------------------------------------------------------


class _CaptureEvents(_HandlerBase, ABC):
    """Routes chat model, tool and interrupt events to the capture of their interaction."""

    run_inline = True

    @abstractmethod
    def _capture_started(self, run_id: UUID, parent_run_id: UUID | None) -> _Capture | None:
        """The capture a run that starts belongs to (``None``: not one of ours)."""

    @abstractmethod
    def _capture_of(self, run_id: UUID | None) -> _Capture | None:
        """The capture a run that already started belongs to."""

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Remember the prompt, the model's name and the start time."""
        capture = self._capture_started(run_id, parent_run_id)
        if capture is not None:
            params = kwargs.get("invocation_params") or {}
            metadata = kwargs.get("metadata") or {}
            name = params.get("model_name") or params.get("model") or metadata.get("ls_model_name")
            capture.model_started(run_id, messages[0], name if isinstance(name, str) else None)

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        """Record the model's reply with its usage and finish reason."""
        if (capture := self._capture_of(run_id)) is not None:
            capture.model_ended(run_id, response)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Forget a model call that raised (the interaction's outcome tells the error)."""
        if (capture := self._capture_of(run_id)) is not None:
            capture.model_failed(run_id)

    def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Remember which tool runs, for which tool call, with which arguments."""
        capture = self._capture_started(run_id, parent_run_id)
        if capture is not None:
            name = (serialized or {}).get("name") or kwargs.get("name") or "tool"
            capture.tool_started(run_id, name, kwargs.get("tool_call_id"), inputs)

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """Record the tool's result (a ``ToolMessage`` names its tool call)."""
        if (capture := self._capture_of(run_id)) is not None:
            capture.tool_ended(run_id, output)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Record that the tool raised, with the error's text as its result."""
        if (capture := self._capture_of(run_id)) is not None:
            capture.tool_failed(run_id, error)

    def on_interrupt(self, event: Any) -> None:
        """Mark the interaction whose graph paused at an interrupt (LangGraph 1.1+)."""
        if (capture := self._capture_of(getattr(event, "run_id", None))) is not None:
            capture.interrupted = True


class _BoundCapture(_CaptureEvents):
    """The handler ``BoundAgent`` adds to one call: every event belongs to its capture."""

    def __init__(self, capture: _Capture) -> None:
        self.capture = capture

    # Chain, retriever and custom events carry nothing the record needs; skipping them
    # keeps the per-call overhead down.
    @property
    def ignore_chain(self) -> bool:
        """Chain events are not needed."""
        return True

    @property
    def ignore_retriever(self) -> bool:
        """Retriever events are not needed."""
        return True

    @property
    def ignore_custom_event(self) -> bool:
        """Custom events are not needed."""
        return True

    def _capture_started(self, run_id: UUID, parent_run_id: UUID | None) -> _Capture | None:
        return self.capture

    def _capture_of(self, run_id: UUID | None) -> _Capture | None:
        return self.capture


@dataclass
class _RootRun:
    origin: _Origin
    input: Any
    capture: _Capture = field(default_factory=_Capture)
    runs: list[UUID] = field(default_factory=list)


class InteractionCallbackHandler(_CaptureEvents):
    """Records every root run it sees as one interaction, for code that cannot wrap.

    Add it to any call's ``config={"callbacks": [handler]}``. Each root chain run
    (``parent_run_id`` is ``None``) is an interaction: the model and tool events of its run
    tree are captured, and at the root's end or error one record goes to ``sink.record``.
    Runs are keyed by their root run id, so concurrent calls sharing one handler don't mix.
    ``thread_id`` and ``flow_id`` come from the root run's metadata, where LangGraph copies
    its ``configurable`` values; ``run_id`` is the root run id. A chat model or tool called
    directly (not inside a chain) is not an interaction. Interrupts are detected through
    LangGraph's graph callbacks (LangGraph 1.1+); an abandoned stream is recorded as
    interrupted, like ``BoundAgent`` does.

    Args:
        sink: Receives each finished interaction.
        agent_id: The agent the interactions are recorded for.
        roles: The agent's roles.
    """

    def __init__(self, sink: InteractionSink, *, agent_id: str, roles: Sequence[str] = ()) -> None:
        self.sink = sink
        self.agent_id = agent_id
        self.roles = tuple(roles)
        self._lock = threading.Lock()
        self._roots: dict[UUID, _RootRun] = {}
        self._root_of: dict[UUID, UUID] = {}

    def _capture_started(self, run_id: UUID, parent_run_id: UUID | None) -> _Capture | None:
        with self._lock:
            root_id = None if parent_run_id is None else self._root_of.get(parent_run_id)
            if root_id is None:
                return None
            root = self._roots[root_id]
            self._root_of[run_id] = root_id
            root.runs.append(run_id)
            return root.capture

    def _capture_of(self, run_id: UUID | None) -> _Capture | None:
        with self._lock:
            root_id = None if run_id is None else self._root_of.get(run_id)
            return None if root_id is None else self._roots[root_id].capture

    def on_chain_start(
        self,
        serialized: dict[str, Any],
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Open an interaction for a root run; place any other run under its root."""
        if parent_run_id is not None:
            self._capture_started(run_id, parent_run_id)
            return
        metadata = metadata or {}
        origin = _Origin(
            interaction_id=str(uuid.uuid4()),
            agent_id=self.agent_id,
            roles=self.roles,
            run_id=str(run_id),
            thread_id=_optional_str(metadata.get("thread_id")),
            flow_id=_optional_str(metadata.get("flow_id")),
            evaluation_id=current_evaluation_id(),
        )
        with self._lock:
            self._roots[run_id] = _RootRun(origin, inputs, runs=[run_id])
            self._root_of[run_id] = run_id

    def on_retriever_start(
        self,
        serialized: dict[str, Any],
        query: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Place a retriever run under its root, for the model calls it may make."""
        self._capture_started(run_id, parent_run_id)

    def on_chain_end(
        self, outputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        """Record the interaction when its root run returns."""
        if parent_run_id is None:
            self._finish(run_id, outputs, None)

    def on_chain_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Record the interaction when its root run raises."""
        if parent_run_id is None:
            self._finish(run_id, None, error)

    def _finish(self, root_id: UUID, output: Any, error: BaseException | None) -> None:
        with self._lock:
            root = self._roots.pop(root_id, None)
            if root is None:
                return
            for run_id in root.runs:
                self._root_of.pop(run_id, None)
        # A stream the caller stopped reading ends its root run with ``GeneratorExit``.
        abandoned = isinstance(error, GeneratorExit)
        record = root.capture.record(
            root.origin, root.input, output, None if abandoned else error, abandoned=abandoned
        )
        self.sink.record(record)


# --- the bound agent ----------------------------------------------------------------------


def _record_while_failing(sink: InteractionSink, record: InteractionRecord) -> None:
    """Record an interaction that is ending with an exception (or a closed stream): if the
    sink fails too, log that, so the agent's own exception still reaches the caller."""
    try:
        sink.record(record)
    except Exception:
        logger.exception("could not record the failed interaction %s", record.interaction_id)


async def _arecord_while_failing(sink: InteractionSink, record: InteractionRecord) -> None:
    """The async twin of ``_record_while_failing``."""
    try:
        await sink.arecord(record)
    except Exception:
        logger.exception("could not record the failed interaction %s", record.interaction_id)


@dataclass(frozen=True)
class _Call:
    """One interaction of a bound agent in progress: who, what it captures, its config."""

    origin: _Origin
    capture: _Capture
    config: RunnableConfig

    def record(
        self,
        input: Any,
        output: Any = None,
        error: BaseException | None = None,
        *,
        abandoned: bool = False,
    ) -> InteractionRecord:
        return self.capture.record(self.origin, input, output, error, abandoned=abandoned)


class BoundAgent(Runnable[Input, Output]):
    """A runnable whose every top-level call is recorded as one interaction.

    It takes and returns what the wrapped runnable does. ``invoke``, ``ainvoke``,
    ``stream`` and ``astream`` each record one interaction, handed to ``sink.record`` (sync)
    or ``sink.arecord`` (async) before the call returns or raises; ``batch`` and
    ``abatch`` run each item through ``invoke``/``ainvoke``, so each item is one
    interaction. Any other attribute (a compiled graph's ``get_state``, ...) is the wrapped
    runnable's.

    A call that raises is recorded as failed and the same exception reaches the caller; a
    LangGraph interrupt is recorded as interrupted, and so is a stream the caller stops
    reading (with ``metadata["stream_abandoned"]``), holding what was produced so far.

    Args:
        runnable: The agent to wrap, e.g. a compiled LangGraph graph.
        sink: Receives each finished interaction.
        agent_id: The agent's id in the ledger and in the evaluation configuration.
        roles: The agent's roles, in the declared order.

    Example:
        >>> from langchain_core.runnables import RunnableLambda
        >>> class ListSink:
        ...     def __init__(self):
        ...         self.records = []
        ...     def record(self, record):
        ...         self.records.append(record)
        ...     async def arecord(self, record):
        ...         self.records.append(record)
        >>> sink = ListSink()
        >>> echo = BoundAgent(RunnableLambda(lambda text: text.upper()), sink=sink, agent_id="echo")
        >>> reply = echo.invoke_detailed("hello")
        >>> reply.output, sink.records[0].interaction_id == reply.interaction_id
        ('HELLO', True)
        >>> sink.records[0].status, sink.records[0].input_text, sink.records[0].output_text
        ('completed', 'hello', 'HELLO')
    """

    def __init__(
        self,
        runnable: Runnable[Input, Output],
        *,
        sink: InteractionSink,
        agent_id: str,
        roles: Sequence[str] = (),
    ) -> None:
        self.bound = runnable
        self.sink = sink
        self.agent_id = agent_id
        self.roles = tuple(roles)

    def __getattr__(self, name: str) -> Any:
        # Only called for attributes BoundAgent lacks; guarded so copying or unpickling an
        # instance without ``bound`` yet does not recurse.
        try:
            bound = self.__dict__["bound"]
        except KeyError:
            raise AttributeError(name) from None
        return getattr(bound, name)

    def __repr__(self) -> str:
        return f"BoundAgent({self.bound!r}, agent_id={self.agent_id!r}, roles={self.roles!r})"

    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        """The wrapped runnable's name."""
        return self.bound.get_name(suffix, name=name)

    @property
    def InputType(self) -> type[Input]:
        """The wrapped runnable's input type."""
        return self.bound.InputType

    @property
    def OutputType(self) -> type[Output]:
        """The wrapped runnable's output type."""
        return self.bound.OutputType

    def get_input_schema(self, config: RunnableConfig | None = None) -> TypeBaseModel:
        """The wrapped runnable's input schema."""
        return self.bound.get_input_schema(config)

    def get_output_schema(self, config: RunnableConfig | None = None) -> TypeBaseModel:
        """The wrapped runnable's output schema."""
        return self.bound.get_output_schema(config)

    @property
    def config_specs(self) -> list[ConfigurableFieldSpec]:
        """The wrapped runnable's configurable fields."""
        return self.bound.config_specs

    def get_graph(self, config: RunnableConfig | None = None) -> Graph:
        """The wrapped runnable's graph."""
        return self.bound.get_graph(config)

    def invoke(self, input: Input, config: RunnableConfig | None = None, **kwargs: Any) -> Output:
        """Run the agent once, recording the interaction."""
        return self.invoke_detailed(input, config, **kwargs).output

    async def ainvoke(
        self, input: Input, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Output:
        """Run the agent once asynchronously, recording the interaction."""
        return (await self.ainvoke_detailed(input, config, **kwargs)).output

    def invoke_detailed(
        self, input: Input, config: RunnableConfig | None = None, **kwargs: Any
    ) -> DetailedReply[Output]:
        """Like ``invoke``, also returning the id of the recorded interaction."""
        call = self._begin(config)
        try:
            output = self.bound.invoke(input, call.config, **kwargs)
        except BaseException as error:
            _record_while_failing(self.sink, call.record(input, error=error))
            raise
        self.sink.record(call.record(input, output))
        return DetailedReply(output, call.origin.interaction_id)

    async def ainvoke_detailed(
        self, input: Input, config: RunnableConfig | None = None, **kwargs: Any
    ) -> DetailedReply[Output]:
        """Like ``ainvoke``, also returning the id of the recorded interaction."""
        call = self._begin(config)
        try:
            output = await self.bound.ainvoke(input, call.config, **kwargs)
        except BaseException as error:
            await _arecord_while_failing(self.sink, call.record(input, error=error))
            raise
        await self.sink.arecord(call.record(input, output))
        return DetailedReply(output, call.origin.interaction_id)

    def stream(
        self, input: Input, config: RunnableConfig | None = None, **kwargs: Any | None
    ) -> Iterator[Output]:
        """Stream the agent's output; the interaction is recorded once the stream ends."""
        call = self._begin(config)
        produced = _Produced(call.capture)
        chunks: Iterator[Output] | None = None
        try:
            chunks = self.bound.stream(input, call.config, **kwargs)
            for chunk in chunks:
                produced.add(chunk)
                yield chunk
        except GeneratorExit:
            # The caller stopped reading: end the wrapped stream first, so its last
            # events are captured before the record is built.
            if close := getattr(chunks, "close", None):
                close()
            _record_while_failing(self.sink, call.record(input, produced.output, abandoned=True))
            raise
        except BaseException as error:
            _record_while_failing(self.sink, call.record(input, produced.output, error))
            raise
        self.sink.record(call.record(input, produced.output))

    async def astream(
        self, input: Input, config: RunnableConfig | None = None, **kwargs: Any | None
    ) -> AsyncIterator[Output]:
        """Stream the agent's output asynchronously; recorded once the stream ends."""
        call = self._begin(config)
        produced = _Produced(call.capture)
        chunks: AsyncIterator[Output] | None = None
        try:
            chunks = self.bound.astream(input, call.config, **kwargs)
            async for chunk in chunks:
                produced.add(chunk)
                yield chunk
        except GeneratorExit:
            if aclose := getattr(chunks, "aclose", None):
                await aclose()
            await _arecord_while_failing(
                self.sink, call.record(input, produced.output, abandoned=True)
            )
            raise
        except BaseException as error:
            await _arecord_while_failing(self.sink, call.record(input, produced.output, error))
            raise
        await self.sink.arecord(call.record(input, produced.output))

    def _begin(self, config: RunnableConfig | None) -> _Call:
        """Open an interaction: its ids, its capture, and the config to run it with."""
        config = ensure_config(config)  # a copy, with its own copy of the callbacks
        run_id = config.get("run_id") or _new_run_id()
        config["run_id"] = run_id
        callbacks = config.get("callbacks")
        configurable = config.get("configurable") or {}
        parent_run_id = (
            callbacks.parent_run_id if isinstance(callbacks, BaseCallbackManager) else None
        )
        capture = _Capture()
        config["callbacks"] = _with_handler(callbacks, _BoundCapture(capture))
        origin = _Origin(
            interaction_id=str(uuid.uuid4()),
            agent_id=self.agent_id,
            roles=self.roles,
            run_id=str(run_id),
            thread_id=_optional_str(configurable.get("thread_id")),
            flow_id=_optional_str(configurable.get("flow_id") or parent_run_id),
            evaluation_id=current_evaluation_id(),
        )
        return _Call(origin, capture, config)


class _Produced:
    """What a stream produced so far: text and message chunks joined, else the last chunk."""

    def __init__(self, capture: _Capture) -> None:
        self._capture = capture
        self.output: Any = None

    def add(self, chunk: Any) -> None:
        if _shows_interrupt(chunk):
            self._capture.interrupted = True
        joinable = (isinstance(self.output, str) and isinstance(chunk, str)) or (
            isinstance(self.output, BaseMessageChunk) and isinstance(chunk, BaseMessageChunk)
        )
        self.output = self.output + chunk if joinable else chunk


# --- helpers ----------------------------------------------------------------------------


def _with_handler(callbacks: Callbacks, handler: BaseCallbackHandler) -> Callbacks:
    """The caller's callbacks plus ``handler`` (``callbacks`` is already a private copy)."""
    if callbacks is None:
        return [handler]
    if isinstance(callbacks, BaseCallbackManager):
        callbacks.add_handler(handler, inherit=True)
        return callbacks
    return [*callbacks, handler]


def _optional_str(value: Any) -> str | None:
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


def _shows_interrupt(value: Any) -> bool:
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
