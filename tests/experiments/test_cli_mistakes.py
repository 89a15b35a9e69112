"""The command line's answers to a new user's mistakes and interruptions: each a clear message
and exit 2 (never a traceback, never a request LangSmith cannot answer, never an empty
database left behind), and a run stopped with Ctrl-C says how to resume it.

Each command is a real child process in a folder of its own (``test_cli``'s helpers), or
``main()`` for help texts."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from test_cli import RUN, _command, _folder, cli

from langchain_evals_port.cli import main


def _without_langsmith() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if "LANGSMITH" not in key}


def test_a_name_that_is_no_file_is_not_sent_to_langsmith_without_a_key(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    argv = [sys.executable, "-m", "langchain_evals_port.cli", "run", "mydataset", *RUN[2:]]
    env = {k: v for k, v in _without_langsmith().items() if k != "LANGCHAIN_API_KEY"}
    result = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr == (
        "langchain-evals run: mydataset: not a file; to read a LangSmith dataset set "
        "LANGSMITH_API_KEY\n"
    )


def test_a_missing_file_is_named_with_the_closest_file_there(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    result = cli(folder, "run", "case.jsonl", *RUN[2:])
    assert result.returncode == 2
    assert result.stderr == (
        "langchain-evals run: case.jsonl: no such file (did you mean 'cases.jsonl'?)\n"
    )


BROKEN_MODULES = {
    "syntax": ("def target(inputs):\n    return (\n", "syntax.py, line 2", "SyntaxError"),
    "raising": (
        "import os\n\nraise RuntimeError('no API key in this shell')\n",
        "raising.py, line 3",
        "RuntimeError: no API key in this shell",
    ),
}


@pytest.mark.parametrize("module", sorted(BROKEN_MODULES))
@pytest.mark.parametrize("option", ["--target", "--evaluators", "worker --evaluators"])
def test_a_module_that_fails_to_import_is_shown_at_its_file_and_line(
    tmp_path: Path, module: str, option: str
) -> None:
    folder = _folder(tmp_path)
    source, where, what = BROKEN_MODULES[module]
    (folder / f"{module}.py").write_text(source)
    if option == "--target":
        argv: tuple[str, ...] = ("run", "cases.jsonl", "--target", f"{module}:target")
        argv += ("--evaluators", "doubling:EVALUATORS")
    elif option == "--evaluators":
        argv = ("run", "cases.jsonl", "--target", "doubling:target")
        argv += ("--evaluators", f"{module}:EVALUATORS")
    else:
        (folder / "evals.yaml").write_text("evaluation:\n  evaluators: {}\n")
        argv = ("worker", "--config", "evals.yaml", "--ledger", "evals.db")
        argv += ("--evaluators", f"{module}:EVALUATORS")
    result = cli(folder, *argv)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert where in result.stderr, result.stderr
    assert what in result.stderr
    assert f"cannot import {module!r}" in result.stderr
    assert len(result.stderr.splitlines()) <= 4, result.stderr


def test_worker_imports_evaluators_from_the_working_directory(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / "evals.yaml").write_text("evaluation:\n  evaluators: {}\n")
    # The installed command, whose sys.path (unlike python -m's) starts at its own folder.
    command = Path(sys.executable).with_name("langchain-evals")
    argv = [str(command), "worker", "--config", "evals.yaml", "--ledger", "evals.db"]
    argv += ["--evaluators", "doubling:EVALUATORS"]
    result = subprocess.run(argv, cwd=folder, capture_output=True, text=True, timeout=120)
    # doubling.EVALUATORS is a list, not the mapping a worker takes: found, then refused.
    assert result.returncode == 2
    assert "cannot import" not in result.stderr, result.stderr
    assert "doubling:EVALUATORS is a list; expected a mapping" in result.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ("experiments", "--store", "experiment.db"),
        ("experiments",),
        ("compare", "a", "b", "--store", "experiment.db"),
        ("report", "a", "--html", "a.html", "--store", "experiment.db"),
        ("agreement", "--ledger", "ledger.db"),
        ("console", "--ledger", "ledger.db", "--port", "0"),
        ("console", "--ledger", "evals.db", "--store", "experiment.db", "--port", "0"),
    ],
)
def test_read_only_commands_refuse_a_path_that_does_not_exist(
    tmp_path: Path, argv: tuple[str, ...]
) -> None:
    folder = _folder(tmp_path)
    sqlite3.connect(folder / "evals.db").close()  # an empty SQLite file: a database
    before = sorted(path.name for path in folder.rglob("*"))
    result = cli(folder, *argv)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    missing = "ledger.db" if "ledger.db" in argv else "experiment.db"
    if argv == ("experiments",):
        assert "no experiment store at .langchain-evals/experiments.db" in result.stderr
    else:
        assert f"{missing}: no such file" in result.stderr, result.stderr
    assert sorted(path.name for path in folder.rglob("*")) == before, "nothing is created"


@pytest.mark.parametrize("ledger", ["unreachable", "directory", "not a database"])
def test_console_on_a_ledger_it_cannot_open_exits_2(tmp_path: Path, ledger: str) -> None:
    folder = _folder(tmp_path)
    (folder / "folder.db").mkdir()
    (folder / "notes.db").write_text("these are notes, not a database\n")
    location, message = {
        "unreachable": (
            "postgresql://postgres@127.0.0.1:1/evals",
            "cannot connect",
        ),
        "directory": ("folder.db", "folder.db: a directory; expected a SQLite file"),
        "not a database": ("notes.db", "notes.db: not a SQLite database"),
    }[ledger]
    result = cli(folder, "console", "--ledger", location, "--port", "0")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("langchain-evals console: ")
    assert message in result.stderr, result.stderr


def test_a_corrupt_judge_cache_is_named(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / ".langchain-evals").mkdir()
    (folder / ".langchain-evals" / "judge-cache.db").write_bytes(b"\x00garbage" * 512)
    result = cli(folder, *RUN)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert ".langchain-evals/judge-cache.db" in result.stderr, result.stderr


def test_a_corrupt_stored_run_names_its_case(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    assert cli(folder, *RUN, "--name", "base").returncode == 0
    with sqlite3.connect(folder / ".langchain-evals" / "experiments.db") as db:
        changed = db.execute(
            "UPDATE ledger_experiment_runs SET record = '{\"results\": 7}' WHERE case_id = 'q3'"
        ).rowcount
    assert changed == 1
    result = cli(folder, "report", "base", "--html", "base.html")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert "case 'q3'" in result.stderr, result.stderr
    assert "experiment 'base'" in result.stderr


@pytest.mark.parametrize("command", ["agreement", "compare", "report", "calibrate"])
def test_help_shows_percent_signs_once(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    shown = capsys.readouterr().out
    assert "95%" in shown
    assert "%%" not in shown


def test_experiments_help_says_what_it_lists(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["experiments", "--help"])
    shown = capsys.readouterr().out
    description = shown.split("\n\n")[1]
    assert description.startswith("List the experiments")


def test_worker_help_shows_the_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["worker", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    for option, default in [("--concurrency", "8"), ("--lease-seconds", "5"), ("--grace", "30")]:
        after = shown.split(f"{option} ")[-1]
        assert f"(default {default})" in after.split(" --")[0], (option, shown)


def test_csv_columns_are_mapped_on_the_command_line(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / "echo.py").write_text(
        "from langchain_evals_port import Score, evaluator\n"
        "def target(inputs):\n    return inputs['question'].upper()\n"
        "@evaluator\ndef right(outputs, reference_outputs) -> Score:\n"
        "    return Score(outputs == reference_outputs['answer'])\n"
        "EVALUATORS = [right]\n"
    )
    (folder / "qa.csv").write_text("question,answer,level\nhi,HI,easy\nho,HO,hard\nha,no,easy\n")
    unmapped = cli(
        folder, "run", "qa.csv", "--target", "echo:target", "--evaluators", "echo:EVALUATORS"
    )
    assert unmapped.returncode == 2
    assert "--inputs" in unmapped.stderr, unmapped.stderr
    assert "pass inputs=" not in unmapped.stderr
    mapped = cli(
        folder,
        *("run", "qa.csv", "--target", "echo:target", "--evaluators", "echo:EVALUATORS"),
        *("--inputs", "question", "--reference", "answer", "--metadata", "level"),
        "--report",
        "out",
    )
    assert mapped.returncode == 0, mapped.stderr
    report = json.loads((folder / "out" / "report.json").read_text())
    runs = report["runs"]
    assert [run["inputs"] for run in runs] == [{"question": q} for q in ("hi", "ho", "ha")]
    assert [run["metadata"] for run in runs] == [
        {"level": level} for level in ("easy", "hard", "easy")
    ]
    assert report["keys"]["right"]["mean"] == pytest.approx(2 / 3)

    jsonl = cli(folder, *RUN, "--inputs", "n")
    assert jsonl.returncode == 2
    assert "--inputs, --reference and --metadata map the columns of a CSV file" in jsonl.stderr


def test_an_interrupted_run_says_how_to_resume_and_the_resumed_run_what_it_reused(
    tmp_path: Path,
) -> None:
    folder = _folder(tmp_path, cases=12)
    running = _command(folder, *RUN, "--concurrency", "1", APP_LATENCY="0.3")
    deadline = time.monotonic() + 120
    while len(_called(folder)) < 3:
        assert running.poll() is None, running.communicate()
        assert time.monotonic() < deadline, "the run never started"
        time.sleep(0.02)
    running.send_signal(signal.SIGINT)
    out, err = running.communicate(timeout=120)
    assert running.returncode == 130, out + err
    assert "Traceback" not in err
    [line] = [line for line in err.splitlines() if "resume" in line]
    kept = int(line.split("interrupted: ")[1].split(" of 12")[0])
    assert 2 <= kept <= 12, line  # on a loaded machine the interrupt may land after the last run
    assert line.endswith(
        "of 12 runs of target-1 finished and kept; to resume, run the same "
        "command with --name target-1"
    ), line

    resumed = cli(folder, *RUN, "--name", "target-1")
    assert resumed.returncode == 0, resumed.stderr
    if kept < 12:
        assert f"Resumed target-1: {kept} of 12 runs were finished before and reused" in (
            resumed.stdout
        )
        assert "Experiment target-1: 12 runs" in resumed.stdout
    else:  # the interrupt landed after the last run
        assert "Experiment target-1: already complete, nothing run: 12 runs" in resumed.stdout


def _called(folder: Path) -> list[str]:
    log = folder / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


GRAPHS = """
from typing import TypedDict
from langgraph.graph import StateGraph

class State(TypedDict):
    n: int

def _graph(step, name=None):
    graph = StateGraph(State)
    graph.add_node("step", lambda state: {"n": step(state["n"])})
    graph.set_entry_point("step")
    return graph.compile() if name is None else graph.compile(name=name)

doubler = _graph(lambda n: n * 2)
incrementer = _graph(lambda n: n + 1)
named = _graph(lambda n: n * 2, name="doubling-agent")

from langchain_evals_port import Score, evaluator

@evaluator
def exact(outputs, reference_outputs) -> Score:
    return Score(outputs["n"] == int(reference_outputs))

EVALUATORS = [exact]
"""


def test_graph_targets_are_named_by_module_and_attribute_and_not_compared_across(
    tmp_path: Path,
) -> None:
    folder = _folder(tmp_path)
    (folder / "graphs.py").write_text(textwrap.dedent(GRAPHS))
    evaluators = ("--evaluators", "graphs:EVALUATORS")
    first = cli(folder, "run", "cases.jsonl", "--target", "graphs:doubler", *evaluators)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("Experiment graphs:doubler-1: 8 runs\n"), first.stdout
    other = cli(folder, "run", "cases.jsonl", "--target", "graphs:incrementer", *evaluators)
    assert other.returncode == 0, other.stderr
    assert other.stdout.startswith("Experiment graphs:incrementer-1: 8 runs\n"), other.stdout
    named = cli(folder, "run", "cases.jsonl", "--target", "graphs:named", *evaluators)
    assert named.stdout.startswith("Experiment doubling-agent-1: 8 runs\n"), named.stdout
    again = cli(folder, "run", "cases.jsonl", "--target", "graphs:doubler", *evaluators)
    assert "Experiment graphs:doubler-2: 8 runs, compared with graphs:doubler-1" in again.stdout
