"""A PostgreSQL restart under a running application: the runtime reconnects and goes on,
losing and duplicating nothing — on a throwaway server of the test's own (``pg_ctl`` stop and
start), never the shared one."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from _agents import Gate, three_steps
from _postgres_server import ThrowawayPostgres
from langchain_core.runnables import RunnableLambda

from langchain_evals_port import Score, evaluator
from langchain_evals_port.runtime import EvaluationRuntime, PostgresLedger

pytestmark = [pytest.mark.services, pytest.mark.processes]

WAIT = 300.0
"""Seconds a gate or a reply may take: a bound for a hung test, never reached by a passing one."""

SUPPORT = {"evaluation": {"evaluators": {"checked": {"agents": {"support-agent": {}}}}}}


class Reconnecting(logging.Handler):
    """Sets ``seen`` when the ledger logs that it lost its connection and is reconnecting."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if "reconnecting" in record.getMessage():
            self.seen.set()


def count(dsn: str, query: str) -> int:
    import psycopg

    with psycopg.connect(dsn) as db:
        row = db.execute(query).fetchone()
    assert row is not None
    return int(row[0])


def test_the_runtime_rides_out_restarts_mid_interaction_and_mid_evaluation(
    restartable_postgres: ThrowawayPostgres,
) -> None:
    server = restartable_postgres
    in_agent, in_evaluator = Gate(), Gate()

    def answer(question: str) -> str:
        if question == "held":
            in_agent.wait(WAIT)
        return f"You asked: {question}"

    @evaluator
    def checked(inputs: str, outputs: str) -> Score:
        if inputs == "slow":
            in_evaluator.wait(WAIT)
        return Score(outputs == f"You asked: {inputs}")

    watcher = Reconnecting()
    logging.getLogger("langchain_evals_port").addHandler(watcher)
    ledger = PostgresLedger(server.dsn, pool_size=4)
    runtime = EvaluationRuntime(
        SUPPORT, evaluators={"checked": checked}, ledger=ledger, poll_interval=0.05
    )
    agent = runtime.bind(RunnableLambda(answer, name="echo"), agent_id="support-agent")
    ids: list[str] = []
    try:
        ids += [agent.invoke_detailed(f"before {n}").interaction_id for n in range(3)]
        for interaction_id in ids:
            runtime.wait_for_evaluations(interaction_id, timeout=WAIT)

        # Restarted while an evaluation runs and an interaction is under way: every pooled
        # connection is then stale.
        ids.append(agent.invoke_detailed("slow").interaction_id)
        assert in_evaluator.entered.wait(WAIT)
        with ThreadPoolExecutor(1) as pool:
            held = pool.submit(agent.invoke_detailed, "held")
            assert in_agent.entered.wait(WAIT)
            server.restart()
            in_agent.opened.set()
            in_evaluator.opened.set()
            ids.append(held.result(WAIT).interaction_id)
        ids += [agent.invoke_detailed(f"after {n}").interaction_id for n in range(3)]

        # Down while the application records: the call waits for the server, not fails.
        server.stop()
        with ThreadPoolExecutor(1) as pool:
            waiting = pool.submit(agent.invoke_detailed, "while down")
            assert watcher.seen.wait(WAIT), "the ledger never said it was reconnecting"
            assert not waiting.done()
            server.start()
            ids.append(waiting.result(WAIT).interaction_id)

        records = [runtime.wait_for_evaluations(i, timeout=WAIT) for i in ids]
    finally:
        logging.getLogger("langchain_evals_port").removeHandler(watcher)
        in_agent.opened.set()
        in_evaluator.opened.set()
        runtime.close(timeout=WAIT)
        ledger.close()

    assert len(set(ids)) == 9
    assert all(len(found) == 1 and found[0].passed for found in records), records
    assert count(server.dsn, "SELECT count(*) FROM ledger_interactions") == 9
    assert count(server.dsn, "SELECT count(*) FROM ledger_evaluations") == 9
    assert count(server.dsn, "SELECT count(*) FROM ledger_work") == 0


def test_a_ledger_call_waits_for_a_server_that_comes_back(
    restartable_postgres: ThrowawayPostgres,
) -> None:
    """Every kind of call (a read, a one-statement write, a transaction) goes through."""
    from _factories import make_evaluation, make_interaction, make_unit

    server = restartable_postgres
    ledger = PostgresLedger(server.dsn, pool_size=2)
    try:
        ledger.record_interaction(make_interaction("i-1"), [make_unit("e-1", interaction_id="i-1")])
        [claim] = ledger.claim("w", limit=1, lease_seconds=300)
        server.restart()
        assert ledger.complete(claim, make_evaluation("e-1", interaction_id="i-1"))
        server.restart()
        assert ledger.get_evaluation("e-1") is not None
        server.restart()
        ledger.record_interaction(make_interaction("i-2"), [make_unit("e-2", interaction_id="i-2")])
        assert ledger.pending_work() == 1
    finally:
        ledger.close()


def test_durable_evaluations_keep_their_checkpoints_across_a_restart(
    restartable_postgres: ThrowawayPostgres,
) -> None:
    server = restartable_postgres
    config = {"evaluation": {"evaluators": {"three-steps": {"agents": {"support-agent": {}}}}}}
    ledger = PostgresLedger(server.dsn, pool_size=4)
    runtime = EvaluationRuntime(
        config, evaluators={"three-steps": three_steps()}, ledger=ledger, poll_interval=0.05
    )
    agent = runtime.bind(RunnableLambda(lambda q: f"You asked: {q}"), agent_id="support-agent")
    try:
        ids = [agent.invoke_detailed("before").interaction_id]
        records = [runtime.wait_for_evaluations(ids[0], timeout=WAIT)]
        server.restart()
        ids += [agent.invoke_detailed(f"after {n}").interaction_id for n in range(2)]
        records += [runtime.wait_for_evaluations(i, timeout=WAIT) for i in ids[1:]]
    finally:
        runtime.close(timeout=WAIT)
        ledger.close()
    assert [[(r.outcome, r.passed) for r in found] for found in records] == [
        [("verdict", True)]
    ] * 3, records
