"""Minimal reproductions of every documented difference from OpenEvals' JSON match, each
showing OpenEvals' answer and ours (PARITY.md has the table and the reasons)."""

from __future__ import annotations

import pytest
from openevals.json import (
    create_async_json_match_evaluator as oe_create_async_json_match_evaluator,
)
from openevals.json import create_json_match_evaluator as oe_create_json_match_evaluator
from openevals_oracle import Case, deviations

from langchain_evals_port.compat._openevals_json import (
    create_async_json_match_evaluator,
    create_json_match_evaluator,
)
from langchain_evals_port.core.errors import EvaluatorInputError


def theirs(outputs, reference_outputs, **options):
    evaluator = oe_create_json_match_evaluator(**options)
    results = evaluator(outputs=outputs, reference_outputs=reference_outputs)
    return [(r["key"], r["score"]) for r in results]


def ours(outputs, reference_outputs, **options):
    evaluator = create_json_match_evaluator(**options)
    results = evaluator(outputs=outputs, reference_outputs=reference_outputs)
    return [(r["key"], r["score"]) for r in results]


def case(
    outputs, reference, *, aggregator=None, list_aggregator="all", mode="same_elements", exclude=()
):
    return Case(outputs, reference, aggregator, list_aggregator, mode, tuple(exclude))


def test_greedy_pairing_is_replaced_by_an_optimal_one():
    outputs = [{"a": 1, "b": 1, "c": 0}, {"a": 1, "b": 1, "c": 1}]
    reference = [{"a": 1, "b": 1, "c": 1}, {"a": 1, "b": 9, "c": 0}]
    options = {"aggregator": "average", "list_aggregator": "average"}
    # Greedy: output 0 takes reference 0 (2 keys, first of a tie), leaving output 1 with
    # reference 1 (1 key): 3 keys agree. Optimal: 0↔1 (2 keys) and 1↔0 (3 keys): 5.
    assert theirs(outputs, reference, **options) == [("json_match:average", 0.5)]
    assert ours(outputs, reference, **options) == [("json_match:average", pytest.approx(5 / 6))]
    assert deviations(
        case(outputs, reference, aggregator="average", list_aggregator="average")
    ) == ["greedy_is_beaten"]


def test_true_and_1_differ_under_the_equality_rule():
    assert theirs({"a": True}, {"a": 1}) == [("json_match:a", 1)]
    assert ours({"a": True}, {"a": 1}) == [("json_match:a", 0.0)]
    assert deviations(case({"a": True}, {"a": 1})) == ["equality_differs"]


def test_nan_equals_nan_under_the_equality_rule():
    nan = float("nan")
    assert theirs({"a": nan}, {"a": nan}) == [("json_match:a", 0)]
    assert ours({"a": nan}, {"a": nan}) == [("json_match:a", 1.0)]
    assert deviations(case({"a": nan}, {"a": nan})) == ["equality_differs"]


def test_1_and_1_0_are_equal_in_both():
    # Not a deviation: OpenEvals compares values with ==, and 1 == 1.0.
    assert theirs({"a": 1}, {"a": 1.0}) == [("json_match:a", 1)]
    assert ours({"a": 1}, {"a": 1.0}) == [("json_match:a", 1.0)]
    assert deviations(case({"a": 1}, {"a": 1.0})) == []


@pytest.mark.parametrize(
    ("outputs", "reference", "options", "openevals_score"),
    [
        ({}, {}, {"aggregator": "average"}, 0),
        ([], [], {"aggregator": "average", "list_aggregator": "average"}, 0),
        ([{}], [{}], {"aggregator": "average", "list_aggregator": "average"}, 0),
        ({"id": 1}, {"id": 2}, {"aggregator": "average", "exclude_keys": ["id"]}, 0),
    ],
)
def test_an_average_over_nothing_is_1(outputs, reference, options, openevals_score):
    key = f"json_match:{options['aggregator']}"
    assert theirs(outputs, reference, **options) == [(key, openevals_score)]
    assert ours(outputs, reference, **options) == [(key, 1.0)]
    # "all" over nothing is 1 in both.
    every = {**options, "aggregator": "all", "list_aggregator": "all"}
    assert theirs(outputs, reference, **every) == [("json_match:all", 1)]
    assert ours(outputs, reference, **every) == [("json_match:all", 1.0)]


def test_nothing_to_compare_per_key_is_an_inconclusive_result():
    assert theirs({}, {}) == []
    [result] = create_json_match_evaluator()(outputs={}, reference_outputs={})
    assert result["key"] == "json_match"
    assert result["score"] is None
    assert result["metadata"]["outcome"] == "inconclusive"
    assert deviations(case({}, {})) == ["nothing_scored"]


async def test_a_key_absent_from_both_objects_of_a_row_is_not_scored_sync_or_async():
    same = [{"a": 1, "b": 2}, {"a": 1, "b": 2}, {"a": 1}]
    # OpenEvals' synchronous evaluator fills b's third row with 0, its async one does not.
    assert theirs(same, same) == [("json_match:a", 1), ("json_match:b", 0)]
    async_results = await oe_create_async_json_match_evaluator()(
        outputs=same, reference_outputs=same
    )
    assert [(r["key"], r["score"]) for r in async_results] == [
        ("json_match:a", 1),
        ("json_match:b", 1),
    ]
    expected = [("json_match:a", 1.0), ("json_match:b", 1.0)]
    assert ours(same, same) == expected
    ours_async = await create_async_json_match_evaluator()(outputs=same, reference_outputs=same)
    assert [(r["key"], r["score"]) for r in ours_async] == expected
    assert deviations(case(same, same)) == ["zero_filled"]


def test_the_empty_key_is_reported_once_across_list_rows():
    outputs, reference = [{"": 1}, {"": 1}], [{"": 1}, {"": 2}]
    assert theirs(outputs, reference) == [("json_match:_0", 1), ("json_match:_1", 0)]
    assert ours(outputs, reference) == [("json_match:", 0.0)]
    assert deviations(case(outputs, reference)) == ["empty_key_split"]


def test_an_unpaired_object_of_excluded_keys_still_costs_its_row():
    outputs, reference = [{"a": 1}, {"id": 2}], [{"a": 1}]
    options = {"aggregator": "all", "list_match_mode": "ordered", "exclude_keys": ["id"]}
    assert theirs(outputs, reference, **options) == [("json_match:all", 1)]
    assert ours(outputs, reference, **options) == [("json_match:all", 0.0)]
    # Like an unpaired empty object, which OpenEvals charges too:
    assert theirs([{"a": 1}, {}], reference, **options) == [("json_match:all", 0)]
    assert deviations(
        case(outputs, reference, aggregator="all", mode="ordered", exclude=["id"])
    ) == ["unpaired_item_of_excluded_keys"]


def test_dotted_exclude_keys_reach_into_nested_objects():
    outputs = {"meta": {"id": 1, "lang": "en"}}
    reference = {"meta": {"id": 2, "lang": "en"}}
    assert theirs(outputs, reference, exclude_keys=["meta.id"]) == [("json_match:meta", 0)]
    assert ours(outputs, reference, exclude_keys=["meta.id"]) == [("json_match:meta", 1.0)]
    # A literal key with a dot is still matched first, as in OpenEvals.
    assert ours({"meta.id": 1}, {"meta.id": 2}, exclude_keys=["meta.id"]) == [("json_match", None)]


@pytest.mark.parametrize(
    ("outputs", "reference", "openevals_error"),
    [
        ({"a": 1}, [{"a": 1}], AttributeError),
        ([{"a": 1}], {"a": 1}, ValueError),
        ("text", "text", AttributeError),
        ([1], [1], AttributeError),
    ],
)
def test_inputs_that_are_not_objects_raise_a_typed_error(outputs, reference, openevals_error):
    with pytest.raises(openevals_error):
        theirs(outputs, reference)
    with pytest.raises(EvaluatorInputError):
        ours(outputs, reference)


def test_keys_that_are_not_strings_raise():
    assert theirs({1: "a"}, {1: "a"}) == [("json_match:1", 1)]
    with pytest.raises(EvaluatorInputError, match="key of type int"):
        ours({1: "a"}, {1: "a"})
