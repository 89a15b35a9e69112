"""``langchain-evals worker`` processes: the command line, graceful stops, and several
workers sharing one ledger — on PostgreSQL, and (the CLI basics) on SQLite.

Every worker is a real child process (``python -m langchain_evals_port.cli worker``) running
``_worker_evaluators``; the test process records the interactions through a bound agent on a
runtime that does not evaluate (``start=False``), then watches the ledger and the evaluators'
log files. Children are killed when a test fails.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from importlib.metadata import version
from pathlib import Path

import pytest
from _agents import echo_agent
from _worker_evaluators import AGENT, DURABLE, EVALUATORS

import langchain_evals_port
from langchain_evals_port.cli import main
from langchain_evals_port.runtime import (
    EvaluationRecord,
    EvaluationRuntime,
    Ledger,
    evaluation_id,
)
from langchain_evals_port.storage import open_storage

pytestmark = pytest.mark.processes

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
WORKER_EVALUATORS = "_worker_evaluators:EVALUATORS"
DURABLE_EVALUATORS = "_worker_evaluators:DURABLE"


# --- child processes -------------------------------------------------------------------------


class Process:
    """A child process whose stdout is read line by line with a deadline; its stderr goes to
    a file that failure messages quote."""

    def __init__(self, folder: Path, name: str, argv: list[str], env: dict[str, str]) -> None:
        self.name = name
        self.stderr_path = folder / f"{name}-{time.monotonic_ns()}.stderr"
        python_path = os.pathsep.join(
            [str(HERE), str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]
        )
        with open(self.stderr_path, "wb") as stderr:
            self.process = subprocess.Popen(
                argv,
                stdout=subprocess.PIPE,
                stderr=stderr,
                stdin=subprocess.DEVNULL,
                bufsize=0,
                env={**os.environ, **env, "PYTHONPATH": python_path},
            )
        self._buffer = b""

    @property
    def pid(self) -> int:
        return self.process.pid

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")[-4000:]

    def read_line(self, timeout: float) -> str:
        """The next line of stdout; fails the test when none comes within ``timeout``."""
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{self.name}: no line in {timeout}s:\n{self.stderr()}")
            readable, _, _ = select.select([self.process.stdout], [], [], left)
            if readable:
                chunk = os.read(self.process.stdout.fileno(), 65536)
                if not chunk:
                    code = self.process.wait(timeout=10)
                    raise AssertionError(
                        f"{self.name} exited ({code}) without a line:\n{self.stderr()}"
                    )
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode()

    def wait(self, timeout: float) -> int:
        """The exit status; fails the test when the process is still running at ``timeout``."""
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"{self.name} (pid {self.pid}) still running after {timeout}s:\n{self.stderr()}"
            ) from None

    def send(self, signum: int) -> None:
        os.kill(self.pid, signum)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()


Spawn = Callable[..., Process]


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Spawn]:
    """Starts child processes; each is killed (if still running) when the test ends."""
    children: list[Process] = []

    def start(name: str, argv: list[str], **env: str) -> Process:
        child = Process(tmp_path, name, argv, env)
        children.append(child)
        return child

    yield start
    for child in children:
        child.kill()


def worker_argv(config: Path, ledger: str, *options: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "langchain_evals_port.cli",
        "worker",
        "--config",
        str(config),
        "--evaluators",
        WORKER_EVALUATORS,
        "--ledger",
        ledger,
        *options,
    ]


# --- ledger, configuration and logs ------------------------------------------------------------


def write_config(folder: Path, evaluator_id: str) -> Path:
    """A YAML configuration binding ``evaluator_id`` to every interaction of the agent."""
    path = folder / "evals.yaml"
    path.write_text(
        "evaluation:\n"
        "  evaluators:\n"
        f"    {evaluator_id}:\n"
        "      agents:\n"
        f"        {AGENT}: {{ sampling_ratio: 1.0 }}\n",
        encoding="utf-8",
    )
    return path


def record_interactions(config: Path, ledger: Ledger, count: int) -> list[str]:
    """Invoke a bound agent ``count`` times on a runtime that records and queues but does not
    evaluate; the interaction ids."""
    recorder = EvaluationRuntime.from_files(
        config, evaluators=EVALUATORS, ledger=ledger, start=False
    )
    try:
        agent = recorder.bind(echo_agent(), agent_id=AGENT)
        return [agent.invoke_detailed(f"question {n}").interaction_id for n in range(count)]
    finally:
        recorder.close()


def logged(path: Path) -> list[tuple[str, str]]:
    """The ``(evaluation id, pid)`` lines of a log, without a line still being written."""
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    complete = text[: text.rfind("\n") + 1]
    return [(line.split()[0], line.split()[1]) for line in complete.splitlines()]


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.02)


def all_evaluations(ledger: Ledger) -> list[EvaluationRecord]:
    records: list[EvaluationRecord] = []
    cursor = None
    while True:
        page = ledger.query_evaluations(limit=500, cursor=cursor)
        records.extend(page.items)
        if page.next_cursor is None:
            return records
        cursor = page.next_cursor


def signer(record: EvaluationRecord) -> str:
    """The pid that produced a ``_worker_evaluators`` verdict."""
    assert record.outcome == "verdict", record.results
    comment = record.result.comment or ""
    assert comment.startswith("by "), comment
    return comment.removeprefix("by ")


@pytest.fixture(params=["sqlite", "postgres"])
def ledger_location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where the ledger lives: a SQLite file, or a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        return str(tmp_path / "evals.db")
    return str(request.getfixturevalue("postgres_dsn"))


# --- the command line --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "no_such_module_for_workers:EVALUATORS",
            "--evaluators: cannot import 'no_such_module_for_workers': "
            "No module named 'no_such_module_for_workers'",
        ),
        (
            "_worker_evaluators:MISSING",
            "--evaluators: module '_worker_evaluators' has no attribute 'MISSING'",
        ),
        ("_worker_evaluators", "--evaluators: expected 'module:attr', got '_worker_evaluators'"),
    ],
)
def test_evaluators_that_do_not_exist_exit_2_with_a_clear_message(
    tmp_path: Path, spawn: Spawn, spec: str, message: str
) -> None:
    config, database = write_config(tmp_path, "logged"), tmp_path / "evals.db"
    argv = worker_argv(config, str(database))
    argv[argv.index(WORKER_EVALUATORS)] = spec
    worker = spawn("bad-evaluators", argv)
    assert worker.wait(timeout=60) == 2
    stderr = worker.stderr()
    assert stderr.strip().splitlines() == [f"langchain-evals worker: {message}"], stderr
    assert not database.exists()  # it stopped before touching the ledger


@pytest.mark.parametrize("argv", [["--help"], ["worker", "--help"]])
def test_help_is_plain_text(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 0
    shown = capsys.readouterr().out
    assert shown.startswith("usage: langchain-evals")
    assert "run evaluations" in shown.lower()
    assert "``" not in shown  # docstring markup


def test_version_prints_the_package_version() -> None:
    command = Path(sys.executable).with_name("langchain-evals")  # the installed script
    shown = subprocess.run(
        [str(command), "--version"], capture_output=True, text=True, timeout=60, check=True
    )
    assert shown.stdout == f"langchain-evals {version('langchain-evals-port')}\n"
    assert version("langchain-evals-port") == langchain_evals_port.__version__


@pytest.mark.parametrize("mistake", ["not-evaluators", "missing-config"])
def test_other_usage_errors_exit_2_with_a_one_line_message(
    tmp_path: Path, spawn: Spawn, mistake: str
) -> None:
    config = write_config(tmp_path, "logged")
    argv = worker_argv(config, str(tmp_path / "evals.db"))
    if mistake == "not-evaluators":
        argv[argv.index(WORKER_EVALUATORS)] = "_worker_evaluators:AGENT"  # a str
    else:
        argv[argv.index(str(config))] = str(tmp_path / "missing.yaml")
    worker = spawn(mistake, argv)
    code = worker.wait(timeout=60)
    stderr = worker.stderr()
    assert "Traceback" not in stderr, stderr
    assert code == 2


def test_sigterm_lets_running_evaluations_finish_and_a_second_worker_does_the_rest(
    tmp_path: Path, spawn: Spawn, ledger_location: str
) -> None:
    config = write_config(tmp_path, "logged")
    started, done = tmp_path / "started.log", tmp_path / "done.log"
    ledger = open_storage(ledger_location)
    try:
        interaction_ids = record_interactions(config, ledger, 12)
        expected = {evaluation_id("logged", i, {}) for i in interaction_ids}
        assert ledger.pending_work() == 12

        first = spawn(
            "first",
            worker_argv(
                config,
                ledger_location,
                "--concurrency",
                "4",
                "--grace",
                "20",
                "--lease-seconds",
                "30",
            ),
            WORKER_STARTED=str(started),
            WORKER_LOG=str(done),
            WORKER_SLEEP="1.5",
        )
        wait_until(lambda: len(logged(started)) >= 4, 60, "four running evaluations")
        first.send(signal.SIGTERM)
        stopping = time.monotonic()
        assert first.wait(timeout=30) == 0, first.stderr()
        assert time.monotonic() - stopping < 20  # within the grace period
        running = {eid for eid, _ in logged(started)}

        # The four running at the signal finished and were recorded; nothing more was taken.
        assert len(logged(started)) == 4
        assert sorted(logged(done)) == sorted(logged(started))
        records = all_evaluations(ledger)
        assert {r.evaluation_id for r in records} == running
        assert {signer(r) for r in records} == {str(first.pid)}
        # The other eight are queued, not held by the stopped worker: claimable at once.
        assert ledger.pending_work() == 8
        claims = ledger.claim("probe", limit=100, lease_seconds=30)
        assert {c.unit.evaluation_id for c in claims} == expected - running
        for claim in claims:
            assert ledger.release(claim)

        second = spawn(
            "second",
            worker_argv(config, ledger_location, "--concurrency", "4"),
            WORKER_STARTED=str(started),
            WORKER_LOG=str(done),
            WORKER_SLEEP="0.01",
        )
        wait_until(lambda: ledger.pending_work() == 0, 60, "the second worker")
        second.send(signal.SIGTERM)
        assert second.wait(timeout=30) == 0, second.stderr()

        records = all_evaluations(ledger)
    finally:
        ledger.close()
    assert sorted(r.evaluation_id for r in records) == sorted(expected)
    assert Counter(signer(r) for r in records) == {str(first.pid): 4, str(second.pid): 8}
    # Each evaluation ran once, to the end.
    assert sorted(logged(started)) == sorted(logged(done))
    assert Counter(eid for eid, _ in logged(started)) == dict.fromkeys(expected, 1)


def test_sigterm_hands_evaluations_still_running_after_the_grace_period_back(
    tmp_path: Path, spawn: Spawn, ledger_location: str
) -> None:
    config = write_config(tmp_path, "logged")
    started, done = tmp_path / "started.log", tmp_path / "done.log"
    ledger = open_storage(ledger_location)
    try:
        interaction_ids = record_interactions(config, ledger, 12)
        expected = {evaluation_id("logged", i, {}) for i in interaction_ids}
        first = spawn(
            "first",
            worker_argv(
                config,
                ledger_location,
                "--concurrency",
                "4",
                "--grace",
                "0.5",
                "--lease-seconds",
                "30",
            ),
            WORKER_STARTED=str(started),
            WORKER_LOG=str(done),
            WORKER_SLEEP="60",
        )
        wait_until(lambda: len(logged(started)) >= 4, 60, "four running evaluations")
        first.send(signal.SIGTERM)
        stopping = time.monotonic()
        assert first.wait(timeout=30) == 0, first.stderr()
        assert time.monotonic() - stopping < 10
        cut_short = {eid for eid, _ in logged(started)}
        assert len(cut_short) == 4
        assert logged(done) == []
        assert all_evaluations(ledger) == []

        # Handed back: claimable at once, although their 30 s leases would not have expired.
        assert ledger.pending_work() == 12
        claims = ledger.claim("probe", limit=100, lease_seconds=30)
        assert {c.unit.evaluation_id for c in claims} == expected
        for claim in claims:
            assert ledger.release(claim)

        second = spawn(
            "second",
            worker_argv(config, ledger_location, "--concurrency", "4"),
            WORKER_STARTED=str(started),
            WORKER_LOG=str(done),
            WORKER_SLEEP="0.01",
        )
        wait_until(lambda: ledger.pending_work() == 0, 60, "the second worker")
        second.send(signal.SIGTERM)
        assert second.wait(timeout=30) == 0, second.stderr()
        records = all_evaluations(ledger)
    finally:
        ledger.close()
    assert sorted(r.evaluation_id for r in records) == sorted(expected)
    assert {signer(r) for r in records} == {str(second.pid)}
    # The cut-short evaluations started twice (once in each worker) and finished once.
    starts = Counter(eid for eid, _ in logged(started))
    assert starts == {eid: 2 if eid in cut_short else 1 for eid in expected}
    assert sorted(eid for eid, _ in logged(done)) == sorted(expected)


def test_sigterm_stops_within_the_grace_period_while_a_plain_def_evaluator_blocks(
    tmp_path: Path, spawn: Spawn
) -> None:
    config = write_config(tmp_path, "blocking")
    database = str(tmp_path / "evals.db")
    started = tmp_path / "started.log"
    ledger = open_storage(database)
    try:
        record_interactions(config, ledger, 2)
    finally:
        ledger.close()
    worker = spawn(
        "blocking",
        worker_argv(config, database, "--concurrency", "2", "--grace", "0.5"),
        WORKER_STARTED=str(started),
        WORKER_SLEEP="15",
    )
    wait_until(lambda: len(logged(started)) >= 2, 60, "two running evaluations")
    worker.send(signal.SIGTERM)
    # The grace period, plus the 5 s the dispatcher gives units to be handed back, plus slack.
    assert worker.wait(timeout=8) == 0


# --- several workers on PostgreSQL ---------------------------------------------------------


def test_four_workers_record_2000_evaluations_exactly_once_though_one_is_killed(
    tmp_path: Path, spawn: Spawn, postgres_dsn: str
) -> None:
    import psycopg

    config = write_config(tmp_path, "logged")
    started, done = tmp_path / "started.log", tmp_path / "done.log"
    ledger = open_storage(postgres_dsn)
    watcher = psycopg.connect(postgres_dsn, autocommit=True)
    try:
        interaction_ids = record_interactions(config, ledger, 2000)
        expected = {evaluation_id("logged", i, {}) for i in interaction_ids}
        assert len(expected) == 2000
        assert ledger.pending_work() == 2000

        workers = [
            spawn(
                f"w{n}",
                worker_argv(
                    config,
                    postgres_dsn,
                    *("--concurrency", "8", "--grace", "10", "--lease-seconds", "1"),
                    *("--worker-id", f"w{n}"),
                ),
                WORKER_STARTED=str(started),
                WORKER_LOG=str(done),
                WORKER_SLEEP="0.005",
                PGAPPNAME=f"w{n}",  # names its sessions in pg_stat_activity
            )
            for n in range(4)
        ]
        victim, survivors = workers[0], workers[1:]
        victim_pid = str(victim.pid)

        def victim_finished() -> int:
            return sum(pid == victim_pid for _, pid in logged(done))

        def victim_sessions() -> int:
            query = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'w0'"
            return int(watcher.execute(query).fetchone()[0])

        wait_until(lambda: victim_finished() >= 100, 60, "w0 to finish 100 evaluations")
        assert victim_sessions() > 0
        victim.send(signal.SIGKILL)
        assert victim.wait(timeout=10) == -signal.SIGKILL
        # The server still finishes what the victim sent before it died (a completion, say):
        # its sessions end only then, and only then is what it held settled.
        wait_until(lambda: victim_sessions() == 0, 10, "the dead worker's sessions to end")
        # What the dead worker held: its leases expire within a second, then others take over.
        held = {
            eid
            for (eid,) in watcher.execute(
                "SELECT evaluation_id FROM ledger_work WHERE worker = 'w0'"
            ).fetchall()
        }
        pending_at_kill = ledger.pending_work()
        assert held, "w0 held no claim when it was killed"
        assert len(held) <= 8  # its concurrency
        assert pending_at_kill > 100, "killed too late to be midway"

        wait_until(lambda: ledger.pending_work() == 0, 60, "the survivors to finish")
        for worker in survivors:
            worker.send(signal.SIGTERM)
        for worker in survivors:
            assert worker.wait(timeout=30) == 0, worker.stderr()

        records = all_evaluations(ledger)
        (stored,) = watcher.execute("SELECT count(*) FROM ledger_evaluations").fetchone()
        left = watcher.execute("SELECT count(*) FROM ledger_work").fetchone()
    finally:
        watcher.close()
        ledger.close()

    # The ledger: 2,000 records, one per interaction, none twice, none lost.
    assert stored == len(records) == 2000
    assert left == (0,)
    assert {r.evaluation_id for r in records} == expected
    assert Counter(r.interaction_id for r in records) == dict.fromkeys(interaction_ids, 1)
    by_pid = Counter(signer(r) for r in records)
    assert set(by_pid) == {str(w.pid) for w in workers}, by_pid

    recorded_by = {r.evaluation_id: signer(r) for r in records}
    starts, ends = logged(started), logged(done)
    survivor_starts = Counter(eid for eid, pid in starts if pid != victim_pid)
    survivor_ends = Counter(eid for eid, pid in ends if pid != victim_pid)
    victim_starts = Counter(eid for eid, pid in starts if pid == victim_pid)
    victim_ends = Counter(eid for eid, pid in ends if pid == victim_pid)
    victim_recorded = {eid for eid, pid in recorded_by.items() if pid == victim_pid}

    # The survivors ran each evaluation they took once, start to end, and recorded it.
    assert set(survivor_starts.values()) == {1}
    assert survivor_ends == survivor_starts
    assert set(survivor_ends) == set(expected) - victim_recorded
    for eid in survivor_ends:
        assert recorded_by[eid] != victim_pid
    # The victim ran each of its evaluations at most once; everything it recorded it ran.
    assert set(victim_starts.values()) == {1}
    assert set(victim_ends.values()) == {1}
    assert victim_recorded <= set(victim_ends) <= set(victim_starts)
    # What it started but did not record was still leased to it at its death (at most its
    # concurrency): those it had not finished, and those it finished but died before
    # recording. The survivors took them over after the lease expired and ran them once more.
    lost = set(victim_starts) - victim_recorded
    assert lost <= held, lost - held
    assert not victim_recorded & held
    assert held <= set(survivor_ends)
    # So an id appears at most twice in the log of finished runs: once from the victim, for
    # an outcome it never recorded, and once from the survivor that recorded it.
    twice = {eid for eid, n in Counter(eid for eid, _ in ends).items() if n > 1}
    assert twice == set(victim_ends) - victim_recorded
    assert twice <= held
    assert max(Counter(eid for eid, _ in ends).values()) <= 2


def test_a_durable_evaluation_killed_mid_node_resumes_in_a_worker_on_postgres(
    tmp_path: Path, spawn: Spawn, postgres_dsn: str
) -> None:
    import psycopg

    steps = tmp_path / "steps.log"
    child = spawn(
        "durable",
        [sys.executable, "-m", "_worker_evaluators", "durable", postgres_dsn],
        DURABLE_STEP_LOG=str(steps),
        DURABLE_BLOCK_IN_SECOND="1",
    )
    interaction_id = json.loads(child.read_line(timeout=60))
    assert child.read_line(timeout=60) == "blocked"  # inside the second of three nodes
    child.send(signal.SIGKILL)
    assert child.wait(timeout=10) == -signal.SIGKILL
    evaluation = evaluation_id("three-steps", interaction_id, {})
    with psycopg.connect(postgres_dsn, autocommit=True) as db:
        # The first node's checkpoint is in PostgreSQL (LangGraph's tables in the schema).
        (checkpoints,) = db.execute(
            "SELECT count(*) FROM checkpoints WHERE thread_id = %s", (evaluation,)
        ).fetchone()
    assert checkpoints > 0

    config = write_config(tmp_path, "three-steps")
    argv = worker_argv(config, postgres_dsn, "--lease-seconds", "1")
    argv[argv.index(WORKER_EVALUATORS)] = DURABLE_EVALUATORS
    worker = spawn("resumer", argv, DURABLE_STEP_LOG=str(steps))
    ledger = open_storage(postgres_dsn)
    try:
        wait_until(lambda: ledger.pending_work() == 0, 60, "the worker to resume")
        worker.send(signal.SIGTERM)
        assert worker.wait(timeout=30) == 0, worker.stderr()
        [record] = ledger.get_evaluations(interaction_id)
    finally:
        ledger.close()
    assert record.evaluation_id == evaluation
    assert (record.outcome, record.result.comment) == ("verdict", "2 votes")
    ran = [line.split() for line in steps.read_text().splitlines()]
    # The first node's checkpoint was committed: it never runs again. The second ran to the
    # kill and again in the worker; the third only in the worker.
    assert ran == [
        ["first", str(child.pid)],
        ["second", str(child.pid)],
        ["second", str(worker.pid)],
        ["third", str(worker.pid)],
    ]
    with psycopg.connect(postgres_dsn, autocommit=True) as db:
        (checkpoints,) = db.execute(
            "SELECT count(*) FROM checkpoints WHERE thread_id = %s", (evaluation,)
        ).fetchone()
    assert checkpoints == 0  # a recorded evaluation's checkpoints are deleted


@pytest.fixture(params=["sqlite", "postgres"])
def new_ledger_location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a brand-new ledger goes: a SQLite file, or a PostgreSQL database of its own
    (LangGraph's checkpoint tables live beside the ledger's, whatever the schema)."""
    if request.param == "sqlite":
        return str(tmp_path / "evals.db")
    return str(request.getfixturevalue("postgres_database_dsn"))


def test_durable_evaluations_started_together_on_a_new_ledger_all_reach_a_verdict(
    tmp_path: Path, spawn: Spawn, new_ledger_location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The application and two workers each start durable evaluations at once on a ledger
    # whose checkpoint tables do not exist yet: each process sets them up, once. Each node
    # takes 30 ms (in every process), so the application, two at a time, is still busy when
    # the workers next look for work (every 0.25 s): they get their share.
    monkeypatch.setenv("DURABLE_STEP_SECONDS", "0.03")
    config = write_config(tmp_path, "three-steps")
    argv = worker_argv(config, new_ledger_location, "--concurrency", "4")
    argv[argv.index(WORKER_EVALUATORS)] = DURABLE_EVALUATORS
    steps = tmp_path / "steps.log"
    workers = [spawn(f"w{n}", argv, DURABLE_STEP_LOG=str(steps)) for n in range(2)]
    for worker in workers:
        wait_until(lambda w=worker: "worker started" in w.stderr(), 60, f"{worker.name} to start")
    ledger = open_storage(new_ledger_location)
    try:
        application = EvaluationRuntime.from_files(
            config, evaluators=DURABLE, ledger=ledger, concurrency=2
        )
        with application:
            agent = application.bind(echo_agent(), agent_id=AGENT)
            interaction_ids = [agent.invoke_detailed(f"q{n}").interaction_id for n in range(20)]
            wait_until(lambda: ledger.pending_work() == 0, 60, "the evaluations")
        records = all_evaluations(ledger)
    finally:
        ledger.close()
    for worker in workers:
        worker.send(signal.SIGTERM)
        assert worker.wait(timeout=30) == 0, worker.stderr()
    outcomes = {r.interaction_id: (r.outcome, r.result.comment) for r in records}
    assert outcomes == dict.fromkeys(interaction_ids, ("verdict", "2 votes"))
    # The workers' nodes (the application's are not logged): they took part.
    ran_in = Counter(pid for _, pid in (line.split() for line in steps.read_text().splitlines()))
    print(f"nodes run per process: {dict(ran_in)}")
    assert set(ran_in) <= {str(worker.pid) for worker in workers}
    assert ran_in
