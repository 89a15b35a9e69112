"""``langchain-evals console`` as a user starts it: it says where it serves once it is warmed
up, serves the pages on 127.0.0.1 to the hosts it is served on only, and refuses another
address without a token."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from _seed import seed_small

from langchain_evals_port.storage import SqliteLedger

pytestmark = pytest.mark.processes

pytest.importorskip("uvicorn", reason="the console extra is not installed")


def _console(*args: str, python: tuple[str, ...] = ()) -> subprocess.Popen[str]:
    """``langchain-evals console`` started with ``args`` (``python``: the interpreter's
    options); what it prints on stderr comes in order with its stdout."""
    return subprocess.Popen(
        [sys.executable, *python, "-m", "langchain_evals_port.cli", "console", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "LANGCHAIN_EVALS_CONSOLE_TOKEN": ""},
    )


def _address(server: subprocess.Popen[str]) -> tuple[str, list[str]]:
    """The address the console says it serves on, once it says so (it is ready then); with
    what it printed before."""
    assert server.stdout is not None
    before: list[str] = []
    for line in server.stdout:  # until it says where it serves (EOF if it died)
        found = re.fullmatch(
            r"langchain-evals console: serving (http://127\.0\.0\.1:\d+/); Ctrl-C stops it\n",
            line,
        )
        if found is not None:
            return found.group(1), before
        before.append(line)
    raise AssertionError(f"the console stopped before serving: {''.join(before[-20:])}")


@pytest.fixture
def seeded_file(tmp_path: Path) -> Path:
    """A SQLite ledger file holding ``seed_small``."""
    path = tmp_path / "ledger.db"
    ledger = SqliteLedger(path)
    seed_small(ledger)
    ledger.close()
    return path


def test_the_command_serves_the_console_on_localhost(seeded_file: Path) -> None:
    server = _console("--ledger", str(seeded_file), "--port", "0", "--read-only")
    try:
        url, _ = _address(server)
        page = httpx.get(f"{url}failed", timeout=600)
        assert page.status_code == 200
        assert "judge timed out after 30 s" in page.text
        assert "Retry" not in page.text  # --read-only
    finally:
        server.terminate()
        server.wait(60)


def test_the_command_says_where_it_serves_once_warm_and_answers_only_its_hosts(
    seeded_file: Path,
) -> None:
    # -X importtime logs each import on stderr, here in order with what the command prints.
    server = _console(
        "--ledger",
        str(seeded_file),
        "--port",
        "0",
        "--allowed-host",
        "console.test",
        python=("-X", "importtime"),
    )
    try:
        url, before = _address(server)
        # Warmed up before it said so: SciPy's quantiles (seconds on a loaded machine) are
        # loaded, not left to the first page.
        assert any(re.search(r"\| +scipy\.stats$", line.rstrip()) for line in before)
        page = httpx.get(url)
        assert page.status_code == 200
        assert "0.700 [0.397, 0.892]" in page.text
        port = urlsplit(url).port
        named = httpx.get(url, headers={"Host": f"console.test:{port}"})
        assert named.status_code == 200
        rebound = httpx.get(url, headers={"Host": f"rebind.attacker.test:{port}"})
        assert rebound.status_code == 400
    finally:
        server.terminate()
        server.wait(60)


def test_another_address_needs_a_token(tmp_path: Path) -> None:
    done = _console("--ledger", str(tmp_path / "ledger.db"), "--host", "0.0.0.0")
    err, _ = done.communicate(timeout=60)
    assert done.returncode == 2
    assert "serving on 0.0.0.0 needs a token" in err
    assert not (tmp_path / "ledger.db").exists()  # refused before anything was opened
