"""GraphTrajectoryMatch: node steps per turn, in five modes."""

from __future__ import annotations

from typing import Any, TypedDict

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from langchain_evals_port import EvaluatorInputError, EvaluatorResult
from langchain_evals_port.core._fingerprint import configuration_fingerprint
from langchain_evals_port.trajectory._graph import GraphTrajectoryMatch
from langchain_evals_port.trajectory._graph_extract import extract_graph_trajectory
from langchain_evals_port.trajectory._graph_trajectory import GraphTrajectory, GraphTurn

MODES = ["strict", "unordered", "subset", "superset", "in_order"]

# (actual steps of one turn, reference steps) → expected score in each mode, in MODES order.
CASES = [
    (["a", "b", "c"], ["a", "b", "c"], [True, True, True, True, True]),
    (["a", "c", "b"], ["a", "b", "c"], [False, True, True, True, False]),
    (["a", "b"], ["a", "b", "c"], [False, False, True, False, False]),
    (["a", "x", "b", "c"], ["a", "b", "c"], [False, False, False, True, True]),
    (["a", "x"], ["a", "b"], [False, False, False, False, False]),
    (["a", "a"], ["a"], [False, False, False, True, True]),
    (["a"], ["a", "a"], [False, False, True, False, False]),
    ([], [], [True, True, True, True, True]),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("actual", "reference", "scores"), CASES)
def test_modes(mode, actual, reference, scores):
    result = GraphTrajectoryMatch(mode=mode).invoke(
        {"outputs": [actual], "reference_outputs": [reference]}
    )
    assert result.score is scores[MODES.index(mode)]


@pytest.mark.parametrize("mode", MODES)
def test_feedback_keys(mode):
    result = GraphTrajectoryMatch(mode=mode)(outputs=[["a"]], reference_outputs=[["a"]])
    assert result["key"] == f"graph_trajectory_{mode}_match"
    assert GraphTrajectoryMatch(mode=mode).get_name() == f"graph_trajectory_{mode}_match"


def test_custom_feedback_key():
    assert GraphTrajectoryMatch(feedback_key="path_ok")(outputs=[], reference_outputs=[]) == {
        "key": "path_ok",
        "score": True,
        "comment": None,
        "metadata": None,
    }


def test_every_turn_must_match():
    result = GraphTrajectoryMatch().invoke(
        {"outputs": [["a"], ["b"], ["c"]], "reference_outputs": [["a"], ["x"], ["c"]]}
    )
    assert result.score is False
    assert [m["turn"] for m in result.metadata["mismatches"]] == [2]


def test_failure_explains_the_turn_and_the_steps():
    result = GraphTrajectoryMatch().invoke(
        {
            "outputs": [["__start__", "agent"], ["__start__", "agent", "agent"]],
            "reference_outputs": [["__start__", "agent"], ["__start__", "agent", "tools"]],
        }
    )
    assert result.comment == (
        "turn 2: expected ['__start__', 'agent', 'tools'], got ['__start__', 'agent', "
        "'agent']: missing 'tools'; unexpected 'agent'"
    )
    assert result.metadata == {
        "mode": "strict",
        "mismatches": [
            {
                "turn": 2,
                "expected": ["__start__", "agent", "tools"],
                "actual": ["__start__", "agent", "agent"],
                "missing": ["tools"],
                "unexpected": ["agent"],
                "reason": "missing 'tools'; unexpected 'agent'",
            }
        ],
    }


@pytest.mark.parametrize(
    ("mode", "actual", "reference", "reason"),
    [
        ("strict", ["b", "a"], ["a", "b"], "same steps in another order: step 1 is 'b'"),
        ("unordered", ["a"], ["a", "b"], "missing 'b'"),
        ("subset", ["a", "z"], ["a", "b"], "ran steps the reference lacks: 'z'"),
        ("superset", ["a"], ["a", "b", "c"], "did not run reference steps: 'b', 'c'"),
        ("in_order", ["b", "a"], ["a", "b"], "reference step 2 ('b') does not follow in order"),
    ],
)
def test_each_mode_says_why(mode, actual, reference, reason):
    result = GraphTrajectoryMatch(mode=mode).invoke(
        {"outputs": [actual], "reference_outputs": [reference]}
    )
    assert result.metadata["mismatches"][0]["reason"] == reason
    assert result.comment.endswith(reason)


def test_a_different_number_of_turns_is_a_failing_verdict():
    # A graph that interrupts when the reference did not runs one more turn: that is the
    # graph's behaviour, so it is scored rather than rejected.
    result = GraphTrajectoryMatch().invoke(
        {"outputs": [["a", "__interrupt__"], ["a"]], "reference_outputs": [["a"]]}
    )
    assert result.score is False
    assert result.comment == "the graph ran 2 turn(s) but the reference has 1"
    assert result.metadata == {"mode": "strict", "turns": 2, "expected_turns": 1}


def test_accepts_every_trajectory_form():
    steps = [["__start__", "agent"], ["__start__", "agent", "__interrupt__"]]
    trajectory = GraphTrajectory(turns=tuple(GraphTurn(steps=tuple(s)) for s in steps))
    forms = [
        steps,
        trajectory,
        trajectory.to_dict(),
        trajectory.to_dict()["outputs"],
        {"inputs": [], "results": [], "steps": steps},
    ]
    match = GraphTrajectoryMatch()
    for outputs in forms:
        for reference in forms:
            assert match(outputs=outputs, reference_outputs=reference)["score"] is True


def test_results_and_inputs_are_not_read():
    # agentevals' extraction can return more results than inputs; matching reads only steps.
    outputs = {"inputs": ["only one"], "outputs": {"results": [{}, {}, {}], "steps": [["a"]]}}
    assert GraphTrajectoryMatch()(outputs=outputs, reference_outputs=[["a"]])["score"] is True


@pytest.mark.parametrize(
    ("outputs", "message"),
    [
        ("a, b", r"outputs must be a graph trajectory.*got str"),
        ({"messages": []}, r"outputs must be a graph trajectory"),
        ([["a"], "b"], r"outputs\[1\] must be a list of node names"),
        ([["a", 1]], r"outputs\[0\] must be a list of node names"),
        ({"steps": "a"}, r"outputs\['steps'\] must be a list of each turn's node names"),
    ],
)
def test_malformed_trajectories_name_the_problem(outputs, message):
    with pytest.raises(EvaluatorInputError, match=message):
        GraphTrajectoryMatch()(outputs=outputs, reference_outputs=[["a"]])


def test_missing_reference_is_an_input_error():
    with pytest.raises(EvaluatorInputError, match="reference_outputs is None"):
        GraphTrajectoryMatch()(outputs=[["a"]])


async def test_async_and_batch():
    match = GraphTrajectoryMatch(mode="subset")
    result = await match.acall(outputs=[["a"]], reference_outputs=[["a", "b"]])
    assert result["score"] is True
    results = await match.abatch(
        [
            {"outputs": [["a"]], "reference_outputs": [["a"]]},
            {"outputs": [["z"]], "reference_outputs": [["a"]]},
        ]
    )
    assert [r.score for r in results if isinstance(r, EvaluatorResult)] == [True, False]


step_lists = st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=6)


@given(actual=step_lists, reference=step_lists)
def test_modes_agree_with_each_other(actual, reference):
    def score(mode: str) -> Any:
        return (
            GraphTrajectoryMatch(mode=mode)
            .invoke({"outputs": [actual], "reference_outputs": [reference]})
            .score
        )

    strict, unordered = score("strict"), score("unordered")
    subset, superset, in_order = score("subset"), score("superset"), score("in_order")
    assert strict <= unordered <= subset
    assert unordered == (subset and superset)
    assert strict <= in_order <= superset


# --- on a real graph -------------------------------------------------------------------------


class Ticket(TypedDict):
    text: str
    approved: bool


def test_extracted_trajectory_against_reference_steps():
    def classify(state: Ticket) -> dict[str, Any]:
        return {}

    def route(state: Ticket) -> str:
        return "escalate" if "urgent" in state["text"] else "reply"

    def escalate(state: Ticket) -> dict[str, Any]:
        return {"approved": interrupt("escalate?") == "yes"}

    graph = (
        StateGraph(Ticket)
        .add_node(classify)
        .add_node("reply", lambda state: {"text": "thanks"})
        .add_node(escalate)
        .add_edge(START, "classify")
        .add_conditional_edges("classify", route, ["reply", "escalate"])
        .add_edge("reply", END)
        .add_edge("escalate", "reply")
        .compile(checkpointer=InMemorySaver())
    )
    config = {"configurable": {"thread_id": "ticket"}}
    graph.invoke({"text": "hello", "approved": False}, config)
    graph.invoke({"text": "urgent!", "approved": False}, config)
    graph.invoke(Command(resume="yes"), config)
    trajectory = extract_graph_trajectory(graph, config)

    reference = [
        ["__start__", "classify", "reply"],
        ["__start__", "classify", "escalate", "__interrupt__"],
        ["escalate", "reply"],
    ]
    assert GraphTrajectoryMatch()(outputs=trajectory, reference_outputs=reference)["score"]
    in_order = GraphTrajectoryMatch(mode="in_order")
    assert in_order(outputs=trajectory, reference_outputs=[["classify"], ["escalate"], ["reply"]])[
        "score"
    ]
    assert not in_order(outputs=trajectory, reference_outputs=[["reply", "classify"], [], []])[
        "score"
    ]


def test_the_fingerprint_names_the_matcher_as_stored_experiments_do():
    # An experiment stored with the matcher refuses to resume when its class's module changes.
    assert configuration_fingerprint(GraphTrajectoryMatch())["type"] == (
        '"langchain_evals_port.trajectory._graph.GraphTrajectoryMatch"'
    )
