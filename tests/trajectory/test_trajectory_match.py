"""TrajectoryMatch: the modes, argument rules, inputs, errors and explanations."""

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from langchain_evals_port.core import EvalRequest, to_openai_messages
from langchain_evals_port.core.errors import (
    EvaluationFailure,
    EvaluatorInputError,
    MessageFormatError,
)
from langchain_evals_port.trajectory import TrajectoryMatch


def ai(*calls):
    """An assistant message making ``calls`` ((name, args) pairs) in parallel."""
    return AIMessage(
        "",
        tool_calls=[
            {"name": name, "args": args, "id": f"call_{i}"} for i, (name, args) in enumerate(calls)
        ],
    )


def score(mode, outputs, reference, **options):
    return TrajectoryMatch(mode=mode, **options).invoke(
        {"outputs": outputs, "reference_outputs": reference}
    )


USER = HumanMessage("Weather in Paris and London?")
PARIS = ("weather", {"city": "Paris"})
LONDON = ("weather", {"city": "London"})
TIME = ("time", {"tz": "UTC"})


# --- modes -------------------------------------------------------------------------------


def test_strict_needs_same_messages_roles_and_calls_but_not_content_or_call_order():
    reference = [
        USER,
        ai(PARIS, LONDON),
        ToolMessage("sunny", tool_call_id="a"),
        AIMessage("Sunny."),
    ]
    outputs = [
        HumanMessage("other words"),
        ai(LONDON, PARIS),
        ToolMessage("rain", tool_call_id="b"),
        AIMessage("Hm"),
    ]
    assert score("strict", outputs, reference).score is True
    # the same calls spread over two messages are not the same trajectory
    split = [USER, ai(PARIS), ai(LONDON), AIMessage("Sunny.")]
    result = score("strict", split, reference)
    assert result.score is False
    kinds = [
        (p["kind"], p.get("message", p.get("call", {}).get("message")))
        for p in result.metadata["problems"]
    ]
    assert kinds == [("missing_call", 1), ("role", 2)]
    assert {
        "kind": "role",
        "message": 2,
        "expected": "tool",
        "got": "assistant",
    } in result.metadata["problems"]


def test_strict_reports_message_count():
    result = score("strict", [USER], [USER, AIMessage("hi")])
    assert result.score is False
    assert result.metadata["problems"] == [{"kind": "message_count", "expected": 2, "got": 1}]
    assert "has 1 messages, the reference 2" in result.comment


def test_strict_pairs_within_each_message_only():
    result = score("strict", [ai(PARIS), ai(LONDON)], [ai(LONDON), ai(PARIS)])
    assert result.score is False
    # order-free, every call has a partner: precision and recall say so
    assert (result.metadata["precision"], result.metadata["recall"]) == (1.0, 1.0)
    assert "the agent's messages[0] has no" not in result.comment
    assert (
        'closest agent call weather(city="Paris") (messages[0]) differs in city' in result.comment
    )


@pytest.mark.parametrize(
    ("mode", "outputs", "expected"),
    [
        ("unordered", [ai(LONDON), ai(PARIS)], True),
        ("unordered", [ai(LONDON)], False),
        ("unordered", [ai(LONDON), ai(PARIS), ai(TIME)], False),
        ("subset", [ai(LONDON)], True),
        ("subset", [], True),
        ("subset", [ai(LONDON), ai(TIME)], False),
        ("superset", [ai(TIME), ai(LONDON), ai(PARIS)], True),
        ("superset", [ai(LONDON)], False),
        ("in_order", [ai(PARIS), ai(TIME), ai(LONDON)], True),
        ("in_order", [ai(LONDON), ai(PARIS)], False),
    ],
)
def test_order_free_and_in_order_modes(mode, outputs, expected):
    reference = [ai(PARIS), ai(LONDON)]
    assert score(mode, [USER, *outputs], [USER, *reference]).score is expected


def test_multiplicity_counts():
    # a call made once cannot stand for a call the reference makes twice
    assert score("superset", [ai(PARIS)], [ai(PARIS), ai(PARIS)]).score is False
    assert score("subset", [ai(PARIS), ai(PARIS)], [ai(PARIS)]).score is False
    result = score("superset", [ai(PARIS)], [ai(PARIS), ai(PARIS)])
    assert "matches it but is paired with reference call" in result.comment


def test_feedback_keys_follow_openevals():
    for mode in ("strict", "unordered", "subset", "superset", "in_order"):
        assert TrajectoryMatch(mode=mode).feedback_key == f"trajectory_{mode}_match"
        assert (
            TrajectoryMatch(mode=mode)(outputs=[], reference_outputs=[])["key"]
            == f"trajectory_{mode}_match"
        )
    assert TrajectoryMatch(feedback_key="mine").feedback_key == "mine"


def test_greedy_counterexample_passes_in_every_pairing_mode():
    # first fit pairs A(x=1) with A(x=1, y=2) and leaves A(x=1, y=2) without a partner
    reference = [ai(("A", {"x": 1}), ("A", {"x": 1, "y": 2}))]
    outputs = [ai(("A", {"x": 1, "y": 2}), ("A", {"x": 1}))]
    for mode in ("strict", "unordered", "superset", "subset", "in_order"):
        assert score(mode, outputs, reference, tool_args_match_mode="superset").score is True, mode


# --- in order -----------------------------------------------------------------------------


def test_in_order_parallel_calls_may_come_in_any_order_and_any_messages():
    reference = [ai(PARIS, LONDON), ai(TIME)]
    assert score("in_order", [ai(LONDON, PARIS), ai(TIME)], reference).score is True
    assert score("in_order", [ai(LONDON), ai(TIME), ai(PARIS), ai(TIME)], reference).score is True


def test_in_order_a_later_step_cannot_share_a_message_with_an_earlier_one():
    result = score("in_order", [ai(PARIS, TIME)], [ai(PARIS), ai(TIME)])
    assert result.score is False
    assert result.metadata["problems"][0]["earliest_message"] == 1
    assert "(messages[0]) matches it but comes before messages[1]" in result.comment


def test_in_order_explains_a_call_that_came_too_early():
    result = score("in_order", [ai(TIME), ai(PARIS)], [ai(PARIS), ai(TIME)])
    assert result.score is False
    problem = result.metadata["problems"][0]
    assert problem["call"]["name"] == "time"
    assert problem["closest"]["too_early"] is True
    assert "comes before messages[2]" in result.comment


def test_in_order_chooses_the_placement_that_leaves_room():
    # the first step could take either weather call; only the earliest run keeps TIME after it
    reference = [ai(("weather", {})), ai(TIME)]
    outputs = [ai(PARIS), ai(TIME), ai(LONDON)]
    assert score("in_order", outputs, reference, tool_args_match_mode="ignore").score is True


# --- argument rules ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args_mode", "actual", "expected", "matches"),
    [
        ("exact", {"a": 1}, {"a": 1.0}, True),
        ("exact", {"a": True}, {"a": 1}, False),
        ("exact", {"a": 1, "b": 2}, {"a": 1}, False),
        ("ignore", {"a": 1}, {"b": 2}, True),
        ("subset", {"a": 1}, {"a": 1, "b": 2}, True),
        ("subset", {"a": 1, "c": 3}, {"a": 1, "b": 2}, False),
        ("superset", {"a": 1, "b": 2}, {"a": 1}, True),
        ("superset", {"a": 2, "b": 2}, {"a": 1}, False),
    ],
)
def test_tool_args_match_modes(args_mode, actual, expected, matches):
    result = score(
        "unordered", [ai(("t", actual))], [ai(("t", expected))], tool_args_match_mode=args_mode
    )
    assert result.score is matches


def test_override_by_mode_paths_and_callable():
    outputs = [
        ai(("search", {"q": "PARIS", "page": {"n": 2}}), ("time", {"tz": "UTC", "fmt": "iso"}))
    ]
    reference = [ai(("search", {"q": "paris", "page": {"n": 2}}), ("time", {"tz": "UTC"}))]
    seen = []

    def same_query(actual, expected):
        seen.append((actual, expected))
        return actual["q"].lower() == expected["q"].lower()

    overrides = {"search": same_query, "time": "superset"}
    assert score("strict", outputs, reference, tool_args_match_overrides=overrides).score is True
    # matchers receive (actual, expected), whatever the mode
    assert seen[0][0]["q"] == "PARIS"
    assert (
        score(
            "strict",
            outputs,
            reference,
            tool_args_match_overrides={"search": ["page.n"], "time": ["tz"]},
        ).score
        is True
    )
    assert (
        score(
            "strict",
            outputs,
            reference,
            tool_args_match_overrides={"search": ["page.missing"], "time": "ignore"},
        ).score
        is False
    )


def test_a_dotted_path_missing_on_both_sides_is_a_mismatch():
    outputs, reference = [ai(("t", {"a": 1}))], [ai(("t", {"a": 1}))]
    result = score("unordered", outputs, reference, tool_args_match_overrides={"t": ["b"]})
    assert result.score is False
    assert result.metadata["problems"][0]["closest"]["differences"] == [{"argument": "b"}]


def test_custom_matcher_rejection_is_explained():
    result = score(
        "superset",
        [ai(("t", {"a": 1}))],
        [ai(("t", {"a": 1}))],
        tool_args_match_overrides={"t": lambda actual, expected: False},
    )
    assert result.score is False
    assert "is rejected by the custom matcher" in result.comment


def test_a_failing_matcher_names_its_tool():
    def needs_query(actual, expected):
        return actual["query"] == expected["query"]

    outputs = [ai(("search", {"q": "x"}))]
    with pytest.raises(EvaluationFailure, match="matcher for tool 'search' raised KeyError"):
        TrajectoryMatch(tool_args_match_overrides={"search": needs_query})(
            outputs=outputs, reference_outputs=outputs
        )
    recorded = TrajectoryMatch(
        tool_args_match_overrides={"search": needs_query}, on_error="record"
    ).invoke({"outputs": outputs, "reference_outputs": outputs})
    assert (recorded.outcome, recorded.error_code) == ("failed", "evaluator_error")


@pytest.mark.parametrize(
    "override",
    ["fuzzy", [], ["a", ""], 42],
)
def test_invalid_overrides_fail_at_construction(override):
    with pytest.raises(ValueError, match="tool_args_match_overrides"):
        TrajectoryMatch(tool_args_match_overrides={"t": override})


def test_invalid_modes_fail_at_construction():
    with pytest.raises(ValueError, match="mode"):
        TrajectoryMatch(mode="fuzzy")
    with pytest.raises(ValueError, match="tool_args_match_mode"):
        TrajectoryMatch(tool_args_match_mode="fuzzy")


# --- explanations and metrics --------------------------------------------------------------


def test_failing_result_names_the_closest_call_and_the_differing_argument():
    reference = [ai(("book", {"city": "Paris", "nights": 2, "room": "double"}))]
    outputs = [
        ai(
            ("book", {"city": "Paris", "nights": 3, "room": "double"}),
            ("book", {"city": "Rome", "nights": 1, "room": "single"}),
        )
    ]
    result = score("superset", outputs, reference)
    assert result.score is False
    assert (
        'closest agent call book(city="Paris", nights=3, room="double") (messages[0]) differs in nights: expected 2, got 3'
        in result.comment
    )
    problem = result.metadata["problems"][0]
    assert problem["kind"] == "missing_call"
    assert problem["call"] == {
        "index": 0,
        "message": 0,
        "name": "book",
        "args": {"city": "Paris", "nights": 2, "room": "double"},
    }
    assert problem["closest"]["index"] == 0
    assert problem["closest"]["differences"] == [{"argument": "nights", "expected": 2, "got": 3}]
    assert problem["closest"]["paired_with"] is None


def test_missing_argument_is_left_out_of_the_difference():
    result = score("unordered", [ai(("t", {"a": 1}))], [ai(("t", {"a": 1, "b": 2}))])
    assert result.metadata["problems"][0]["closest"]["differences"] == [
        {"argument": "b", "expected": 2}
    ]
    assert "b: expected 2, got missing" in result.comment


def test_comment_lists_five_problems_then_points_to_metadata():
    result = score("superset", [], [ai(("t", {"n": n})) for n in range(7)])
    assert len(result.metadata["problems"]) == 7
    assert result.comment.endswith("- ... and 2 more (see metadata['problems'])")


def test_precision_and_recall():
    result = score(
        "superset", [ai(PARIS), ai(TIME), ai(LONDON), ai(("x", {}))], [ai(PARIS), ai(LONDON)]
    )
    assert result.score is True
    assert result.comment is None
    assert result.metadata == {
        "precision": 0.5,
        "recall": 1.0,
        "agent_tool_calls": 4,
        "reference_tool_calls": 2,
    }
    empty = score("strict", [], [])
    assert (empty.metadata["precision"], empty.metadata["recall"]) == (1.0, 1.0)


# --- inputs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape",
    [
        lambda messages: messages,
        lambda messages: to_openai_messages(messages),
        lambda messages: {"messages": messages},
        lambda messages: {"messages": to_openai_messages(messages), "user_id": "u1", "step": 3},
        lambda messages: [m.model_dump() for m in messages],
        lambda messages: tuple(messages),
    ],
    ids=["langchain", "openai", "messages-dict", "state", "langchain-dicts", "tuple"],
)
def test_every_input_shape_reads_the_same(shape):
    reference = [USER, ai(PARIS, LONDON), ToolMessage("sunny", tool_call_id="call_0")]
    for mode in ("strict", "unordered", "in_order"):
        assert score(mode, shape(reference), reference).score is True
        assert score(mode, reference, shape(reference)).score is True


def test_irregular_messages_go_through_the_core():
    chunk = AIMessageChunk(
        content="",
        tool_call_chunks=[{"name": "weather", "args": '{"city": "Paris"}', "id": "1", "index": 0}],
    )
    developer = {"role": "developer", "content": "be brief"}
    outputs = [SystemMessage("sys"), developer, chunk]
    reference = [
        {"role": "system", "content": "x"},
        {"role": "developer", "content": "y"},
        ai(PARIS),
    ]
    assert score("strict", outputs, reference).score is True


def test_malformed_arguments_name_the_side_message_and_tool():
    bad = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "1",
                "type": "function",
                "function": {"name": "weather", "arguments": "{city: Paris}"},
            }
        ],
    }
    with pytest.raises(
        MessageFormatError, match=r"outputs: messages\[1\]: tool_calls\[0\] \(tool 'weather'\)"
    ):
        TrajectoryMatch()(outputs=[USER, bad], reference_outputs=[])
    invalid = AIMessage(
        "", invalid_tool_calls=[{"name": "weather", "args": "{oops", "id": "1", "error": None}]
    )
    with pytest.raises(MessageFormatError, match=r"reference_outputs: messages\[0\].*'weather'"):
        TrajectoryMatch()(outputs=[], reference_outputs=[invalid])


def test_not_a_trajectory():
    with pytest.raises(MessageFormatError, match="outputs: expected a message list"):
        TrajectoryMatch()(outputs="hello", reference_outputs=[])
    with pytest.raises(MessageFormatError, match=r'outputs: state\["messages"\] must be a list'):
        TrajectoryMatch()(outputs={"messages": "hi"}, reference_outputs=[])
    with pytest.raises(MessageFormatError, match="unknown role"):
        TrajectoryMatch()(outputs=[{"role": "robot", "content": ""}], reference_outputs=[])


def test_missing_outputs_or_reference_raise_input_errors():
    with pytest.raises(EvaluatorInputError, match="reference_outputs is None"):
        TrajectoryMatch()(outputs=[USER])
    with pytest.raises(EvaluatorInputError, match="outputs is None"):
        TrajectoryMatch().invoke({"reference_outputs": [USER]})


async def test_async_and_batch_paths():
    ev = TrajectoryMatch(mode="unordered")
    assert (await ev.acall(outputs=[ai(PARIS)], reference_outputs=[ai(PARIS)]))["score"] is True
    results = await ev.abatch(
        [EvalRequest(outputs=[ai(PARIS)], reference_outputs=[ai(x)]) for x in (PARIS, LONDON)]
    )
    assert [r.score for r in results] == [True, False]
