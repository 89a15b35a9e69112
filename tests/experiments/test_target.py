"""``Target``: any app runs on a case, and what it did is captured for evaluators."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from langchain_evals_port import EvaluatorUsageError, TrajectoryMatch
from langchain_evals_port.experiments import Target
from langchain_evals_port.testing import ScriptedChatModel, ToolCallReply


@tool
def lookup_order(order_id: str) -> str:
    """Where an order is."""
    return f"order {order_id} shipped on Monday"


def order_agent(checkpointer: InMemorySaver | None = None) -> Any:
    """A LangGraph agent that looks the order up with a tool, then answers."""
    model = ScriptedChatModel(
        responder=lambda messages: (
            "Your order shipped on Monday."
            if messages[-1].type == "tool"
            else [ToolCallReply("lookup_order", {"order_id": "A-17"})]
        )
    ).bind_tools([lookup_order])
    graph = StateGraph(MessagesState)
    graph.add_node("model", lambda state: {"messages": [model.invoke(state["messages"])]})
    graph.add_node("tools", ToolNode([lookup_order]))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    return graph.compile(checkpointer=checkpointer)


QUESTION = {"messages": [("human", "Where is my order A-17?")]}


async def test_a_graph_target_s_trajectory_reaches_a_trajectory_evaluator() -> None:
    run = await Target(order_agent(), name="orders").arun(QUESTION, case_id="c-1")
    assert not run.failed
    assert run.outputs["messages"][-1].content == "Your order shipped on Monday."
    expected = [
        {"role": "user", "content": "Where is my order A-17?"},
        AIMessage(
            "", tool_calls=[{"name": "lookup_order", "args": {"order_id": "A-17"}, "id": "x"}]
        ),
        {"role": "tool", "content": "order A-17 shipped on Monday", "tool_call_id": "x"},
        {"role": "assistant", "content": "Your order shipped on Monday."},
    ]
    result = TrajectoryMatch(mode="strict").invoke(
        {"outputs": run.interaction.transcript_messages, "reference_outputs": expected}
    )
    assert result.score is True, result.comment
    assert [call.name for call in run.interaction.tool_calls] == ["lookup_order"]
    assert run.usage.total_tokens > 0
    assert run.latency > 0


async def test_each_case_and_trial_runs_on_its_own_graph_thread() -> None:
    saver = InMemorySaver()
    target = Target(order_agent(saver))
    await target.arun(QUESTION, case_id="c-1")
    await target.arun(QUESTION, case_id="c-1", trial=1)
    await target.arun(QUESTION, case_id="c-2")
    threads = {checkpoint.config["configurable"]["thread_id"] for checkpoint in saver.list(None)}
    assert threads == {"c-1:0", "c-1:1", "c-2:0"}


async def test_an_exception_of_the_target_is_recorded_and_not_raised() -> None:
    def broken(inputs: dict[str, Any]) -> str:
        raise ConnectionError("the order service is down")

    run = await Target(broken).arun({"question": "?"}, case_id="c-1")
    assert run.failed
    assert run.outputs is None
    assert run.interaction.failure is not None
    assert run.interaction.failure.reason == "ConnectionError"
    assert run.interaction.failure_summary == "the order service is down"


async def test_plain_and_async_functions_of_the_inputs() -> None:
    async def shout(inputs: dict[str, str]) -> str:
        return inputs["text"].upper()

    assert (await Target(shout).arun({"text": "hi"}, case_id="a")).outputs == "HI"
    sync = Target(lambda inputs: inputs["text"] * 2).run({"text": "ab"}, case_id="b")
    assert (sync.outputs, sync.interaction.output_text) == ("abab", "abab")


def test_a_module_attribute_string(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_app.py").write_text("def answer(inputs):\n    return 'forty-two'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert Target("my_app:answer").run({}, case_id="c").outputs == "forty-two"
    finally:
        sys.modules.pop("my_app", None)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("my_app", "expected 'module:attr'"),
        ("no_such_module_here:app", "cannot import 'no_such_module_here'"),
        ("json:no_such_attribute", "module 'json' has no attribute 'no_such_attribute'"),
        (42, "expected a Runnable, a compiled graph, a function"),
    ],
)
def test_a_target_that_cannot_be_run_is_a_clear_error(spec: Any, message: str) -> None:
    with pytest.raises(EvaluatorUsageError, match=message):
        Target(spec)
