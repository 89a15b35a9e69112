"""Simulate a customer whose order never arrived, talking to a LangGraph support agent.

The agent is a small LangGraph graph with a checkpointer, so it remembers the conversation
through its thread: the simulation sends it only the customer's newest message each turn.
The customer is an LLM-simulated user, and a judge grades the whole transcript with
OpenEvals' ``TASK_COMPLETION_PROMPT``. Offline, all three models are ``ScriptedChatModel``s
whose replies follow simple rules; with ``OPENAI_API_KEY`` set, the customer and the judge
are ``openai:gpt-4o-mini`` (the agent stays scripted; swap in your own).

Run: ``.venv/bin/python cookbook/simulate_support_conversation.py``
"""

from __future__ import annotations

import os

from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph

from langchain_evals_port import LLMJudge, prompts
from langchain_evals_port.simulation import OPENING_REQUEST, MultiturnSimulation, SimulatedUser
from langchain_evals_port.testing import ScriptedChatModel


def support_reply(messages: list[BaseMessage]) -> str:
    """The offline agent: asks for the order number, then offers a refund."""
    said = " ".join(m.text.lower() for m in messages if m.type == "human")
    if "order" in said and any(ch.isdigit() for ch in said):
        return "I am sorry. Order 4411 was lost in transit, so I have issued a full refund."
    return "I'm sorry to hear that. What is your order number?"


def customer_reply(messages: list[BaseMessage]) -> str:
    """The offline customer (it sees the agent's messages as the other side's)."""
    last = messages[-1].text
    if last == OPENING_REQUEST:
        return "Hi, my order never arrived."
    if "order number" in last.lower():
        return "It's order 4411."
    return "Thank you, that solves it."


def judge_reply(messages: list[BaseMessage]) -> dict[str, object]:
    """The offline judge: the task is complete when the agent resolved it with a refund."""
    transcript = messages[-1].text.lower()
    done = "refund" in transcript
    reason = "The agent issued a refund." if done else "The agent never resolved the problem."
    return {"reasoning": reason, "score": done}


def support_agent(model: ScriptedChatModel) -> object:
    """A one-node LangGraph agent with an in-memory checkpointer."""

    def respond(state: MessagesState) -> dict[str, list[AIMessage]]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("respond", respond)
    graph.add_edge(START, "respond")
    return graph.compile(checkpointer=InMemorySaver())


def main() -> None:
    live = bool(os.environ.get("OPENAI_API_KEY"))
    customer_model = "openai:gpt-4o-mini" if live else ScriptedChatModel(responder=customer_reply)
    judge_model = "openai:gpt-4o-mini" if live else ScriptedChatModel(responder=judge_reply)
    simulation = MultiturnSimulation(
        app=support_agent(ScriptedChatModel(responder=support_reply)),
        user=SimulatedUser.llm(
            "You are a customer whose order (number 4411) never arrived. Be brief.",
            model=customer_model,
        ),
        max_turns=4,
        stop_when=lambda trajectory, turn: "refund" in trajectory[-1].text.lower(),
        trajectory_evaluators=[
            LLMJudge(
                prompt=prompts.TASK_COMPLETION_PROMPT,
                feedback_key="task_completion",
                model=judge_model,
            )
        ],
    )
    result = simulation.run()
    for message in result.trajectory:
        print(f"{message.type:>5}: {message.text}")
    print(f"\nstopped after {result.turns} turns ({result.stop_reason})")
    for evaluation in result.evaluator_results:
        print(f"{evaluation.key}: {evaluation.score} - {evaluation.comment}")


if __name__ == "__main__":
    main()
