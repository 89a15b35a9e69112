"""Fixtures shared by the whole suite."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

# The plugin and LangSmith tests drive inner pytest runs.
pytest_plugins = ["pytester"]


@dataclass
class LangSmithStandIn:
    """A LangSmith API stand-in on 127.0.0.1 that answers every request with ``{}``."""

    port: int
    requests: list[tuple[str, str]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _serve_langsmith() -> LangSmithStandIn:
    stand_in = LangSmithStandIn(port=0)

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            stand_in.requests.append((self.command, self.path))
            body = json.dumps({}).encode()
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
