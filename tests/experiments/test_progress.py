"""An experiment's progress bar: drawn where a person watches, never in CI or a pipe."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from langchain_evals_port import ExactMatch
from langchain_evals_port.experiments import Dataset, run_experiment

THREE = Dataset.from_records(
    [{"inputs": {"q": str(i)}, "reference_outputs": "4"} for i in range(3)]
)


def test_quiet_when_stderr_is_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    run_experiment(lambda inputs: "4", THREE, [ExactMatch()], store=False)
    assert capsys.readouterr().err == ""


PROGRAM = """
import sys
from langchain_evals_port import ExactMatch
from langchain_evals_port.experiments import Dataset, run_experiment
progress = {"auto": None, "off": False, "on": True}[sys.argv[1]]
dataset = Dataset.from_records([{"inputs": {"q": str(i)}, "reference_outputs": "4"} for i in range(3)])
run_experiment(
    lambda inputs: "4", dataset, [ExactMatch()], name="arithmetic", store=False, progress=progress
)
"""


def on_a_terminal(progress: str, **env: str) -> str:
    """What an experiment of three cases draws on a real pseudo-terminal."""
    controller, terminal = os.openpty()
    environment = {k: v for k, v in os.environ.items() if k != "CI"}
    environment.update(TERM="xterm", COLUMNS="120", **env)
    child = subprocess.Popen(
        [sys.executable, "-c", PROGRAM, progress],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env=environment,
    )
    os.close(terminal)
    drawn = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the terminal closed with the child
            break
        if not chunk:
            break
        drawn += chunk
    os.close(controller)
    assert child.wait(timeout=60) == 0, drawn.decode(errors="replace")
    return drawn.decode(errors="replace")


@pytest.mark.processes
def test_a_progress_bar_with_rate_and_eta_on_a_terminal() -> None:
    drawn = on_a_terminal("auto")
    assert "arithmetic" in drawn
    assert "3/3" in drawn
    assert "/s" in drawn
    assert "eta" in drawn


@pytest.mark.parametrize(("progress", "env"), [("auto", {"CI": "true"}), ("off", {})])
@pytest.mark.processes
def test_no_progress_bar_in_ci_or_when_turned_off(progress: str, env: dict[str, str]) -> None:
    assert on_a_terminal(progress, **env) == ""


@pytest.mark.processes
def test_progress_on_draws_in_a_pipe_too() -> None:
    run = subprocess.run(
        [sys.executable, "-c", PROGRAM, "on"], capture_output=True, text=True, check=True
    )
    assert "3/3" in run.stderr
