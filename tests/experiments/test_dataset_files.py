"""Datasets from JSONL, JSON and CSV files: real files, and bad rows named by file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langchain_evals_port.experiments import Case, Dataset, DatasetError


def write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def raised(call, *args, **kwargs) -> DatasetError:
    with pytest.raises(DatasetError) as caught:
        call(*args, **kwargs)
    return caught.value


# --- JSONL ---------------------------------------------------------------------------------


def test_a_jsonl_file_is_read_line_by_line(tmp_path):
    lines = [
        {"id": "q1", "inputs": {"q": "2 + 2?"}, "reference_outputs": "4"},
        {"inputs": {"q": "Zürich?"}, "metadata": {"level": "hard"}},
    ]
    # A byte-order mark, Windows line ends and blank lines are all fine.
    text = "\ufeff" + "\r\n".join(json.dumps(line, ensure_ascii=False) for line in lines)
    path = write(tmp_path / "arith.jsonl", text + "\r\n\r\n")
    dataset = Dataset.from_jsonl(path)
    assert dataset.name == "arith"
    assert list(dataset) == [Case(**lines[0]), Case(**lines[1])]
    assert Dataset.from_jsonl(str(path), name="other").name == "other"


@pytest.mark.parametrize(
    ("bad_line", "field", "problem"),
    [
        (
            '{"inputs": "x", "referenceoutputs": "y"}',
            "referenceoutputs",
            "unknown key 'referenceoutputs' (did you mean 'reference_outputs'?)",
        ),
        (
            '{"inputs": "x", "reference_output": "y"}',
            "reference_output",
            "unknown key 'reference_output' (did you mean 'reference_outputs'?)",
        ),
        ('{"inputs": null}', "inputs", "'inputs' is null"),
        ('{"reference_outputs": "y"}', "inputs", "no 'inputs'"),
        (
            '{"inputs": "x", "metadata": "easy"}',
            "metadata",
            "'metadata' must be a mapping with string keys, got str",
        ),
        (
            '{"inputs": "x",}',
            None,
            "not valid JSON: Expecting property name enclosed in double quotes (column 16)",
        ),
        (
            '["x"]',
            None,
            "expected a mapping with the keys id, inputs, reference_outputs, metadata, got list",
        ),
    ],
)
def test_a_bad_jsonl_line_is_named_by_file_and_line(tmp_path, bad_line, field, problem):
    path = write(tmp_path / "qa.jsonl", '{"inputs": "a"}\n\n{"inputs": "b"}\n' + bad_line + "\n")
    error = raised(Dataset.from_jsonl, path)
    assert str(error).startswith(f"{path}, line 4: {problem}")
    assert (error.path, error.line, error.field) == (str(path), 4, field)


def test_duplicate_ids_in_a_jsonl_file_name_both_lines(tmp_path):
    path = write(
        tmp_path / "qa.jsonl",
        '{"id": "a", "inputs": 1}\n{"id": "b", "inputs": 2}\n{"id": "a", "inputs": 3}\n',
    )
    error = raised(Dataset.from_jsonl, path)
    assert str(error) == f"{path}, line 3: duplicate case id 'a', already used at {path}, line 1"
    assert (error.line, error.field) == (3, "id")


def test_a_file_that_is_not_utf8_is_named_with_its_line(tmp_path):
    path = tmp_path / "qa.jsonl"
    path.write_bytes(b'{"inputs": "a"}\n{"inputs": "caf\xe9"}\n')
    error = raised(Dataset.from_jsonl, path)
    assert str(error) == f"{path}, line 2: not UTF-8 text (byte 31); save the file as UTF-8"


def test_an_empty_jsonl_file_holds_no_cases(tmp_path):
    path = write(tmp_path / "qa.jsonl", "\n\n")
    assert str(raised(Dataset.from_jsonl, path)) == f"{path}: holds no cases"


def test_a_missing_file_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        Dataset.from_jsonl(tmp_path / "absent.jsonl")


# --- JSON ----------------------------------------------------------------------------------

CASES = [{"id": "a", "inputs": {"q": 1}, "reference_outputs": [1, 2]}, {"inputs": "b"}]


@pytest.mark.parametrize("document", [CASES, {"cases": CASES}], ids=["array", "object"])
def test_a_json_file_holds_an_array_of_cases(tmp_path, document):
    path = write(tmp_path / "set.json", json.dumps(document, indent=2))
    dataset = Dataset.from_json(path)
    assert (dataset.name, list(dataset)) == ("set", [Case(**CASES[0]), Case(**CASES[1])])


@pytest.mark.parametrize(
    ("document", "where"),
    [([*CASES, {"input": 1}], "at [2]"), ({"cases": [*CASES, {"input": 1}]}, "at cases[2]")],
)
def test_a_bad_json_case_is_named_by_its_index(tmp_path, document, where):
    path = write(tmp_path / "set.json", json.dumps(document))
    error = raised(Dataset.from_json, path)
    assert str(error).startswith(f"{path}, {where}: unknown key 'input' (did you mean 'inputs'?)")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[\n  {"inputs": 1},\n  {"inputs": 2]\n]',
            ", line 3: not valid JSON: Expecting ',' delimiter (column 15)",
        ),
        (
            '{"case": []}',
            ": unknown key 'case' (did you mean 'cases'?); a dataset object has one key, 'cases'",
        ),
        ("{}", ": no 'cases' key"),
        ('{"cases": {"inputs": 1}}', ": 'cases' must hold an array of case objects, got an object"),
        ('"inputs"', ": expected an array of case objects, got a string"),
        ("[]", ": holds no cases"),
    ],
)
def test_a_bad_json_file_is_refused(tmp_path, text, message):
    path = write(tmp_path / "set.json", text)
    assert str(raised(Dataset.from_json, path)).startswith(f"{path}{message}")


# --- CSV -----------------------------------------------------------------------------------


def test_csv_columns_map_by_their_header(tmp_path):
    text = (
        "id,inputs.question,inputs.context,reference_outputs.answer,metadata.level\n"
        'q1,"2 + 2?","Arithmetic, as taught\nin school",4,easy\n'
        ",Capital of France?,,Paris,hard\n"
    )
    dataset = Dataset.from_csv(write(tmp_path / "qa.csv", text))
    assert dataset.name == "qa"
    assert dataset["q1"] == Case(
        id="q1",
        inputs={"question": "2 + 2?", "context": "Arithmetic, as taught\nin school"},
        reference_outputs={"answer": "4"},
        metadata={"level": "easy"},
    )
    # An empty id cell gives no id: the case gets its content id.
    assert dataset[1] == Case(
        inputs={"question": "Capital of France?", "context": ""},
        reference_outputs={"answer": "Paris"},
        metadata={"level": "hard"},
    )


def test_whole_value_csv_columns_hold_strings(tmp_path):
    path = write(tmp_path / "qa.csv", "inputs,reference_outputs\n2 + 2?,4\n")
    assert list(Dataset.from_csv(path)) == [Case(inputs="2 + 2?", reference_outputs="4")]


def test_csv_columns_map_by_name_as_listed(tmp_path):
    path = write(tmp_path / "qa.csv", "key,question,answer,level,source\nk1,2 + 2?,4,easy,book\n")
    dataset = Dataset.from_csv(
        path,
        inputs="question",
        reference_outputs=["answer"],
        metadata=["level", "source"],
        id_column="key",
    )
    assert list(dataset) == [
        Case(
            id="k1",
            inputs={"question": "2 + 2?"},
            reference_outputs={"answer": "4"},
            metadata={"level": "easy", "source": "book"},
        )
    ]


def test_a_bad_csv_row_is_named_by_file_and_line(tmp_path):
    # The quoted cell spans lines 2-3, so the short row is on line 4 of the file.
    text = 'id,inputs.q,reference_outputs.a\n1,"two\nlines",y\n2,short\n'
    path = write(tmp_path / "qa.csv", text)
    error = raised(Dataset.from_csv, path)
    assert str(error) == f"{path}, line 4: 2 cells, but the header (line 1) has 3 columns"
    assert (error.path, error.line) == (str(path), 4)


DEEP_990 = '{"inputs": {"q": ' + "[" * 990 + "]" * 990 + "}}"
DEEP_300 = '{"inputs": {"q": ' + "[" * 300 + "]" * 300 + "}}"


@pytest.mark.parametrize(
    ("bad_line", "field", "problem"),
    [
        (  # json.loads keeps the last one, silently
            '{"inputs": {"q": "a", "q": "b"}}',
            "inputs.q",
            "inputs.q: key 'q' given twice in one object (column 23)",
        ),
        ('{"inputs": "x", "inputs": "y"}', "inputs", "inputs: key 'inputs' given twice"),
        (
            '{"inputs": {"x": NaN}}',
            "inputs.x",
            "inputs.x: NaN is not a JSON number; write null or a finite number",
        ),
        ('{"inputs": [1, -Infinity]}', "inputs[1]", "inputs[1]: -Infinity is not a JSON number"),
        ('{"inputs": 1e999}', "inputs", "inputs: the number 1e999 is too large to be finite"),
        (
            '{"inputs": {"n": ' + "7" * 5000 + "}}",
            "inputs.n",
            "inputs.n: an integer of 5000 digits; at most 4300",
        ),
        (DEEP_990, "inputs.q[0][0]…[0][0][0]", "inputs.q[0][0]…[0][0][0]: nested more than 100"),
        (DEEP_300, "inputs.q[0][0]…[0][0][0]", "inputs.q[0][0]…[0][0][0]: nested more than 100"),
    ],
)
def test_repeated_keys_nan_huge_numbers_and_deep_nesting_are_named_by_line_and_field(
    tmp_path, bad_line, field, problem
):
    path = write(tmp_path / "qa.jsonl", '{"inputs": "a"}\n' + bad_line + "\n")
    error = raised(Dataset.from_jsonl, path)
    assert str(error).startswith(f"{path}, line 2: {problem}")
    assert (error.path, error.line, error.field) == (str(path), 2, field)

    # The same in a JSON file: the line is the document's own.
    document = write(tmp_path / "qa.json", '{"cases": [\n  {"inputs": "a"},\n  ' + bad_line + "]}")
    error = raised(Dataset.from_json, document)
    assert (error.path, error.line) == (str(document), 3)
    assert error.field is not None
    assert error.field.startswith("cases[1].inputs")
    assert error.field.endswith(field[-9:])


def test_a_csv_cell_over_the_csv_module_s_limit_is_named_by_line_and_column(tmp_path):
    long = "x" * 131_073
    text = f'id,inputs.q,reference_outputs.a\n1,short,y\n2,"{long}",z\n'
    error = raised(Dataset.from_csv, write(tmp_path / "qa.csv", text))
    assert str(error).startswith(
        f"{tmp_path / 'qa.csv'}, line 3: inputs.q: a cell of more than 131,072 characters"
    )
    assert (error.line, error.field) == (3, "inputs.q")


def test_duplicate_ids_in_a_csv_file_name_both_lines(tmp_path):
    path = write(tmp_path / "qa.csv", "id,inputs\na,1\nb,2\n\na,3\n")
    error = raised(Dataset.from_csv, path)
    assert str(error) == f"{path}, line 5: duplicate case id 'a', already used at {path}, line 2"


@pytest.mark.parametrize(
    ("header", "options", "field", "problem"),
    [
        (
            "id,input.q",
            {},
            "input.q",
            "unknown column 'input.q' (did you mean 'inputs.q'?); columns are named id, inputs, inputs.<key>",
        ),
        (
            "inputs,referenceoutputs",
            {},
            "referenceoutputs",
            "unknown column 'referenceoutputs' (did you mean 'reference_outputs'?)",
        ),
        ("question,answer", {}, "question", "unknown column 'question'; columns are named"),
        (
            "inputs,metadata",
            {},
            "metadata",
            "column 'metadata' names no key; name it metadata.<key>",
        ),
        ("id,metadata.x", {}, "inputs", "no inputs column; columns are named"),
        ("inputs,inputs.q", {}, "inputs", "both a 'inputs' column and inputs.<key> columns"),
        ("q,q", {}, "q", "the header has column 'q' twice"),
        ("q,,a", {"inputs": ["q"]}, "", "the header has a column without a name"),
        (
            "question,answer",
            {"inputs": ["question"]},
            "answer",
            "column 'answer' is not mapped; add it to inputs=, reference_outputs= or metadata=",
        ),
        (
            "question,answer",
            {"inputs": ["questoin"]},
            "questoin",
            "inputs= names column 'questoin', which the header lacks (did you mean 'question'?); the columns are question, answer",
        ),
        (
            "question,answer",
            {"inputs": ["question"], "metadata": ["question", "answer"]},
            "question",
            "column 'question' is named by both inputs= and metadata=",
        ),
        (
            "key,question",
            {"inputs": ["question", "key"], "id_column": "key"},
            "key",
            "column 'key' is named by both id_column= and inputs=",
        ),
        (
            "question,answer",
            {"inputs": [], "reference_outputs": ["answer"]},
            "inputs",
            "inputs= names no column",
        ),
        (
            "key,inputs",
            {"id_column": "kye"},
            "kye",
            "no column 'kye' for id_column='kye' (did you mean 'key'?); the columns are key, inputs",
        ),
    ],
)
def test_a_bad_csv_header_is_named_with_the_closest_valid_name(
    tmp_path, header, options, field, problem
):
    path = write(tmp_path / "qa.csv", header + "\nx,y\n")
    error = raised(Dataset.from_csv, path, **options)
    assert str(error).startswith(f"{path}, line 1: {problem}")
    assert (error.line, error.field) == (1, field)


@pytest.mark.parametrize(
    ("text", "message"), [("", "empty file; expected a header row"), ("inputs\n", "holds no cases")]
)
def test_a_csv_file_without_rows_is_refused(tmp_path, text, message):
    path = write(tmp_path / "qa.csv", text)
    assert str(raised(Dataset.from_csv, path)) == f"{path}: {message}"
