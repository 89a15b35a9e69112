"""Fixtures shared by the whole suite."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from hypothesis import HealthCheck, settings

# Property tests wait on nothing but their examples: no per-example deadline and no
# too-slow health check, which a loaded two-core machine trips with correct code.
settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")

# The plugin and LangSmith tests drive inner pytest runs.
pytest_plugins = ["pytester"]

# OpenEvals' and agentevals' own test files are test data, run by
# tests/compat/test_peer_suites.py in a pytest of their own: never collected here.
collect_ignore = ["compat/peer_suites"]


@dataclass
class LangSmithStandIn:
    """A LangSmith API stand-in on 127.0.0.1.

    It serves the datasets given to ``add_dataset`` as LangSmith does (``GET /datasets?name=``,
    ``GET /examples?dataset=`` in pages of ``offset``/``limit``, ``GET /examples/{id}``),
    creates projects (``POST /sessions``, a taken name is a 409 as in LangSmith; ``PATCH
    /sessions/{id}``) and finds them by name (``GET /sessions?name=``), keeps the JSON body of every write in ``received`` (``runs()`` and
    ``feedback()`` read it) and answers every other request with ``{}``. ``failing(path,
    status)`` makes one path answer with an error status for a while.
    """

    port: int
    requests: list[tuple[str, str]] = field(default_factory=list)
    received: list[tuple[str, str, Any]] = field(default_factory=list)
    datasets: dict[str, dict[str, Any]] = field(default_factory=dict)
    examples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    failures: dict[str, int] = field(default_factory=dict)
    tenant_id: str = field(default_factory=lambda: str(uuid.uuid4()))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def add_dataset(self, name: str, examples: list[dict[str, Any]]) -> list[str]:
        """Serve a dataset named ``name`` holding ``examples`` (each with any of ``inputs``,
        ``outputs``, ``metadata``); returns the ids given to the examples."""
        now = "2024-01-01T00:00:00Z"
        dataset_id = str(uuid.uuid4())
        self.datasets[name] = {"id": dataset_id, "name": name, "created_at": now}
        self.examples[dataset_id] = [
            {"id": str(uuid.uuid4()), "dataset_id": dataset_id, "created_at": now, **example}
            for example in examples
        ]
        return [example["id"] for example in self.examples[dataset_id]]

    @contextmanager
    def failing(self, path: str, status: int) -> Iterator[None]:
        """Answer requests for ``path`` with ``status`` while the block runs."""
        self.failures[path] = status
        try:
            yield
        finally:
            del self.failures[path]

    def session_named(self, name: str) -> dict[str, Any]:
        """The project (session) created under ``name``."""
        [found] = [s for s in self.sessions.values() if s["name"] == name]
        return found

    def runs(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """The runs posted to ``/runs/batch`` (of one project, given its id), in order."""
        posted = [
            run
            for method, path, body in self.received
            if (method, path) == ("POST", "/runs/batch")
            for run in body.get("post", [])
        ]
        return [r for r in posted if session_id is None or r.get("session_id") == session_id]

    def feedback(self) -> list[dict[str, Any]]:
        """The bodies posted to ``/feedback``, in order."""
        return [
            body for method, path, body in self.received if (method, path) == ("POST", "/feedback")
        ]

    def answer(self, method: str, target: str) -> Any:
        """The JSON body that answers ``method target`` (``respond`` for writes)."""
        return self.respond(method, target, None)[1]

    def respond(self, method: str, target: str, body: Any) -> tuple[int, Any]:
        """The status and JSON body that answer ``method target`` sent with ``body``."""
        url = urlsplit(target)
        path = url.path.rstrip("/")
        query = {key: values[0] for key, values in parse_qs(url.query).items()}
        if path in self.failures:
            return self.failures[path], {"detail": "failing on purpose"}
        if method == "GET" and path == "/datasets" and "name" in query:
            found = self.datasets.get(query["name"])
            return 200, [found] if found else []
        if method == "GET" and path == "/examples" and "dataset" in query:
            offset, limit = int(query.get("offset", 0)), int(query.get("limit", 100))
            return 200, self.examples.get(query["dataset"], [])[offset : offset + limit]
        if method == "GET" and path.startswith("/examples/"):
            example_id = path.removeprefix("/examples/")
            for examples in self.examples.values():
                for example in examples:
                    if example["id"] == example_id:
                        return 200, example
            return 404, {"detail": "Example not found"}
        if method == "GET" and path == "/sessions" and "name" in query:
            return 200, [s for s in self.sessions.values() if s["name"] == query["name"]]
        if method == "POST" and path == "/sessions" and isinstance(body, dict):
            if any(s["name"] == body.get("name") for s in self.sessions.values()):
                return 409, {"detail": "Session already exists"}
            session = {
                "tenant_id": self.tenant_id,
                "start_time": "2024-01-01T00:00:00Z",
                "reference_dataset_id": None,
                **body,
            }
            self.sessions[session["id"]] = session
            return 200, session
        if method == "PATCH" and path.startswith("/sessions/") and isinstance(body, dict):
            session = self.sessions.get(path.removeprefix("/sessions/"))
            if session is None:
                return 404, {"detail": "Session not found"}
            session.update({key: value for key, value in body.items() if value is not None})
            return 200, session
        return 200, {}


def _serve_langsmith() -> LangSmithStandIn:
    stand_in = LangSmithStandIn(port=0)

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw
            stand_in.requests.append((self.command, self.path))
            if self.command != "GET":
                path = urlsplit(self.path).path.rstrip("/")
                stand_in.received.append((self.command, path, body))
            status, answer = stand_in.respond(self.command, self.path, body)
            payload = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PATCH = do_PUT = _answer

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    stand_in.port = server.server_port
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return stand_in


@pytest.fixture(scope="session")
def langsmith_endpoint() -> Iterator[LangSmithStandIn]:
    """Point LangSmith's client at a local stand-in, with tracing off, for the session.

    LangSmith's client keeps posting runs from a background thread after a test returns,
    so the stand-in lives as long as the test process.
    """
    stand_in = _serve_langsmith()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LANGSMITH_ENDPOINT", stand_in.url)
        patch.setenv("LANGSMITH_API_KEY", "offline-test")
        patch.setenv("LANGSMITH_TRACING", "false")
        yield stand_in


@pytest.fixture(autouse=True)
def _experiments_work_in_a_folder_of_their_own(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Experiments keep a store and a judge cache under ``.langchain-evals/`` in the working
    directory by default: each experiments test works in a folder of its own."""
    if "experiments" in request.node.path.parts:
        monkeypatch.chdir(request.getfixturevalue("tmp_path"))


_SERVICE_FIXTURES = frozenset(
    {"postgres_dsn", "postgres_database_dsn", "restartable_postgres", "browser", "tab", "bwrap"}
)
"""Fixtures of a service: PostgreSQL, Chromium, bubblewrap."""

_PROCESS_FIXTURES = frozenset({"restartable_postgres", "browser", "tab", "bwrap", "runner"})
"""Fixtures that start child processes (a server, a browser, sandboxed runs)."""

_SERVICE_PARAMETERS = frozenset({"postgres", "docker", "bubblewrap"})
"""Parameter values that run a test on a service (``location``, a ledger's backend, the
sandboxed runners)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests that need a service (``services``: PostgreSQL, Docker, bubblewrap,
    Chromium) or start child processes (``processes``) by their fixtures and parameters, so
    ``-m "not processes and not services"`` is the fast inner loop; tests that start
    processes themselves carry the mark in their modules."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        callspec = getattr(item, "callspec", None)
        values = callspec.params.values() if callspec is not None else ()
        if fixtures & _SERVICE_FIXTURES or any(
            isinstance(value, str) and value in _SERVICE_PARAMETERS for value in values
        ):
            item.add_marker(pytest.mark.services)
        if fixtures & _PROCESS_FIXTURES:
            item.add_marker(pytest.mark.processes)
