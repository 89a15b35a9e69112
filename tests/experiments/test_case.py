"""Cases: their checks, and ids that are the same in every process."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pydantic
import pytest

from langchain_evals_port.experiments import Case, Dataset, DatasetError

RECORDS = [
    {"inputs": {"question": "Capital of France?"}, "reference_outputs": "Paris"},
    {"inputs": {"b": [1, 2.5], "a": "Zürich 🏔"}, "reference_outputs": {"n": 1}},
    {"inputs": {"tags": {"x", "y", "z", "w"}}},  # a set: its order changes with the hash seed
    {"inputs": [{"role": "user", "content": "hi"}], "metadata": {"level": 2}},
]


def test_a_given_id_is_kept():
    case = Case(id="france", inputs="Capital of France?", reference_outputs="Paris")
    assert (case.id, case.inputs, case.reference_outputs, case.metadata) == (
        "france",
        "Capital of France?",
        "Paris",
        {},
    )


def test_the_content_id_follows_the_equality_rule_and_ignores_metadata():
    first = Case(inputs={"a": 1, "b": [1, 2]}, reference_outputs={"n": 1.0})
    same = Case(inputs={"b": [1.0, 2], "a": 1}, reference_outputs={"n": 1}, metadata={"t": 1})
    assert first.id == same.id
    assert len(first.id) == 16
    assert Case(inputs={"a": 1, "b": [1, 2]}, reference_outputs={"n": 2}).id != first.id
    assert Case(inputs={"a": 1, "b": [2, 1]}, reference_outputs={"n": 1}).id != first.id
    assert Case(inputs={"a": True, "b": [1, 2]}, reference_outputs={"n": 1}).id != (
        Case(inputs={"a": 1, "b": [1, 2]}, reference_outputs={"n": 1}).id
    )


def test_content_ids_are_pinned():
    # These values are part of the format: results stored by earlier runs pair with them.
    assert Case(inputs={"question": "Capital of France?"}, reference_outputs="Paris").id == (
        "a9d6ae588711501e"
    )
    # The format: SHA-256 of compact, key-sorted, unescaped JSON; numbers by value.
    text = '{"inputs":{"a":"Zürich 🏔","b":[1,2.5]},"reference_outputs":{"n":1}}'
    expected = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    assert expected == "96bb8e79f6298cc6"
    assert Case(inputs={"b": [1.0, 2.5], "a": "Zürich 🏔"}, reference_outputs={"n": 1.0}).id == (
        expected
    )


@pytest.mark.processes
def test_content_ids_are_the_same_in_other_processes():
    script = (
        "import json, sys\n"
        "from langchain_evals_port.experiments import Dataset\n"
        "records = eval(sys.stdin.read())\n"
        "print(json.dumps([case.id for case in Dataset.from_records(records)]))\n"
    )
    here = [case.id for case in Dataset.from_records(RECORDS)]
    seen = set()
    for seed in ("0", "1", "12345"):
        done = subprocess.run(
            [sys.executable, "-c", script],
            input=repr(RECORDS),
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PYTHONHASHSEED": seed},
            check=True,
        )
        assert json.loads(done.stdout) == here
        seen.add(done.stdout)
    assert len(set(here)) == len(RECORDS)
    assert len(seen) == 1


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"inputs": None}, "inputs", "'inputs' is null; every case needs the inputs"),
        ({"inputs": "x", "id": 3}, "id", "'id' must be a non-empty string, got int 3"),
        ({"inputs": "x", "id": " "}, "id", "'id' must be a non-empty string, got str ' '"),
        ({"inputs": "x", "metadata": ["a"]}, "metadata", "mapping with string keys, got list"),
        ({"inputs": "x", "metadata": {1: "a"}}, "metadata", "mapping with string keys, got dict"),
        ({"inputs": {"a": [b"x"]}}, "inputs", r"inputs\['a'\]\[0\] is a bytes, which has no JSON"),
        ({"inputs": "x", "reference_outputs": object()}, "reference_outputs", "no JSON form"),
        ({"inputs": "x", "metadata": {"f": object()}}, "metadata", r"metadata\['f'\] is a"),
    ],
)
def test_a_bad_field_is_named(fields, field, message):
    with pytest.raises(DatasetError, match=message) as caught:
        Case(**fields)
    assert caught.value.field == field
    assert isinstance(caught.value, ValueError)


def test_an_unknown_keyword_is_refused():
    with pytest.raises(TypeError, match="reference_output"):
        Case(inputs="x", reference_output="y")  # type: ignore[call-arg]


def test_a_case_is_frozen_and_serialises():
    case = Case(id="q1", inputs={"q": "2 + 2?"}, reference_outputs="4", metadata={"level": 1})
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        case.id = "other"  # type: ignore[misc]
    stored = case.model_dump_json()
    assert json.loads(stored) == {
        "id": "q1",
        "inputs": {"q": "2 + 2?"},
        "reference_outputs": "4",
        "metadata": {"level": 1},
    }
    assert Case.model_validate_json(stored) == case
