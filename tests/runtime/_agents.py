"""Agents and evaluators the runtime tests bind: real LangGraph graphs on scripted models."""

from __future__ import annotations

import threading
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableLambda
from langgraph.graph import END, START, MessagesState, StateGraph

from langchain_evals_port.runtime import Evaluation, EvaluationContext, OnlineEvaluator
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


class ReplyLength(OnlineEvaluator):
    """Passes when the final response has at least ``min_length`` characters."""

    id = "reply-length"

    def evaluate(self, ctx: EvaluationContext) -> Any:
        interaction = ctx.interaction()
        if interaction.failed:
            return self.effects().inconclusive("interaction failed, nothing to evaluate")
        minimum = ctx.config.get_int("min_length", 1)
        length = len(interaction.final_response_text)
        return self.effects().complete(
            Evaluation.of(length >= minimum, f"reply of {length} characters, minimum {minimum}")
            .with_score(float(length))
            .with_attribute("length", length)
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
