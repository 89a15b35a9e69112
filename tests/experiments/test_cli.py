"""The experiment commands as a user runs them: ``langchain-evals run``, ``compare`` (its exit
code is CI's gate), ``experiments``, ``rescore`` and ``worker --experiment`` — each a real
child process in a folder of its own, with the app and its evaluators as modules there."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from _postgres_server import fresh_schema, postgres_server_dsn

from langchain_evals_port.experiments import ExperimentNotFoundError, ExperimentStore

APP = '''
"""An app that doubles a number (wrongly from BROKEN_FROM on), logging every call."""
import os, time
from langchain_evals_port import ExactMatch, Score, evaluator

def target(inputs):
    with open("calls.log", "a") as log:
        log.write(f"{inputs['n']} {os.getpid()}\\n")
    time.sleep(float(os.environ.get("APP_LATENCY", "0")))
    broken = int(os.environ.get("BROKEN_FROM", "1000"))
    return str(inputs["n"] * 2 + (1 if inputs["n"] >= broken else 0))

@evaluator
def even(outputs: str) -> Score:
    return Score(int(outputs) % 2 == 0)

EVALUATORS = [ExactMatch()]
STRICTER = [ExactMatch(), even]
'''


def _folder(tmp_path: Path, cases: int = 8) -> Path:
    (tmp_path / "doubling.py").write_text(textwrap.dedent(APP))
    with (tmp_path / "cases.jsonl").open("w") as file:
        for n in range(cases):
            row = {"id": f"q{n}", "inputs": {"n": n}, "reference_outputs": str(n * 2)}
            file.write(json.dumps(row) + "\n")
    return tmp_path


def _command(folder: Path, *args: str, **environment: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "langchain_evals_port.cli", *args],
        cwd=folder,
        env={**os.environ, **environment, "COLUMNS": "160"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def cli(folder: Path, *args: str, **environment: str) -> subprocess.CompletedProcess[str]:
    process = _command(folder, *args, **environment)
    out, err = process.communicate(timeout=120)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


RUN = ("run", "cases.jsonl", "--target", "doubling:target", "--evaluators", "doubling:EVALUATORS")


def test_run_prints_a_summary_and_a_second_run_compares_with_the_first(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    first = cli(folder, *RUN)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("Experiment target-1: 8 runs\n")
    assert "exact_match" in first.stdout
    assert "1.000 [0.676, 1.000]" in first.stdout
    second = cli(folder, *RUN, "--report", "report")
    assert second.returncode == 0, second.stderr
    assert "Experiment target-2: 8 runs, compared with target-1" in second.stdout
    assert "no detectable change" in second.stdout
    report = json.loads((folder / "report" / "report.json").read_text())
    assert report["experiment"] == "target-2"
    assert len(report["runs"]) == 8
    listing = cli(folder, "experiments")
    assert listing.returncode == 0
    assert "target-1" in listing.stdout
    assert "target-2" in listing.stdout
    assert "8/8" in listing.stdout


def test_compare_exits_1_on_a_regression_and_0_on_a_reshuffle(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    assert cli(folder, *RUN, "--name", "good").returncode == 0
    assert cli(folder, *RUN, "--name", "broken", BROKEN_FROM="4").returncode == 0
    worse = cli(folder, "compare", "good", "broken")
    assert worse.returncode == 1, worse.stdout + worse.stderr
    assert "regression: exact_match" in worse.stdout
    # A drop of 0.5 passes a gate that lets 0.6 through.
    assert cli(folder, "compare", "good", "broken", "--fail-if-worse", "0.6").returncode == 0

    # The same scores on other cases: half right, half wrong, in both.
    rows = [
        {"id": f"q{n}", "inputs": {"n": n}, "reference_outputs": str(n * 2 + (n % 2))}
        for n in range(8)
    ]
    (folder / "cases.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert cli(folder, *RUN, "--name", "half", BROKEN_FROM="1000").returncode == 0
    shifted = [dict(row, reference_outputs=str(int(row["reference_outputs"]) ^ 1)) for row in rows]
    (folder / "cases.jsonl").write_text("".join(json.dumps(row) + "\n" for row in shifted))
    assert cli(folder, *RUN, "--name", "reshuffled").returncode == 0
    same = cli(folder, "compare", "half", "reshuffled")
    assert same.returncode == 0, same.stdout
    assert "no detectable change" in same.stdout


def test_rescore_runs_no_target(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    assert cli(folder, *RUN, "--name", "base").returncode == 0
    calls = (folder / "calls.log").read_text()
    rescored = cli(
        folder, "rescore", "base", "--evaluators", "doubling:STRICTER", "--name", "stricter"
    )
    assert rescored.returncode == 0, rescored.stderr
    assert (folder / "calls.log").read_text() == calls
    assert "Experiment stricter: 8 runs, compared with base" in rescored.stdout
    assert "even" in rescored.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        # Read-only commands in a folder with no store: nothing is created.
        (("compare", "nope", "base"), "no experiment store at .langchain-evals/experiments.db"),
        (
            ("run", "cases.jsonl", "--target", "doubling:targt", "--evaluators", "doubling:X"),
            "target: module 'doubling' has no attribute 'targt'; did you mean 'target'?",
        ),
        (
            ("run", "cases.jsnl", "--target", "doubling:target", "--evaluators", "doubling:X"),
            "cases.jsnl",
        ),
        (
            ("rescore", "base", "--evaluators", "doubling:EVALUATORS"),
            "no experiment store at .langchain-evals/experiments.db",
        ),
    ],
)
def test_mistakes_exit_2_with_a_clear_message(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    folder = _folder(tmp_path)
    result = cli(folder, *args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_two_workers_share_an_experiment_on_postgresql_and_one_killed_loses_nothing(
    tmp_path: Path,
) -> None:
    folder = _folder(tmp_path, cases=40)
    with fresh_schema(postgres_server_dsn()) as dsn:
        # Slow enough that the run alone would take 8 s: both workers join well before.
        slow = {"APP_LATENCY": "0.2"}
        runner = _command(
            folder, *RUN, "--name", "shared", "--store", dsn, "--concurrency", "1", **slow
        )
        with ExperimentStore(dsn) as store:
            deadline = time.monotonic() + 60
            while True:
                try:
                    store.info("shared")
                    break
                except ExperimentNotFoundError:
                    assert time.monotonic() < deadline
                    assert runner.poll() is None
                    time.sleep(0.05)
        worker = ["worker", "--experiment", "shared", "--store", dsn, "--concurrency", "2"]
        doomed = _command(folder, *worker, **slow)
        survivor = _command(folder, *worker, **slow)
        deadline = time.monotonic() + 60
        while not {str(doomed.pid), str(survivor.pid)} <= set(_calls(folder, column=1)):
            assert doomed.poll() is None, doomed.communicate()
            assert survivor.poll() is None, survivor.communicate()
            assert time.monotonic() < deadline, "the workers never took a run"
            time.sleep(0.02)
        time.sleep(0.3)
        doomed.send_signal(signal.SIGKILL)
        doomed.wait()
        _out, err = runner.communicate(timeout=120)
        assert runner.returncode == 0, err
        survived, _ = survivor.communicate(timeout=120)
        assert survivor.returncode == 0
        with ExperimentStore(dsn) as store:
            result = store.load("shared")
            [summary] = store.experiments()
    assert (summary.runs, summary.finished) == (40, 40)
    assert sorted(run.case.id for run in result.runs) == sorted(f"q{n}" for n in range(40))
    assert result.statistics()["exact_match"].mean == 1.0
    pids = set(_calls(folder, column=1))
    assert {str(doomed.pid), str(runner.pid), str(survivor.pid)} <= pids, "all three took runs"
    calls = _calls(folder, column=0)
    # A run the killed worker had in flight ran again elsewhere; no other ran twice.
    assert 40 <= len(calls) <= 42
    assert "worker: finished" in survived


def _calls(folder: Path, *, column: int) -> list[str]:
    log = folder / "calls.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return [line.split()[column] for line in lines if len(line.split()) == 2]


def test_compare_refuses_experiments_of_other_cases_and_flags_a_lost_evaluator(
    tmp_path: Path,
) -> None:
    folder = _folder(tmp_path)
    assert cli(folder, *RUN, "--name", "base").returncode == 0
    fewer = cli(
        folder,
        "rescore",
        "base",
        "--evaluators",
        "doubling:STRICTER",
        "--name",
        "stricter",
    )
    assert fewer.returncode == 0, fewer.stderr
    # "stricter" has even and exact_match; compared the other way round, even is lost.
    lost = cli(folder, "compare", "stricter", "base")
    assert lost.returncode == 1
    assert "regression: even: in stricter, missing from base" in lost.stdout

    other = [{"id": f"x{n}", "inputs": {"n": n}, "reference_outputs": str(n * 2)} for n in range(3)]
    (folder / "cases.jsonl").write_text("".join(json.dumps(row) + "\n" for row in other))
    assert cli(folder, *RUN, "--name", "other").returncode == 0
    unrelated = cli(folder, "compare", "base", "other")
    assert unrelated.returncode == 2
    assert "share no cases" in unrelated.stderr


def test_a_misspelt_baseline_stops_the_run_before_it_starts(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    assert cli(folder, *RUN, "--name", "base").returncode == 0
    (folder / "calls.log").unlink()
    wrong = cli(folder, *RUN, "--baseline", "bsae")
    assert wrong.returncode == 2
    assert "no experiment 'bsae'" in wrong.stderr
    assert "did you mean 'base'" in wrong.stderr
    assert not (folder / "calls.log").exists()


def test_worker_options_of_the_ledger_are_refused_with_an_experiment(tmp_path: Path) -> None:
    done = cli(_folder(tmp_path), "worker", "--experiment", "x", "--config", "evals.yaml")
    assert done.returncode == 2
    assert "--config apply to a ledger's evaluations, not to --experiment" in done.stderr
