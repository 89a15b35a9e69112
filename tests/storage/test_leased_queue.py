"""The two queues of the SQL ledgers — the online work units and the experiments' runs — are
one ``LeasedQueue`` (``storage._leased``) and behave alike: the same tests, through each
queue's own public methods, on a SQLite file and on PostgreSQL. Both modes name their claims
in ``Holder``'s format."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest
from _postgres_server import sql_location  # noqa: F401 (the `location` fixture)
from langchain_core.runnables import RunnableLambda

from langchain_evals_port import evaluator
from langchain_evals_port.experiments import ExperimentStore
from langchain_evals_port.runtime.testkit import runtime_testkit
from langchain_evals_port.storage import (
    Claim,
    Holder,
    RunClaim,
    RunWrite,
    SqliteLedger,
    SqlLedger,
    open_ledger,
)
from langchain_evals_port.storage._experiment_runs import RUNS
from langchain_evals_port.storage._leased import LeasedQueue
from langchain_evals_port.storage._sql import WORK
from langchain_evals_port.storage.contract import make_evaluation, make_unit

SHORT = 0.2
"""A lease that expires within the test (seconds)."""

LONG = 60.0
"""A lease that does not."""


class Queue(Protocol):
    """One of the ledger's queues, through its public methods: rows named ``r-0``, ``r-1``,
    … in the queue's order."""

    def fill(self, count: int) -> None: ...
    def claim(self, worker_id: str, limit: int, lease_seconds: float) -> list[Any]: ...
    def name(self, claim: Any) -> str: ...
    def token(self, claim: Any) -> int: ...
    def renew(self, claims: list[Any], lease_seconds: float) -> int: ...
    def finish(self, claim: Any) -> bool: ...
    def release(self, claims: list[Any]) -> int: ...


class WorkUnits:
    """The online work queue: ``claim``, ``heartbeat``, ``complete``, ``release``."""

    def __init__(self, ledger: SqlLedger) -> None:
        self.ledger = ledger

    def fill(self, count: int) -> None:
        self.ledger.enqueue([make_unit(f"r-{n}", enqueued_at=1000.0 + n) for n in range(count)])

    def claim(self, worker_id: str, limit: int, lease_seconds: float) -> list[Claim]:
        return self.ledger.claim(worker_id, limit=limit, lease_seconds=lease_seconds)

    def name(self, claim: Claim) -> str:
        return claim.unit.evaluation_id

    def token(self, claim: Claim) -> int:
        return claim.token

    def renew(self, claims: list[Claim], lease_seconds: float) -> int:
        renewed = [self.ledger.heartbeat(claim, lease_seconds=lease_seconds) for claim in claims]
        return sum(claim is not None for claim in renewed)

    def finish(self, claim: Claim) -> bool:
        return self.ledger.complete(claim, make_evaluation(claim.unit.evaluation_id))

    def release(self, claims: list[Claim]) -> int:
        return sum(self.ledger.release(claim) for claim in claims)


class ExperimentRuns:
    """An experiment's runs: ``claim_runs``, ``renew_runs``, ``write_runs``,
    ``release_runs``."""

    def __init__(self, ledger: SqlLedger) -> None:
        self.ledger = ledger

    def fill(self, count: int) -> None:
        self.ledger.create_experiment("e", "{}", [(f"r-{n}", 0, "{}") for n in range(count)])

    def claim(self, worker_id: str, limit: int, lease_seconds: float) -> list[RunClaim]:
        return self.ledger.claim_runs("e", worker_id, limit=limit, lease_seconds=lease_seconds)

    def name(self, claim: RunClaim) -> str:
        return claim.case_id

    def token(self, claim: RunClaim) -> int:
        return claim.token

    def renew(self, claims: list[RunClaim], lease_seconds: float) -> int:
        return self.ledger.renew_runs("e", claims, lease_seconds=lease_seconds)

    def finish(self, claim: RunClaim) -> bool:
        [done] = self.ledger.write_runs("e", [RunWrite(claim, '{"done": 1}', finished=True)])
        return done

    def release(self, claims: list[RunClaim]) -> int:
        return self.ledger.release_runs("e", claims)


QUEUES = {"work": WorkUnits, "runs": ExperimentRuns}


@pytest.fixture
def ledger(location: str) -> Iterator[SqlLedger]:
    opened = open_ledger(location)
    assert isinstance(opened, SqlLedger)
    yield opened
    opened.close()


@pytest.fixture(params=list(QUEUES))
def queue(request: pytest.FixtureRequest, ledger: SqlLedger) -> Queue:
    made: Queue = QUEUES[request.param](ledger)
    return made


WORKER_A = str(Holder.current())
WORKER_B = str(Holder.current())


def names(queue: Queue, claims: list[Any]) -> list[str]:
    return [queue.name(claim) for claim in claims]


def test_both_queues_are_one_leased_queue() -> None:
    assert isinstance(WORK, LeasedQueue)
    assert isinstance(RUNS, LeasedQueue)
    assert type(WORK) is type(RUNS)


def test_claims_take_rows_in_order_up_to_the_limit_and_never_twice(queue: Queue) -> None:
    queue.fill(5)
    first = queue.claim(WORKER_A, 2, LONG)
    second = queue.claim(WORKER_B, 10, LONG)
    assert names(queue, first) == ["r-0", "r-1"]
    assert names(queue, second) == ["r-2", "r-3", "r-4"]
    assert queue.claim(WORKER_A, 10, LONG) == []
    assert {queue.token(claim) for claim in first + second} == {1}


def test_an_expired_lease_is_reclaimed_with_a_higher_token_and_fences_out_the_stale_claim(
    queue: Queue,
) -> None:
    queue.fill(2)
    stale = queue.claim(WORKER_A, 2, SHORT)
    time.sleep(SHORT + 0.05)
    taken = queue.claim(WORKER_B, 2, LONG)
    assert names(queue, taken) == names(queue, stale)
    assert [queue.token(c) for c in taken] == [queue.token(c) + 1 for c in stale]

    # Every write of the stale claims is refused: renewing, finishing, releasing.
    assert queue.renew(stale, LONG) == 0
    assert [queue.finish(claim) for claim in stale] == [False, False]
    assert queue.release(stale) == 0
    # The holder's stand, and a finished row is never claimed again.
    assert queue.renew(taken, LONG) == 2
    assert [queue.finish(claim) for claim in taken] == [True, True]
    assert queue.finish(taken[0]) is False
    time.sleep(0.05)
    assert queue.claim(WORKER_A, 10, SHORT) == []


def test_a_renewed_lease_keeps_the_row_from_other_claimers(queue: Queue) -> None:
    queue.fill(2)
    claims = queue.claim(WORKER_A, 2, SHORT)
    assert queue.renew(claims, LONG) == 2
    time.sleep(SHORT + 0.05)
    assert queue.claim(WORKER_B, 10, LONG) == []


def test_release_makes_the_rows_claimable_at_once_with_a_new_token(queue: Queue) -> None:
    queue.fill(3)
    claims = queue.claim(WORKER_A, 3, LONG)
    assert queue.release(claims[:2]) == 2
    again = queue.claim(WORKER_B, 10, LONG)
    assert names(queue, again) == ["r-0", "r-1"]
    assert [queue.token(claim) for claim in again] == [2, 2]
    # Released claims hold nothing any more.
    assert queue.release(claims[:2]) == 0
    assert queue.finish(claims[0]) is False


@pytest.mark.parametrize(
    ("limit", "lease", "message"),
    [(0, LONG, "limit"), (1, 0, "lease_seconds must be a positive number"), (1, True, "lease")],
)
def test_bad_limits_and_leases_are_refused_alike(
    queue: Queue, limit: int, lease: float, message: str
) -> None:
    queue.fill(1)
    with pytest.raises(ValueError, match=message):
        queue.claim(WORKER_A, limit, lease)


def test_both_modes_name_their_claims_in_holder_s_format(tmp_path: Path) -> None:
    """The online runtime's default worker id and the experiment store's parse as
    ``Holder``s of this process."""
    ledger = SqliteLedger(tmp_path / "evals.db")
    seen: list[str] = []

    @evaluator(feedback_key="holder")
    def holder(outputs: str) -> bool:
        # While the unit runs, its row names the worker that claimed it.
        seen.extend(str(worker) for (worker,) in ledger.select("SELECT worker FROM ledger_work"))
        return True

    config = {"evaluation": {"evaluators": {"holder": {"agents": {"bot": {}}}}}}
    with runtime_testkit(config, {"holder": holder}, ledger=ledger) as runtime:
        reply = runtime.bind(RunnableLambda(lambda q: f"re: {q}"), agent_id="bot")
        [record] = runtime.wait_for_evaluations(reply.invoke_detailed("hi").interaction_id)
    assert record.results[0].score is True
    ledger.close()

    with ExperimentStore(tmp_path / "experiments.db") as store:
        experiment_worker = store.worker_id
    this = Holder.current()
    for worker_id in [*seen, experiment_worker]:
        found = Holder.parse(worker_id)
        assert found is not None, worker_id
        assert (found.host, found.pid, found.scope) == (this.host, this.pid, this.scope)
        assert not found.is_gone()
    assert len(seen) == 1


def test_an_experiment_s_counts_and_finished_keys_follow_its_written_runs(
    ledger: SqlLedger,
) -> None:
    ledger.create_experiment(
        "e", "{}", [(f"r-{n}", trial, "{}") for n in range(3) for trial in (0, 1)]
    )
    [row] = ledger.experiments("e")
    assert (row.runs, row.finished) == (6, 0)
    claims = ledger.claim_runs("e", "w", limit=6, lease_seconds=60)
    done = [claim for claim in claims if claim.case_id != "r-1"]
    assert (
        ledger.write_runs("e", [RunWrite(claim, "{}", finished=True) for claim in done])
        == [True] * 4
    )
    [row] = ledger.experiments("e")
    assert (row.runs, row.finished) == (6, 4)
    expected = [("r-0", 0), ("r-0", 1), ("r-2", 0), ("r-2", 1)]
    assert ledger.run_keys("e", finished_only=True) == expected
    assert len(ledger.run_keys("e")) == 6
    assert [(r.case_id, r.trial) for r in ledger.runs("e", finished_only=True)] == expected
