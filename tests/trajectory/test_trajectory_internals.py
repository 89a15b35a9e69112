"""Properties of the machinery under TrajectoryMatch, each against a slow, obvious oracle."""

import datetime
import enum
import itertools
import json
from collections import OrderedDict
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from langchain_evals_port.core import canonical_equal, to_openai_messages
from langchain_evals_port.trajectory import TrajectoryMatch
from langchain_evals_port.trajectory._calls import read_trajectory, value_key
from langchain_evals_port.trajectory._pairing import maximum_matching

# --- maximum matching ----------------------------------------------------------------------

graphs = st.integers(0, 6).flatmap(
    lambda right: st.lists(
        st.lists(st.integers(0, right - 1), unique=True) if right else st.just([]), max_size=6
    ).map(lambda adjacency: (right, adjacency))
)


def brute_force_size(right_size, adjacency):
    best = 0
    for order in itertools.permutations(range(right_size), min(right_size, len(adjacency))):
        # left i may take order[i]; count the lefts whose pick is an edge
        best = max(best, sum(1 for i, r in enumerate(order) if r in adjacency[i]))
    for k in range(len(adjacency) + 1):  # fewer rights than lefts: choose which lefts play
        for lefts in itertools.combinations(range(len(adjacency)), k):
            for rights in itertools.permutations(range(right_size), k):
                if all(r in adjacency[left] for left, r in zip(lefts, rights, strict=True)):
                    best = max(best, k)
    return best


@settings(max_examples=200, deadline=None)
@given(graphs)
def test_maximum_matching_is_a_matching_of_maximum_size(graph):
    right_size, adjacency = graph
    mates = maximum_matching(len(adjacency), right_size, adjacency.__getitem__)
    paired = [(left, right) for left, right in enumerate(mates) if right is not None]
    assert all(right in adjacency[left] for left, right in paired)
    assert len({right for _, right in paired}) == len(paired)
    assert len(paired) == brute_force_size(right_size, adjacency)


def test_long_augmenting_paths_do_not_recurse():
    # a chain where first fit is wrong at every step: the augmenting path is n long
    n = 3000
    adjacency = [[i, i + 1] if i + 1 < n else [i] for i in range(n)]
    adjacency = [list(reversed(row)) for row in adjacency]
    mates = maximum_matching(n, n, adjacency.__getitem__)
    assert None not in mates


# --- argument keys -------------------------------------------------------------------------


class Colour(enum.Enum):
    RED = "red"


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([1.0, 0.0, -0.0, 1.5, float("nan"), float("inf"), 2.0**60]),
    st.sampled_from(["", "a", "1", "true", "red", "2020-01-01"]),
    st.sampled_from([Decimal("1"), Colour.RED, datetime.date(2020, 1, 1)]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.sampled_from(["a", "b", "content"]), inner, max_size=3),
        # dicts the rule may read as chat messages (ids ignored) or not (an unknown role)
        st.fixed_dictionaries(
            {"role": st.sampled_from(["user", "admin"]), "content": st.sampled_from(["hi", ""])},
            optional={"id": st.sampled_from(["1", "2"])},
        ),
        st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2).map(OrderedDict),
        st.frozensets(st.sampled_from([1, 2, "a"]), max_size=2),
    ),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None)
@given(values, values)
def test_value_key_agrees_with_canonical_equality(left, right):
    assert (value_key(left) == value_key(right)) == canonical_equal(left, right)


def test_value_key_examples():
    assert value_key({"role": "user", "content": "hi", "id": "1"}) == value_key(
        {"role": "user", "content": "hi"}
    )
    assert value_key({1: "a"}) == value_key({"1": "a"})
    assert value_key(frozenset({2, 1})) == value_key([1, 2])


# --- reading -------------------------------------------------------------------------------

calls = st.lists(
    st.tuples(
        st.sampled_from(["a", "b"]),
        st.dictionaries(st.sampled_from(["x", "y"]), st.integers(0, 2), max_size=2),
    ),
    max_size=2,
)
message_lists = st.lists(
    st.one_of(
        st.just(HumanMessage("hi")),
        st.just(ToolMessage("ok", tool_call_id="t")),
        calls.map(
            lambda cs: AIMessage(
                "",
                tool_calls=[{"name": n, "args": a, "id": f"c{i}"} for i, (n, a) in enumerate(cs)],
            )
        ),
    ),
    max_size=5,
)


@settings(max_examples=100, deadline=None)
@given(message_lists, st.sampled_from(["langchain", "openai", "langchain-dicts", "flat-calls"]))
def test_reading_agrees_with_the_core(messages, shape):
    if shape == "openai":
        value = to_openai_messages(messages)
    elif shape == "langchain-dicts":
        value = [m.model_dump() for m in messages]
    elif shape == "flat-calls":
        value = [
            {
                "role": m["role"],
                "content": m["content"],
                **(
                    {
                        "tool_calls": [
                            {
                                "name": c["function"]["name"],
                                "args": json.loads(c["function"]["arguments"]),
                            }
                            for c in m["tool_calls"]
                        ]
                    }
                    if "tool_calls" in m
                    else {}
                ),
            }
            | ({"tool_call_id": m["tool_call_id"]} if "tool_call_id" in m else {})
            for m in to_openai_messages(messages)
        ]
    else:
        value = messages
    core = to_openai_messages(value)
    trajectory = read_trajectory(value, "outputs")
    assert trajectory.roles == tuple(m["role"] for m in core)
    assert [(c.message, c.name, c.args) for c in trajectory.calls] == [
        (i, call["function"]["name"], json.loads(call["function"]["arguments"]))
        for i, m in enumerate(core)
        for call in m.get("tool_calls", [])
    ]


# --- in order against an exhaustive search -------------------------------------------------

steps = st.lists(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=2), max_size=3)


def ai(names):
    return AIMessage(
        "", tool_calls=[{"name": n, "args": {}, "id": f"c{i}"} for i, n in enumerate(names)]
    )


def in_order_by_search(agent_steps, reference_steps):
    """Exhaustive: assign each reference call to a distinct agent call of the same tool so
    that every call of reference step k lies in an agent message after every call of step k-1."""
    agent = [(m, name) for m, names in enumerate(agent_steps) for name in names]
    reference = [(k, name) for k, names in enumerate(reference_steps) for name in names]
    for choice in itertools.permutations(range(len(agent)), len(reference)):
        if any(agent[a][1] != name for a, (_, name) in zip(choice, reference, strict=True)):
            continue
        placed = [(k, agent[a][0]) for a, (k, _) in zip(choice, reference, strict=True)]
        if all(m1 < m2 for (k1, m1), (k2, m2) in itertools.product(placed, placed) if k1 < k2):
            return True
    return False


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=2), max_size=4), steps
)
def test_in_order_finds_a_placement_whenever_one_exists(agent_steps, reference_steps):
    result = TrajectoryMatch(mode="in_order")(
        outputs=[ai(names) for names in agent_steps],
        reference_outputs=[ai(names) for names in reference_steps],
    )
    assert result["score"] is in_order_by_search(agent_steps, reference_steps)
