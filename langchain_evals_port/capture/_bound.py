"""``BoundAgent``: a runnable wrapped so each call is recorded as one interaction."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager, Callbacks
from langchain_core.messages import (
    BaseMessageChunk,
)
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config
from langchain_core.runnables.graph import Graph
from langchain_core.runnables.utils import ConfigurableFieldSpec, Input, Output
from langchain_core.utils.pydantic import TypeBaseModel

from langchain_evals_port.capture._records import InteractionRecord
from langchain_evals_port.capture._scope import current_evaluation_id

from ._handler import BoundCapture, new_interaction_id, new_run_id
from ._record import (
    DetailedReply,
    InteractionSink,
    Origin,
    RunCapture,
    optional_str,
    shows_interrupt,
)

__all__ = ["BoundAgent"]

logger = logging.getLogger("langchain_evals_port.runtime")

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

    origin: Origin
    capture: RunCapture
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
        run_id = config.get("run_id") or new_run_id()
        config["run_id"] = run_id
        callbacks = config.get("callbacks")
        configurable = config.get("configurable") or {}
        parent_run_id = (
            callbacks.parent_run_id if isinstance(callbacks, BaseCallbackManager) else None
        )
        capture = RunCapture()
        config["callbacks"] = _with_handler(callbacks, BoundCapture(capture))
        origin = Origin(
            interaction_id=new_interaction_id(),
            agent_id=self.agent_id,
            roles=self.roles,
            run_id=str(run_id),
            thread_id=optional_str(configurable.get("thread_id")),
            flow_id=optional_str(configurable.get("flow_id") or parent_run_id),
            evaluation_id=current_evaluation_id(),
        )
        return _Call(origin, capture, config)


class _Produced:
    """What a stream produced so far: text and message chunks joined, else the last chunk."""

    def __init__(self, capture: RunCapture) -> None:
        self._capture = capture
        self.output: Any = None

    def add(self, chunk: Any) -> None:
        if shows_interrupt(chunk):
            self._capture.interrupted = True
        joinable = (isinstance(self.output, str) and isinstance(chunk, str)) or (
            isinstance(self.output, BaseMessageChunk) and isinstance(chunk, BaseMessageChunk)
        )
        self.output = self.output + chunk if joinable else chunk


def _with_handler(callbacks: Callbacks, handler: BaseCallbackHandler) -> Callbacks:
    """The caller's callbacks plus ``handler`` (``callbacks`` is already a private copy)."""
    if callbacks is None:
        return [handler]
    if isinstance(callbacks, BaseCallbackManager):
        callbacks.add_handler(handler, inherit=True)
        return callbacks
    return [*callbacks, handler]
