"""What only the PostgreSQL ledger promises: processes and threads sharing one database,
claimers that skip each other's locked rows, a reopened database, and errors that name the
server without its password."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
from _factories import make_evaluation, make_interaction, make_unit

ROOT = Path(__file__).resolve().parents[2]

# A worker process: waits for "go" on stdin, claims and completes units until none is left
# for it, then prints the ids it claimed as JSON.
WORKER = """
import json, sys
sys.path.insert(0, sys.argv[3])
from _factories import make_evaluation
from langchain_evals_port.runtime import PostgresLedger

ledger = PostgresLedger(sys.argv[1], pool_size=2)
print("ready", flush=True)
sys.stdin.readline()
claimed = []
while claims := ledger.claim(sys.argv[2], limit=7, lease_seconds=60.0):
    for claim in claims:
        claimed.append(claim.unit.evaluation_id)
        record = make_evaluation(claim.unit.evaluation_id, interaction_id=claim.unit.interaction_id)
        assert ledger.complete(claim, record)
ledger.close()
print(json.dumps(claimed), flush=True)
"""


@pytest.fixture
def ledger(postgres_dsn):
    from langchain_evals_port.runtime import PostgresLedger

    ledger = PostgresLedger(postgres_dsn)
    yield ledger
    ledger.close()


def count(dsn: str, query: str) -> int:
    import psycopg

    with psycopg.connect(dsn) as db:
        (value,) = db.execute(query).fetchone()
    return int(value)


@pytest.mark.processes
def test_two_processes_complete_every_unit_exactly_once(postgres_dsn, ledger):
    for n in range(50):
        work = [make_unit(f"e-{n}-{k}", interaction_id=f"i-{n}") for k in range(10)]
        ledger.record_interaction(make_interaction(f"i-{n}"), work)
    assert ledger.pending_work() == 500

    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, postgres_dsn, f"w-{k}", str(Path(__file__).parent)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for k in range(2)
    ]
    for worker in workers:
        assert worker.stdout.readline().strip() == "ready"
    for worker in workers:
        worker.stdin.write("go\n")
        worker.stdin.flush()
    outputs = [worker.communicate(timeout=120)[0] for worker in workers]

    assert [worker.returncode for worker in workers] == [0, 0]
    first, second = (json.loads(output) for output in outputs)
    assert len(first) == len(set(first))
    assert len(second) == len(set(second))
    assert set(first).isdisjoint(second)
    assert len(set(first) | set(second)) == 500
    assert first, "the first process claimed nothing"
    assert second, "the second process claimed nothing"
    assert ledger.pending_work() == 0
    assert count(postgres_dsn, "SELECT count(*) FROM ledger_evaluations") == 500


def test_threads_share_one_ledger(ledger):
    ledger.enqueue([make_unit(f"e-{n:03d}") for n in range(200)])
    claimed: list[list[str]] = []

    def work(worker_id: str) -> None:
        mine = []
        while claims := ledger.claim(worker_id, limit=3, lease_seconds=60.0):
            for claim in claims:
                mine.append(claim.unit.evaluation_id)
                assert ledger.complete(claim, make_evaluation(claim.unit.evaluation_id))
        claimed.append(mine)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(work, [f"w-{k}" for k in range(8)]))

    everything = [evaluation_id for mine in claimed for evaluation_id in mine]
    assert sorted(everything) == [f"e-{n:03d}" for n in range(200)]
    assert ledger.pending_work() == 0
    assert len(ledger.query_evaluations(limit=500).items) == 200


def test_a_claimer_holding_its_transaction_open_does_not_block_another(postgres_dsn, ledger):
    import psycopg

    ledger.enqueue([make_unit(f"e-{n}", enqueued_at=1000.0 + n) for n in range(5)])
    # Another claimer has locked the two oldest units and not committed yet.
    with psycopg.connect(postgres_dsn) as holder:
        locked = holder.execute(
            "SELECT evaluation_id FROM ledger_work ORDER BY enqueued_at, evaluation_id"
            " LIMIT 2 FOR UPDATE SKIP LOCKED"
        ).fetchall()
        assert locked == [("e-0",), ("e-1",)]

        claims: list[list[str]] = []
        claimer = threading.Thread(
            target=lambda: claims.append(
                [c.unit.evaluation_id for c in ledger.claim("w-2", limit=10, lease_seconds=60)]
            )
        )
        claimer.start()
        claimer.join(timeout=10)
        assert not claimer.is_alive(), "claim waited for the other claimer's locks"
        assert claims == [["e-2", "e-3", "e-4"]]
        # Writes that need a locked row are not skipped: they wait, so the holder lets go.
        holder.rollback()

    assert [c.unit.evaluation_id for c in ledger.claim("w-3", limit=10, lease_seconds=60)] == [
        "e-0",
        "e-1",
    ]


def test_a_transaction_the_server_rolls_back_for_a_deadlock_runs_again(postgres_dsn, ledger):
    import psycopg

    ledger.create_experiment("deadlocked", "{}", [("a", 0, "{}"), ("b", 0, "{}")])
    claims = ledger.claim_runs("deadlocked", "w-1", limit=2, lease_seconds=60)
    renewed: list[int] = []
    with psycopg.connect(postgres_dsn) as other:
        # The ledger's session finds the deadlock first (1 s), so its transaction is the one
        # the server rolls back.
        other.execute("SET deadlock_timeout = '600s'")
        touch = "UPDATE ledger_experiment_runs SET work = work WHERE case_id = %s"
        other.execute(touch, ("b",))
        renewing = threading.Thread(
            target=lambda: renewed.append(ledger.renew_runs("deadlocked", claims, lease_seconds=60))
        )
        renewing.start()
        # The renewal holds run a and waits for run b ...
        waiting = (
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            " AND query LIKE 'UPDATE ledger_experiment_runs SET lease_until%%'"
        )
        for _ in range(6000):
            if count(postgres_dsn, waiting) == 1:
                break
            threading.Event().wait(0.05)
        # ... and this waits for run a: a deadlock.
        other.execute(touch, ("a",))
        other.commit()
        renewing.join(timeout=300)
    assert renewed == [2]


def test_a_reopened_database_holds_everything(postgres_dsn):
    from langchain_evals_port.runtime import PostgresLedger

    first = PostgresLedger(postgres_dsn)
    first.record_interaction(make_interaction("i-1"), [make_unit("e-1"), make_unit("e-2")])
    first.record_evaluation(make_evaluation("e-0"))
    claim = first.claim("w-1", limit=1, lease_seconds=60.0)[0]
    first.close()

    second = PostgresLedger(postgres_dsn)

    assert second.get_interaction("i-1") == make_interaction("i-1")
    assert second.get_evaluation("e-0") == make_evaluation("e-0")
    assert second.pending_work("i-1") == 2
    assert second.complete(claim, make_evaluation(claim.unit.evaluation_id)) is True
    assert second.pending_work("i-1") == 1
    second.close()


async def test_checkpointers_opened_at_once_on_a_new_database_set_it_up_once(
    postgres_database_dsn,
):
    # Six sessions at once, as six worker processes starting durable evaluations would.
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    from langchain_evals_port.runtime import PostgresLedger

    ledger = PostgresLedger(postgres_database_dsn)
    try:
        async with AsyncExitStack() as stack:
            savers = await asyncio.gather(
                *(stack.enter_async_context(ledger.open_checkpointer()) for _ in range(6))
            )
            assert len({id(saver) for saver in savers}) == 6
            config = {"configurable": {"thread_id": "t-1", "checkpoint_ns": ""}}
            assert [await saver.aget_tuple(config) for saver in savers] == [None] * 6
    finally:
        ledger.close()
    migrations = len(AsyncPostgresSaver.MIGRATIONS)
    assert count(postgres_database_dsn, "SELECT count(*) FROM checkpoint_migrations") == migrations
    assert (
        count(postgres_database_dsn, "SELECT max(v) FROM checkpoint_migrations") == migrations - 1
    )


def test_a_closed_ledger_is_unusable(postgres_dsn):
    from psycopg_pool import PoolClosed

    from langchain_evals_port.runtime import PostgresLedger

    ledger = PostgresLedger(postgres_dsn)
    ledger.close()

    with pytest.raises(PoolClosed):
        ledger.pending_work()


def test_repr_hides_the_password(postgres_dsn):
    from langchain_evals_port.runtime import PostgresLedger

    ledger = PostgresLedger(postgres_dsn)
    try:
        assert repr(ledger).startswith("PostgresLedger('postgresql://")
        assert ledger.dsn == postgres_dsn
    finally:
        ledger.close()


# --- without a server ------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(
    "template",
    [
        "postgresql://evals:hunter2@127.0.0.1:{port}/nowhere",
        "host=127.0.0.1 port={port} user=evals password='hunter2' dbname=nowhere",
    ],
)
def test_an_unreachable_server_is_named_without_the_password(template):
    from langchain_evals_port.runtime import PostgresLedger

    port = free_port()
    with pytest.raises(ConnectionError) as raised:
        PostgresLedger(template.format(port=port), connect_timeout=2)

    message = str(raised.value)
    assert "cannot connect" in message
    assert "127.0.0.1" in message
    assert str(port) in message
    assert "nowhere" in message
    assert "hunter2" not in message
    assert "hunter2" not in repr(raised.value)
    assert raised.value.__cause__ is None
    assert raised.value.__suppress_context__


def test_a_malformed_dsn_is_named():
    from langchain_evals_port.runtime import PostgresLedger

    with pytest.raises(ValueError, match="not a valid connection string") as raised:
        PostgresLedger("host=127.0.0.1 password=hunter2 colour")
    assert "hunter2" not in str(raised.value)


@pytest.mark.parametrize(
    ("dsn", "shown"),
    [
        ("postgresql://app:s3cret@db:5432/evals", "postgresql://app:***@db:5432/evals"),
        ("postgres://app@db/evals", "postgres://app@db/evals"),
        (
            "postgresql://db/evals?password=s3cret&sslmode=require",
            "postgresql://db/evals?password=***&sslmode=require",
        ),
        ("host=db password=s3cret dbname=evals", "host=db password=*** dbname=evals"),
        ("host=db password = 'it\\'s secret' dbname=evals", "host=db password = *** dbname=evals"),
    ],
)
def test_redact_dsn(dsn, shown):
    from langchain_evals_port.storage._postgres import redact_dsn

    assert redact_dsn(dsn) == shown


@pytest.mark.parametrize("pool_size", [0, -1, True, 2.5])
def test_a_bad_pool_size_is_refused(pool_size):
    from langchain_evals_port.runtime import PostgresLedger

    with pytest.raises(ValueError, match="pool_size"):
        PostgresLedger("postgresql://127.0.0.1:1/x", pool_size=pool_size)


@pytest.mark.processes
def test_postgres_ledger_is_exported_and_needs_psycopg_only_when_created():
    # psycopg is an optional extra: without it the runtime imports, and only creating a
    # PostgresLedger fails, naming the extra to install.
    code = (
        "import sys\n"
        "sys.modules['psycopg'] = sys.modules['psycopg_pool'] = None  # not installed\n"
        "import langchain_evals_port.runtime as runtime\n"
        "from langchain_evals_port.runtime import PostgresLedger\n"
        "assert 'PostgresLedger' in runtime.__all__\n"
        "try:\n"
        "    PostgresLedger('postgresql://127.0.0.1:1/x')\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == (
        'PostgresLedger needs psycopg 3 and psycopg-pool: pip install "langchain-evals-port[postgres]"'
    )


@pytest.mark.processes
def test_importing_the_package_imports_neither_psycopg_nor_pytest():
    # Both are optional: psycopg until a PostgresLedger is created, pytest until the ledger
    # contract suite (langchain_evals_port.storage.contract) runs.
    code = (
        "import sys, langchain_evals_port, langchain_evals_port.runtime, "
        "langchain_evals_port.storage._postgres; "
        "print(sorted(m for m in sys.modules if m.startswith(('psycopg', 'pytest', '_pytest'))))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert run.stdout.strip() == "[]"
