"""What the runtime reports outside the ledger: OpenTelemetry metrics, LangSmith feedback on
the agent's run, and LangSmith traces of the evaluator runs."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
import threading
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import langsmith
import pytest
from _agents import echo_agent
from langchain_core.tracers.langchain import wait_for_all_tracers
from langsmith import run_trees
from langsmith import utils as ls_utils
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from langchain_evals_port import Score, evaluator
from langchain_evals_port.integrations.langsmith import LangSmithFeedbackTracer
from langchain_evals_port.integrations.otel import OpenTelemetryEvalTracer
from langchain_evals_port.runtime.testkit import runtime_testkit

HERE = Path(__file__).resolve().parent

pytestmark = pytest.mark.filterwarnings("ignore:Creating feedback for a run without session_id")


@evaluator
def graded(outputs: str) -> Any:
    """A scored pass, a failing verdict, an inconclusive outcome or an error, by the echoed
    question."""
    if "good" in outputs:
        return 0.75, "a good answer"
    if "bad" in outputs:
        return False, "a bad answer"
    if "skip" in outputs:
        return Score.unscored("nothing to grade")
    raise ValueError(f"cannot grade {outputs!r}")


@evaluator
def checks(outputs: str) -> dict[str, Any]:
    """Two keys from one evaluation: whether the reply echoes, and how long it is."""
    return {"echoes": outputs.startswith("You asked:"), "long": len(outputs) > 15}


EVALUATORS = {"answer-grade": graded}
CONFIG: dict[str, Any] = {
    "evaluation": {
        "evaluators": {
            "answer-grade": {
                "pass_threshold": 0.5,
                "agents": {"support-agent": {}, "billing-agent": {}},
            },
        }
    }
}


# --- OpenTelemetry -------------------------------------------------------------------------

Points = dict[str, dict[tuple[tuple[str, Any], ...], Any]]


def collect(reader: InMemoryMetricReader) -> Points:
    """Data points by metric name, then by their sorted attributes."""
    points: Points = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else []:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    attributes = tuple(sorted((point.attributes or {}).items()))
                    points.setdefault(metric.name, {})[attributes] = point
    return points


def tags(outcome: str, agent: str) -> tuple[tuple[str, Any], ...]:
    """The tags of ``answer-grade``'s results: named by the evaluator id, keyed by its key."""
    attributes = {"evaluator": "answer-grade", "feedback_key": "graded", "outcome": outcome}
    return tuple(sorted({**attributes, "agent": agent}.items()))


def test_evaluations_publish_outcomes_scores_and_durations_per_agent() -> None:
    reader = InMemoryMetricReader()
    tracer = OpenTelemetryEvalTracer(MeterProvider(metric_readers=[reader]).get_meter("test"))
    with runtime_testkit(CONFIG, EVALUATORS, tracer=tracer, ledger="sqlite") as runtime:
        support = runtime.bind(echo_agent(), agent_id="support-agent")
        billing = runtime.bind(echo_agent(), agent_id="billing-agent")
        ids = [support.invoke_detailed(q).interaction_id for q in ("good", "bad", "skip", "?")]
        ids += [billing.invoke_detailed(q).interaction_id for q in ("good", "good")]
        for interaction_id in ids:
            [_] = runtime.wait_for_evaluations(interaction_id, timeout=10)
    # Closing the runtime waited for the reports, so every result is in the metrics.
    points = collect(reader)

    outcomes = {key: point.value for key, point in points["evals.evaluation.outcomes"].items()}
    assert outcomes == {
        tags("verdict", "support-agent"): 2,
        tags("inconclusive", "support-agent"): 1,
        tags("failed", "support-agent"): 1,
        tags("verdict", "billing-agent"): 2,
    }
    # Verdicts only: every one passes (1) or fails (0); numeric scores, where given, apart.
    passed = {key: (p.count, p.sum) for key, p in points["evals.evaluation.passed"].items()}
    assert passed == {
        tags("verdict", "support-agent"): (2, 1),
        tags("verdict", "billing-agent"): (2, 2),
    }
    scores = {key: (p.count, p.sum) for key, p in points["evals.evaluation.score"].items()}
    assert scores == {
        tags("verdict", "support-agent"): (1, 0.75),
        tags("verdict", "billing-agent"): (2, 1.5),
    }
    durations = points["evals.evaluation.duration"]
    assert {key: point.count for key, point in durations.items()} == outcomes
    assert all(point.sum > 0 for point in durations.values())


# An application that set a global meter provider (so the automatic tracer is on) binds an
# offline judge under its own feedback key, a function with a numeric score held to a
# threshold, and a function scoring two keys at once. In a child process: the global
# provider is set once.
GLOBAL_PROVIDER_CHILD = """
import json
from opentelemetry import metrics
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from _agents import echo_agent
from test_runtime_telemetry import checks
from langchain_evals_port import evaluator
from langchain_evals_port.judge import LLMJudge
from langchain_evals_port.runtime import Registration
from langchain_evals_port.runtime.testkit import runtime_testkit
from langchain_evals_port.testing import ScriptedChatModel

reader = InMemoryMetricReader()
metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
judge = LLMJudge(
    prompt="Question: {inputs}\\nReply: {outputs}\\nIs the reply polite?",
    feedback_key="politeness",
    model=ScriptedChatModel([{"reasoning": "Courteous.", "score": True}]),
)

@evaluator
def reply_chars(outputs):
    return len(outputs)

evaluators = {
    "politeness": judge,
    "length": Registration(reply_chars, pass_threshold=10),
    "checks": checks,
}
bound = {"agents": {"support-agent": {}}}
config = {"evaluation": {"evaluators": {name: bound for name in evaluators}}}
with runtime_testkit(config, evaluators) as runtime:
    reply = runtime.bind(echo_agent(), agent_id="support-agent").invoke_detailed("Refund?")
    runtime.wait_for_evaluations(reply.interaction_id, timeout=10)
points = []
for resource in reader.get_metrics_data().resource_metrics:
    for scope in resource.scope_metrics:
        for metric in scope.metrics:
            for point in metric.data.data_points:
                measured = getattr(point, "value", None)
                if measured is None:
                    measured = [point.count, point.sum]
                points.append([metric.name, dict(point.attributes), measured])
print(json.dumps(points))
"""


@pytest.mark.processes
def test_each_evaluation_is_measured_once_per_key_and_pass_fail_apart_from_scores() -> None:
    completed = subprocess.run(
        [sys.executable, "-c", GLOBAL_PROVIDER_CHILD],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parent.parent)])},
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    measured = {
        (name, tuple(sorted(attributes.items()))): value
        for name, attributes, value in json.loads(completed.stdout)
    }

    def tagged(evaluator: str, key: str) -> tuple[tuple[str, str], ...]:
        attributes = {"evaluator": evaluator, "feedback_key": key, "outcome": "verdict"}
        return tuple(sorted({**attributes, "agent": "support-agent"}.items()))

    keys = [
        tagged("politeness", "politeness"),
        tagged("length", "reply_chars"),
        tagged("checks", "echoes"),
        tagged("checks", "long"),
    ]
    durations = {key for key in measured if key[0] == "evals.evaluation.duration"}
    assert durations == {("evals.evaluation.duration", key) for key in keys}
    assert {key: value for key, value in measured.items() if key not in durations} == {
        # One outcome per evaluation and key, from the runtime (tagged with the agent and
        # named by the evaluator id); the judge inside reports nothing of its own.
        **{("evals.evaluation.outcomes", key): 1 for key in keys},
        # Pass/fail, whose mean is the pass rate: every verdict, numeric ones by threshold.
        **{("evals.evaluation.passed", key): [1, 1] for key in keys},
        # Numeric scores only.
        ("evals.evaluation.score", tagged("length", "reply_chars")): [1, len("You asked: Refund?")],
    }


# --- a LangSmith stand-in that keeps bodies ------------------------------------------------


@dataclass
class Recorded:
    """Requests a local LangSmith stand-in received, with their bodies."""

    url: str = ""
    requests: list[tuple[str, str, bytes, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def feedback(self) -> list[dict[str, Any]]:
        with self.lock:
            found = [(m, p, b) for m, p, b, _ in self.requests]
        return [
            json.loads(body)
            for method, path, body in found
            if (method, path) == ("POST", "/feedback")
        ]

    def runs(self) -> dict[str, dict[str, Any]]:
        """Posted runs by id, from LangSmith's multipart ingestion."""
        with self.lock:
            found = [(p, b, t) for _, p, b, t in self.requests if p == "/runs/multipart"]
        runs: dict[str, dict[str, Any]] = {}
        for _, body, content_type in found:
            for name, value in multipart_parts(body, content_type):
                kind, _, rest = name.partition(".")
                run_id, _, part = rest.partition(".")
                if kind == "post":
                    runs.setdefault(run_id, {})[part or "run"] = value
        return runs


def multipart_parts(body: bytes, content_type: str) -> Iterator[tuple[str, Any]]:
    """The (name, JSON value) of each part of a multipart/form-data body."""
    match = re.search(r"boundary=([^;]+)", content_type)
    assert match, content_type
    delimiter = b"--" + match.group(1).encode()
    for chunk in body.split(delimiter):
        head, separator, value = chunk.partition(b"\r\n\r\n")
        if not separator:
            continue
        name = re.search(rb'name="([^"]+)"', head)
        if name is not None:
            yield name.group(1).decode(), json.loads(value.removesuffix(b"\r\n"))


_PROJECT = {
    "id": str(uuid.uuid4()),
    "name": "default",
    "tenant_id": str(uuid.uuid4()),
    "start_time": "2024-01-01T00:00:00Z",
    "reference_dataset_id": None,
}


@pytest.fixture(scope="module")
def stand_in() -> Recorded:
    """Lives as long as the test process: LangSmith's client may post after a test ends."""
    recorded = Recorded()

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            with recorded.lock:
                recorded.requests.append(
                    (
                        self.command,
                        self.path.split("?")[0].rstrip("/"),
                        raw,
                        self.headers.get("content-type") or "",
                    )
                )
            payload = b"{}"
            if self.command == "GET" and self.path.startswith("/sessions?"):
                payload = json.dumps([_PROJECT]).encode()  # feedback names the project
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PATCH = do_PUT = _answer

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    recorded.url = f"http://127.0.0.1:{server.server_port}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return recorded


# --- LangSmith feedback --------------------------------------------------------------------


@pytest.mark.parametrize("given", ["True", "a tracer"])
def test_each_recorded_result_becomes_feedback_on_the_agents_run(
    stand_in: Recorded, langsmith_endpoint: Any, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    # As documented: verdicts and also the outcomes that are not verdicts, so the run shows
    # that its evaluation could not judge, and why, without a score to average.
    feedback: bool | LangSmithFeedbackTracer
    if given == "True":
        monkeypatch.setenv("LANGSMITH_ENDPOINT", stand_in.url)  # read by the default client
        feedback = True
    else:
        feedback = LangSmithFeedbackTracer(langsmith.Client(api_url=stand_in.url, api_key="t"))
    config = copy.deepcopy(CONFIG)
    config["evaluation"]["evaluators"]["checks"] = {"agents": {"support-agent": {}}}
    evaluators = {**EVALUATORS, "checks": checks}
    with runtime_testkit(config, evaluators, langsmith_feedback=feedback) as runtime:
        agent = runtime.bind(echo_agent(), agent_id="support-agent")
        ids = {q: agent.invoke_detailed(q).interaction_id for q in ("good", "bad", "skip", "?")}
        for interaction_id in ids.values():
            runtime.wait_for_evaluations(interaction_id, timeout=10)
        run_ids = {q: runtime.ledger.get_interaction(i).run_id for q, i in ids.items()}
    # Closing the runtime flushed its feedback.

    assert all(run_ids.values())
    sent: dict[tuple[str, str], dict[str, Any]] = {}
    for body in stand_in.feedback():
        if body["run_id"] in run_ids.values():
            assert (body["run_id"], body["key"]) not in sent, "feedback sent twice"
            sent[body["run_id"], body["key"]] = body
    # One feedback per recorded result: graded's one key and both keys of checks.
    assert set(sent) == {
        (run_id, key) for run_id in run_ids.values() for key in ("graded", "echoes", "long")
    }
    good, bad, skipped, broken = (sent[run_ids[q], "graded"] for q in ("good", "bad", "skip", "?"))
    assert (good["score"], good["comment"]) == (0.75, "a good answer")
    assert (bad["score"], bad["comment"]) == (False, "a bad answer")
    assert sent[run_ids["good"], "echoes"]["score"] is True
    assert sent[run_ids["good"], "long"]["score"] is False  # "You asked: good" is 15 long
    # Non-verdicts carry no score, and say why in the comment.
    assert skipped.get("score") is None
    assert skipped["comment"] == "[inconclusive] nothing to grade"
    assert broken.get("score") is None
    assert broken["comment"].startswith("[failed: evaluator_error] ")
    assert "ValueError: cannot grade" in broken["comment"]
    assert {body["feedback_source"]["type"] for body in sent.values()} == {"model"}


def test_feedback_names_the_project_of_its_run_as_langsmith_asks(
    langsmith_endpoint: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # langsmith warns that run feedback without a session_id will stop working (and a
    # deployment that cannot find the run refuses it): the runtime sends the project's id.
    project = f"support-bot-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("LANGSMITH_PROJECT", project)
    # langsmith caches what it read of the environment (another test's endpoint, say).
    ls_utils.get_env_var.cache_clear()  # type: ignore[attr-defined]
    ls_utils.get_tracer_project.cache_clear()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with runtime_testkit(CONFIG, EVALUATORS, langsmith_feedback=True) as runtime:
                agent = runtime.bind(echo_agent(), agent_id="support-agent")
                replies = [agent.invoke_detailed(q) for q in ("good", "bad")]
                run_ids = set()
                for reply in replies:
                    runtime.wait_for_evaluations(reply.interaction_id, timeout=10)
                    run_ids.add(runtime.ledger.get_interaction(reply.interaction_id).run_id)
            # Closing the runtime flushed its feedback.
    finally:
        ls_utils.get_env_var.cache_clear()  # type: ignore[attr-defined]
        ls_utils.get_tracer_project.cache_clear()
    sent = [body for body in langsmith_endpoint.feedback() if body["run_id"] in run_ids]
    assert {body["run_id"] for body in sent} == run_ids
    session_id = langsmith_endpoint.session_named(project)["id"]
    assert {body.get("session_id") for body in sent} == {session_id}
    assert not [w for w in caught if "without session_id" in str(w.message)]


# --- LangSmith tracing of evaluator runs ---------------------------------------------------


@pytest.fixture
def tracing_to(stand_in: Recorded, monkeypatch: pytest.MonkeyPatch) -> Iterator[Recorded]:
    """LangSmith tracing on, pointed at the stand-in, with langsmith's caches reset."""
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    monkeypatch.setenv("LANGSMITH_ENDPOINT", stand_in.url)
    monkeypatch.setenv("LANGSMITH_API_KEY", "test")
    monkeypatch.setenv("LANGSMITH_PROJECT", "runtime-telemetry")
    monkeypatch.setenv("LANGSMITH_DISABLE_RUN_COMPRESSION", "true")
    monkeypatch.setattr(run_trees, "_CLIENT", None)
    ls_utils.get_env_var.cache_clear()  # type: ignore[attr-defined]
    ls_utils.get_tracer_project.cache_clear()
    try:
        yield stand_in
    finally:
        wait_for_all_tracers()
        ls_utils.get_env_var.cache_clear()  # type: ignore[attr-defined]
        ls_utils.get_tracer_project.cache_clear()


def test_evaluator_runs_are_traced_under_the_evaluator_id(tracing_to: Recorded) -> None:
    with runtime_testkit(CONFIG, EVALUATORS) as runtime:
        agent = runtime.bind(echo_agent(), agent_id="support-agent")
        reply = agent.invoke_detailed("good")
        [record] = runtime.wait_for_evaluations(reply.interaction_id, timeout=10)
        agent_run_id = runtime.ledger.get_interaction(reply.interaction_id).run_id
    wait_for_all_tracers()

    runs = tracing_to.runs()
    assert agent_run_id in runs, sorted(runs)
    evaluator_runs = [
        run
        for run in runs.values()
        if run["run"]["name"] == "answer-grade"
        and run.get("extra", {}).get("metadata", {}).get("interaction_id") == reply.interaction_id
    ]
    assert len(evaluator_runs) == 1, runs
    [run] = evaluator_runs
    assert run["run"]["run_type"] == "chain"
    assert "langchain_evals:evaluation" in run["run"]["tags"]
    assert run["run"]["session_name"] == "runtime-telemetry"
    metadata = run["extra"]["metadata"]
    assert metadata["evaluation_id"] == record.evaluation_id
    assert (metadata["evaluator_id"], metadata["agent_id"]) == ("answer-grade", "support-agent")
    # The run's output is the result; the record points back at the run.
    assert run["outputs"]["output"]["comment"] == "a good answer"
    assert runs[str(record.result.source_run_id)] is run
