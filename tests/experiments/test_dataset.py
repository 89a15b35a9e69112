"""Datasets from lists: rows checked with their index, unique ids, the sequence interface,
and ``Dataset.load`` choosing a loader."""

from __future__ import annotations

from pathlib import Path

import pytest

from langchain_evals_port import Case as TopLevelCase
from langchain_evals_port import Dataset as TopLevelDataset
from langchain_evals_port import DatasetError as TopLevelDatasetError
from langchain_evals_port import EvalsError
from langchain_evals_port.experiments import Case, Dataset, DatasetError

RECORDS = [
    {"id": "fr", "inputs": {"country": "France"}, "reference_outputs": "Paris"},
    {"inputs": {"country": "Peru"}, "reference_outputs": "Lima", "metadata": {"hard": True}},
    {"id": "jp", "inputs": {"country": "Japan"}},
]


def test_records_become_cases_in_order():
    dataset = Dataset.from_records(RECORDS, name="capitals")
    assert dataset.name == "capitals"
    assert len(dataset) == 3
    assert [case.inputs["country"] for case in dataset] == ["France", "Peru", "Japan"]
    assert dataset[1] == Case(
        inputs={"country": "Peru"}, reference_outputs="Lima", metadata={"hard": True}
    )
    assert dataset[2].reference_outputs is None
    assert dataset.cases == tuple(dataset)


def test_the_top_level_package_exports_the_dataset_names():
    assert (TopLevelCase, TopLevelDataset, TopLevelDatasetError) == (Case, Dataset, DatasetError)
    assert issubclass(DatasetError, EvalsError)
    assert issubclass(DatasetError, ValueError)


@pytest.mark.parametrize(
    ("key", "closest"),
    [
        ("referenceoutputs", "reference_outputs"),
        ("reference_output", "reference_outputs"),
        ("outputs", "reference_outputs"),
        ("expected_output", "reference_outputs"),
        ("input", "inputs"),
        ("metdata", "metadata"),
        ("name", "id"),
    ],
)
def test_a_misspelt_key_is_refused_with_the_closest_valid_name(key, closest):
    records = [RECORDS[0], {"inputs": "x", key: "y"}]
    with pytest.raises(DatasetError) as caught:
        Dataset.from_records(records)
    assert str(caught.value) == (
        f"records[1]: unknown key {key!r} (did you mean {closest!r}?); "
        "a case has the keys id, inputs, reference_outputs, metadata"
    )
    assert (caught.value.field, caught.value.location) == (key, "records[1]")


def test_an_unknown_key_with_no_near_name_is_refused_all_the_same():
    with pytest.raises(DatasetError, match=r"records\[0\]: unknown key 'notes'; a case has"):
        Dataset.from_records([{"inputs": "x", "notes": "y"}])


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"reference_outputs": "y"}, r"records\[0\]: no 'inputs'; every case needs"),
        ({"inputs": None}, r"records\[0\]: 'inputs' is null"),
        ({"inputs": "x", "id": 7}, r"records\[0\]: 'id' must be a non-empty string, got int 7"),
        ("a question", r"records\[0\]: expected a mapping with the keys id, inputs, .* got str"),
    ],
)
def test_a_bad_record_is_named_by_its_index(record, message):
    with pytest.raises(DatasetError, match=message):
        Dataset.from_records([record])


def test_a_duplicate_id_names_both_records():
    records = [*RECORDS, {"id": "fr", "inputs": {"country": "Gabon"}}]
    with pytest.raises(DatasetError) as caught:
        Dataset.from_records(records)
    assert str(caught.value) == "records[3]: duplicate case id 'fr', already used at records[0]"
    assert caught.value.field == "id"


def test_identical_cases_without_ids_are_duplicates_and_told_why():
    records = [{"inputs": "2 + 2?", "reference_outputs": "4", "metadata": {"n": i}} for i in (1, 2)]
    with pytest.raises(DatasetError, match=r"already used at records\[0\] \(a content id: both"):
        Dataset.from_records(records)
    distinct = [{**record, "id": f"q{i}"} for i, record in enumerate(records)]
    assert [case.id for case in Dataset.from_records(distinct)] == ["q0", "q1"]


def test_no_records_is_an_error():
    with pytest.raises(DatasetError, match=r"^records: holds no cases$"):
        Dataset.from_records([])


def test_the_constructor_takes_cases_and_checks_them():
    cases = [Case(id="a", inputs=1), Case(id="b", inputs=2)]
    assert Dataset(cases).cases == tuple(cases)
    with pytest.raises(DatasetError, match=r"cases\[1\]: duplicate case id 'a', already used"):
        Dataset([cases[0], cases[0]])
    with pytest.raises(DatasetError, match=r"cases\[0\]: expected a Case, got dict"):
        Dataset([{"inputs": 1}])  # type: ignore[list-item]


def test_cases_are_found_by_position_id_and_slice():
    dataset = Dataset.from_records(RECORDS, name="capitals")
    assert dataset[-1].id == "jp"
    assert dataset["jp"] is dataset[2]
    assert dataset[1] in dataset
    head = dataset[:2]
    assert isinstance(head, Dataset)
    assert (head.name, [case.id for case in head]) == ("capitals", ["fr", dataset[1].id])
    assert repr(head) == "Dataset(name='capitals', cases=2)"
    with pytest.raises(KeyError, match=r"no case with id 'frr' \(did you mean 'fr'\?\)"):
        dataset["frr"]
    with pytest.raises(IndexError):
        dataset[3]


@pytest.mark.parametrize(
    ("file_name", "text"),
    [
        ("qa.jsonl", '{"id": "a", "inputs": "x"}\n'),
        ("QA.JSONL", '{"id": "a", "inputs": "x"}\n'),
        ("qa.json", '[{"id": "a", "inputs": "x"}]'),
        ("qa.csv", "id,inputs\na,x\n"),
    ],
)
def test_load_reads_a_file_by_its_suffix(tmp_path, file_name, text):
    path = tmp_path / file_name
    path.write_text(text, encoding="utf-8")
    for source in (path, str(path)):
        dataset = Dataset.load(source)
        assert (dataset.name, [(c.id, c.inputs) for c in dataset]) == (path.stem, [("a", "x")])


def test_load_passes_the_loaders_options_and_refuses_others(tmp_path):
    path = tmp_path / "qa.csv"
    path.write_text("question,answer\n2 + 2?,4\n", encoding="utf-8")
    dataset = Dataset.load(path, inputs=["question"], reference_outputs=["answer"], name="m")
    assert (dataset.name, dataset[0].inputs, dataset[0].reference_outputs) == (
        "m",
        {"question": "2 + 2?"},
        {"answer": "4"},
    )
    with pytest.raises(DatasetError) as caught:
        Dataset.load(path, input=["question"])
    assert str(caught.value) == (
        f"unknown option 'input' (did you mean 'inputs'?) for {path}; Dataset.from_csv takes "
        "inputs, reference_outputs, metadata, id_column, name"
    )
    with pytest.raises(DatasetError, match=r"unknown option 'splits' for .*from_jsonl takes name$"):
        Dataset.load(tmp_path / "qa.jsonl", splits=["test"])


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("qa.jsnl", r"^qa\.jsnl: unknown file type \.jsnl \(did you mean '\.jsonl'\?\); "),
        ("data/qa.cvs", r"unknown file type \.cvs \(did you mean '\.csv'\?\)"),
        (Path("qa.yaml"), r"^qa\.yaml: unknown file type \.yaml; Dataset\.load reads \.jsonl, "),
        (Path("qa"), r"unknown file type \(no suffix\)"),
    ],
)
def test_load_refuses_a_file_of_another_type(source, message):
    with pytest.raises(DatasetError, match=message):
        Dataset.load(source)


def test_load_refuses_an_existing_file_of_another_type_given_as_a_string(tmp_path):
    path = tmp_path / "cases.yaml"
    path.write_text("- inputs: x\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"unknown file type \.yaml"):
        Dataset.load(str(path))
