"""How evaluation throughput scales with ``langchain-evals worker`` processes on PostgreSQL.

For 1, 2 and 4 workers (each ``--concurrency 4``) sharing one PostgreSQL ledger: the
interactions are recorded first, through a bound agent on a runtime that binds no evaluator;
the workers are started and, once every one of them is up, one work unit per interaction is
enqueued in a single statement. The clock runs from that moment until the ledger has no
pending work. The evaluator, an async ``@evaluator`` function, gets the reply the runtime
read from the ledger and asks a scripted judge (``ScriptedChatModel(latency=0.2).ainvoke``)
for its verdict, so an evaluation takes 200 ms of waiting; the ideal throughput is
workers x 4 / 0.2 s.

Printed per run: evaluations/s, the ideal and the share of it reached, the speed-up over one
worker (target: 4 workers >= 3.2x), and CPU time per evaluation — of the worker processes
while they evaluated (from ``/proc/<pid>/stat``, start-up excluded), of the PostgreSQL server
processes serving the run's database (when the server runs on this machine), and of the
workers over their whole life, start-up included (``RUSAGE_CHILDREN``) — so that the cost of
coordinating through the ledger is visible. Each run works in a fresh schema, dropped after.

Run: ``LANGCHAIN_EVALS_PG_DSN=postgresql://... .venv/bin/python benchmarks/bench_scaleout.py
[--per-worker N] [--workers 1,2,4]`` (about a minute with the defaults). Without the variable
it says so and exits with status 1.
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableLambda

from langchain_evals_port import evaluator
from langchain_evals_port.runtime import EvaluationRuntime, WorkUnit, evaluation_id
from langchain_evals_port.testing import ScriptedChatModel

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PG_DSN_VARIABLE = "LANGCHAIN_EVALS_PG_DSN"
AGENT = "support-agent"
EVALUATOR_ID = "scripted-judge"
JUDGE_LATENCY = 0.2
CONCURRENCY = 4
TARGET_SPEEDUP_4 = 3.2
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

CONFIG = f"""\
evaluation:
  evaluators:
    {EVALUATOR_ID}:
      agents:
        {AGENT}: {{ sampling_ratio: 1.0 }}
"""


# --- what the workers import (``--evaluators bench_scaleout:EVALUATORS``) ---------------------

_judge: ScriptedChatModel | None = None


def judge() -> ScriptedChatModel:
    """The process's scripted judge: answers every call after ``JUDGE_LATENCY`` seconds."""
    global _judge
    if _judge is None:
        _judge = ScriptedChatModel(
            responder=lambda messages: "PASS: the reply answers the question.",
            latency=JUDGE_LATENCY,
        )
    return _judge


@evaluator(feedback_key="helpful")
async def scripted_judge(outputs: str) -> tuple[bool, str]:
    """Has the scripted judge grade the reply (which the runtime read from the ledger)."""
    reply = await judge().ainvoke([HumanMessage(f"Is this reply helpful?\n{outputs}")])
    return reply.text.startswith("PASS"), reply.text


EVALUATORS = {EVALUATOR_ID: scripted_judge}
"""The mapping the workers load: ``--evaluators bench_scaleout:EVALUATORS``."""


# --- the benchmark -------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    workers: int
    evaluations: int
    seconds: float
    worker_cpu: float
    server_cpu: float | None
    lifetime_cpu: float

    @property
    def throughput(self) -> float:
        return self.evaluations / self.seconds

    @property
    def ideal(self) -> float:
        return self.workers * CONCURRENCY / JUDGE_LATENCY


def with_search_path(dsn: str, schema: str) -> str:
    """``dsn`` with ``schema`` as its ``search_path``."""
    option = {"options": f"-csearch_path={schema}"}
    if dsn.startswith(("postgresql://", "postgres://")):
        parts = urlsplit(dsn)
        query = f"{parts.query}&{urlencode(option)}" if parts.query else urlencode(option)
        return urlunsplit(parts._replace(query=query))
    from psycopg.conninfo import make_conninfo

    return make_conninfo(dsn, **option)


def process_cpu(pid: int) -> float | None:
    """User plus system CPU seconds of a live process, or ``None`` when it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rpartition(")")[2].split()
    except OSError:
        return None
    # After the command name: state is field 3, utime and stime are fields 14 and 15.
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def server_pids(db: Any) -> list[int]:
    """The server processes serving this database, other than ``db``'s own."""
    rows = db.execute(
        "SELECT pid FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid()"
    ).fetchall()
    return [pid for (pid,) in rows]


def server_cpu(db: Any, server_is_local: bool) -> dict[int, float] | None:
    if not server_is_local:
        return None
    cpu = {pid: process_cpu(pid) for pid in server_pids(db)}
    if any(seconds is None for seconds in cpu.values()):
        return None
    return {pid: seconds for pid, seconds in cpu.items() if seconds is not None}


def record_interactions(dsn: str, count: int) -> list[WorkUnit]:
    """Record ``count`` interactions through a bound agent (no evaluator bound, so nothing is
    queued); the work units that evaluate them, as the runtime would queue them."""
    from langchain_evals_port.runtime import PostgresLedger

    ledger = PostgresLedger(dsn)
    recorder = EvaluationRuntime(None, ledger=ledger, start=False)
    agent = recorder.bind(
        RunnableLambda(lambda question: f"Your order {question} shipped yesterday."),
        agent_id=AGENT,
        roles=["customer-facing"],
    )
    try:
        replies = [agent.invoke_detailed(f"A-{n}") for n in range(count)]
        units = []
        for reply in replies:
            record = ledger.get_interaction(reply.interaction_id)
            units.append(
                WorkUnit(
                    evaluation_id=evaluation_id(EVALUATOR_ID, record.interaction_id, {}),
                    evaluator_id=EVALUATOR_ID,
                    interaction_id=record.interaction_id,
                    agent_id=record.agent_id,
                    roles=record.roles,
                    flow_id=record.flow_id,
                    trigger="on_interaction",
                    enqueued_at=time.time(),
                )
            )
        return units
    finally:
        recorder.close()
        ledger.close()


def start_workers(count: int, dsn: str, folder: Path) -> list[tuple[subprocess.Popen[bytes], Path]]:
    config = folder / "evals.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    python_path = os.pathsep.join(
        [str(HERE), str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    env = {**os.environ, "PYTHONPATH": python_path}
    for variable in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2"):
        env.pop(variable, None)
    workers = []
    for n in range(count):
        log = folder / f"worker-{n}.log"
        with open(log, "wb") as stderr:
            process = subprocess.Popen(
                [
                    *(sys.executable, "-m", "langchain_evals_port.cli", "worker"),
                    *("--config", str(config), "--ledger", dsn),
                    *("--evaluators", "bench_scaleout:EVALUATORS"),
                    *("--concurrency", str(CONCURRENCY), "--worker-id", f"bench-{n}"),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                env=env,
            )
        workers.append((process, log))
    return workers


def wait_until_started(workers: list[tuple[subprocess.Popen[bytes], Path]]) -> None:
    deadline = time.monotonic() + 120
    for process, log in workers:
        while "worker started" not in log.read_text(errors="replace"):
            if process.poll() is not None:
                raise SystemExit(f"a worker exited ({process.returncode}):\n{log.read_text()}")
            if time.monotonic() > deadline:
                raise SystemExit(f"a worker did not start within 120 s:\n{log.read_text()}")
            time.sleep(0.05)


def run(server_dsn: str, workers_count: int, evaluations: int) -> Run:
    import psycopg

    from langchain_evals_port.runtime import PostgresLedger

    host = urlsplit(server_dsn).hostname if "://" in server_dsn else None
    server_is_local = host in ("127.0.0.1", "localhost", "::1")
    schema = f"bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
    dsn = with_search_path(server_dsn, schema)
    workers: list[tuple[subprocess.Popen[bytes], Path]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="bench-scaleout-") as folder:
            units = record_interactions(dsn, evaluations)
            children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
            workers = start_workers(workers_count, dsn, Path(folder))
            wait_until_started(workers)
            ledger = PostgresLedger(dsn, pool_size=2)
            db = psycopg.connect(dsn, autocommit=True)
            try:
                worker_before = [process_cpu(p.pid) or 0.0 for p, _ in workers]
                server_before = server_cpu(db, server_is_local)
                began = time.perf_counter()
                assert ledger.enqueue(units) == evaluations
                while ledger.pending_work():
                    time.sleep(0.05)
                seconds = time.perf_counter() - began
                worker_after = [process_cpu(p.pid) or 0.0 for p, _ in workers]
                server_after = server_cpu(db, server_is_local)
                (recorded,) = db.execute("SELECT count(*) FROM ledger_evaluations").fetchone()
                (passed,) = db.execute(
                    "SELECT count(*) FROM ledger_evaluations "
                    "WHERE record -> 'results' -> 0 -> 'metadata' ->> 'passed' = 'true'"
                ).fetchone()
            finally:
                db.close()
                ledger.close()
            for process, _ in workers:
                process.send_signal(signal.SIGTERM)
            for process, log in workers:
                if process.wait(timeout=60) != 0:
                    raise SystemExit(
                        f"a worker exited with {process.returncode}:\n{log.read_text()}"
                    )
            children_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    finally:
        for process, _ in workers:
            if process.poll() is None:
                process.kill()
                process.wait()
        with psycopg.connect(server_dsn, autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    if recorded != evaluations or passed != evaluations:
        raise SystemExit(f"expected {evaluations} passing evaluations, found {recorded} ({passed})")
    server = None
    if server_before is not None and server_after is not None:
        server = sum(cpu - server_before.get(pid, 0.0) for pid, cpu in server_after.items())
    lifetime = (children_after.ru_utime + children_after.ru_stime) - (
        children_before.ru_utime + children_before.ru_stime
    )
    return Run(
        workers=workers_count,
        evaluations=evaluations,
        seconds=seconds,
        worker_cpu=sum(
            after - before for before, after in zip(worker_before, worker_after, strict=True)
        ),
        server_cpu=server,
        lifetime_cpu=lifetime,
    )


def report(runs: list[Run]) -> bool:
    base = next((r for r in runs if r.workers == 1), None)
    print(
        f"\n{'workers':>7} {'evals':>6} {'seconds':>8} {'evals/s':>8} {'ideal/s':>8} "
        f"{'of ideal':>8} {'speed-up':>8} {'worker CPU/eval':>16} {'server CPU/eval':>16} "
        f"{'incl. start-up':>15}"
    )
    for r in runs:
        speedup = f"{r.throughput / base.throughput:7.2f}x" if base else "     n/a"
        server = (
            f"{1000 * r.server_cpu / r.evaluations:13.2f} ms" if r.server_cpu else "n/a".rjust(16)
        )
        print(
            f"{r.workers:>7} {r.evaluations:>6} {r.seconds:>8.2f} {r.throughput:>8.1f} "
            f"{r.ideal:>8.1f} {r.throughput / r.ideal:>8.0%} {speedup:>8} "
            f"{1000 * r.worker_cpu / r.evaluations:13.2f} ms {server} "
            f"{1000 * r.lifetime_cpu / r.evaluations:12.2f} ms"
        )
    four = next((r for r in runs if r.workers == 4), None)
    if base is None or four is None:
        print("\nspeed-up target not checked: it needs runs with 1 and 4 workers")
        return True
    speedup = four.throughput / base.throughput
    met = speedup >= TARGET_SPEEDUP_4
    print(
        f"\n4 workers vs 1: {speedup:.2f}x (target >= {TARGET_SPEEDUP_4}x): "
        f"{'MET' if met else 'NOT MET'}"
    )
    return met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--per-worker", type=int, default=300, help="evaluations per worker in each run"
    )
    parser.add_argument("--workers", default="1,2,4", help="worker counts, comma-separated")
    args = parser.parse_args()
    server_dsn = os.environ.get(PG_DSN_VARIABLE, "").strip()
    if not server_dsn:
        print(
            f"bench_scaleout: {PG_DSN_VARIABLE} is not set; point it at a PostgreSQL server "
            "(e.g. `source scripts/postgres.sh` starts a throwaway one)",
            file=sys.stderr,
        )
        return 1
    counts = [int(n) for n in args.workers.split(",")]
    print(
        f"judge latency {JUDGE_LATENCY * 1000:.0f} ms, concurrency {CONCURRENCY} per worker, "
        f"{args.per_worker} evaluations per worker, {os.cpu_count()} CPUs"
    )
    runs = []
    for count in counts:
        runs.append(run(server_dsn, count, args.per_worker * count))
        print(f"  {count} worker(s): {runs[-1].throughput:.1f} evaluations/s", flush=True)
    report(runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
