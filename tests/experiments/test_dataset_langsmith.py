"""Datasets read from LangSmith by the real langsmith client, from a LangSmith stand-in on
127.0.0.1 (``tests/conftest.py``) that serves datasets and their examples page by page."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from urllib.parse import parse_qs, urlsplit

import langsmith
import pytest

from langchain_evals_port.experiments import Case, Dataset, DatasetError

EXAMPLES = [
    {"inputs": {"country": "France"}, "outputs": {"capital": "Paris"}, "metadata": {"n": 1}},
    {"inputs": {"country": "Peru"}, "outputs": {"capital": "Lima"}, "metadata": None},
    {"inputs": {"country": "Japan"}, "outputs": None, "metadata": {"dataset_split": ["test"]}},
]


@pytest.fixture
def client(langsmith_endpoint):
    return langsmith.Client(api_url=langsmith_endpoint.url, api_key="offline-test")


def unique_name() -> str:
    return f"capitals-{uuid.uuid4().hex[:8]}"


def queries(stand_in, path: str, since: int) -> list[dict[str, list[str]]]:
    """The query parameters of the GET requests for ``path`` the stand-in got after ``since``."""
    found = []
    for method, target in stand_in.requests[since:]:
        url = urlsplit(target)
        if method == "GET" and url.path == path:
            found.append(parse_qs(url.query))
    return found


def test_a_langsmith_dataset_is_read_by_name(langsmith_endpoint, client):
    name = unique_name()
    ids = langsmith_endpoint.add_dataset(name, EXAMPLES)
    since = len(langsmith_endpoint.requests)
    dataset = Dataset.from_langsmith(name, client=client)
    assert dataset.name == name
    assert list(dataset) == [
        Case(
            id=ids[0],
            inputs={"country": "France"},
            reference_outputs={"capital": "Paris"},
            metadata={"n": 1},
        ),
        Case(id=ids[1], inputs={"country": "Peru"}, reference_outputs={"capital": "Lima"}),
        Case(id=ids[2], inputs={"country": "Japan"}, metadata={"dataset_split": ["test"]}),
    ]
    assert [query["name"] for query in queries(langsmith_endpoint, "/datasets", since)] == [[name]]
    dataset_id = langsmith_endpoint.datasets[name]["id"]
    assert [q["dataset"] for q in queries(langsmith_endpoint, "/examples", since)] == [[dataset_id]]


def test_every_page_of_examples_is_read(langsmith_endpoint, client):
    name = unique_name()
    ids = langsmith_endpoint.add_dataset(name, [{"inputs": {"n": n}} for n in range(250)])
    since = len(langsmith_endpoint.requests)
    dataset = Dataset.from_langsmith(name, client=client)
    assert [case.id for case in dataset] == ids
    assert [case.inputs["n"] for case in dataset] == list(range(250))
    offsets = [query["offset"] for query in queries(langsmith_endpoint, "/examples", since)]
    assert offsets == [["0"], ["100"], ["200"]]


def test_splits_and_version_are_asked_of_langsmith(langsmith_endpoint, client):
    name = unique_name()
    langsmith_endpoint.add_dataset(name, EXAMPLES)
    since = len(langsmith_endpoint.requests)
    Dataset.from_langsmith(name, client=client, splits=["test", "dev"], as_of="prod")
    [query] = queries(langsmith_endpoint, "/examples", since)
    assert (query["splits"], query["as_of"]) == (["test", "dev"], ["prod"])


def test_a_missing_dataset_is_named(langsmith_endpoint, client):
    with pytest.raises(DatasetError) as caught:
        Dataset.from_langsmith("no-such-dataset", client=client)
    assert str(caught.value) == (
        f"LangSmith dataset 'no-such-dataset': not found at {langsmith_endpoint.url}"
    )


def test_a_bad_example_is_named_by_its_id(langsmith_endpoint, client):
    name = unique_name()
    ids = langsmith_endpoint.add_dataset(name, [EXAMPLES[0], {"inputs": None, "outputs": {"a": 1}}])
    with pytest.raises(DatasetError) as caught:
        Dataset.from_langsmith(name, client=client)
    assert str(caught.value) == (
        f"LangSmith dataset {name!r}, example {ids[1]}: 'inputs' is null; every case needs the "
        "inputs the application is given"
    )


def test_a_dataset_without_examples_is_refused(langsmith_endpoint, client):
    name = unique_name()
    langsmith_endpoint.add_dataset(name, [])
    with pytest.raises(DatasetError, match=f"^LangSmith dataset {name!r}: holds no cases$"):
        Dataset.from_langsmith(name, client=client)


def test_load_reads_a_name_from_langsmith(langsmith_endpoint, client):
    name = unique_name()
    ids = langsmith_endpoint.add_dataset(name, EXAMPLES)
    dataset = Dataset.load(name, client=client, splits=["test"])
    assert [case.id for case in dataset] == ids
    with pytest.raises(DatasetError, match="unknown option 'split' \\(did you mean 'splits'\\?\\)"):
        Dataset.load(name, client=client, split=["test"])


@pytest.mark.processes
def test_without_a_client_the_environment_says_where_langsmith_is(langsmith_endpoint):
    # A fresh process: langsmith caches the environment it reads.
    name = unique_name()
    ids = langsmith_endpoint.add_dataset(name, EXAMPLES)
    script = (
        "import json, sys\n"
        "from langchain_evals_port.experiments import Dataset\n"
        "print(json.dumps([[case.id for case in loaded] for loaded in "
        "(Dataset.from_langsmith(sys.argv[1]), Dataset.load(sys.argv[1]))]))\n"
    )
    environment = {
        **os.environ,
        "LANGSMITH_ENDPOINT": langsmith_endpoint.url,
        "LANGSMITH_API_KEY": "offline-test",
        "LANGSMITH_TRACING": "false",
    }
    done = subprocess.run(
        [sys.executable, "-c", script, name],
        capture_output=True,
        text=True,
        timeout=60,
        env=environment,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [ids, ids]
