"""Experiments uploaded to LangSmith by the real langsmith client, against the LangSmith
stand-in on 127.0.0.1 (``tests/conftest.py``), which keeps the body of every write."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import langsmith
import pytest

from langchain_evals_port import ExactMatch, evaluator
from langchain_evals_port.core.errors import EvaluatorUsageError
from langchain_evals_port.experiments import (
    Dataset,
    ExperimentResult,
    LangSmithUploadError,
    run_experiment,
    upload_to_langsmith,
)

CAPITALS = {"France": "Paris", "Peru": "Cusco"}

RECORDS = [
    {"id": "france", "inputs": {"country": "France"}, "reference_outputs": "Paris"},
    {"id": "peru", "inputs": {"country": "Peru"}, "reference_outputs": "Lima"},
    {"id": "mars", "inputs": {"country": "Mars"}, "reference_outputs": None},
]


def capital(inputs: dict[str, str]) -> str:
    return CAPITALS[inputs["country"]]  # a KeyError for Mars


def shortness(*, outputs: str) -> float:
    if outputs == "Cusco":
        raise TimeoutError("judge timed out")
    return 1 / len(outputs)


EVALUATORS = [ExactMatch(), evaluator(shortness, run_name="shortness", feedback_key="shortness")]


def experiment(dataset: Dataset, name: str, trials: int = 1) -> ExperimentResult:
    return run_experiment(
        capital, dataset, EVALUATORS, name=name, trials=trials, store=False, progress=False
    )


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def client(langsmith_endpoint: Any) -> langsmith.Client:
    return langsmith.Client(api_url=langsmith_endpoint.url, api_key="offline-test")


def test_an_experiment_becomes_a_project_with_runs_and_feedback(
    langsmith_endpoint: Any, client: langsmith.Client
) -> None:
    name = unique("capitals")
    result = experiment(Dataset.from_records(RECORDS), name, trials=2)
    url = upload_to_langsmith(result, client=client, timeout=10)

    project = langsmith_endpoint.session_named(name)
    assert project["id"] in url
    assert project.get("reference_dataset_id") is None  # the cases are not LangSmith examples
    assert project["extra"]["metadata"]["trials"] == 2
    assert project["end_time"]  # marked finished

    runs = langsmith_endpoint.runs(project["id"])
    assert len(runs) == 6
    seen = sorted(
        (
            run["extra"]["metadata"]["case_id"],
            run["extra"]["metadata"]["trial"],
            run["name"],
            run["inputs"],
            run.get("outputs"),
            run.get("error"),
            run.get("reference_example_id"),
        )
        for run in runs
    )
    failed = "KeyError: 'Mars'"
    assert seen == [
        ("france", 0, "capital", {"country": "France"}, {"output": "Paris"}, None, None),
        ("france", 1, "capital", {"country": "France"}, {"output": "Paris"}, None, None),
        ("mars", 0, "capital", {"country": "Mars"}, None, failed, None),
        ("mars", 1, "capital", {"country": "Mars"}, None, failed, None),
        ("peru", 0, "capital", {"country": "Peru"}, {"output": "Cusco"}, None, None),
        ("peru", 1, "capital", {"country": "Peru"}, {"output": "Cusco"}, None, None),
    ]
    for run, case_run in zip(runs, result.runs, strict=True):
        assert run["trace_id"] == run["id"]
        interaction = case_run.run.interaction
        assert datetime.fromisoformat(run["start_time"]) == interaction.started_at
        assert datetime.fromisoformat(run["end_time"]) == interaction.ended_at

    # Every result is feedback on the run it scored, in the project.
    case_of_run = {run["id"]: run["extra"]["metadata"]["case_id"] for run in runs}
    feedback = [f for f in langsmith_endpoint.feedback() if f["run_id"] in case_of_run]
    assert len(feedback) == 12
    assert {f["session_id"] for f in feedback} == {project["id"]}
    assert {f["feedback_source"]["type"] for f in feedback} == {"model"}
    got = sorted(
        (case_of_run[f["run_id"]], f["key"], f.get("score"), f.get("comment"), f.get("error"))
        for f in feedback
    )
    not_run = "[inconclusive] the target raised KeyError: 'Mars'"
    reason = "evaluator 'shortness' failed: TimeoutError: judge timed out"
    timed_out = f"[failed: timeout] {reason}"
    assert got == sorted(
        2
        * [
            ("france", "exact_match", 1, None, None),
            ("france", "shortness", 0.2, None, None),
            ("mars", "exact_match", None, not_run, None),
            ("mars", "shortness", None, not_run, None),
            ("peru", "exact_match", 0, None, None),
            ("peru", "shortness", None, timed_out, True),
        ]
    )
    failure = next(f for f in feedback if f.get("error"))
    assert failure["extra"] == {
        "outcome": "failed",
        "reason": reason,
        "error_code": "timeout",
    }


def test_a_taken_name_gets_a_suffix(langsmith_endpoint: Any, client: langsmith.Client) -> None:
    name = unique("again")
    result = experiment(Dataset.from_records(RECORDS[:1]), name)
    first = upload_to_langsmith(result, client=client, timeout=10)
    second = upload_to_langsmith(result, client=client, timeout=10)
    assert first != second
    names = [s["name"] for s in langsmith_endpoint.sessions.values()]
    assert names.count(name) == 1
    [suffixed] = [n for n in names if n.startswith(f"{name}-")]
    assert len(suffixed) == len(name) + 9


LANGSMITH_EXAMPLES = [
    {"inputs": {"country": "France"}, "outputs": {"capital": "Paris"}},
    {"inputs": {"country": "Peru"}, "outputs": {"capital": "Lima"}},
]


@pytest.mark.parametrize("named", [False, True])
def test_a_langsmith_dataset_links_the_experiment_to_its_examples(
    langsmith_endpoint: Any, client: langsmith.Client, named: bool
) -> None:
    dataset_name = unique("linked")
    example_ids = langsmith_endpoint.add_dataset(dataset_name, LANGSMITH_EXAMPLES)
    dataset = Dataset.from_langsmith(dataset_name, client=client)
    name = unique("linked-run")
    upload_to_langsmith(
        experiment(dataset, name),
        client=client,
        dataset_name=dataset_name if named else None,
        timeout=10,
    )
    project = langsmith_endpoint.session_named(name)
    assert project["reference_dataset_id"] == langsmith_endpoint.datasets[dataset_name]["id"]
    runs = langsmith_endpoint.runs(project["id"])
    assert sorted(run["reference_example_id"] for run in runs) == sorted(example_ids)
    assert all(run["reference_example_id"] == run["extra"]["metadata"]["case_id"] for run in runs)


def test_cases_of_another_dataset_are_refused_before_anything_is_created(
    langsmith_endpoint: Any, client: langsmith.Client
) -> None:
    other = unique("other")
    langsmith_endpoint.add_dataset(other, LANGSMITH_EXAMPLES)
    mine = unique("mine")
    langsmith_endpoint.add_dataset(mine, LANGSMITH_EXAMPLES)
    name = unique("mislinked")
    for cases in (Dataset.from_records(RECORDS), Dataset.from_langsmith(other, client=client)):
        with pytest.raises(LangSmithUploadError, match="not examples of the LangSmith dataset"):
            upload_to_langsmith(experiment(cases, name), client=client, dataset_name=mine)
    absent = unique("absent")
    with pytest.raises(LangSmithUploadError, match=f"^LangSmith has no dataset named '{absent}'$"):
        upload_to_langsmith(
            experiment(Dataset.from_records(RECORDS), name), client=client, dataset_name=absent
        )
    assert all(s["name"] != name for s in langsmith_endpoint.sessions.values())


def test_a_refused_batch_of_runs_is_an_error(
    langsmith_endpoint: Any, client: langsmith.Client
) -> None:
    result = experiment(Dataset.from_records(RECORDS[:1]), unique("refused"))
    with (
        langsmith_endpoint.failing("/runs/batch", 422),
        pytest.raises(LangSmithUploadError) as caught,
    ):
        upload_to_langsmith(result, client=client, timeout=10)
    message = str(caught.value)
    assert message.startswith(
        f"LangSmith at {langsmith_endpoint.url} failed while uploading runs 1-1 of 1: "
        "Failed to batch ingest runs"
    )
    assert "422" in message


def test_an_unanswered_info_request_is_not_a_failure(
    langsmith_endpoint: Any, client: langsmith.Client
) -> None:
    # The client logs it and goes on with its defaults; only a refused batch of runs counts.
    name = unique("no-info")
    with langsmith_endpoint.failing("/info", 404):
        upload_to_langsmith(experiment(Dataset.from_records(RECORDS), name), client=client)
    assert len(langsmith_endpoint.runs(langsmith_endpoint.session_named(name)["id"])) == 3


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def silent_endpoint() -> Iterator[str]:
    """An endpoint that accepts connections and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


def result_for_upload() -> ExperimentResult:
    return experiment(Dataset.from_records(RECORDS[:1]), unique("unreachable"))


@pytest.mark.parametrize("endpoint", ["closed", "silent"])
def test_an_unreachable_endpoint_fails_within_the_timeout(
    endpoint: str, silent_endpoint: str
) -> None:
    url = silent_endpoint if endpoint == "silent" else f"http://127.0.0.1:{closed_port()}"
    # A client with langsmith's own retries and timeouts: the upload is bounded anyway.
    client = langsmith.Client(api_url=url, api_key="offline-test")
    result = result_for_upload()
    started = time.monotonic()
    with pytest.raises(LangSmithUploadError) as caught:
        upload_to_langsmith(result, client=client, timeout=2)
    assert time.monotonic() - started < 6
    assert str(caught.value).startswith(f"LangSmith at {url} ")
    if endpoint == "silent":
        assert "did not answer within 2s while creating the experiment" in str(caught.value)


@pytest.mark.processes
def test_the_default_client_is_bounded_and_leaves_nothing_running(silent_endpoint: str) -> None:
    # A fresh process: langsmith caches the environment it reads. It must exit promptly
    # after the failure (no thread left blocking it).
    script = (
        "import json, time\n"
        "from langchain_evals_port.experiments import (\n"
        "    Dataset, LangSmithUploadError, run_experiment, upload_to_langsmith)\n"
        "result = run_experiment(lambda inputs: 'x', Dataset.from_records([{'inputs': 'q'}]),\n"
        "                        [], name='bounded', progress=False)\n"
        "started = time.monotonic()\n"
        "try:\n"
        "    upload_to_langsmith(result, timeout=2)\n"
        "except LangSmithUploadError as error:\n"
        "    print(json.dumps([time.monotonic() - started, str(error)]))\n"
    )
    environment = {
        **os.environ,
        "LANGSMITH_ENDPOINT": silent_endpoint,
        "LANGSMITH_API_KEY": "offline-test",
        "LANGSMITH_TRACING": "false",
    }
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=environment
    )
    assert done.returncode == 0, done.stderr
    seconds, message = json.loads(done.stdout)
    assert seconds < 6
    assert message.startswith(f"LangSmith at {silent_endpoint} ")
    assert time.monotonic() - started < 30


@pytest.mark.parametrize("timeout", [0, -1.0, True, "30"])
def test_the_timeout_must_be_a_positive_number(timeout: Any) -> None:
    with pytest.raises(EvaluatorUsageError, match="timeout must be a positive number"):
        upload_to_langsmith(result_for_upload(), timeout=timeout)
