"""Differential test: compat trajectory match against OpenEvals 0.2.2 on random trajectories.

Both run on the same random trajectories, modes and argument rules and must give the same
key and score, except where exactly one of the documented deviations explains the
difference; each is decided by a predicate computed without our implementation:

* first fit: OpenEvals (with the canonical equality rule) says no, but a pairing that the
  mode needs exists (found by SciPy's maximum bipartite matching);
* ``True`` is not ``1``: OpenEvals' answer changes when its argument comparisons use the
  canonical equality rule instead of Python's ``==``.

Independently of OpenEvals, our score must always equal that SciPy oracle's.
"""

import os
from unittest import mock

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from openevals.trajectory import utils as oe_utils
from openevals.trajectory.match import create_trajectory_match_evaluator as oe_create
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching

from langchain_evals_port.compat._openevals_trajectory import create_trajectory_match_evaluator
from langchain_evals_port.core import MISSING, canonical_equal, get_path, to_openai_messages

# --- random trajectories -------------------------------------------------------------------

# Mostly a few common values, so that calls often match, contain one another and collide
# under first fit; the rest reach the equality rule's corners.
COMMON = [1, "s"]
RARE = [0, 1.0, True, False, None, [1], [1.0, "s"], {"k": 1}, {"k": True}]
values = st.one_of(st.sampled_from(COMMON), st.sampled_from(COMMON), st.sampled_from(RARE))
args = st.dictionaries(st.sampled_from(["x", "y"]), values, max_size=2)
calls = st.lists(st.tuples(st.sampled_from(["a", "b"]), args), min_size=1, max_size=3)
step = st.one_of(calls, calls, st.sampled_from(["user", "final"]))
trajectories = st.lists(step, min_size=1, max_size=4)


def to_messages(steps):
    messages = [HumanMessage("go")]
    for number, item in enumerate(steps):
        if item == "user":
            messages.append(HumanMessage("more"))
        elif item == "final":
            messages.append(AIMessage("done"))
        else:
            ids = [f"c{number}_{i}" for i in range(len(item))]
            messages.append(
                AIMessage(
                    "",
                    tool_calls=[
                        {"name": n, "args": a, "id": i} for (n, a), i in zip(item, ids, strict=True)
                    ],
                )
            )
            messages += [ToolMessage("ok", tool_call_id=i) for i in ids]
    return messages


def mutate(steps, data):
    """A reference close to ``steps``: the same, or with one change, so that many cases pass."""
    steps = [list(s) if isinstance(s, list) else s for s in steps]
    change = data.draw(
        st.sampled_from(["same", "shuffle", "shuffle", "drop", "add", "edit", "other"])
    )
    tool_steps = [s for s in steps if isinstance(s, list)]
    if change == "other" or not tool_steps:
        return data.draw(trajectories)
    target = data.draw(st.sampled_from(tool_steps))
    if change == "shuffle":
        target.reverse()
    elif change == "drop" and len(target) > 1:
        target.pop(data.draw(st.integers(0, len(target) - 1)))
    elif change == "add":
        target.append(data.draw(st.tuples(st.sampled_from(["a", "b"]), args)))
    elif change == "edit":
        name, old = target[0]
        target[0] = (name, {**old, **data.draw(args)})
    return steps


def same_x(actual, expected):
    return actual.get("x") == expected.get("x")


def at_least_as_many(actual, expected):
    return len(actual) >= len(expected)


OVERRIDES = ["exact", "ignore", "subset", "superset", ["x"], ["x.k"], same_x, at_least_as_many]


# --- the oracle: the mode's requirement, decided by SciPy ----------------------------------


def canonical_rule(mode_or_override):
    """Argument comparison of OpenEvals' rule ``mode_or_override``, written anew on the
    canonical equality rule (custom matchers are the caller's, unchanged)."""
    if callable(mode_or_override):
        return mode_or_override
    if isinstance(mode_or_override, list):

        def paths(actual, expected):
            for path in mode_or_override:
                got, want = get_path(actual, path), get_path(expected, path)
                if got is MISSING or want is MISSING or not canonical_equal(got, want):
                    return False
            return True

        return paths
    return {
        "exact": canonical_equal,
        "ignore": lambda actual, expected: True,
        "subset": lambda a, e: all(k in e and canonical_equal(v, e[k]) for k, v in a.items()),
        "superset": lambda a, e: all(k in a and canonical_equal(a[k], v) for k, v in e.items()),
    }[mode_or_override]


def matched_count(agent_calls, reference_calls, args_mode, overrides):
    if not agent_calls or not reference_calls:
        return 0
    grid = np.zeros((len(agent_calls), len(reference_calls)), dtype=np.int8)
    for i, actual in enumerate(agent_calls):
        for j, expected in enumerate(reference_calls):
            if actual["name"] == expected["name"]:
                rule = canonical_rule((overrides or {}).get(actual["name"], args_mode))
                grid[i, j] = bool(rule(actual["args"], expected["args"]))
    mates = maximum_bipartite_matching(csr_matrix(grid), perm_type="column")
    return int((mates >= 0).sum())


def requirement_met(mode, outputs, reference, args_mode, overrides):
    agent = oe_utils._normalize_to_openai_messages_list(outputs)
    expected = oe_utils._normalize_to_openai_messages_list(reference)
    if mode == "strict":
        if len(agent) != len(expected):
            return False
        for mine, theirs in zip(agent, expected, strict=True):
            if mine["role"] != theirs["role"]:
                return False
            mine_calls = oe_utils._extract_tool_calls([mine])
            theirs_calls = oe_utils._extract_tool_calls([theirs])
            if len(mine_calls) != len(theirs_calls):
                return False
            if matched_count(mine_calls, theirs_calls, args_mode, overrides) != len(mine_calls):
                return False
        return True
    agent_calls, reference_calls = (
        oe_utils._extract_tool_calls(agent),
        oe_utils._extract_tool_calls(expected),
    )
    size = matched_count(agent_calls, reference_calls, args_mode, overrides)
    needed = {
        "unordered": size == len(agent_calls) == len(reference_calls),
        "subset": size == len(agent_calls),
        "superset": size == len(reference_calls),
    }
    return needed[mode]


def openevals_with_canonical_equality(evaluate):
    with (
        mock.patch.object(oe_utils, "_exact_match", canonical_rule("exact")),
        mock.patch.object(oe_utils, "_subset_match", canonical_rule("subset")),
        mock.patch.object(oe_utils, "_superset_match", canonical_rule("superset")),
        mock.patch.object(oe_utils, "_get_partial_matcher_on_keys", canonical_rule),
    ):
        return evaluate()


def check_case(outputs, reference, options):
    """Run both and return why they agree or differ; fail on an unexplained difference."""
    oe_evaluator = oe_create(**options)
    theirs = oe_evaluator(outputs=outputs, reference_outputs=reference)
    ours = create_trajectory_match_evaluator(**options)(
        outputs=outputs, reference_outputs=reference
    )
    assert ours["key"] == theirs["key"]

    met = requirement_met(
        options["trajectory_match_mode"],
        outputs,
        reference,
        options["tool_args_match_mode"],
        options["tool_args_match_overrides"],
    )
    assert ours["score"] is met

    if ours["score"] == theirs["score"]:
        return "agree"
    theirs_canonical = openevals_with_canonical_equality(
        lambda: oe_evaluator(outputs=outputs, reference_outputs=reference)["score"]
    )
    if theirs_canonical != theirs["score"]:
        return "True is not 1"
    assert theirs_canonical is False, (theirs, ours)
    assert met
    return "first fit"


@settings(max_examples=int(os.environ.get("DIFFERENTIAL_EXAMPLES", "200")), deadline=None)
@given(
    st.data(),
    trajectories,
    st.sampled_from(["strict", "unordered", "subset", "superset"]),
    st.sampled_from(["exact", "ignore", "subset", "superset"]),
    st.one_of(st.none(), st.fixed_dictionaries({"a": st.sampled_from(OVERRIDES)})),
    st.booleans(),
)
def test_same_key_and_score_as_openevals_except_documented_deviations(
    data, steps, mode, args_mode, overrides, as_dicts
):
    outputs, reference = to_messages(steps), to_messages(mutate(steps, data))
    if as_dicts:
        outputs, reference = to_openai_messages(outputs), to_openai_messages(reference)
    options = {
        "trajectory_match_mode": mode,
        "tool_args_match_mode": args_mode,
        "tool_args_match_overrides": overrides,
    }
    event(check_case(outputs, reference, options))


@pytest.mark.parametrize(
    ("outputs", "reference", "args_mode", "expected"),
    [
        (
            [[("a", {"x": 1, "y": 2}), ("a", {"x": 1})]],
            [[("a", {"x": 1}), ("a", {"x": 1, "y": 2})]],
            "superset",
            "first fit",
        ),
        ([[("a", {"x": True})]], [[("a", {"x": 1})]], "exact", "True is not 1"),
        ([[("a", {"x": 1})]], [[("a", {"x": 1.0})]], "exact", "agree"),
    ],
)
def test_the_predicates_explain_the_minimal_reproductions(outputs, reference, args_mode, expected):
    options = {
        "trajectory_match_mode": "unordered",
        "tool_args_match_mode": args_mode,
        "tool_args_match_overrides": None,
    }
    assert check_case(to_messages(outputs), to_messages(reference), options) == expected
