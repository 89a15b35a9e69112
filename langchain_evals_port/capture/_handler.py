"""Callback handlers that capture interactions: the one a bound agent adds to each call, and
``InteractionCallbackHandler`` for code that cannot wrap its runnable (each root run it sees
is one interaction)."""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import (
    BaseMessage,
)
from langchain_core.outputs import LLMResult

from langchain_evals_port.capture._scope import current_evaluation_id

from ._record import InteractionSink, Origin, RunCapture, optional_str

try:
    # LangGraph 1.1+ reports interrupts to graph callback handlers, whatever the stream mode.
    from langgraph.callbacks import GraphCallbackHandler as _HandlerBase
except ImportError:  # pragma: no cover - older LangGraph: interrupts are seen in outputs only
    _HandlerBase = BaseCallbackHandler  # type: ignore[assignment,misc]

try:
    # The time-ordered run ids LangChain itself makes since langchain-core 1.1.
    from langchain_core.utils.uuid import uuid7 as new_run_id
except ImportError:  # pragma: no cover - older langchain-core made uuid4 run ids
    from uuid import uuid4 as new_run_id  # type: ignore[assignment]

__all__ = ["BoundCapture", "InteractionCallbackHandler", "new_interaction_id", "new_run_id"]


def new_interaction_id() -> str:
    """A new interaction's id: a time-ordered UUID, like LangChain's run ids. (``uuid4``
    reads ``os.urandom``, a system call that lets go of the GIL: with a store's thread at
    work, taking it back cost more than the rest of opening the interaction.)"""
    return str(new_run_id())


logger = logging.getLogger("langchain_evals_port.runtime")

# --- callback handlers ------------------------------------------------------------------


class _CaptureEvents(_HandlerBase, ABC):
    """Routes chat model, tool and interrupt events to the capture of their interaction."""

    run_inline = True

    @abstractmethod
    def _capture_started(self, run_id: UUID, parent_run_id: UUID | None) -> RunCapture | None:
        """The capture a run that starts belongs to (``None``: not one of ours)."""

    @abstractmethod
    def _capture_of(self, run_id: UUID | None) -> RunCapture | None:
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


class BoundCapture(_CaptureEvents):
    """The handler ``BoundAgent`` adds to one call: every event belongs to its capture."""

    def __init__(self, capture: RunCapture) -> None:
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

    def _capture_started(self, run_id: UUID, parent_run_id: UUID | None) -> RunCapture | None:
        return self.capture

    def _capture_of(self, run_id: UUID | None) -> RunCapture | None:
        return self.capture


@dataclass
class _RootRun:
    origin: Origin
    input: Any
    capture: RunCapture = field(default_factory=RunCapture)
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

    def _capture_started(self, run_id: UUID, parent_run_id: UUID | None) -> RunCapture | None:
        with self._lock:
            root_id = None if parent_run_id is None else self._root_of.get(parent_run_id)
            if root_id is None:
                return None
            root = self._roots[root_id]
            self._root_of[run_id] = root_id
            root.runs.append(run_id)
            return root.capture

    def _capture_of(self, run_id: UUID | None) -> RunCapture | None:
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
        origin = Origin(
            interaction_id=new_interaction_id(),
            agent_id=self.agent_id,
            roles=self.roles,
            run_id=str(run_id),
            thread_id=optional_str(metadata.get("thread_id")),
            flow_id=optional_str(metadata.get("flow_id")),
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
