"""compat trajectory functions side by side with OpenEvals 0.2.2's own.

The first part runs both on cases written from OpenEvals' documented behaviour and expects
the same key and score. The second part reproduces each documented deviation minimally,
showing OpenEvals' answer and ours.
"""

import inspect
import json
import math
import warnings

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from openevals.trajectory import match as oe_match
from openevals.trajectory import strict as oe_strict
from openevals.trajectory import subset as oe_subset
from openevals.trajectory import superset as oe_superset
from openevals.trajectory import unordered as oe_unordered

from langchain_evals_port.compat import _openevals_trajectory as compat
from langchain_evals_port.core.errors import EvaluatorInputError, MessageFormatError


def ai(*calls):
    return AIMessage(
        "", tool_calls=[{"name": n, "args": a, "id": f"c{i}"} for i, (n, a) in enumerate(calls)]
    )


def both(mode, outputs, reference, explain=False, **options):
    theirs = oe_match.create_trajectory_match_evaluator(trajectory_match_mode=mode, **options)
    ours = compat.create_trajectory_match_evaluator(
        trajectory_match_mode=mode, explain=explain, **options
    )
    return (
        theirs(outputs=outputs, reference_outputs=reference),
        ours(outputs=outputs, reference_outputs=reference),
    )


USER = HumanMessage("What is the weather in SF?")
SF = ("get_weather", {"city": "San Francisco"})
NYC = ("get_weather", {"city": "New York"})
DIRECTIONS = ("get_directions", {"destination": "Presidio"})
REFERENCE = [
    USER,
    ai(SF),
    ToolMessage("80 degrees", tool_call_id="c0"),
    AIMessage("80 degrees and sunny."),
]

CASES = [
    # (name, mode, outputs, options)
    ("identical", "strict", REFERENCE, {}),
    (
        "content ignored",
        "strict",
        [USER, ai(SF), ToolMessage("cold", tool_call_id="c0"), AIMessage("Cold.")],
        {},
    ),
    (
        "other city",
        "strict",
        [USER, ai(NYC), ToolMessage("x", tool_call_id="c0"), AIMessage("x")],
        {},
    ),
    (
        "other city, args ignored",
        "strict",
        [USER, ai(NYC), ToolMessage("x", tool_call_id="c0"), AIMessage("x")],
        {"tool_args_match_mode": "ignore"},
    ),
    ("extra message", "strict", [*REFERENCE, AIMessage("anything else?")], {}),
    (
        "role swap",
        "strict",
        [USER, AIMessage("thinking"), ToolMessage("x", tool_call_id="c0"), AIMessage("x")],
        {},
    ),
    (
        "two calls in one message",
        "strict",
        [USER, ai(SF, DIRECTIONS), ToolMessage("x", tool_call_id="c0"), AIMessage("x")],
        {},
    ),
    ("unordered same", "unordered", [USER, ai(SF), AIMessage("done")], {}),
    ("unordered extra", "unordered", [USER, ai(DIRECTIONS), ai(SF)], {}),
    ("subset fewer", "subset", [USER, AIMessage("no tools")], {}),
    ("subset extra", "subset", [USER, ai(SF), ai(DIRECTIONS)], {}),
    ("superset extra", "superset", [USER, ai(DIRECTIONS), ai(SF)], {}),
    ("superset fewer", "superset", [USER, AIMessage("no tools")], {}),
    (
        "superset args",
        "superset",
        [USER, ai(("get_weather", {"city": "San Francisco", "units": "F"}))],
        {"tool_args_match_mode": "superset"},
    ),
    ("subset args", "subset", [USER, ai(("get_weather", {}))], {"tool_args_match_mode": "subset"}),
    (
        "subset args extra key",
        "subset",
        [USER, ai(("get_weather", {"city": "San Francisco", "units": "F"}))],
        {"tool_args_match_mode": "subset"},
    ),
    (
        "override mode",
        "strict",
        [USER, ai(NYC), ToolMessage("x", tool_call_id="c0"), AIMessage("x")],
        {"tool_args_match_overrides": {"get_weather": "ignore"}},
    ),
    (
        "override paths",
        "unordered",
        [USER, ai(("get_weather", {"city": "San Francisco", "units": "F"}))],
        {"tool_args_match_overrides": {"get_weather": ["city"]}},
    ),
    (
        "override missing path",
        "unordered",
        [USER, ai(SF)],
        {"tool_args_match_overrides": {"get_weather": ["units"]}},
    ),
    (
        "override callable",
        "unordered",
        [USER, ai(("get_weather", {"city": "san francisco"}))],
        {
            "tool_args_match_overrides": {
                "get_weather": lambda a, e: a["city"].lower() == e["city"].lower()
            }
        },
    ),
    ("one and one point zero", "unordered", [USER, ai(("t", {"n": 1}))], {}),
    ("NaN from JSON", "unordered", [USER, ai(("t", {"n": math.nan}))], {}),
    (
        "tool message without tool_call_id",
        "strict",
        [USER, ai(SF), {"role": "tool", "content": "x"}, AIMessage("x")],
        {},
    ),
]


@pytest.mark.parametrize(("name", "mode", "outputs", "options"), CASES, ids=[c[0] for c in CASES])
def test_same_key_and_score_as_openevals(name, mode, outputs, options):
    reference = {
        "one and one point zero": [USER, ai(("t", {"n": 1.0}))],
        # OpenEvals parses arguments from JSON, whose NaN is one shared object: NaN equals NaN
        "NaN from JSON": [USER, ai(("t", {"n": math.nan}))],
    }.get(name, REFERENCE)
    theirs, ours = both(mode, outputs, reference, **options)
    assert (ours["key"], ours["score"]) == (theirs["key"], theirs["score"])


@pytest.mark.parametrize("shape", ["dicts", "state"])
def test_same_results_on_openai_dicts_and_agent_states(shape):
    from langchain_evals_port.core import to_openai_messages

    outputs = to_openai_messages([USER, ai(DIRECTIONS), ai(SF)])
    reference = to_openai_messages(REFERENCE)
    if shape == "state":
        outputs, reference = {"messages": outputs, "thread": "t1"}, {"messages": reference}
    for mode in ("strict", "unordered", "subset", "superset"):
        theirs, ours = both(mode, outputs, reference)
        assert (ours["key"], ours["score"]) == (theirs["key"], theirs["score"])


async def test_async_factories_agree():
    theirs = oe_match.create_async_trajectory_match_evaluator(trajectory_match_mode="superset")
    ours = compat.create_async_trajectory_match_evaluator(trajectory_match_mode="superset")
    outputs = [USER, ai(DIRECTIONS), ai(SF)]
    mine = await ours(outputs=outputs, reference_outputs=REFERENCE)
    assert (mine["key"], mine["score"]) == ("trajectory_superset_match", True)
    assert (await theirs(outputs=outputs, reference_outputs=REFERENCE))["score"] is True
    assert ours.__name__ == "trajectory_superset_match"


DEPRECATED = [
    ("trajectory_strict_match", oe_strict.trajectory_strict_match, {}),
    (
        "trajectory_strict_match",
        oe_strict.trajectory_strict_match,
        {"tool_call_args_exact_match": False},
    ),
    ("trajectory_unordered_match", oe_unordered.trajectory_unordered_match, {}),
    ("trajectory_subset", oe_subset.trajectory_subset, {}),
    ("trajectory_superset", oe_superset.trajectory_superset, {}),
]


@pytest.mark.parametrize(("name", "theirs", "options"), DEPRECATED)
@pytest.mark.parametrize(
    "outputs",
    [
        [USER, ai(NYC), ToolMessage("x", tool_call_id="c0"), AIMessage("x")],
        [USER, ai(DIRECTIONS)],
        [USER, ai(SF, DIRECTIONS)],
    ],
)
async def test_deprecated_functions_agree_and_warn(name, theirs, options, outputs):
    ours = getattr(compat, name)
    with pytest.warns(DeprecationWarning, match="deprecated"):
        expected = theirs(outputs=outputs, reference_outputs=REFERENCE, **options)
    with pytest.warns(DeprecationWarning, match=name):
        got = ours(outputs=outputs, reference_outputs=REFERENCE, **options)
    with pytest.warns(DeprecationWarning, match=f"{name}_async"):
        got_async = await getattr(compat, f"{name}_async")(
            outputs=outputs, reference_outputs=REFERENCE, **options
        )
    assert (got["key"], got["score"]) == (expected["key"], expected["score"])
    assert (got_async["key"], got_async["score"]) == (expected["key"], expected["score"])


def test_signatures_match_openevals():
    pairs = [
        (compat.create_trajectory_match_evaluator, oe_match.create_trajectory_match_evaluator),
        (
            compat.create_async_trajectory_match_evaluator,
            oe_match.create_async_trajectory_match_evaluator,
        ),
        (compat.trajectory_strict_match, oe_strict.trajectory_strict_match),
        (compat.trajectory_strict_match_async, oe_strict.trajectory_strict_match_async),
        (compat.trajectory_unordered_match, oe_unordered.trajectory_unordered_match),
        (compat.trajectory_subset, oe_subset.trajectory_subset),
        (compat.trajectory_superset_async, oe_superset.trajectory_superset_async),
    ]
    from openevals.trajectory import llm as oe_llm

    pairs += [
        (compat.create_trajectory_llm_as_judge, oe_llm.create_trajectory_llm_as_judge),
        (compat.create_async_trajectory_llm_as_judge, oe_llm.create_async_trajectory_llm_as_judge),
    ]
    for ours, theirs in pairs:
        # compat's own opt-in (explain=) comes after OpenEvals' parameters.
        ours_params = {
            name: p for name, p in inspect.signature(ours).parameters.items() if name != "explain"
        }
        theirs_params = inspect.signature(theirs).parameters
        assert list(ours_params) == list(theirs_params), ours.__name__
        assert [p.kind for p in ours_params.values()] == [p.kind for p in theirs_params.values()]
        assert inspect.iscoroutinefunction(ours) == inspect.iscoroutinefunction(theirs)


def test_invalid_modes_raise_value_error_like_openevals():
    for factory in (
        compat.create_trajectory_match_evaluator,
        oe_match.create_trajectory_match_evaluator,
    ):
        with pytest.raises(ValueError, match="Invalid trajectory match type"):
            factory(trajectory_match_mode="fuzzy")
        with pytest.raises(ValueError, match="Invalid tool args match mode"):
            factory(tool_args_match_mode="fuzzy")


# --- deviations: each documented in PARITY.md -----------------------------------------------


def test_deviation_maximum_matching_instead_of_first_fit():
    reference = [ai(("A", {"x": 1}), ("A", {"x": 1, "y": 2}))]
    outputs = [ai(("A", {"x": 1, "y": 2}), ("A", {"x": 1}))]
    for mode in ("strict", "unordered", "superset"):
        theirs, ours = both(mode, outputs, reference, tool_args_match_mode="superset")
        assert theirs["score"] is False
        assert ours["score"] is True


def test_deviation_true_is_not_one():
    theirs, ours = both("unordered", [ai(("t", {"flag": True}))], [ai(("t", {"flag": 1}))])
    assert theirs["score"] is True
    assert ours["score"] is False


def test_deviation_missing_trajectory_raises():
    theirs = oe_match.create_trajectory_match_evaluator()(outputs=None, reference_outputs=[])
    assert theirs["score"] is True  # None is read as an empty trajectory
    with pytest.raises(EvaluatorInputError, match="outputs is None"):
        compat.create_trajectory_match_evaluator()(outputs=None, reference_outputs=[])


def test_deviation_empty_path_list_is_rejected():
    theirs = oe_match.create_trajectory_match_evaluator(tool_args_match_overrides={"t": []})
    # OpenEvals treats [] as "no override", so the default (exact) decides
    assert (
        theirs(outputs=[ai(("t", {"x": 1}))], reference_outputs=[ai(("t", {"x": 2}))])["score"]
        is False
    )
    with pytest.raises(ValueError, match="must name at least one dotted argument path"):
        compat.create_trajectory_match_evaluator(tool_args_match_overrides={"t": []})


def test_deviation_invalid_override_fails_at_creation():
    theirs = oe_match.create_trajectory_match_evaluator(tool_args_match_overrides={"t": 42})
    with pytest.raises(ValueError, match="Invalid tool args match override"):
        theirs(outputs=[ai(("t", {}))], reference_outputs=[ai(("t", {}))])
    with pytest.raises(ValueError, match="tool_args_match_overrides"):
        compat.create_trajectory_match_evaluator(tool_args_match_overrides={"t": 42})


def test_deviation_malformed_arguments_raise_message_format_error():
    bad = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "1", "type": "function", "function": {"name": "t", "arguments": "{oops"}}
        ],
    }
    with pytest.raises(json.JSONDecodeError, match="property name"):  # names no message or tool
        oe_match.create_trajectory_match_evaluator()(outputs=[bad], reference_outputs=[])
    with pytest.raises(
        MessageFormatError, match=r"outputs: messages\[0\]: tool_calls\[0\] \(tool 't'\)"
    ):
        compat.create_trajectory_match_evaluator()(outputs=[bad], reference_outputs=[])


def test_deviation_failing_results_explain_themselves_when_asked():
    theirs, ours = both("superset", [USER, ai(NYC)], REFERENCE)
    assert (
        ours
        == theirs
        == {
            "key": "trajectory_superset_match",
            "score": False,
            "comment": None,
            "metadata": None,
        }
    )
    _, explained = both("superset", [USER, ai(NYC)], REFERENCE, explain=True)
    assert explained["score"] is False
    assert "differs in city" in explained["comment"]
    assert explained["metadata"]["recall"] == 0.0
    # A passing result is OpenEvals' own: no comment, no metadata.
    for mode in ("strict", "unordered", "subset", "superset"):
        theirs, passing = both(mode, REFERENCE, REFERENCE)
        assert (
            passing
            == theirs
            == {
                "key": f"trajectory_{mode}_match",
                "score": True,
                "comment": None,
                "metadata": None,
            }
        )


def test_no_warning_from_the_factories():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compat.create_trajectory_match_evaluator()(outputs=REFERENCE, reference_outputs=REFERENCE)
