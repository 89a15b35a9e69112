"""Agents and evaluators the runtime tests bind: real LangGraph graphs on scripted models."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableLambda
from langgraph.graph import END, START, MessagesState, StateGraph

from langchain_evals_port.runtime import (
    DurableEvaluator,
    Evaluation,
    EvaluationContext,
    OnlineEvaluator,
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


class ThreeSteps(DurableEvaluator[dict[str, Any]]):
    """A durable evaluator in three steps, each appending its name and pid to the file named
    by ``DURABLE_STEP_LOG``; with ``DURABLE_BLOCK_IN_SECOND`` set, the second step prints
    ``blocked`` and hangs (a process to kill in the middle of an evaluation)."""

    id = "three-steps"

    def on_evaluation(self, ctx: EvaluationContext) -> Any:
        return self.effects().transition_to(self.first)

    def first(self) -> Any:
        _log_step("first")
        return self.effects().update_state({"votes": [True]}).transition_to(self.second)

    def second(self) -> Any:
        _log_step("second")
        if os.environ.get("DURABLE_BLOCK_IN_SECOND"):
            print("blocked", flush=True)
            time.sleep(600)
        votes = [*self._votes(), True]
        return self.effects().update_state({"votes": votes}).transition_to(self.third)

    def third(self) -> Any:
        _log_step("third")
        votes = self._votes()
        return self.effects().complete(Evaluation.of(all(votes), f"{len(votes)} votes"))

    def _votes(self) -> list[bool]:
        state = self.current_state() or {}
        return list(state.get("votes", []))


def _log_step(name: str) -> None:
    path = os.environ.get("DURABLE_STEP_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(f"{name} {os.getpid()}\n")
