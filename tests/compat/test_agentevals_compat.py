"""The agentevals compat layer against agentevals 0.0.9 itself, on the same real graphs.

Where agentevals reads a thread correctly the results are equal; each documented deviation
(PARITY.md) has a minimal reproduction below that pins both behaviours.
"""

from __future__ import annotations

import importlib
import inspect
import operator
import warnings
from typing import Annotated, Any, TypedDict

import pytest
from agentevals.graph_trajectory import llm as ae_llm
from agentevals.graph_trajectory import strict as ae_strict
from agentevals.graph_trajectory import utils as ae_utils
from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, interrupt

from langchain_evals_port import EvaluatorInputError
from langchain_evals_port.compat import agentevals as compat
from langchain_evals_port.testing import ScriptedChatModel


def agentevals_extract(graph: Any, config: dict[str, Any]) -> dict[str, Any]:
    with warnings.catch_warnings():
        # agentevals warns when its own inputs and results come out of different lengths.
        warnings.simplefilter("ignore")
        return dict(ae_utils.extract_langgraph_trajectory_from_thread(graph, config))


def same_except_outputs_inputs(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    assert ours["inputs"] == theirs["inputs"]
    assert ours["outputs"]["results"] == theirs["outputs"]["results"]
    assert ours["outputs"]["steps"] == theirs["outputs"]["steps"]
    # Deviation: agentevals leaves outputs.inputs empty; here it repeats the turn inputs.
    assert theirs["outputs"]["inputs"] == []
    assert ours["outputs"]["inputs"] == ours["inputs"]


class Chat(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


class Log(TypedDict):
    log: Annotated[list[str], operator.add]


def node(name: str) -> Any:
    def write(state: Log) -> dict[str, Any]:
        return {"log": [name]}

    write.__name__ = name
    return write


def config(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


# --- where agentevals is right: equal ---------------------------------------------------------


@pytest.fixture
def chat_thread() -> tuple[Any, dict[str, Any]]:
    model = ScriptedChatModel(["Hello!", "Let me check.", "Found it: 42."])

    def agent(state: Chat) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def route(state: Chat) -> str:
        return "lookup" if "check" in state["messages"][-1].text else END

    graph = (
        StateGraph(Chat)
        .add_node(agent)
        .add_node("lookup", lambda state: {"messages": [HumanMessage("(lookup result: 42)")]})
        .add_edge(START, "agent")
        .add_conditional_edges("agent", route, ["lookup", END])
        .add_edge("lookup", "agent")
        .compile(checkpointer=InMemorySaver())
    )
    thread = config("chat")
    graph.invoke({"messages": [HumanMessage("hi")]}, thread)
    graph.invoke({"messages": [HumanMessage("what is the answer?")]}, thread)
    return graph, thread


def test_extraction_equals_agentevals_on_a_multi_turn_chat(chat_thread):
    ours = dict(compat.extract_langgraph_trajectory_from_thread(*chat_thread))
    theirs = agentevals_extract(*chat_thread)
    same_except_outputs_inputs(ours, theirs)
    assert ours["outputs"]["steps"] == [
        ["__start__", "agent"],
        ["__start__", "agent", "lookup", "agent"],
    ]


async def test_async_extraction_equals_agentevals(chat_thread):
    ours = dict(await compat.aextract_langgraph_trajectory_from_thread(*chat_thread))
    theirs = dict(await ae_utils.aextract_langgraph_trajectory_from_thread(*chat_thread))
    same_except_outputs_inputs(ours, theirs)


def test_extraction_equals_agentevals_on_parallel_branches():
    graph = (
        StateGraph(Log)
        .add_node(node("a"))
        .add_node(node("b"))
        .add_node(node("c"))
        .add_node(node("d"))
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("a", "c")
        .add_edge(["b", "c"], "d")
        .compile(checkpointer=InMemorySaver())
    )
    graph.invoke({"log": []}, config("parallel"))
    ours = dict(compat.extract_langgraph_trajectory_from_thread(graph, config("parallel")))
    theirs = agentevals_extract(graph, config("parallel"))
    same_except_outputs_inputs(ours, theirs)
    # A superstep's nodes in agentevals' order, so references written for it still match.
    assert ours["outputs"]["steps"] == [["__start__", "a", "c", "b", "d"]]


@pytest.fixture
def approval_thread() -> tuple[Any, dict[str, Any]]:
    graph = (
        StateGraph(Log)
        .add_node(node("plan"))
        .add_node("approve", lambda state: {"log": [interrupt("ok?")]})
        .add_edge(START, "plan")
        .add_edge("plan", "approve")
        .compile(checkpointer=InMemorySaver())
    )
    thread = config("approval")
    graph.invoke({"log": ["go"]}, thread)
    graph.invoke(Command(resume="yes"), thread)
    return graph, thread


def test_interrupted_turn_equals_agentevals(approval_thread):
    ours = compat.extract_langgraph_trajectory_from_thread(*approval_thread)
    theirs = agentevals_extract(*approval_thread)
    assert ours["inputs"][0] == theirs["inputs"][0]
    assert ours["outputs"]["steps"][0] == theirs["outputs"]["steps"][0]
    assert ours["outputs"]["results"] == theirs["outputs"]["results"]
    assert ours["outputs"]["results"][0] == {}


# --- deviations, each with a minimal reproduction ---------------------------------------------


def test_deviation_resumed_turn_has_its_answer_and_the_resumed_node(approval_thread):
    ours = compat.extract_langgraph_trajectory_from_thread(*approval_thread)
    theirs = agentevals_extract(*approval_thread)
    assert theirs["inputs"][1] == "__resuming__"
    assert theirs["outputs"]["steps"][1] == []
    assert ours["inputs"][1] == {"__resume__": "yes"}
    assert ours["outputs"]["steps"][1] == ["approve"]


def test_deviation_a_subgraph_does_not_split_the_turn():
    sub = StateGraph(Log).add_node(node("x")).add_edge(START, "x").compile()
    graph = (
        StateGraph(Log)
        .add_node("sub", sub)
        .add_node(node("after"))
        .add_edge(START, "sub")
        .add_edge("sub", "after")
        .compile(checkpointer=InMemorySaver())
    )
    graph.invoke({"log": []}, config("sub"))
    theirs = agentevals_extract(graph, config("sub"))
    ours = compat.extract_langgraph_trajectory_from_thread(graph, config("sub"))
    # agentevals takes the subgraph's last checkpoint for the end of a turn.
    assert theirs["outputs"]["steps"] == [["__start__", "sub", "sub:__start__", "sub:x"], ["after"]]
    assert len(theirs["inputs"]) == 2
    assert ours["outputs"]["steps"] == [["__start__", "sub", "sub:__start__", "sub:x", "after"]]
    assert len(ours["inputs"]) == 1


def test_deviation_nested_subgraphs_keep_their_full_path():
    inner = StateGraph(Log).add_node(node("x")).add_edge(START, "x").compile()
    outer = StateGraph(Log).add_node("inner", inner).add_edge(START, "inner").compile()
    graph = (
        StateGraph(Log)
        .add_node("outer", outer)
        .add_edge(START, "outer")
        .compile(checkpointer=InMemorySaver())
    )
    graph.invoke({"log": []}, config("nested"))
    theirs = agentevals_extract(graph, config("nested"))
    ours = compat.extract_langgraph_trajectory_from_thread(graph, config("nested"))
    assert "outer:x" in theirs["outputs"]["steps"][0]
    assert ours["outputs"]["steps"] == [
        [
            "__start__",
            "outer",
            "outer:__start__",
            "outer:inner",
            "outer:inner:__start__",
            "outer:inner:x",
        ]
    ]


def test_deviation_each_answer_to_a_repeated_interrupt_is_a_turn():
    def ask(state: Log) -> dict[str, Any]:
        return {"log": [interrupt("q1"), interrupt("q2")]}

    graph = StateGraph(Log).add_node(ask).add_edge(START, "ask")
    graph = graph.compile(checkpointer=InMemorySaver())
    graph.invoke({"log": []}, config("twice"))
    graph.invoke(Command(resume="A1"), config("twice"))
    graph.invoke(Command(resume="A2"), config("twice"))
    theirs = agentevals_extract(graph, config("twice"))
    ours = compat.extract_langgraph_trajectory_from_thread(graph, config("twice"))
    assert theirs["outputs"]["steps"] == [["__start__", "ask", "__interrupt__"], []]
    assert ours["outputs"]["steps"] == [
        ["__start__", "ask", "__interrupt__"],
        ["ask", "__interrupt__"],
        ["ask"],
    ]


def test_deviation_a_subgraph_with_its_own_history_is_read_once_per_call():
    sub = StateGraph(Log).add_node(node("x")).add_edge(START, "x").compile(checkpointer=True)
    graph = StateGraph(Log).add_node("sub", sub).add_edge(START, "sub")
    graph = graph.compile(checkpointer=InMemorySaver())
    graph.invoke({"log": []}, config("own"))
    graph.invoke({"log": []}, config("own"))
    theirs = agentevals_extract(graph, config("own"))
    ours = compat.extract_langgraph_trajectory_from_thread(graph, config("own"))
    assert (
        theirs["outputs"]["steps"]
        == [
            ["__start__", "sub", "__start__", "x"],
            ["__start__", "x"],
            [],
        ]
        * 2
    )
    assert ours["outputs"]["steps"] == [["__start__", "sub", "sub:__start__", "sub:x"]] * 2


def test_deviation_time_travel_keeps_only_the_current_branch():
    graph = StateGraph(Log).add_node(node("echo")).add_edge(START, "echo")
    graph = graph.compile(checkpointer=InMemorySaver())
    graph.invoke({"log": ["a"]}, config("fork"))
    first = next(s for s in graph.get_state_history(config("fork")) if not s.next)
    graph.invoke({"log": ["b"]}, config("fork"))
    graph.invoke({"log": ["c"]}, first.config)
    theirs = agentevals_extract(graph, config("fork"))
    ours = compat.extract_langgraph_trajectory_from_thread(graph, config("fork"))
    assert [i["__start__"]["log"] for i in theirs["inputs"]] == [["a"], ["b"], ["c"]]
    assert [i["__start__"]["log"] for i in ours["inputs"]] == [["a"], ["c"]]


def test_deviation_state_update_does_not_repeat_a_step():
    graph = (
        StateGraph(Log)
        .add_node(node("draft"))
        .add_node(node("send"))
        .add_edge(START, "draft")
        .add_edge("draft", "send")
        .compile(checkpointer=InMemorySaver(), interrupt_before=["send"])
    )
    graph.invoke({"log": []}, config("update"))
    graph.update_state(config("update"), {"log": ["edited"]})
    graph.invoke(None, config("update"))
    theirs = agentevals_extract(graph, config("update"))
    ours = compat.extract_langgraph_trajectory_from_thread(graph, config("update"))
    assert theirs["outputs"]["steps"] == [["__start__", "draft", "send", "send"]]
    assert ours["outputs"]["steps"] == [["__start__", "draft", "send"]]


def test_deviation_a_checkpoint_in_the_config_reads_the_thread_up_to_it(chat_thread):
    graph, thread = chat_thread
    latest = graph.get_state(thread).config
    theirs = agentevals_extract(graph, latest)
    ours = compat.extract_langgraph_trajectory_from_thread(graph, latest)
    # The checkpointer lists only the checkpoint named in the config.
    assert theirs["outputs"]["steps"] == [[]]
    assert ours == compat.extract_langgraph_trajectory_from_thread(graph, thread)


# --- strict match -----------------------------------------------------------------------------

STRICT_CASES = [
    ([["__start__", "agent"]], [["__start__", "agent"]]),
    ([["__start__", "agent"]], [["__start__", "agent", "tools"]]),
    ([["a", "b"]], [["b", "a"]]),
    ([["a"], ["b"]], [["a"], ["b"]]),
    ([["a"], ["b"]], [["a"], ["c"]]),
    ([["a"], ["b"]], [["a"]]),
    ([], []),
    ([["a", "__interrupt__"], []], [["a", "__interrupt__"], []]),
]


@pytest.mark.parametrize(("actual", "reference"), STRICT_CASES)
def test_strict_match_key_and_score_equal_agentevals(actual, reference):
    outputs = {"inputs": [], "results": [{}] * len(actual), "steps": actual}
    reference_outputs = {"inputs": [], "results": [], "steps": reference}
    ours = compat.graph_trajectory_strict_match(
        outputs=outputs, reference_outputs=reference_outputs
    )
    theirs = ae_strict.graph_trajectory_strict_match(
        outputs=outputs, reference_outputs=reference_outputs
    )
    assert (ours["key"], ours["score"]) == (theirs["key"], theirs["score"])
    if theirs["score"]:
        assert ours == theirs


async def test_strict_match_async_equals_agentevals():
    outputs = {"results": [], "steps": [["a"]]}
    ours = await compat.graph_trajectory_strict_match_async(
        outputs=outputs, reference_outputs=outputs
    )
    theirs = await ae_strict.graph_trajectory_strict_match_async(
        outputs=outputs, reference_outputs=outputs
    )
    assert ours == theirs


def test_strict_match_on_extracted_threads(chat_thread):
    ours = compat.extract_langgraph_trajectory_from_thread(*chat_thread)
    theirs = agentevals_extract(*chat_thread)
    reference = {"results": [], "steps": [["__start__", "agent"], ["__start__", "agent"]]}
    for extracted in (ours, theirs):
        mine = compat.graph_trajectory_strict_match(
            outputs=extracted["outputs"], reference_outputs=reference
        )
        upstream = ae_strict.graph_trajectory_strict_match(
            outputs=extracted["outputs"], reference_outputs=reference
        )
        assert (
            (mine["key"], mine["score"])
            == (upstream["key"], upstream["score"])
            == (
                "graph_trajectory_strict_match",
                False,
            )
        )


def test_deviation_strict_match_explains_a_failure():
    outputs = {"results": [], "steps": [["a", "b"]]}
    reference = {"results": [], "steps": [["a", "c"]]}
    theirs = ae_strict.graph_trajectory_strict_match(outputs=outputs, reference_outputs=reference)
    ours = compat.graph_trajectory_strict_match(outputs=outputs, reference_outputs=reference)
    assert (theirs["comment"], theirs["metadata"]) == (None, None)
    assert (
        ours["comment"]
        == "turn 1: expected ['a', 'c'], got ['a', 'b']: missing 'c'; unexpected 'b'"
    )
    assert ours["metadata"]["mismatches"][0]["missing"] == ["c"]


def test_missing_reference_raises_a_value_error_in_both():
    with pytest.raises(ValueError, match="requires both outputs and reference_outputs"):
        ae_strict.graph_trajectory_strict_match(outputs={"steps": []}, reference_outputs=None)
    with pytest.raises(EvaluatorInputError, match="reference_outputs is None"):
        compat.graph_trajectory_strict_match(outputs={"steps": []}, reference_outputs=None)


# --- LLM judge --------------------------------------------------------------------------------

VERDICT = {"reasoning": "Logical and direct.", "score": True}


@pytest.fixture
def json_thread() -> tuple[Any, dict[str, Any]]:
    # agentevals' judge serialises inputs with json.dumps, so its state must be plain JSON.
    graph = (
        StateGraph(Log)
        .add_node(node("plan"))
        .add_node(node("act"))
        .add_edge(START, "plan")
        .add_edge("plan", "act")
        .compile(checkpointer=InMemorySaver())
    )
    graph.invoke({"log": ["first"]}, config("json"))
    graph.invoke({"log": ["second"]}, config("json"))
    return graph, config("json")


def test_judge_result_equals_agentevals(json_thread):
    # Our extraction, fed to both: agentevals' judge reads our dict as its own.
    extracted = compat.extract_langgraph_trajectory_from_thread(*json_thread)
    ours_model, their_model = ScriptedChatModel([VERDICT]), ScriptedChatModel([VERDICT])
    ours = compat.create_graph_trajectory_llm_as_judge(judge=ours_model)(
        inputs=extracted["inputs"], outputs=extracted["outputs"]
    )
    theirs = ae_llm.create_graph_trajectory_llm_as_judge(judge=their_model)(
        inputs=extracted["inputs"], outputs=extracted["outputs"]
    )
    assert (ours["key"], ours["score"], ours["comment"]) == (
        theirs["key"],
        theirs["score"],
        theirs["comment"],
    )
    judge = compat.create_graph_trajectory_llm_as_judge(judge=ScriptedChatModel([VERDICT]))
    assert judge.__name__ == "llm_as_graph_trajectory_accuracy_judge"  # type: ignore[attr-defined]


async def test_async_judge_equals_agentevals(json_thread):
    extracted = agentevals_extract(*json_thread)
    ours = await compat.create_async_graph_trajectory_llm_as_judge(
        judge=ScriptedChatModel([VERDICT]), continuous=False
    )(inputs=extracted["inputs"], outputs=extracted["outputs"])
    theirs = await ae_llm.create_async_graph_trajectory_llm_as_judge(
        judge=ScriptedChatModel([VERDICT])
    )(inputs=extracted["inputs"], outputs=extracted["outputs"])
    assert (ours["key"], ours["score"]) == (theirs["key"], theirs["score"])


def test_judge_custom_prompt_variables_as_in_agentevals(json_thread):
    extracted = agentevals_extract(*json_thread)
    prompt = "Grade:\n{thread}\n{reference_outputs}"
    ours_model, their_model = ScriptedChatModel([VERDICT]), ScriptedChatModel([VERDICT])
    compat.create_graph_trajectory_llm_as_judge(prompt=prompt, judge=ours_model)(
        inputs=extracted["inputs"], outputs=extracted["outputs"]
    )
    ae_llm.create_graph_trajectory_llm_as_judge(prompt=prompt, judge=their_model)(
        inputs=extracted["inputs"], outputs=extracted["outputs"]
    )
    for model in (ours_model, their_model):
        text = model.calls[0].messages[-1].text
        assert text.startswith("Grade:\n")
        assert "second" in text
        assert "plan" in text


def test_deviation_judge_reads_threads_of_langchain_messages(chat_thread):
    theirs = agentevals_extract(*chat_thread)
    upstream = ae_llm.create_graph_trajectory_llm_as_judge(judge=ScriptedChatModel([VERDICT]))
    with pytest.raises(TypeError, match="not JSON serializable"):
        upstream(inputs=theirs["inputs"], outputs=theirs["outputs"])
    ours = compat.create_graph_trajectory_llm_as_judge(judge=ScriptedChatModel([VERDICT]))
    assert ours(inputs=theirs["inputs"], outputs=theirs["outputs"])["score"] is True


def test_deviation_judge_takes_inputs_none_and_renders_a_steps_only_reference(chat_thread):
    extracted = compat.extract_langgraph_trajectory_from_thread(*chat_thread)
    reference = {"results": [], "steps": [["__start__", "agent"], ["__start__", "agent"]]}
    upstream = ae_llm.create_graph_trajectory_llm_as_judge(judge=ScriptedChatModel([VERDICT]))
    with pytest.raises(TypeError, match="has no len"):
        upstream(inputs=None, outputs=extracted["outputs"])
    with pytest.raises(KeyError):
        upstream(
            inputs=extracted["inputs"], outputs=extracted["outputs"], reference_outputs=reference
        )

    model = ScriptedChatModel([VERDICT])
    result = compat.create_graph_trajectory_llm_as_judge(judge=model)(
        inputs=None, outputs=extracted["outputs"], reference_outputs=reference
    )
    assert result["score"] is True
    assert "<steps>__start__ -> agent</steps>\n</turn>\n</reference_thread>" in (
        model.calls[0].messages[-1].text
    )


def test_deviation_judge_default_prompt_is_our_own():
    assert compat.DEFAULT_REF_COMPARE_PROMPT != ae_llm.DEFAULT_REF_COMPARE_PROMPT
    params = inspect.signature(compat.create_graph_trajectory_llm_as_judge).parameters
    assert params["prompt"].default is compat.DEFAULT_REF_COMPARE_PROMPT


def test_mismatched_inputs_raise_a_value_error_in_both(chat_thread):
    extracted = compat.extract_langgraph_trajectory_from_thread(*chat_thread)
    upstream = ae_llm.create_graph_trajectory_llm_as_judge(judge=ScriptedChatModel([VERDICT]))
    with pytest.raises(ValueError, match="same length"):
        upstream(inputs=["one"], outputs=extracted["outputs"])
    ours = compat.create_graph_trajectory_llm_as_judge(judge=ScriptedChatModel([VERDICT]))
    with pytest.raises(EvaluatorInputError, match="inputs has 1 items but outputs has 2 turns"):
        ours(inputs=["one"], outputs=extracted["outputs"])


def test_raw_client_judge_is_refused():
    with pytest.raises(ValueError, match="LangChain chat model"):
        compat.create_graph_trajectory_llm_as_judge(judge=object())  # type: ignore[arg-type]


# --- signatures ---------------------------------------------------------------------------------

PAIRS = [
    (
        compat.extract_langgraph_trajectory_from_thread,
        ae_utils.extract_langgraph_trajectory_from_thread,
    ),
    (
        compat.aextract_langgraph_trajectory_from_thread,
        ae_utils.aextract_langgraph_trajectory_from_thread,
    ),
    (compat.graph_trajectory_strict_match, ae_strict.graph_trajectory_strict_match),
    (compat.graph_trajectory_strict_match_async, ae_strict.graph_trajectory_strict_match_async),
    (compat.create_graph_trajectory_llm_as_judge, ae_llm.create_graph_trajectory_llm_as_judge),
    (
        compat.create_async_graph_trajectory_llm_as_judge,
        ae_llm.create_async_graph_trajectory_llm_as_judge,
    ),
]


@pytest.mark.parametrize(("ours", "theirs"), PAIRS, ids=lambda f: f.__name__)
def test_signatures_match_agentevals(ours, theirs):
    def shape(function: Any) -> list[tuple[str, Any, Any]]:
        return [
            (p.name, p.kind, "prompt" if p.name == "prompt" else p.default)
            for p in inspect.signature(function).parameters.values()
        ]

    assert shape(ours) == shape(theirs)
    assert inspect.iscoroutinefunction(ours) == inspect.iscoroutinefunction(theirs)


def test_every_public_name_of_agentevals_types_is_in_compat_types():
    import agentevals.types as theirs

    from langchain_evals_port.compat.agentevals import types as ours

    assert set(theirs.__all__) <= set(ours.__all__)
    assert sorted(ours.GraphTrajectory.__annotations__) == sorted(
        theirs.GraphTrajectory.__annotations__
    )
    assert compat.GraphTrajectory is ours.GraphTrajectory


def test_agentevals_trajectory_functions_and_prompts_are_in_compat():
    import agentevals.trajectory as ae_trajectory
    from agentevals.trajectory import llm as ae_trajectory_llm
    from langchain_core.messages import AIMessage

    assert set(ae_trajectory.__all__) <= set(compat.__all__)
    # and the deprecated functions of agentevals.trajectory.strict/subset/superset/unordered
    for module in ("strict", "subset", "superset", "unordered"):
        public = importlib.import_module(f"agentevals.trajectory.{module}")
        names = {name for name, value in vars(public).items() if inspect.isfunction(value)}
        names = {name for name in names if name.startswith("trajectory_")}
        assert names, module
        assert names <= set(compat.__all__), module
    assert compat.TRAJECTORY_ACCURACY_PROMPT == ae_trajectory_llm.TRAJECTORY_ACCURACY_PROMPT
    assert compat.TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE == (
        ae_trajectory_llm.TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE
    )
    call = AIMessage("", tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "1"}])
    other = AIMessage("", tool_calls=[{"name": "search", "args": {"q": "y"}, "id": "1"}])
    for mode in ("strict", "unordered", "subset", "superset"):
        ours = compat.create_trajectory_match_evaluator(trajectory_match_mode=mode)
        theirs = ae_trajectory.create_trajectory_match_evaluator(trajectory_match_mode=mode)
        for outputs in ([call], [other]):
            mine = ours(outputs=outputs, reference_outputs=[call])
            original = theirs(outputs=outputs, reference_outputs=[call])
            assert (mine["key"], mine["score"]) == (original["key"], original["score"])
        assert ours(outputs=[call], reference_outputs=[call]) == theirs(
            outputs=[call], reference_outputs=[call]
        )
