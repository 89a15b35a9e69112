"""Graph trajectories extracted from real LangGraph threads with a real checkpointer."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, interrupt

from langchain_evals_port import EvaluatorInputError
from langchain_evals_port.testing import ScriptedChatModel, ToolCallReply
from langchain_evals_port.trajectory._graph_extract import (
    aextract_graph_trajectory,
    extract_graph_trajectory,
)
from langchain_evals_port.trajectory._graph_trajectory import GraphTrajectory

# --- a support agent: conditional edges, a compiled subgraph as a node, an interrupt -------


class SupportState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


class ResearchState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    notes: list[str]


def build_support_agent(model: ScriptedChatModel) -> Any:
    def search(state: ResearchState) -> dict[str, Any]:
        return {"notes": ["Sunny, 21 °C in Lisbon"]}

    def cite(state: ResearchState) -> dict[str, Any]:
        call = state["messages"][-1].tool_calls[0]
        return {"messages": [ToolMessage(state["notes"][0], tool_call_id=call["id"])]}

    research = (
        StateGraph(ResearchState)
        .add_node(search)
        .add_node(cite)
        .add_edge(START, "search")
        .add_edge("search", "cite")
        .compile()
    )

    def agent(state: SupportState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def route(state: SupportState) -> str:
        last = state["messages"][-1]
        if isinstance(last, AIMessage) and last.tool_calls:
            return "research"
        asked = [m for m in state["messages"] if isinstance(m, HumanMessage)][-1]
        return "approval" if "refund" in asked.text else END

    def approval(state: SupportState) -> dict[str, Any]:
        answer = interrupt({"question": "Refund order 42?"})
        return {"messages": [AIMessage(f"Manager said {answer}.")]}

    def after_approval(state: SupportState) -> str:
        return "refund" if "yes" in state["messages"][-1].text else END

    def refund(state: SupportState) -> dict[str, Any]:
        return {"messages": [AIMessage("Refunded order 42.")]}

    return (
        StateGraph(SupportState)
        .add_node(agent)
        .add_node("research", research)
        .add_node(approval)
        .add_node(refund)
        .add_edge(START, "agent")
        .add_conditional_edges("agent", route, ["research", "approval", END])
        .add_edge("research", "agent")
        .add_conditional_edges("approval", after_approval, ["refund", END])
        .add_edge("refund", END)
        .compile(checkpointer=InMemorySaver())
    )


SUPPORT_STEPS = [
    ["__start__", "agent"],
    [
        "__start__",
        "agent",
        "research",
        "research:__start__",
        "research:search",
        "research:cite",
        "agent",
    ],
    ["__start__", "agent", "approval", "__interrupt__"],
    ["approval", "refund"],
]


@pytest.fixture
def support_thread() -> tuple[Any, dict[str, Any]]:
    model = ScriptedChatModel(
        [
            "Hello! How can I help?",
            ToolCallReply("search", {"city": "Lisbon"}),
            "Sunny, 21 °C in Lisbon.",
            "I will ask a manager.",
        ]
    )
    graph = build_support_agent(model)
    config = {"configurable": {"thread_id": "support"}}
    graph.invoke({"messages": [HumanMessage("Hi")]}, config)
    graph.invoke({"messages": [HumanMessage("Weather in Lisbon?")]}, config)
    graph.invoke({"messages": [HumanMessage("I want a refund for order 42")]}, config)
    graph.invoke(Command(resume="yes"), config)
    return graph, config


def test_support_thread_steps_per_turn(support_thread):
    trajectory = extract_graph_trajectory(*support_thread)
    assert trajectory.steps == SUPPORT_STEPS


def test_turn_inputs_are_filled_in(support_thread):
    inputs = extract_graph_trajectory(*support_thread).inputs
    texts = [turn["__start__"]["messages"][0].text for turn in inputs[:3]]
    assert texts == ["Hi", "Weather in Lisbon?", "I want a refund for order 42"]
    assert inputs[3] == {"__resume__": "yes"}


def test_results_keep_the_last_message_and_interrupts_are_marked(support_thread):
    turns = extract_graph_trajectory(*support_thread).turns
    assert [turn.result for turn in turns] == [
        {"messages": [{"role": "assistant", "content": "Hello! How can I help?"}]},
        {"messages": [{"role": "assistant", "content": "Sunny, 21 °C in Lisbon."}]},
        None,
        {"messages": [{"role": "assistant", "content": "Refunded order 42."}]},
    ]
    assert [turn.interrupted for turn in turns] == [False, False, True, False]
    assert turns[2].interrupts == ({"question": "Refund order 42?"},)


def test_to_dict_has_agentevals_shape(support_thread):
    trajectory = extract_graph_trajectory(*support_thread)
    data = trajectory.to_dict()
    assert set(data) == {"inputs", "outputs"}
    assert set(data["outputs"]) == {"inputs", "results", "steps"}
    assert data["outputs"]["inputs"] == data["inputs"] == trajectory.inputs
    assert data["outputs"]["results"][2] == {}
    assert data["outputs"]["steps"] == SUPPORT_STEPS
    assert GraphTrajectory.coerce(data).steps == SUPPORT_STEPS


def test_trajectory_serialises(support_thread):
    trajectory = extract_graph_trajectory(*support_thread)
    assert '"__resume__":"yes"' in trajectory.model_dump_json()


async def test_async_extraction_equals_sync(support_thread):
    graph, config = support_thread
    assert await aextract_graph_trajectory(graph, config) == extract_graph_trajectory(graph, config)


# --- small graphs for the harder shapes ----------------------------------------------------


class Log(TypedDict):
    log: Annotated[list[str], operator.add]


def node(name: str) -> Any:
    def write(state: Log) -> dict[str, Any]:
        return {"log": [name]}

    write.__name__ = name
    return write


def thread(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def test_interrupt_in_a_nested_subgraph_beside_a_parallel_branch():
    def ask(state: Log) -> dict[str, Any]:
        return {"log": [f"answer:{interrupt('need input')}"]}

    inner = (
        StateGraph(Log)
        .add_node(node("x"))
        .add_node(ask)
        .add_node(node("y"))
        .add_edge(START, "x")
        .add_edge("x", "ask")
        .add_edge("ask", "y")
        .compile()
    )
    middle = (
        StateGraph(Log)
        .add_node(node("m"))
        .add_node("inner", inner)
        .add_edge(START, "m")
        .add_edge("m", "inner")
        .compile()
    )
    graph = (
        StateGraph(Log)
        .add_node(node("a"))
        .add_node(node("b"))
        .add_node("c", middle)
        .add_node(node("d"))
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("a", "c")
        .add_edge(["b", "c"], "d")
        .compile(checkpointer=InMemorySaver())
    )
    config = thread("nested")
    graph.invoke({"log": ["go"]}, config)
    graph.invoke(Command(resume="R"), config)

    first, second = extract_graph_trajectory(graph, config).turns
    assert first.steps == (
        "__start__",
        "a",
        "c",
        "b",
        "c:__start__",
        "c:m",
        "c:inner",
        "c:inner:__start__",
        "c:inner:x",
        "c:inner:ask",
        "__interrupt__",
    )
    assert first.interrupts == ("need input",)
    # The resumed run re-enters the subgraphs down to the node that asked, then goes on.
    assert second.input == {"__resume__": "R"}
    assert second.steps == ("c", "c:inner", "c:inner:ask", "c:inner:y", "d")
    assert "answer:R" in second.result["log"]


def test_a_node_that_interrupts_twice_makes_three_turns():
    def ask(state: Log) -> dict[str, Any]:
        first, second = interrupt("q1"), interrupt("q2")
        return {"log": [f"{first},{second}"]}

    graph = (
        StateGraph(Log)
        .add_node(ask)
        .add_node(node("done"))
        .add_edge(START, "ask")
        .add_edge("ask", "done")
        .compile(checkpointer=InMemorySaver())
    )
    config = thread("twice")
    graph.invoke({"log": []}, config)
    graph.invoke(Command(resume="A1"), config)
    graph.invoke(Command(resume="A2"), config)

    turns = extract_graph_trajectory(graph, config).turns
    assert [turn.steps for turn in turns] == [
        ("__start__", "ask", "__interrupt__"),
        ("ask", "__interrupt__"),
        ("ask", "done"),
    ]
    assert [turn.input for turn in turns[1:]] == [{"__resume__": "A1"}, {"__resume__": "A2"}]
    # LangGraph keeps only a node's latest interrupt: the first question is gone.
    assert [turn.interrupts for turn in turns] == [(), ("q2",), ()]


def test_a_waiting_interrupt_ends_the_trajectory():
    graph = (
        StateGraph(Log)
        .add_node("ask", lambda state: {"log": [interrupt("ok?")]})
        .add_edge(START, "ask")
        .compile(checkpointer=InMemorySaver())
    )
    config = thread("waiting")
    graph.invoke({"log": []}, config)
    (turn,) = extract_graph_trajectory(graph, config).turns
    assert turn.steps == ("__start__", "ask", "__interrupt__")
    assert turn.result is None
    assert turn.interrupts == ("ok?",)


def test_new_input_instead_of_an_answer_starts_a_new_turn():
    graph = (
        StateGraph(Log)
        .add_node("ask", lambda state: {"log": [interrupt("ok?")]})
        .add_edge(START, "ask")
        .compile(checkpointer=InMemorySaver())
    )
    config = thread("abandoned")
    graph.invoke({"log": ["one"]}, config)
    graph.invoke({"log": ["two"]}, config)
    graph.invoke(Command(resume="fine"), config)
    turns = extract_graph_trajectory(graph, config).turns
    assert [turn.input for turn in turns] == [
        {"__start__": {"log": ["one"]}},
        {"__start__": {"log": ["two"]}},
        {"__resume__": "fine"},
    ]
    assert [turn.interrupted for turn in turns] == [True, True, False]


def test_subgraph_with_its_own_history_is_not_repeated_in_every_turn():
    # checkpointer=True keeps one subgraph history per thread, across all parent steps.
    sub = StateGraph(Log).add_node(node("x")).add_edge(START, "x").compile(checkpointer=True)
    graph = (
        StateGraph(Log)
        .add_node("sub", sub)
        .add_edge(START, "sub")
        .compile(checkpointer=InMemorySaver())
    )
    config = thread("own-history")
    graph.invoke({"log": ["1"]}, config)
    graph.invoke({"log": ["2"]}, config)
    assert (
        extract_graph_trajectory(graph, config).steps
        == [["__start__", "sub", "sub:__start__", "sub:x"]] * 2
    )


def test_only_the_current_branch_counts_after_time_travel():
    graph = (
        StateGraph(Log)
        .add_node(node("echo"))
        .add_edge(START, "echo")
        .compile(checkpointer=InMemorySaver())
    )
    config = thread("fork")
    graph.invoke({"log": ["a"]}, config)
    graph.invoke({"log": ["b"]}, config)
    after_a = next(
        s
        for s in graph.get_state_history(config)
        if s.values["log"] == ["a", "echo"] and not s.next
    )
    graph.invoke({"log": ["c"]}, after_a.config)
    assert extract_graph_trajectory(graph, config).inputs == [
        {"__start__": {"log": ["a"]}},
        {"__start__": {"log": ["c"]}},
    ]


def test_static_breakpoint_and_state_update():
    graph = (
        StateGraph(Log)
        .add_node(node("draft"))
        .add_node(node("send"))
        .add_edge(START, "draft")
        .add_edge("draft", "send")
        .compile(checkpointer=InMemorySaver(), interrupt_before=["send"])
    )
    config = thread("breakpoint")
    graph.invoke({"log": []}, config)
    (waiting,) = extract_graph_trajectory(graph, config).turns
    assert waiting.steps == ("__start__", "draft")
    assert waiting.result is None

    graph.update_state(config, {"log": ["edited"]})
    graph.invoke(None, config)
    (turn,) = extract_graph_trajectory(graph, config).turns
    assert turn.steps == ("__start__", "draft", "send")
    assert turn.result == {"log": ["draft", "edited", "send"]}


def test_a_retried_node_counts_once():
    attempts: list[int] = []

    def flaky(state: Log) -> dict[str, Any]:
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("transient")
        return {"log": ["ok"]}

    graph = (
        StateGraph(Log)
        .add_node(flaky)
        .add_edge(START, "flaky")
        .compile(checkpointer=InMemorySaver())
    )
    config = thread("retry")
    with pytest.raises(RuntimeError):
        graph.invoke({"log": []}, config)
    graph.invoke(None, config)
    assert extract_graph_trajectory(graph, config).steps == [["__start__", "flaky"]]


def test_empty_thread_has_no_turns():
    graph = (
        StateGraph(Log)
        .add_node(node("x"))
        .add_edge(START, "x")
        .compile(checkpointer=InMemorySaver())
    )
    assert extract_graph_trajectory(graph, thread("never-run")).turns == ()


def test_state_without_messages_is_the_result():
    graph = (
        StateGraph(Log)
        .add_node(node("x"))
        .add_edge(START, "x")
        .compile(checkpointer=InMemorySaver())
    )
    graph.invoke({"log": ["in"]}, thread("plain"))
    assert extract_graph_trajectory(graph, thread("plain")).results == [{"log": ["in", "x"]}]


def test_graph_without_checkpointer_is_a_clear_error():
    graph = StateGraph(Log).add_node(node("x")).add_edge(START, "x").compile()
    with pytest.raises(EvaluatorInputError, match="no checkpointer"):
        extract_graph_trajectory(graph, thread("t"))


def test_config_without_thread_is_a_clear_error():
    graph = (
        StateGraph(Log)
        .add_node(node("x"))
        .add_edge(START, "x")
        .compile(checkpointer=InMemorySaver())
    )
    with pytest.raises(EvaluatorInputError, match="thread_id"):
        extract_graph_trajectory(graph, {"configurable": {}})


def test_a_checkpoint_in_the_config_reads_the_thread_up_to_it(support_thread):
    graph, config = support_thread
    latest = graph.get_state(config).config
    assert extract_graph_trajectory(graph, latest).steps == SUPPORT_STEPS
    after_second_turn = next(
        s for s in graph.get_state_history(config) if not s.next and len(s.values["messages"]) == 6
    )
    assert extract_graph_trajectory(graph, after_second_turn.config).steps == SUPPORT_STEPS[:2]


def test_an_unknown_checkpoint_id_is_an_error():
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from typing_extensions import TypedDict

    from langchain_evals_port import EvaluatorInputError
    from langchain_evals_port.trajectory import extract_graph_trajectory

    class State(TypedDict):
        n: int

    builder = StateGraph(State)
    builder.add_node("step", lambda state: {"n": state["n"] + 1})
    builder.add_edge(START, "step")
    builder.add_edge("step", END)
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"n": 0}, {"configurable": {"thread_id": "t"}})
    with pytest.raises(EvaluatorInputError, match="checkpoint_id 'nope' is not in the thread"):
        extract_graph_trajectory(
            graph, {"configurable": {"thread_id": "t", "checkpoint_id": "nope"}}
        )
