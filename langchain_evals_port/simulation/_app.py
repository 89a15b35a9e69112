"""The application under test, whatever its shape, behind one interface.

* A compiled LangGraph graph is sent only the newest user message, under the run's
  ``thread_id``, so it answers from its own memory (its checkpointer) as in production.
  The turn's new messages are those of the returned state's ``messages`` that the
  transcript does not hold yet (by id).
* Any other Runnable is sent a one-message list holding the newest user message, with the
  same ``thread_id`` config: the input a chat model or a ``RunnableWithMessageHistory``
  (configured to key its history on ``thread_id``) accepts.
* A callable is called as ``app(message, thread_id)`` (sync or async) with the newest user
  message as a LangChain message.

A Runnable or callable may return a message, a string (an AI message), a list of messages
or ``{"messages": [...]}``; messages already in the transcript (by id) are skipped.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config
from langgraph.pregel import Pregel

from langchain_evals_port.core import to_langchain_messages
from langchain_evals_port.core.errors import MessageFormatError

from ._calls import RUN_ASYNC, call_async, call_sync

AppFunction: TypeAlias = Callable[[BaseMessage, str], Any]
"""A callable app: ``(newest user message, thread_id) -> reply`` (sync or async)."""
# LangGraph's per-run keys, which must not leak from the simulation graph into the app.
_GRAPH_KEYS = frozenset({"thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint_map"})

App: TypeAlias = "Runnable[Any, Any] | AppFunction"
"""What ``MultiturnSimulation`` can talk to: a compiled graph, a Runnable or a callable."""


@dataclass(frozen=True)
class AppTurn:
    """What one app turn added: its new messages, and the graph's state for graph apps."""

    messages: list[BaseMessage]
    state: Any = None


class AppAdapter:
    """Sends one user message to ``app`` and reads what it added to the conversation."""

    def __init__(self, app: App) -> None:
        if not (isinstance(app, Runnable) or callable(app)):
            raise TypeError(
                "app must be a compiled LangGraph graph, a Runnable or a callable "
                f"(message, thread_id) -> reply, got {type(app).__name__}"
            )
        self.app = app
        self.is_graph = isinstance(app, Pregel)

    def invoke(
        self, message: BaseMessage, thread_id: str, trajectory: list[BaseMessage]
    ) -> AppTurn:
        """Run one turn synchronously."""
        if isinstance(self.app, Runnable):
            reply = self.app.invoke(self._input(message), _config(thread_id))
        else:
            reply = call_sync(self.app, message, thread_id, hint=RUN_ASYNC)
        return self.read(reply, trajectory)

    async def ainvoke(
        self, message: BaseMessage, thread_id: str, trajectory: list[BaseMessage]
    ) -> AppTurn:
        """Run one turn asynchronously (a blocking callable runs in an executor)."""
        if isinstance(self.app, Runnable):
            reply = await self.app.ainvoke(self._input(message), _config(thread_id))
        else:
            reply = await call_async(self.app, message, thread_id, blocking=True)
        return self.read(reply, trajectory)

    def _input(self, message: BaseMessage) -> Any:
        return {"messages": [message]} if self.is_graph else [message]

    def read(self, reply: Any, trajectory: Sequence[BaseMessage]) -> AppTurn:
        """The messages ``reply`` adds to ``trajectory`` (and the state, for a graph)."""
        if self.is_graph:
            if not isinstance(reply, dict) or "messages" not in reply:
                raise MessageFormatError(
                    "the app graph must keep its conversation in a 'messages' state key "
                    f"(e.g. MessagesState); its state has keys {_keys(reply)}"
                )
            return AppTurn(new_messages(reply["messages"], trajectory), state=reply)
        return AppTurn(new_messages(reply_messages(reply), trajectory))


def reply_messages(reply: Any) -> list[BaseMessage]:
    """Messages from a reply: a message, a string, a list or ``{"messages": [...]}``."""
    if isinstance(reply, str):
        return [AIMessage(content=reply)]
    return to_langchain_messages(reply)


def new_messages(
    candidates: Iterable[BaseMessage], trajectory: Sequence[BaseMessage]
) -> list[BaseMessage]:
    """``candidates`` not yet in ``trajectory`` (nor earlier in ``candidates``), by id.

    A message without an id cannot be recognised again, so it is new and gets one.
    """
    seen: set[str | None] = {message.id for message in trajectory if message.id is not None}
    added: list[BaseMessage] = []
    for candidate in candidates:
        message = with_id(candidate)
        if message.id in seen:
            continue
        seen.add(message.id)
        added.append(message)
    return added


def with_id(message: BaseMessage) -> BaseMessage:
    """``message`` with a fresh id when it has none (a copy; the caller's object is kept)."""
    if message.id is not None:
        return message
    return message.model_copy(update={"id": str(uuid.uuid4())})


# LangGraph's own default, so an app graph runs as it would when called directly.
_APP_RECURSION_LIMIT = 25


def _config(thread_id: str) -> RunnableConfig:
    # The app runs inside a simulation node, whose config carries LangGraph's own keys; an
    # app graph seeing them would act as a subgraph and keep its memory under a per-turn
    # namespace instead of its thread. The caller's own keys (e.g. a user id) are kept.
    inherited = ensure_config().get("configurable", {})
    kept = {
        key: value
        for key, value in inherited.items()
        if not key.startswith("__") and key not in _GRAPH_KEYS
    }
    # The simulation's own recursion limit (sized for its turns) is no limit for the app.
    return {
        "configurable": {**kept, "thread_id": thread_id},
        "recursion_limit": _APP_RECURSION_LIMIT,
    }


def _keys(state: Any) -> str:
    return str(sorted(state)) if isinstance(state, dict) else f"none ({type(state).__name__})"
