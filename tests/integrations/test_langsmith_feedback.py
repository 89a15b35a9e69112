"""LangSmith feedback tracers against a real HTTP stand-in for the LangSmith API."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from langchain_evals_port.core._result import EvaluatorResult
from langchain_evals_port.integrations.langsmith import (
    LangSmithFeedbackTracer,
    LangSmithTestFeedback,
    bounded_client,
    langsmith_test_active,
)

pytestmark = pytest.mark.filterwarnings("ignore:Creating feedback for a run without session_id")

_ID = str(uuid.uuid4())
_NOW = "2024-01-01T00:00:00Z"
# Enough of a dataset / project for langsmith's pytest plugin to set up a test suite.
_ENTITY = {
    "id": _ID,
    "name": "suite",
    "created_at": _NOW,
    "modified_at": _NOW,
    "start_time": _NOW,
    "tenant_id": _ID,
    "reference_dataset_id": _ID,
}


def _answer_for(method: str, path: str) -> Any:
    if path == "/info":
        return {}
    if method == "GET" and path in ("/datasets", "/sessions", "/examples"):
        return [_ENTITY]
    return _ENTITY


@dataclass
class Recorder:
    """A LangSmith stand-in on 127.0.0.1 that keeps every request with its JSON body."""

    url: str = ""
    gate: threading.Event = field(default_factory=threading.Event)
    requests: list[tuple[str, str, Any]] = field(default_factory=list)

    def feedback(self) -> list[dict[str, Any]]:
        return [
            body for method, path, body in self.requests if (method, path) == ("POST", "/feedback")
        ]


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    rec = Recorder()
    rec.gate.set()

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw
            path = self.path.split("?")[0].rstrip("/")
            if path == "/feedback":
                rec.gate.wait(timeout=60)
            rec.requests.append((self.command, path, body))
            payload = json.dumps(_answer_for(self.command, path)).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PATCH = do_PUT = _answer

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    rec.url = f"http://127.0.0.1:{server.server_port}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield rec
    server.shutdown()
    server.server_close()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tracer(url: str, **kwargs: Any) -> LangSmithFeedbackTracer:
    client = bounded_client(api_url=url, api_key="offline-test", timeout_ms=2_000, retries=0)
    return LangSmithFeedbackTracer(client, flush_timeout=5.0, **kwargs)


def test_batch_of_results_is_posted_as_feedback(recorder: Recorder) -> None:
    tracer = _tracer(recorder.url, batch_size=2)
    run_ids = [str(uuid.uuid4()) for _ in range(3)]
    session = str(uuid.uuid4())
    for index, run_id in enumerate(run_ids):
        tracer.on_result(
            "exact_match",
            EvaluatorResult(
                key="exact_match",
                score=index / 2,
                comment=f"c{index}",
                metadata={"run_id": run_id, "session_id": session},
            ),
        )
    assert tracer.flush(timeout=30)
    sent = sorted(recorder.feedback(), key=lambda body: run_ids.index(body["run_id"]))
    assert [(b["run_id"], b["key"], b["score"], b["comment"]) for b in sent] == [
        (run_ids[0], "exact_match", 0.0, "c0"),
        (run_ids[1], "exact_match", 0.5, "c1"),
        (run_ids[2], "exact_match", 1.0, "c2"),
    ]
    assert {b["feedback_source"]["type"] for b in sent} == {"model"}
    assert {b["session_id"] for b in sent} == {session}


def test_non_verdicts_carry_no_score_and_say_why(recorder: Recorder) -> None:
    tracer = _tracer(recorder.url)
    run_id = str(uuid.uuid4())
    tracer.on_result(
        "judge",
        EvaluatorResult.inconclusive("judge", "no answer given", metadata={"run_id": run_id}),
    )
    tracer.on_result(
        "judge",
        EvaluatorResult.failed(
            "judge",
            "timeout",
            "model timed out",
            comment="retry later",
            metadata={"run_id": run_id},
        ),
    )
    assert tracer.flush(timeout=30)
    sent = {b["comment"]: b for b in recorder.feedback()}
    assert set(sent) == {
        "[inconclusive] no answer given",
        "[failed: timeout] model timed out\nretry later",
    }
    assert all(b.get("score") is None and b["run_id"] == run_id for b in sent.values())


def test_source_run_id_links_the_evaluator_run(recorder: Recorder) -> None:
    tracer = _tracer(recorder.url)
    run_id, source = str(uuid.uuid4()), str(uuid.uuid4())
    tracer.on_result(
        "x", EvaluatorResult(key="x", score=True, source_run_id=source, metadata={"run_id": run_id})
    )
    assert tracer.flush(timeout=30)
    [body] = recorder.feedback()
    assert body["score"] == 1
    assert body["feedback_source"]["metadata"]["__run"]["run_id"] == source


def test_results_without_a_run_id_are_skipped(recorder: Recorder) -> None:
    tracer = _tracer(recorder.url, run_id_key="target_run")
    tracer.on_result("x", EvaluatorResult(key="x", score=1.0))
    tracer.on_result(
        "x", EvaluatorResult(key="x", score=1.0, metadata={"run_id": str(uuid.uuid4())})
    )
    target = str(uuid.uuid4())
    tracer.on_result("x", EvaluatorResult(key="x", score=0.0, metadata={"target_run": target}))
    assert tracer.flush(timeout=30)
    assert [b["run_id"] for b in recorder.feedback()] == [target]


def test_unreachable_endpoint_warns_once_and_drops(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The default client (``bounded_client()``) from the environment, as an application gets.
    monkeypatch.setenv("LANGSMITH_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    monkeypatch.setenv("LANGSMITH_API_KEY", "offline-test")
    tracer = LangSmithFeedbackTracer(batch_size=2)
    with caplog.at_level(logging.WARNING, logger="langchain_evals_port.integrations.langsmith"):
        for _ in range(4):
            tracer.on_result(
                "x", EvaluatorResult(key="x", score=1.0, metadata={"run_id": str(uuid.uuid4())})
            )
        assert tracer.flush(timeout=120)
    warnings = [r for r in caplog.records if r.name.endswith("integrations.langsmith")]
    assert len(warnings) == 1
    assert "dropped" in warnings[0].getMessage()


def test_flush_waits_at_most_its_timeout(recorder: Recorder) -> None:
    recorder.gate.clear()
    tracer = _tracer(recorder.url)
    tracer.on_result(
        "x", EvaluatorResult(key="x", score=1.0, metadata={"run_id": str(uuid.uuid4())})
    )
    assert not tracer.flush(timeout=0.1)
    recorder.gate.set()
    assert tracer.flush(timeout=30)
    assert len(recorder.feedback()) == 1


def test_bounded_client_limits_retries_and_timeout() -> None:
    client = bounded_client(api_url="http://127.0.0.1:1", api_key="k", timeout_ms=1_500, retries=1)
    assert client.retry_config.total == 1
    assert client._timeout == (1.5, 1.5)


def test_test_feedback_does_nothing_outside_a_langsmith_test() -> None:
    assert not langsmith_test_active()
    LangSmithTestFeedback().on_result("x", EvaluatorResult(key="x", score=1.0))


@pytest.mark.processes
def test_package_import_does_not_import_the_integration() -> None:
    code = "import sys, langchain_evals_port; print('langchain_evals_port.integrations.langsmith' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def run_langsmith_test(
    pytester: pytest.Pytester,
    recorder: Recorder,
    monkeypatch: pytest.MonkeyPatch,
    **files: str,
) -> pytest.RunResult:
    """Run ``files`` as LangSmith pytest tests against the stand-in, with this checkout's
    plugin (not the installed entry point)."""
    monkeypatch.setenv("LANGSMITH_ENDPOINT", recorder.url)
    monkeypatch.setenv("LANGSMITH_API_KEY", "offline-test")
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    monkeypatch.setenv("LANGSMITH_TEST_TRACKING", "true")
    pytester.makepyfile(**files)
    return pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-p",
        "no:langchain_evals",
        "-p",
        "langchain_evals_port.pytest_plugin",
        timeout=120,
    )


_LANGSMITH_TEST = """
import pytest

from langchain_evals_port.core._result import EvaluatorResult
from langchain_evals_port.integrations.langsmith import LangSmithTestFeedback, langsmith_test_active


@pytest.mark.langsmith
def test_logged():
    assert langsmith_test_active()
    tracer = LangSmithTestFeedback()
    tracer.on_result("exact", EvaluatorResult(key="exact_match", score=0.75, comment="close"))
    tracer.on_result("judge", EvaluatorResult.inconclusive("judge", "no answer"))
"""


@pytest.mark.processes
def test_test_feedback_inside_a_langsmith_pytest_test(
    pytester: pytest.Pytester, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = run_langsmith_test(pytester, recorder, monkeypatch, test_logged=_LANGSMITH_TEST)
    result.assert_outcomes(passed=1)
    mine = {b["key"]: b for b in recorder.feedback() if b["key"] in ("exact_match", "judge")}
    assert (mine["exact_match"]["score"], mine["exact_match"]["comment"]) == (0.75, "close")
    assert mine["judge"].get("score") is None
    assert mine["judge"]["comment"] == "[inconclusive] no answer"
    assert mine["judge"]["run_id"] == mine["exact_match"]["run_id"]


_EVAL_SUITE_LANGSMITH_TEST = """
import pytest

from langchain_evals_port import ExactMatch


@pytest.mark.eval_suite
@pytest.mark.langsmith
def test_scored():
    ExactMatch()(outputs="Paris", reference_outputs="Paris")
"""


@pytest.mark.processes
def test_the_plugin_logs_results_of_an_eval_suite_langsmith_test(
    pytester: pytest.Pytester, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = run_langsmith_test(
        pytester, recorder, monkeypatch, test_scored=_EVAL_SUITE_LANGSMITH_TEST
    )
    result.assert_outcomes(passed=1)
    logged = [b for b in recorder.feedback() if b["key"] == "exact_match"]
    assert [(b["score"], b.get("comment")) for b in logged] == [(1.0, None)]
    assert (pytester.path / "eval-report.md").exists()


_FEEDBACK_RUN_TEST = """
import pytest
from langsmith import get_current_run_tree

from langchain_evals_port import evaluator

seen = []


@evaluator
def judged(*, outputs):
    run = get_current_run_tree()
    seen.append((run.name, run.session_name))
    return True


@pytest.mark.eval_suite
@pytest.mark.langsmith
def test_judged():
    judged(outputs="x")
    assert seen == [("judged", "evaluators")]
"""


@pytest.mark.processes
def test_judge_calls_run_inside_a_langsmith_feedback_run(
    pytester: pytest.Pytester, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = run_langsmith_test(pytester, recorder, monkeypatch, test_judged=_FEEDBACK_RUN_TEST)
    result.assert_outcomes(passed=1)
    assert [b["key"] for b in recorder.feedback() if b["key"] == "judged"] == ["judged"]
