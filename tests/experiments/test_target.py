"""``Target``: any app runs on a case, and what it did is captured for evaluators."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from langchain_evals_port import EvaluatorUsageError, TrajectoryMatch
from langchain_evals_port.experiments import Target
from langchain_evals_port.experiments._target import _unheard_run
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


class _Events(BaseCallbackHandler):
    """The chain and chat-model events a call reports, as (event, name, has a parent)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str | None, bool]] = []

    def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        self.events.append(("chain", kwargs.get("name"), kwargs.get("parent_run_id") is not None))

    def on_chain_end(self, outputs: Any, **kwargs: Any) -> None:
        self.events.append(("chain end", None, kwargs.get("parent_run_id") is not None))

    def on_chain_error(self, error: BaseException, **kwargs: Any) -> None:
        self.events.append(("chain error", type(error).__name__, False))

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.events.append(("model", None, kwargs.get("parent_run_id") is not None))


class _ModelEvents(BaseCallbackHandler):
    """A handler that, like BoundAgent's capture, ignores chain events: the model events it
    hears, as (event, tags, metadata, has a parent)."""

    ignore_chain = True

    def __init__(self) -> None:
        self.events: list[tuple[str, list[str], dict[str, Any], bool]] = []

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        metadata = {k: v for k, v in (kwargs.get("metadata") or {}).items() if "ls_" not in k}
        parent = kwargs.get("parent_run_id") is not None
        self.events.append(("model", sorted(kwargs.get("tags") or []), metadata, parent))

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self.events.append(("model end", [], {}, kwargs.get("parent_run_id") is not None))


async def test_a_run_no_handler_hears_of_reports_the_model_events_runnable_lambda_does() -> None:
    # The chain run of an async function target whose only handlers ignore chain events
    # (the capture's) is made without LangChain's callback configuration and chain events:
    # the model call inside still reaches them as it does under RunnableLambda, with the
    # config's tags and metadata and its parent run.
    model = ScriptedChatModel(responder=lambda messages: "four")

    async def app(inputs: dict[str, str], config: RunnableConfig) -> str:
        return str((await model.ainvoke(inputs["q"], config)).content)

    target = Target(app)
    ours, theirs = _ModelEvents(), _ModelEvents()
    config: RunnableConfig = {
        "run_name": target.name,
        "tags": ["nightly"],
        "metadata": {"team": "search"},
        "configurable": {"thread_id": "c:0"},
    }
    assert _unheard_run({**config, "callbacks": [ours]}) is not None  # the quiet path
    assert _unheard_run({**config, "callbacks": [_Events()]}) is None  # a chain listener
    await target._called.ainvoke({"q": "2 + 2"}, {**config, "callbacks": [ours]})
    await RunnableLambda(app).ainvoke({"q": "2 + 2"}, {**config, "callbacks": [theirs]})
    assert ours.events == theirs.events
    assert ours.events[0][:2] == ("model", ["nightly"])
    assert ours.events[0][2]["team"] == "search"
    assert ours.events[0][3]  # the model's run has the chain run as its parent
    run = await target.arun({"q": "2 + 2"}, case_id="c")
    assert run.outputs == "four"
    assert len(run.interaction.responses) == 1  # the capture heard the model call


async def test_an_async_function_target_is_called_as_runnable_lambda_calls_it() -> None:
    model = ScriptedChatModel(responder=lambda messages: "four")
    seen: dict[str, Any] = {}

    async def with_config(inputs: dict[str, str], config: RunnableConfig) -> str:
        seen["config"] = config
        return str((await model.ainvoke(inputs["q"])).content)

    async def with_run_manager(inputs: dict[str, str], run_manager: Any) -> str:
        seen["run_manager"] = run_manager
        return str((await model.ainvoke(inputs["q"])).content)

    async def returns_a_runnable(inputs: dict[str, str]) -> Any:
        return RunnableLambda(lambda value: value["q"].upper())

    async def broken(inputs: dict[str, str]) -> str:
        raise KeyError("q")

    for app in (with_config, with_run_manager, returns_a_runnable, broken):
        ours, theirs = _Events(), _Events()
        target = Target(app)
        # Target's own call, and LangChain's RunnableLambda with the same config.
        run = await target.arun({"q": "2 + 2"}, case_id="c")
        config: RunnableConfig = {"callbacks": [ours], "run_name": target.name}
        with contextlib.suppress(KeyError):
            await target._called.ainvoke({"q": "2 + 2"}, {**config})
        with contextlib.suppress(KeyError):
            await RunnableLambda(app).ainvoke({"q": "2 + 2"}, {**config, "callbacks": [theirs]})
        assert ours.events == theirs.events, app.__name__
        if app is broken:
            assert run.failed
            assert ours.events[-1] == ("chain error", "KeyError", False)
        elif app is returns_a_runnable:
            assert run.outputs == "2 + 2".upper()
            assert ours.events[1][::2] == ("chain", True)  # the Runnable it returned ran
        else:
            assert run.outputs == "four"
            assert ours.events[:2] == [("chain", target.name, False), ("model", None, True)]
            assert len(run.interaction.responses) == 1  # the model call inside was captured
    assert seen["config"]["callbacks"].parent_run_id is not None
    assert seen["run_manager"].run_id is not None
