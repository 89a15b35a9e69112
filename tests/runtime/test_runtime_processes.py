"""Several processes on one SQLite ledger: a killed worker's evaluations resume elsewhere,
two workers sharing the queue run every evaluation exactly once, and durable evaluations
outlive a killed process (in the middle of a node, or waiting for a person)."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from _agents import echo_agent, three_steps
from _runtime_process import review_graph

from langchain_evals_port import Score, evaluator
from langchain_evals_port.runtime import EvaluationRecord, EvaluationRuntime, SqliteLedger
from langchain_evals_port.runtime.testkit import runtime_testkit

pytestmark = pytest.mark.processes

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "_runtime_process.py"
REPO = HERE.parent.parent
AGENT = "support-agent"


def bound(evaluator_id: str) -> dict[str, Any]:
    return {"evaluation": {"evaluators": {evaluator_id: {"agents": {AGENT: {}}}}}}


class Child:
    """A ``_runtime_process.py`` child whose stdout is read line by line with a deadline."""

    def __init__(self, tmp_path: Path, *arguments: str) -> None:
        self.stderr_path = tmp_path / f"stderr-{arguments[0]}-{time.monotonic_ns()}.txt"
        python_path = os.pathsep.join(
            [str(HERE), str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]
        )
        with open(self.stderr_path, "wb") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, str(SCRIPT), *arguments],
                stdout=subprocess.PIPE,
                stderr=stderr,
                stdin=subprocess.DEVNULL,
                bufsize=0,
                env={**os.environ, "PYTHONPATH": python_path},
            )
        self._buffer = b""

    @property
    def pid(self) -> int:
        return self.process.pid

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")[-3000:]

    def read_line(self, timeout: float) -> str:
        """The next line of stdout; fails the test when none comes within ``timeout``."""
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no line from pid {self.pid} in {timeout}s:\n{self.stderr()}")
            readable, _, _ = select.select([self.process.stdout], [], [], left)
            if readable:
                chunk = os.read(self.process.stdout.fileno(), 65536)
                if not chunk:
                    code = self.process.wait(timeout=5)
                    raise AssertionError(
                        f"pid {self.pid} exited ({code}) without a line:\n{self.stderr()}"
                    )
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()


def all_evaluations(ledger: SqliteLedger, evaluator_id: str) -> list[EvaluationRecord]:
    records: list[EvaluationRecord] = []
    cursor = None
    while True:
        page = ledger.query_evaluations(evaluator_id=evaluator_id, limit=500, cursor=cursor)
        records.extend(page.items)
        if page.next_cursor is None:
            return records
        cursor = page.next_cursor


@evaluator(feedback_key="marker")
def fast_marker() -> Score:
    """The ``marker`` evaluator as the new process deploys it: quick, and signed."""
    return Score(True, f"evaluated by pid {os.getpid()}")


def test_a_killed_processs_evaluations_resume_in_a_new_process(tmp_path: Path) -> None:
    database = tmp_path / "evals.db"
    started = tmp_path / "started.txt"
    child = Child(tmp_path, "blocker", str(database), str(started), "6")
    try:
        interaction_ids = json.loads(child.read_line(timeout=30))
        os.kill(child.pid, signal.SIGKILL)
        assert child.process.wait(timeout=10) == -signal.SIGKILL
    finally:
        child.stop()
    assert len(set(interaction_ids)) == 6
    starts = started.read_text().splitlines()
    assert starts, "the killed process never started an evaluation"
    assert {line.split()[1] for line in starts} == {str(child.pid)}

    ledger = SqliteLedger(database)
    # The dead process's claims are still in the ledger until their leases run out.
    assert ledger.pending_work() == 6
    runtime = EvaluationRuntime(
        bound("marker"),
        evaluators={"marker": fast_marker},
        ledger=ledger,
        lease_seconds=1.0,
        poll_interval=0.05,
    )
    try:
        began = time.monotonic()
        records = [
            record
            for interaction_id in interaction_ids
            for record in runtime.wait_for_evaluations(interaction_id, timeout=15)
        ]
        resumed_after = time.monotonic() - began
    finally:
        runtime.close()

    assert len(records) == 6
    assert sorted(r.interaction_id for r in records) == sorted(interaction_ids)
    for record in records:
        assert record.outcome == "verdict", record.results
        assert record.result.comment == f"evaluated by pid {os.getpid()}"
    stored = all_evaluations(ledger, "marker")
    assert len(stored) == 6
    assert len({r.evaluation_id for r in stored}) == 6
    assert ledger.pending_work() == 0
    assert resumed_after < 10
    ledger.close()


def test_two_processes_share_one_queue_and_run_each_evaluation_once(tmp_path: Path) -> None:
    database = tmp_path / "evals.db"
    log = tmp_path / "evaluations.log"
    done = tmp_path / "done"
    SqliteLedger(database).close()  # create the tables before three processes open the file

    @evaluator(feedback_key="logger")
    def logger() -> Score:
        raise AssertionError("the recording process must not evaluate")

    workers = [Child(tmp_path, "worker", str(database), str(log), str(done)) for _ in range(2)]
    try:
        for worker in workers:
            assert worker.read_line(timeout=30) == "ready"
        ledger = SqliteLedger(database)
        recorder = EvaluationRuntime(
            bound("logger"), evaluators={"logger": logger}, ledger=ledger, start=False
        )
        agent = recorder.bind(echo_agent(), agent_id=AGENT)
        interaction_ids = [
            agent.invoke_detailed(f"question {n}").interaction_id for n in range(300)
        ]
        done.touch()
        reports = [json.loads(worker.read_line(timeout=30)) for worker in workers]
        for worker in workers:
            assert worker.process.wait(timeout=10) == 0, worker.stderr()
        recorder.close()
    finally:
        for worker in workers:
            worker.stop()

    records = all_evaluations(ledger, "logger")
    ledger.close()
    assert len(records) == 300
    assert {r.interaction_id for r in records} == set(interaction_ids)
    evaluation_ids = {r.evaluation_id for r in records}
    assert len(evaluation_ids) == 300

    lines = log.read_text().splitlines()
    assert len(lines) == 300
    logged = Counter(line.split()[0] for line in lines)
    assert set(logged) == evaluation_ids
    assert set(logged.values()) == {1}, [i for i, n in logged.items() if n > 1]

    worker_pids = {str(worker.pid) for worker in workers}
    by_pid = Counter(line.split()[1] for line in lines)
    assert set(by_pid) == worker_pids, by_pid
    assert sorted(report["ran"] for report in reports) == sorted(by_pid.values())
    # Each record names the process that ran it, which is the one that logged it.
    signer = {line.split()[0]: line.split()[1] for line in lines}
    for record in records:
        assert record.outcome == "verdict", record.results
        assert record.result.comment == f"logged by {signer[record.evaluation_id]}"


def test_a_durable_evaluation_killed_mid_node_resumes_after_its_last_completed_node(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database, steps = tmp_path / "evals.db", tmp_path / "steps.log"
    monkeypatch.setenv("DURABLE_STEP_LOG", str(steps))
    monkeypatch.setenv("DURABLE_BLOCK_IN_SECOND", "1")
    child = Child(tmp_path, "durable", str(database))
    try:
        interaction_id = json.loads(child.read_line(timeout=30))
        assert child.read_line(timeout=30) == "blocked"  # inside the second of three nodes
        os.kill(child.pid, signal.SIGKILL)
        child.process.wait(timeout=10)
    finally:
        child.stop()
    monkeypatch.delenv("DURABLE_BLOCK_IN_SECOND")

    ledger = SqliteLedger(database)
    evaluators = {"three-steps": three_steps()}
    with runtime_testkit(bound("three-steps"), evaluators, ledger=ledger) as runtime:
        [record] = runtime.wait_for_evaluations(interaction_id, timeout=15)
    ledger.close()

    assert (record.outcome, record.result.comment) == ("verdict", "2 votes")
    ran = [line.split() for line in steps.read_text().splitlines()]
    here = str(os.getpid())
    # The first node's checkpoint was committed: it never runs again. The second ran to
    # the kill and again here; the third only here.
    assert ran == [
        ["first", str(child.pid)],
        ["second", str(child.pid)],
        ["second", here],
        ["third", here],
    ]


def test_a_score_kept_in_graph_state_survives_a_kill_under_strict_serialization(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # LangGraph reads the switch when it is imported: both processes start with it on.
    monkeypatch.setenv("LANGGRAPH_STRICT_MSGPACK", "true")
    database = tmp_path / "evals.db"
    monkeypatch.setenv("DURABLE_BLOCK_IN_SECOND", "1")
    child = Child(tmp_path, "kept", str(database))
    try:
        interaction_id = json.loads(child.read_line(timeout=30))
        assert child.read_line(timeout=30) == "blocked"  # the judge's Score is checkpointed
        os.kill(child.pid, signal.SIGKILL)
        assert child.process.wait(timeout=10) == -signal.SIGKILL
    finally:
        child.stop()
    monkeypatch.delenv("DURABLE_BLOCK_IN_SECOND")

    resumed = Child(tmp_path, "kept-resume", str(database), interaction_id)
    try:
        record = EvaluationRecord.model_validate_json(resumed.read_line(timeout=60))
    finally:
        resumed.stop()
    assert "Blocked deserialization" not in resumed.stderr()
    assert (record.outcome, record.passed) == ("verdict", True), record.results
    assert record.result.comment == "kept: long enough"
    assert record.result.metadata["judge"] == "first"


def test_a_review_waiting_for_a_person_outlives_a_killed_process(tmp_path: Path) -> None:
    database, log = tmp_path / "evals.db", tmp_path / "nodes.log"
    child = Child(tmp_path, "review", str(database), str(log))
    try:
        interaction_id, waiting = json.loads(child.read_line(timeout=30))
        os.kill(child.pid, signal.SIGKILL)
        assert child.process.wait(timeout=10) == -signal.SIGKILL
    finally:
        child.stop()

    ledger = SqliteLedger(database)
    runtime = EvaluationRuntime(
        bound("review"),
        evaluators={"review": review_graph(str(log))},
        ledger=ledger,
        lease_seconds=1.0,
        poll_interval=0.05,
    )
    try:
        # Parked in the ledger, not held by the dead process: listed, and answerable, at once.
        [asked] = runtime.waiting_evaluations(interaction_id)
        assert (asked.evaluation_id, asked.question) == (
            waiting,
            {"question": "Is this reply right?", "judge": "pass"},
        )
        runtime.resume(waiting, {"approved": False, "reviewer": "dana"})
        [record] = runtime.wait_for_evaluations(interaction_id, timeout=15)
    finally:
        runtime.close()
    ledger.close()

    assert (record.evaluation_id, record.outcome, record.passed) == (waiting, "verdict", False)
    assert record.result.comment == f"dana, recorded by {os.getpid()}"
    assert record.result.metadata["judge"] == "pass"  # the state kept in the SQLite checkpoint
    # The pre-screen ran once, in the killed process; only the waiting node ran here.
    assert log.read_text().splitlines() == [f"pre_screen {child.pid}"]
