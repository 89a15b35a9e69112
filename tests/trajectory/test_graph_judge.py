"""GraphTrajectoryLLMJudge: the judge sees the thread turn by turn."""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

import pytest
from agentevals.graph_trajectory.llm import DEFAULT_REF_COMPARE_PROMPT as AGENTEVALS_PROMPT
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, interrupt

from langchain_evals_port import EvaluatorInputError
from langchain_evals_port.testing import ScriptedChatModel
from langchain_evals_port.trajectory._graph_extract import extract_graph_trajectory
from langchain_evals_port.trajectory._graph_judge import (
    GRAPH_TRAJECTORY_PROMPT,
    GraphTrajectoryLLMJudge,
    render_graph_thread,
)

VERDICT = {"reasoning": "Each step follows from the last.", "score": True}


class Chat(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


@pytest.fixture
def trajectory() -> Any:
    def confirm(state: Chat) -> dict[str, Any]:
        answer = interrupt({"question": "Book the 9:40 train?"})
        return {"messages": [AIMessage(f"Booked: {answer}.")]}

    graph = (
        StateGraph(Chat)
        .add_node("plan", lambda state: {"messages": [AIMessage("Looking up trains.")]})
        .add_node(confirm)
        .add_edge(START, "plan")
        .add_edge("plan", "confirm")
        .compile(checkpointer=InMemorySaver())
    )
    config = {"configurable": {"thread_id": "trains"}}
    graph.invoke({"messages": [HumanMessage("Get me to Porto tomorrow")]}, config)
    graph.invoke(Command(resume="yes"), config)
    return extract_graph_trajectory(graph, config)


def judged_text(model: ScriptedChatModel) -> str:
    return model.calls[-1].messages[-1].text


def test_the_judge_reads_each_turn(trajectory):
    model = ScriptedChatModel([VERDICT])
    result = GraphTrajectoryLLMJudge(model=model)(outputs=trajectory)
    assert result["key"] == "graph_trajectory_accuracy"
    assert result["score"] is True
    assert result["comment"] == VERDICT["reasoning"]
    text = judged_text(model)
    thread = text.split("<thread>\n")[1].split("\n</thread>")[0]
    assert thread == render_graph_thread(trajectory)
    assert thread == (
        '<turn number="1">\n'
        "<input>\n"
        '{\n  "messages": [\n    {\n      "role": "user",\n'
        '      "content": "Get me to Porto tomorrow"\n    }\n  ]\n}\n'
        "</input>\n"
        "<steps>__start__ -> plan -> confirm -> __interrupt__</steps>\n"
        "<paused_for_person>\n"
        '{\n  "question": "Book the 9:40 train?"\n}\n'
        "</paused_for_person>\n"
        "</turn>\n"
        '<turn number="2">\n'
        "<resumed_with>\nyes\n</resumed_with>\n"
        "<steps>confirm</steps>\n"
        "<result>\n"
        '{\n  "messages": [\n    {\n      "role": "assistant",\n'
        '      "content": "Booked: yes."\n    }\n  ]\n}\n'
        "</result>\n"
        "</turn>"
    )
    assert "<reference_thread>" not in text


def test_run_name_follows_the_key():
    judge = GraphTrajectoryLLMJudge(model=ScriptedChatModel([VERDICT]), feedback_key="path")
    assert judge.get_name() == "llm_as_path_judge"


def test_reference_is_shown_when_given(trajectory):
    model = ScriptedChatModel([VERDICT])
    GraphTrajectoryLLMJudge(model=model)(
        outputs=trajectory,
        reference_outputs={"results": [], "steps": [["__start__", "plan", "confirm"]]},
    )
    reference = judged_text(model).split("<reference_thread>\n")[1].split("\n</reference_thread>")
    assert reference[0] == '<turn number="1">\n<steps>__start__ -> plan -> confirm</steps>\n</turn>'


def test_given_inputs_replace_the_trajectory_inputs(trajectory):
    model = ScriptedChatModel([VERDICT, VERDICT])
    judge = GraphTrajectoryLLMJudge(model=model)
    judge(outputs=trajectory, inputs=["first question", "an answer"])
    assert "<input>\nfirst question\n</input>" in judged_text(model)
    judge(outputs=trajectory.to_dict()["outputs"], inputs={"inputs": ["q1", "q2"]})
    assert "<input>\nq2\n</input>" in judged_text(model)


def test_inputs_none_uses_the_trajectory_own(trajectory):
    model = ScriptedChatModel([VERDICT])
    GraphTrajectoryLLMJudge(model=model)(inputs=None, outputs=trajectory.to_dict())
    assert "Get me to Porto tomorrow" in judged_text(model)


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        (["only one"], "inputs has 1 items but outputs has 2 turns"),
        ({"questions": []}, "a dict with such a list under 'inputs'"),
        ("a string", "inputs must be a list with one input per turn, got str"),
    ],
)
def test_mismatched_inputs_are_a_clear_error(trajectory, inputs, message):
    judge = GraphTrajectoryLLMJudge(model=ScriptedChatModel([VERDICT]))
    with pytest.raises(EvaluatorInputError, match=message):
        judge(outputs=trajectory, inputs=inputs)


def test_misaligned_results_are_a_clear_error():
    judge = GraphTrajectoryLLMJudge(model=ScriptedChatModel([VERDICT]))
    with pytest.raises(EvaluatorInputError, match=r"outputs has 1 results but 2 turns of steps"):
        judge(outputs={"results": [{}], "steps": [["a"], ["b"]]})


def test_thread_variable_is_reserved(trajectory):
    judge = GraphTrajectoryLLMJudge(model=ScriptedChatModel([VERDICT]))
    with pytest.raises(EvaluatorInputError, match="'thread' is rendered from outputs"):
        judge(outputs=trajectory, thread="mine")


def test_custom_prompt_gets_agentevals_variables(trajectory):
    model = ScriptedChatModel([{"reasoning": "Fine.", "score": 0.75}])
    judge = GraphTrajectoryLLMJudge(
        prompt="Rate this.\n{thread}\n{reference_outputs}\nTurns given: {inputs}",
        model=model,
        continuous=True,
    )
    result = judge(outputs=trajectory, inputs=["a", "b"], reference_outputs=[["plan"], []])
    assert result["score"] == 0.75
    text = judged_text(model)
    assert text.startswith('Rate this.\n<turn number="1">')
    assert "<reference_thread>" in text
    assert text.endswith('Turns given: [\n  "a",\n  "b"\n]')


async def test_async_path(trajectory):
    model = ScriptedChatModel([VERDICT])
    result = await GraphTrajectoryLLMJudge(model=model).ainvoke({"outputs": trajectory})
    assert result.score is True
    assert len(model.calls) == 1


def test_values_without_json_form_are_shown_by_repr():
    class Opaque:
        def __repr__(self) -> str:
            return "<Opaque 7>"

    from langchain_evals_port.trajectory._graph_trajectory import GraphTrajectory, GraphTurn

    text = render_graph_thread(GraphTrajectory(turns=(GraphTurn(result={"x": Opaque()}),)))
    assert "{'x': <Opaque 7>}" in text
    assert "<steps>(none)</steps>" in text


def test_default_prompt_is_our_own_text():
    ours = set(GRAPH_TRAJECTORY_PROMPT.splitlines())
    shared = [line for line in AGENTEVALS_PROMPT.splitlines() if len(line) > 20 and line in ours]
    assert shared == []
    assert "{thread}" in GRAPH_TRAJECTORY_PROMPT
    assert "{reference_outputs}" in GRAPH_TRAJECTORY_PROMPT


def test_evaluate_raw_renders_the_thread_too():
    from langchain_evals_port.testing import ScriptedChatModel
    from langchain_evals_port.trajectory import GraphTrajectoryLLMJudge

    model = ScriptedChatModel([{"reasoning": "Fine.", "score": True}])
    judge = GraphTrajectoryLLMJudge(model=model)
    raw = judge.evaluate_raw(outputs=[["agent", "tools", "agent"]])
    assert raw == {"reasoning": "Fine.", "score": True}
    assert "tools" in model.calls[0].messages[-1].text
