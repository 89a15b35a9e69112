"""``langchain-evals console`` as a user starts it: it serves the pages on 127.0.0.1, and
refuses another address without a token."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from _seed import seed_small

from langchain_evals_port.runtime.ledger import SqliteLedger

pytestmark = pytest.mark.processes

pytest.importorskip("uvicorn", reason="the console extra is not installed")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _console(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "langchain_evals_port.cli", "console", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "LANGCHAIN_EVALS_CONSOLE_TOKEN": ""},
    )


def test_the_command_serves_the_console_on_localhost(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    ledger = SqliteLedger(path)
    seed_small(ledger)
    ledger.close()
    port = _free_port()
    server = _console("--ledger", str(path), "--port", str(port), "--read-only")
    try:
        # Until the server listens (or exits); then its first page, however long it takes
        # on a loaded machine (the bounds only catch a hung test).
        deadline = time.monotonic() + 600
        while True:
            assert server.poll() is None, server.communicate()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=60).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the console never listened"
                time.sleep(0.05)
        page = httpx.get(f"http://127.0.0.1:{port}/failed", timeout=600)
        assert page.status_code == 200
        assert "judge timed out after 30 s" in page.text
        assert "Retry" not in page.text  # --read-only
    finally:
        server.terminate()
        server.wait(10)


def test_another_address_needs_a_token(tmp_path: Path) -> None:
    done = _console("--ledger", str(tmp_path / "ledger.db"), "--host", "0.0.0.0")
    _out, err = done.communicate(timeout=60)
    assert done.returncode == 2
    assert "serving on 0.0.0.0 needs a token" in err
    assert not (tmp_path / "ledger.db").exists()  # refused before anything was opened
