"""Fixtures shared by the whole suite."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

# The plugin and LangSmith tests drive inner pytest runs.
pytest_plugins = ["pytester"]


@dataclass
class LangSmithStandIn:
    """A LangSmith API stand-in on 127.0.0.1. It serves the datasets given to ``add_dataset``
    as LangSmith does (``GET /datasets?name=``, ``GET /examples?dataset=`` in pages of
    ``offset``/``limit``) and answers every other request with ``{}``."""

    port: int
    requests: list[tuple[str, str]] = field(default_factory=list)
    datasets: dict[str, dict[str, Any]] = field(default_factory=dict)
    examples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

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

    def answer(self, method: str, target: str) -> Any:
        """The JSON body that answers ``method target``."""
        url = urlsplit(target)
        query = {key: values[0] for key, values in parse_qs(url.query).items()}
        if method == "GET" and url.path == "/datasets" and "name" in query:
            found = self.datasets.get(query["name"])
            return [found] if found else []
        if method == "GET" and url.path == "/examples" and "dataset" in query:
            offset, limit = int(query.get("offset", 0)), int(query.get("limit", 100))
            return self.examples.get(query["dataset"], [])[offset : offset + limit]
        return {}


def _serve_langsmith() -> LangSmithStandIn:
    stand_in = LangSmithStandIn(port=0)

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            stand_in.requests.append((self.command, self.path))
            body = json.dumps(stand_in.answer(self.command, self.path)).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

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
