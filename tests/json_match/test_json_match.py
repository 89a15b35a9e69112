"""JsonMatch without a judge: keys, scores, list modes, pairing, paths, errors."""

from __future__ import annotations

import itertools
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_evals_port.core import canonical_equal, results_of
from langchain_evals_port.core.errors import CanonicalizationError, EvaluatorInputError
from langchain_evals_port.json_match import JsonMatch
from langchain_evals_port.json_match._objects import KeyPaths, split_object
from langchain_evals_port.json_match._pairing import pair_items


def scores(evaluator: JsonMatch, outputs, reference_outputs) -> dict[str, float | bool | None]:
    return {
        r["key"]: r["score"]
        for r in evaluator(outputs=outputs, reference_outputs=reference_outputs)
    }


# --- single objects ---------------------------------------------------------------------


def test_one_result_per_key_sorted_with_missing_keys_scoring_zero():
    results = JsonMatch()(
        outputs={"name": "Ada", "year": 1815, "extra": 1},
        reference_outputs={"year": 1815.0, "name": "Ada", "city": "London"},
    )
    assert [(r["key"], r["score"]) for r in results] == [
        ("json_match:city", 0.0),
        ("json_match:extra", 0.0),
        ("json_match:name", 1.0),
        ("json_match:year", 1.0),
    ]


def test_values_compare_by_the_canonical_rule():
    ev = JsonMatch()
    assert scores(ev, {"a": {"x": [1, 2], "y": None}}, {"a": {"y": None, "x": [1.0, 2]}}) == {
        "json_match:a": 1.0
    }
    assert scores(ev, {"a": True}, {"a": 1}) == {"json_match:a": 0.0}
    assert scores(ev, {"a": [1, 2]}, {"a": [2, 1]}) == {"json_match:a": 0.0}


@pytest.mark.parametrize(("aggregator", "expected"), [("average", 2 / 3), ("all", 0.0)])
def test_aggregators_on_one_object(aggregator, expected):
    ev = JsonMatch(aggregator=aggregator)
    results = ev(outputs={"a": 1, "b": 2, "c": 3}, reference_outputs={"a": 1, "b": 2, "c": 4})
    assert len(results) == 1
    assert results[0]["key"] == f"json_match:{aggregator}"
    assert results[0]["score"] == pytest.approx(expected)
    assert results[0]["comment"] == "not matching: c"


def test_exclude_keys_leave_keys_out():
    ev = JsonMatch(exclude_keys=["id"], aggregator="all")
    assert scores(ev, {"id": 1, "a": "x"}, {"id": 2, "a": "x"}) == {"json_match:all": 1.0}


def test_feedback_key_is_the_prefix():
    ev = JsonMatch(feedback_key="extraction")
    assert list(scores(ev, {"a": 1}, {"a": 1})) == ["extraction:a"]
    assert ev.get_name() == "json_match_evaluator"


# --- dotted paths -------------------------------------------------------------------------


def test_a_dotted_exclude_key_reaches_into_nested_objects():
    ev = JsonMatch(exclude_keys=["meta.request_id"])
    outputs = {"meta": {"request_id": "r1", "lang": "en"}, "answer": 42}
    reference = {"meta": {"request_id": "r2", "lang": "en"}, "answer": 42}
    assert scores(ev, outputs, reference) == {"json_match:answer": 1.0, "json_match:meta": 1.0}
    reference["meta"]["lang"] = "fr"
    assert scores(ev, outputs, reference)["json_match:meta"] == 0.0


def test_a_key_holding_only_excluded_paths_is_left_out():
    ev = JsonMatch(exclude_keys=["meta.request_id"])
    assert scores(ev, {"meta": {"request_id": 1}, "a": 1}, {"meta": {"request_id": 2}, "a": 1}) == {
        "json_match:a": 1.0
    }


def test_a_literal_key_with_a_dot_is_found_first():
    ev = JsonMatch(exclude_keys=["a.b"])
    assert scores(ev, {"a.b": 1, "c": 1}, {"a.b": 2, "c": 1}) == {"json_match:c": 1.0}


def test_key_paths_resolve_exclusion_over_rubric():
    paths = KeyPaths.of(rubric_keys=["a.b", "c", "d.e"], exclude_keys=["a", "c"])
    assert paths.judged == frozenset({"d.e"})
    item = split_object({"a": {"b": 1}, "c": 2, "d": {"e": 3, "f": 4}}, paths, where="x")
    assert item.judged == {"d.e": 3}
    assert list(item.compared) == ["d"]


# --- lists --------------------------------------------------------------------------------


def test_ordered_pairs_by_position():
    ev = JsonMatch(list_match_mode="ordered", list_aggregator="average")
    got = scores(ev, [{"a": 1}, {"a": 2}, {"a": 3}], [{"a": 1}, {"a": 3}])
    # Rows: a=1/1, a=2/3, a=3 unpaired.
    assert got == {"json_match:a": pytest.approx(1 / 3)}


def test_same_elements_ignores_order_and_charges_leftovers_on_both_sides():
    ev = JsonMatch(list_aggregator="average")
    assert scores(ev, [{"a": 2}, {"a": 1}], [{"a": 1}, {"a": 2}]) == {"json_match:a": 1.0}
    assert scores(ev, [{"a": 1}], [{"a": 1}, {"a": 2}]) == {"json_match:a": 0.5}
    assert scores(ev, [{"a": 1}, {"a": 2}], [{"a": 1}]) == {"json_match:a": 0.5}


def test_subset_ignores_extra_references():
    ev = JsonMatch(list_match_mode="subset", list_aggregator="average")
    assert scores(ev, [{"a": 2}], [{"a": 1}, {"a": 2}]) == {"json_match:a": 1.0}
    assert scores(ev, [{"a": 2}, {"a": 3}], [{"a": 2}]) == {"json_match:a": 0.5}


def test_superset_ignores_extra_outputs():
    ev = JsonMatch(list_match_mode="superset", list_aggregator="average")
    assert scores(ev, [{"a": 1}, {"a": 2}], [{"a": 2}]) == {"json_match:a": 1.0}
    assert scores(ev, [{"a": 2}], [{"a": 2}, {"a": 3}]) == {"json_match:a": 0.5}


def test_list_aggregators_combine_keys_across_rows():
    outputs = [{"a": 1, "b": 1}, {"a": 2, "b": 0}]
    reference = [{"a": 1, "b": 1}, {"a": 2, "b": 1}]
    assert scores(JsonMatch(list_match_mode="ordered"), outputs, reference) == {
        "json_match:a": 1.0,
        "json_match:b": 0.0,
    }
    assert scores(
        JsonMatch(list_match_mode="ordered", list_aggregator="average"), outputs, reference
    ) == {"json_match:a": 1.0, "json_match:b": 0.5}
    # With an aggregator, each row is aggregated first: rows score 1 and 0.5.
    assert scores(
        JsonMatch(list_match_mode="ordered", aggregator="average", list_aggregator="average"),
        outputs,
        reference,
    ) == {"json_match:average": 0.75}
    assert scores(
        JsonMatch(list_match_mode="ordered", aggregator="all", list_aggregator="average"),
        outputs,
        reference,
    ) == {"json_match:all": 0.5}


def test_lists_pair_optimally_not_greedily():
    ev = JsonMatch(aggregator="average", list_aggregator="average")
    [result] = ev.invoke(
        {
            "outputs": [{"a": 1, "b": 1, "c": 0}, {"a": 1, "b": 1, "c": 1}],
            "reference_outputs": [{"a": 1, "b": 1, "c": 1}, {"a": 1, "b": 9, "c": 0}],
        }
    )
    assert result.score == pytest.approx(5 / 6)
    assert result.metadata["pairs"] == [[0, 1], [1, 0]]


def test_a_key_absent_from_both_objects_of_a_row_is_not_scored():
    ev = JsonMatch()
    same = [{"a": 1, "b": 2}, {"a": 1, "b": 2}, {"a": 1}]
    assert scores(ev, same, same) == {"json_match:a": 1.0, "json_match:b": 1.0}


async def test_sync_and_async_give_the_same_results():
    ev = JsonMatch(list_aggregator="average")
    outputs = [{"a": 1, "b": 2}, {"a": 1, "b": 2}, {"a": 1}, {"c": 5}]
    reference = [{"a": 1}, {"a": 1, "b": 3}, {"a": 1, "b": 2}]
    assert await ev.acall(outputs=outputs, reference_outputs=reference) == ev(
        outputs=outputs, reference_outputs=reference
    )


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.dictionaries(st.sampled_from("abc"), st.integers(0, 2), max_size=3), max_size=5),
    st.lists(st.dictionaries(st.sampled_from("abc"), st.integers(0, 2), max_size=3), max_size=5),
    st.sampled_from(["same_elements", "subset", "superset"]),
)
def test_pairing_maximises_total_agreement(outputs, references, mode):
    paths = KeyPaths.of((), ())
    out_items = [split_object(o, paths, where="o") for o in outputs]
    ref_items = [split_object(r, paths, where="r") for r in references]
    rows = pair_items(out_items, ref_items, mode)

    def agreement(i: int, j: int) -> int:
        x, y = outputs[i], references[j]
        return sum(1 for k in x if k in y and canonical_equal(x[k], y[k]))

    got = sum(
        agreement(row.output, row.reference)
        for row in rows
        if row.output is not None and row.reference is not None
    )
    small, large = sorted([len(outputs), len(references)])
    best = max(
        (
            sum(
                agreement(*((i, j) if len(outputs) <= len(references) else (j, i)))
                for i, j in enumerate(chosen)
            )
            for chosen in itertools.permutations(range(large), small)
        ),
        default=0,
    )
    assert got == best
    paired = [row for row in rows if row.output is not None and row.reference is not None]
    assert len(paired) == small


# --- empty inputs -------------------------------------------------------------------------


def test_empty_lists_and_objects():
    assert scores(JsonMatch(aggregator="average", list_aggregator="average"), [], []) == {
        "json_match:average": 1.0
    }
    assert scores(JsonMatch(aggregator="average"), {}, {}) == {"json_match:average": 1.0}
    assert scores(JsonMatch(aggregator="average", list_aggregator="average"), [], [{"a": 1}]) == {
        "json_match:average": 0.0
    }
    assert scores(JsonMatch(list_match_mode="ordered"), [{}], []) == {
        "json_match:__openevals_empty_record": 0.0
    }
    assert scores(JsonMatch(list_aggregator="average"), [{}, {"a": 1}], [{"a": 1}, {}]) == {
        "json_match:a": 1.0
    }


@pytest.mark.parametrize(
    ("outputs", "reference"), [({}, {}), ([], []), ({"id": 1}, {"id": 2}), ([{}], [{}])]
)
def test_nothing_to_compare_per_key_is_inconclusive(outputs, reference):
    [result] = results_of(
        JsonMatch(exclude_keys=["id"]).invoke({"outputs": outputs, "reference_outputs": reference})
    )
    assert result.key == "json_match"
    assert result.outcome == "inconclusive"
    assert "nothing to compare" in (result.reason or "")


# --- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("outputs", "reference", "message"),
    [
        ({"a": 1}, [{"a": 1}], "compares an object with an object"),
        ("text", "text", "compares an object with an object"),
        ([{"a": 1}, 3], [{"a": 1}], r"outputs\[1\] must be an object"),
        ({1: "a"}, {"1": "a"}, "key of type int"),
    ],
)
def test_bad_input_raises_naming_the_problem(outputs, reference, message):
    with pytest.raises(EvaluatorInputError, match=message):
        JsonMatch(on_error="record")(outputs=outputs, reference_outputs=reference)


def test_values_without_a_json_form_raise_naming_where():
    with pytest.raises(CanonicalizationError, match=r"reference_outputs\[0\]\['a'\]"):
        JsonMatch()(outputs=[{"a": 1}], reference_outputs=[{"a": b"x"}])


def test_missing_outputs_raise():
    with pytest.raises(EvaluatorInputError, match="outputs"):
        JsonMatch()(reference_outputs={"a": 1})


# --- Runnable and imports ------------------------------------------------------------------


def test_batch_as_a_runnable():
    ev = JsonMatch(aggregator="all")
    results = ev.batch(
        [
            {"outputs": {"a": 1}, "reference_outputs": {"a": 1}},
            {"outputs": {"a": 1}, "reference_outputs": {"a": 2}},
        ]
    )
    assert [r[0].score for r in results] == [1.0, 0.0]


def run_python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout.strip()


@pytest.mark.processes
def test_importing_does_not_import_scipy_or_numpy():
    code = (
        "import sys, langchain_evals_port, langchain_evals_port.json_match; "
        "print(sorted(m for m in ('scipy', 'numpy') if m in sys.modules))"
    )
    assert run_python(code) == "[]"


@pytest.mark.processes
def test_scipy_is_loaded_only_when_the_greedy_pairing_is_not_optimal():
    code = (
        "import sys; from langchain_evals_port.json_match import JsonMatch; "
        "ev = JsonMatch(aggregator='average', list_aggregator='average'); "
        "ev(outputs=[{'a': 1}, {'a': 2}], reference_outputs=[{'a': 2}, {'a': 1}]); "
        "print('scipy' in sys.modules); "
        "ev(outputs=[{'a': 1, 'b': 1, 'c': 0}, {'a': 1, 'b': 1, 'c': 1}], "
        "reference_outputs=[{'a': 1, 'b': 1, 'c': 1}, {'a': 1, 'b': 9, 'c': 0}]); "
        "print('scipy' in sys.modules)"
    )
    assert run_python(code).split() == ["False", "True"]
