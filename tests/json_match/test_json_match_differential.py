"""Differential tests: OpenEvals' create_json_match_evaluator and ours on the same random
objects and lists of objects, compared key by key, except where PARITY.md says we differ."""

from __future__ import annotations

import asyncio

from hypothesis import assume, event, given, settings
from hypothesis import strategies as st
from openevals.json import create_json_match_evaluator as oe_create_json_match_evaluator
from openevals_oracle import Case, deviations, same_score

from langchain_evals_port.compat._openevals_json import (
    create_async_json_match_evaluator,
    create_json_match_evaluator,
)

KEYS = st.sampled_from(["a", "b", "c", "a_1", ""])
# Few values, so that equal values (and the pairing decisions they drive) are common; the
# booleans and NaN exercise the equality rule's documented difference.
SCALARS = st.sampled_from([0, 1, 2, 1.0, 2.5, None, "x", "y", "x", 1, 0, True, float("nan")])
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from("pq"), inner),
    max_leaves=3,
)
OBJECTS = st.dictionaries(KEYS, VALUES, max_size=3)


@st.composite
def cases(draw: st.DrawFn) -> Case:
    if draw(st.booleans()):
        outputs, reference = draw(OBJECTS), draw(OBJECTS)
    else:
        outputs = draw(st.lists(OBJECTS, max_size=4))
        if draw(st.booleans()):
            reference = draw(st.lists(OBJECTS, max_size=4))
        else:
            # Shuffled outputs with some keys changed: pairs of similar objects, where
            # pairing decisions matter.
            reference = [
                {**item, **draw(st.dictionaries(KEYS, SCALARS, max_size=1))}
                for item in draw(st.permutations(outputs))
            ]
    return Case(
        outputs=outputs,
        reference=reference,
        aggregator=draw(st.sampled_from([None, "average", "all"])),
        list_aggregator=draw(st.sampled_from(["average", "all"])),
        mode=draw(st.sampled_from(["same_elements", "subset", "superset", "ordered"])),
        exclude=tuple(draw(st.lists(KEYS, unique=True, max_size=2))),
    )


def options(case: Case) -> dict:
    return {
        "aggregator": case.aggregator,
        "list_aggregator": case.list_aggregator,
        "list_match_mode": case.mode,
        "exclude_keys": list(case.exclude),
    }


def keys_and_scores(results) -> list[tuple[str, object]]:
    return [(r["key"], r["score"]) for r in results]


@settings(max_examples=200, deadline=None)
@given(cases())
def test_same_keys_and_scores_as_openevals_outside_documented_deviations(case: Case):
    applying = deviations(case)
    for name in applying:
        event(f"deviation: {name}")
    assume(not applying)
    theirs = keys_and_scores(
        oe_create_json_match_evaluator(**options(case))(
            outputs=case.outputs, reference_outputs=case.reference
        )
    )
    ours = keys_and_scores(
        create_json_match_evaluator(**options(case))(
            outputs=case.outputs, reference_outputs=case.reference
        )
    )
    assert [key for key, _ in ours] == [key for key, _ in theirs]
    assert all(same_score(a, b) for (_, a), (_, b) in zip(ours, theirs, strict=True)), (
        ours,
        theirs,
    )


@settings(max_examples=60, deadline=None)
@given(cases())
def test_async_factory_gives_the_sync_results(case: Case):
    sync = create_json_match_evaluator(**options(case))
    asynchronous = create_async_json_match_evaluator(**options(case))
    expected = sync(outputs=case.outputs, reference_outputs=case.reference)
    got = asyncio.run(asynchronous(outputs=case.outputs, reference_outputs=case.reference))
    assert keys_and_scores(got) == keys_and_scores(expected)
