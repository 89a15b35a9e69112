"""Agents and evaluators the runtime tests bind: real LangGraph graphs on scripted models."""

from __future__ import annotations

import os
import threading
import time
from typing import Any, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableLambda
from langgraph.graph import END, START, MessagesState, StateGraph

from langchain_evals_port import Score, evaluator
from langchain_evals_port.runtime import (
    DurableEvaluator,
    EvaluationContext,
    EvaluatorConfig,
    InteractionRecord,
)
from langchain_evals_port.testing import ScriptedChatModel


def chat_agent(model: BaseChatModel) -> Any:
    """A one-node LangGraph messages agent answering with ``model``."""

    def respond(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("respond", respond)
    graph.add_edge(START, "respond")
    graph.add_edge("respond", END)
    return graph.compile()


def echo_agent() -> Runnable[str, str]:
    """A plain Runnable agent that answers every question the same way."""
    return RunnableLambda(lambda question: f"You asked: {question}", name="echo")


def scripted_agent(*replies: str) -> Any:
    """``chat_agent`` on a ``ScriptedChatModel`` giving ``replies`` in turn."""
    return chat_agent(ScriptedChatModel(replies=list(replies)))


@evaluator(feedback_key="reply_length")
def reply_length(outputs: str, interaction: InteractionRecord, config: EvaluatorConfig) -> Any:
    """Passes when the final response has at least ``min_length`` characters (a property);
    inconclusive when the interaction failed."""
    if interaction.failed:
        return Score.unscored("interaction failed, nothing to evaluate")
    minimum = config.get_int("min_length", 1)
    length = len(outputs)
    return Score(
        length >= minimum,
        f"reply of {length} characters, minimum {minimum}",
        {"length": length},
    )


class Gate:
    """A latch that evaluators wait on, so tests control when they finish."""

    def __init__(self) -> None:
        self.opened = threading.Event()
        self.entered = threading.Event()

    def wait(self, timeout: float = 10.0) -> None:
        self.entered.set()
        if not self.opened.wait(timeout):
            raise TimeoutError("the gate was never opened")


class Votes(TypedDict, total=False):
    """The state of ``three_steps``: the votes so far, then the score."""

    votes: list[bool]
    score: Score


def three_steps() -> DurableEvaluator:
    """A durable evaluator in three nodes, each appending its name and pid to the file named
    by ``DURABLE_STEP_LOG`` and then taking ``DURABLE_STEP_SECONDS`` (default 0); with
    ``DURABLE_BLOCK_IN_SECOND`` set, the second node prints ``blocked`` and hangs (a process
    to kill in the middle of an evaluation)."""

    def first(state: Votes) -> dict[str, Any]:
        _log_step("first")
        return {"votes": [True]}

    def second(state: Votes) -> dict[str, Any]:
        _log_step("second")
        if os.environ.get("DURABLE_BLOCK_IN_SECOND"):
            print("blocked", flush=True)
            time.sleep(600)
        return {"votes": [*state["votes"], True]}

    def third(state: Votes) -> dict[str, Any]:
        _log_step("third")
        votes = state["votes"]
        return {"score": Score(all(votes), f"{len(votes)} votes")}

    builder = StateGraph(Votes, context_schema=EvaluationContext)
    builder.add_node("first", first)
    builder.add_node("second", second)
    builder.add_node("third", third)
    builder.add_edge(START, "first")
    builder.add_edge("first", "second")
    builder.add_edge("second", "third")
    builder.add_edge("third", END)
    return DurableEvaluator(builder)


def _log_step(name: str) -> None:
    path = os.environ.get("DURABLE_STEP_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(f"{name} {os.getpid()}\n")
    time.sleep(float(os.environ.get("DURABLE_STEP_SECONDS", "0")))
