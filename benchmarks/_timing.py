"""Helpers the benchmarks share (run as scripts, so this folder is on ``sys.path``): import
times in fresh interpreters, and a LangSmith API stand-in on 127.0.0.1."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def import_seconds(statement: str, after: str = "pass", runs: int = 7) -> float:
    """Median wall time of ``statement`` in fresh interpreters, each having run ``after``
    first (so ``after``'s cost is excluded); bytecode is cached by a warm-up run."""
    code = (
        f"import time; {after}; t = time.perf_counter(); {statement}; "
        "print(time.perf_counter() - t)"
    )
    # Measure warm imports, as a user's machine has them: allow the bytecode cache.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    samples = []
    for _ in range(runs + 1):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
        )
        samples.append(float(out.stdout.strip()))
    return statistics.median(samples[1:])


@contextmanager
def langsmith_stand_in() -> Iterator[list[str]]:
    """A LangSmith API stand-in on 127.0.0.1 answering ``{}``; yields the paths requested."""
    paths: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            paths.append(self.path)
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        do_GET = do_POST = do_PATCH = _answer

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    os.environ["LANGSMITH_ENDPOINT"] = f"http://127.0.0.1:{server.server_port}"
    os.environ["LANGSMITH_API_KEY"] = "benchmark"
    try:
        yield paths
    finally:
        server.shutdown()
