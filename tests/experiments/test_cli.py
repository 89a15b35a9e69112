"""The experiment commands as a user runs them: ``langchain-evals run``, ``compare`` (its exit
code is CI's gate), ``experiments``, ``rescore`` and ``worker --experiment`` — each a real
child process in a folder of its own, with the app and its evaluators as modules there."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from _postgres_server import (
    ThrowawayPostgres,
    fresh_schema,
    postgres_server_dsn,
    restartable_postgres,  # noqa: F401 (a fixture)
)

from langchain_evals_port.experiments import ExperimentNotFoundError, ExperimentStore

pytestmark = pytest.mark.processes

APP = '''
"""An app that doubles a number (wrongly from BROKEN_FROM on), logging every call."""
import os, time
from langchain_evals_port import ExactMatch, Score, evaluator

def target(inputs):
    with open("calls.log", "a") as log:
        log.write(f"{inputs['n']} {os.getpid()}\\n")
    while os.path.exists("hold"):  # the test holds every run here until it deletes the file
        time.sleep(0.01)
    time.sleep(float(os.environ.get("APP_LATENCY", "0")))  # seconds each call takes
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


def _command(
    folder: Path,
    *args: str,
    stderr: Path | None = None,
    wrap: tuple[str, ...] = (),
    **environment: str,
) -> subprocess.Popen[str]:
    """The CLI as a child process in ``folder`` (run by the command ``wrap``, when given);
    its stderr piped, or written to ``stderr``."""
    with contextlib.ExitStack() as files:
        return subprocess.Popen(
            [*wrap, sys.executable, "-m", "langchain_evals_port.cli", *args],
            cwd=folder,
            env={**os.environ, **environment, "COLUMNS": "160"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if stderr is None else files.enter_context(stderr.open("w")),
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
    assert report["name"] == "target-2"
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


@pytest.mark.services
def test_two_workers_share_an_experiment_on_postgresql_and_one_killed_loses_nothing(
    tmp_path: Path,
) -> None:
    folder = _folder(tmp_path, cases=40)
    # Every run waits here until all three processes hold runs and one of them is killed.
    (folder / "hold").touch()
    with fresh_schema(postgres_server_dsn()) as dsn:
        runner = _command(folder, *RUN, "--name", "shared", "--store", dsn, "--concurrency", "1")
        worker = ["worker", "--experiment", "shared", "--store", dsn, "--concurrency", "2"]
        doomed = survivor = None
        try:
            with ExperimentStore(dsn) as store:
                _wait_until(lambda: _has(store, "shared"), runner)
            doomed = _command(folder, *worker)
            survivor = _command(folder, *worker)
            pids = {str(process.pid) for process in (runner, doomed, survivor)}
            _wait_until(lambda: pids <= set(_calls(folder, column=1)), runner, doomed, survivor)
            doomed.send_signal(signal.SIGKILL)
            doomed.wait()
            lost = _calls(folder, column=1).count(str(doomed.pid))
            (folder / "hold").unlink()
            _out, err = runner.communicate(timeout=600)
            assert runner.returncode == 0, err
            survived, _ = survivor.communicate(timeout=600)
            assert survivor.returncode == 0
        finally:
            for process in (runner, doomed, survivor):
                if process is not None and process.poll() is None:
                    process.kill()
        with ExperimentStore(dsn) as store:
            result = store.load("shared")
            [summary] = store.experiments()
    assert (summary.runs, summary.finished) == (40, 40)
    assert sorted(run.case.id for run in result.runs) == sorted(f"q{n}" for n in range(40))
    assert result.statistics()["exact_match"].mean == 1.0
    calls = _calls(folder, column=0)
    # The runs the killed worker had in flight ran again elsewhere; no other ran twice.
    assert sorted(set(calls), key=int) == [str(n) for n in range(40)]
    assert len(calls) == 40 + lost
    assert "worker: finished" in survived


@pytest.mark.services
def test_a_postgresql_restart_mid_run_loses_and_repeats_nothing(
    tmp_path: Path,
    restartable_postgres: ThrowawayPostgres,  # noqa: F811
) -> None:
    server, dsn = restartable_postgres, restartable_postgres.dsn
    folder = _folder(tmp_path, cases=24)
    (folder / "hold").touch()
    logs = {name: folder / f"{name}.stderr" for name in ("runner", "worker")}
    shared = ("--store", dsn, "--concurrency", "3")
    runner = _command(folder, *RUN, "--name", "restarted", *shared, stderr=logs["runner"])
    with ExperimentStore(dsn) as store:
        _wait_until(lambda: _has(store, "restarted"), runner)
    worker = _command(folder, "worker", "--experiment", "restarted", *shared, stderr=logs["worker"])
    processes = [runner, worker]
    try:
        # Both hold runs (three each) when the server restarts under them ...
        pids = {str(runner.pid), str(worker.pid)}
        _wait_until(lambda: pids <= set(_calls(folder, column=1)), *processes)
        server.restart()
        # ... and it is down while they write those runs and claim more.
        server.stop()
        (folder / "hold").unlink()
        _wait_until(
            lambda: all("reconnecting" in log.read_text() for log in logs.values()), *processes
        )
        server.start()
        for process in processes:
            process.communicate(timeout=600)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
    errors = {name: log.read_text() for name, log in logs.items()}
    assert (runner.returncode, worker.returncode) == (0, 0), errors
    assert "Traceback" not in errors["runner"] + errors["worker"], errors
    with ExperimentStore(dsn) as store:
        result = store.load("restarted")
        [summary] = store.experiments()
    assert (summary.runs, summary.finished) == (24, 24)
    assert sorted(run.case.id for run in result.runs) == sorted(f"q{n}" for n in range(24))
    assert result.statistics()["exact_match"].mean == 1.0
    # Every case ran once: nothing was lost and run again.
    assert sorted(_calls(folder, column=0), key=int) == [str(n) for n in range(24)]


CONTAINER = ("unshare", "--pid", "--fork", "--mount-proc", "--kill-child")
"""Runs a command as a container does: in a pid namespace of its own, where it is pid 1."""


def test_a_process_in_another_container_with_the_same_host_and_pid_keeps_its_runs(
    tmp_path: Path,
) -> None:
    if subprocess.run([*CONTAINER, "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare cannot make a pid namespace here (it needs root)")
    folder = _folder(tmp_path, cases=6)
    (folder / "hold").touch()
    shared = ("--store", str(folder / "shared.db"), "--concurrency", "2")
    first = _command(folder, *RUN, "--name", "shared", *shared, wrap=CONTAINER)
    _wait_until(lambda: len(_calls(folder, column=0)) == 2, first)
    # Same host name, same pid (1): the first process is alive all the same.
    second = _command(folder, "worker", "--experiment", "shared", *shared, wrap=CONTAINER)
    try:
        _wait_until(lambda: len(_calls(folder, column=0)) == 4, first, second)
        (folder / "hold").unlink()
        outputs = [process.communicate(timeout=600) for process in (first, second)]
    finally:
        for process in (first, second):
            if process.poll() is None:
                process.kill()
    assert (first.returncode, second.returncode) == (0, 0), outputs
    assert set(_calls(folder, column=1)) == {"1"}
    # Each case ran once: the second process took none of the first one's runs.
    assert sorted(_calls(folder, column=0), key=int) == [str(n) for n in range(6)]


def _has(store: ExperimentStore, name: str) -> bool:
    try:
        store.info(name)
    except ExperimentNotFoundError:
        return False
    return True


def _wait_until(condition: Callable[[], bool], *processes: subprocess.Popen[str]) -> None:
    """Wait until ``condition()`` holds, failing the test as soon as one of ``processes``
    exits (a generous bound only catches a hung test)."""
    deadline = time.monotonic() + 600
    while not condition():
        for process in processes:
            assert process.poll() is None, f"{process.args} exited with {process.returncode}"
        assert time.monotonic() < deadline, "waited 10 minutes"
        time.sleep(0.02)


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


def test_a_finished_run_again_says_nothing_ran_and_a_changed_evaluator_is_refused(
    tmp_path: Path,
) -> None:
    folder = _folder(tmp_path)
    stricter = (*RUN[:-1], "doubling:STRICTER", "--name", "gate")
    assert cli(folder, *stricter).returncode == 0
    calls = (folder / "calls.log").read_text()
    again = cli(folder, *stricter)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("Experiment gate: already complete, nothing run: 8 runs")
    # The evaluator `even` now judges otherwise: its stored verdicts must not pass for new ones.
    module = folder / "doubling.py"
    module.write_text(module.read_text().replace("% 2 == 0", "% 4 == 0"))
    changed = cli(folder, *stricter)
    assert changed.returncode == 2, changed.stdout + changed.stderr
    assert "experiment 'gate' was scored with other evaluators: evaluator 'even' changed" in (
        changed.stderr
    )
    assert "Traceback" not in changed.stderr
    # A worker deployed with the changed evaluator must not join it either.
    worker = cli(folder, "worker", "--experiment", "gate")
    assert worker.returncode == 2, worker.stdout + worker.stderr
    assert "was started with other evaluators than this worker imports" in worker.stderr
    assert "evaluator 'even' changed its fn" in worker.stderr
    assert (folder / "calls.log").read_text() == calls


JUDGING = '''
"""A judge whose verdict is the environment's VERDICT (its provider changed the model)."""
import os
from langchain_evals_port import LLMJudge
from langchain_evals_port.testing import ScriptedChatModel

def verdict(messages):
    return {"reasoning": "seen", "score": os.environ.get("VERDICT", "yes") == "yes"}

JUDGES = [
    LLMJudge(
        prompt="Is {outputs} twice {inputs}?",
        model=ScriptedChatModel(responder=verdict),
        feedback_key="twice",
    )
]
'''


def test_judge_cache_refresh_replaces_stale_verdicts_and_cache_clear_removes_a_judges(
    tmp_path: Path,
) -> None:
    folder = _folder(tmp_path)
    (folder / "judging.py").write_text(JUDGING)
    judged = (*RUN[:-1], "judging:JUDGES")

    def calls(result: subprocess.CompletedProcess[str]) -> str:
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout.splitlines()[0].partition("judge calls: ")[2]

    assert calls(cli(folder, *judged, "--name", "a")) == "8 made, 0 answered from the cache"
    refreshed = cli(folder, *judged, "--name", "b", "--judge-cache=refresh", VERDICT="no")
    assert calls(refreshed) == "8 made, 0 answered from the cache"
    # The next normal run answers with the refreshed verdicts, not those of run a.
    again = cli(folder, *judged, "--name", "c", "--report", "c", VERDICT="yes")
    assert calls(again) == "0 made, 8 answered from the cache"
    report = json.loads((folder / "c" / "report.json").read_text())
    assert {r["score"] for run in report["runs"] for r in run["results"]} == {False}

    cleared = cli(folder, "cache", "clear", "--judge", "twice")
    assert cleared.returncode == 0, cleared.stderr
    assert cleared.stdout == "cleared 8 entries of .langchain-evals/judge-cache.db\n"
    assert calls(cli(folder, *judged, "--name", "d")) == "8 made, 0 answered from the cache"

    misspelt = cli(folder, "cache", "clear", "--judge", "twcie")
    assert misspelt.returncode == 0
    assert "no judge 'twcie' in the cache; did you mean 'twice'?" in misspelt.stderr
    nothing = cli(folder, "cache", "clear")
    assert nothing.returncode == 2
    assert "say what to clear: --judge KEY, --prompt TEXT, or --all" in nothing.stderr


def test_run_and_report_say_why_results_did_not_pass(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / "picky.py").write_text(
        textwrap.dedent(
            """
            from langchain_evals_port import evaluator

            @evaluator
            def small(outputs: str) -> bool:
                if int(outputs) > 9:
                    raise ValueError(f"{outputs} is too large to judge")
                return True

            EVALUATORS = [small]
            """
        )
    )
    run = cli(folder, *RUN, "--name", "e", BROKEN_FROM="6")
    assert run.returncode == 0, run.stderr
    assert "exact_match: 2 cases failed: q6, q7" in run.stdout
    rescored = cli(folder, "rescore", "e", "--evaluators", "picky:EVALUATORS", "--name", "p")
    assert rescored.returncode == 0, rescored.stderr
    # Three failures with one reason (their numbers aside): counted once, the first message.
    line = (
        "small: 3 failed [evaluator_error]: evaluator 'small' failed: ValueError: 10 is too "
        "large to judge (q5, q6, q7)"
    )
    assert line in rescored.stdout.splitlines()
    report = cli(folder, "report", "p", "--html", "p.html", "--no-charts")
    assert report.returncode == 0, report.stderr
    assert line in report.stdout.splitlines()
