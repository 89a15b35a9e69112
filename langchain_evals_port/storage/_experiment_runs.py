"""The SQL ledgers' experiment tables: experiments, and the runs of their cases as a queue.

``langchain_evals_port.experiments`` keeps its experiments here, on the ledger's storage and
migrations (the tables are ``ledger_experiments`` and ``ledger_experiment_runs``). This layer
stores JSON text it does not read; the experiments package gives it its shape.

A run (one case, one trial) is claimed the way a work unit is, by the same implementation
(``RUNS``, a ``LeasedQueue``: ``_leased`` has the rules): the claim raises the run's fencing
token and sets a lease, and the write that finishes a run stores its record only while the
claim holds that token and the run is unfinished, so a run is recorded exactly once even
when a worker whose lease expired finishes after another took the run over. A finished run
is never claimed again, so a restarted experiment runs only what is unfinished.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from ._leased import Held, LeasedQueue, Write
from ._reconnect import retried

if TYPE_CHECKING:
    from ._sql import Session

__all__ = ["RUNS", "ExperimentRow", "ExperimentRuns", "RunClaim", "RunRow", "RunWrite"]

T = TypeVar("T")


@dataclass(frozen=True)
class ExperimentRow:
    """An experiment as stored: its name, creation time (epoch seconds), its record (JSON
    text), how many runs it has and how many are finished."""

    name: str
    created_at: float
    record: str
    runs: int
    finished: int


@dataclass(frozen=True)
class RunClaim:
    """A run claimed by a worker: which run, the fencing token the claim holds, and the
    run's work (JSON text)."""

    case_id: str
    trial: int
    token: int
    work: str


@dataclass(frozen=True)
class RunWrite:
    """A write of a claimed run: its new work (what it has done so far, for whoever
    finishes it), or with ``finished`` its record, which ends it."""

    claim: RunClaim
    text: str
    finished: bool = False


@dataclass(frozen=True)
class RunRow:
    """A stored run: which run, its work, and its record (JSON text; ``None``: unfinished)."""

    case_id: str
    trial: int
    work: str
    record: str | None


class ExperimentRuns(ABC):
    """The experiment tables' reads and writes, written once for the SQL ledgers."""

    _SKIP_LOCKED: ClassVar[str]

    @abstractmethod
    def _rows(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of one statement."""

    @abstractmethod
    def _change(self, sql: str, parameters: Sequence[Any] = ()) -> int:
        """Run one statement, atomic on its own; the rows it changed."""

    @abstractmethod
    def _transaction(self) -> AbstractContextManager[Session]:
        """A connection inside one transaction."""

    @abstractmethod
    def _retry(self, call: Callable[[], T]) -> T:
        """``call()``, again after a lost connection (``@retried``)."""

    @retried
    def create_experiment(
        self, name: str, record: str, runs: Sequence[tuple[str, int, str]]
    ) -> tuple[bool, str]:
        """Store experiment ``name`` with its ``runs`` (case id, trial, work; in order) unless
        it exists; whether it was created, and the record stored under the name."""
        with self._transaction() as tx:
            created = (
                tx.change(
                    "INSERT INTO ledger_experiments (name, created_at, record) VALUES (%s, %s, %s)"
                    " ON CONFLICT (name) DO NOTHING",
                    (name, time.time(), record),
                )
                == 1
            )
            if created:
                tx.change_many(
                    "INSERT INTO ledger_experiment_runs"
                    " (experiment, case_id, trial, position, work) VALUES (%s, %s, %s, %s, %s)",
                    [
                        (name, case_id, trial, position, work)
                        for position, (case_id, trial, work) in enumerate(runs)
                    ],
                )
            [(stored,)] = tx.rows("SELECT record FROM ledger_experiments WHERE name = %s", (name,))
        return created, str(stored)

    def experiments(self, name: str | None = None) -> list[ExperimentRow]:
        """The experiments (or the one named), oldest first, with their counts of runs."""
        where, parameters = ("WHERE e.name = %s", (name,)) if name is not None else ("", ())
        # Both counts from the indexes alone (the unfinished runs have one of their own):
        # counting finished_at would read every run's row, JSON and all (measured: a
        # millisecond per 1,000 runs, asked at the start and the end of every experiment).
        rows = self._rows(
            "SELECT e.name, e.created_at, e.record,"
            " (SELECT count(*) FROM ledger_experiment_runs r WHERE r.experiment = e.name),"
            " (SELECT count(*) FROM ledger_experiment_runs r"
            " WHERE r.experiment = e.name AND r.finished_at IS NULL)"
            f" FROM ledger_experiments e {where} ORDER BY e.created_at, e.name",
            parameters,
        )
        return [
            ExperimentRow(str(n), float(at), str(record), int(runs), int(runs) - int(unfinished))
            for n, at, record, runs, unfinished in rows
        ]

    def claim_runs(
        self, experiment: str, worker_id: str, *, limit: int, lease_seconds: float
    ) -> list[RunClaim]:
        """Claim up to ``limit`` unfinished runs, in dataset order, that nobody holds (or
        whose lease expired); runs another claimer is taking at that moment are passed over."""
        claimed = RUNS.claim(
            self, (experiment,), worker_id, limit=limit, lease_seconds=lease_seconds
        )
        return [
            RunClaim(str(leased.key[1]), int(leased.key[2]), leased.token, str(leased.carried[0]))
            for leased in claimed
        ]

    def renew_runs(
        self, experiment: str, claims: Sequence[RunClaim], *, lease_seconds: float
    ) -> int:
        """Extend the leases of ``claims`` still held; the number renewed."""
        held = [_held(experiment, claim) for claim in claims]
        return RUNS.renew(self, held, lease_seconds=lease_seconds)[0]

    def write_runs(self, experiment: str, writes: Sequence[RunWrite]) -> list[bool]:
        """Apply ``writes``, in order and in one transaction, each while its claim holds;
        for each, whether it did (False: the run was taken over, and is or will be recorded
        by whoever holds it)."""
        now = time.time()
        return RUNS.write(self, [_write(experiment, write, now) for write in writes])

    def release_runs(self, experiment: str, claims: Sequence[RunClaim]) -> int:
        """Hand unfinished claimed runs back, claimable at once; the number released."""
        return RUNS.release(self, [_held(experiment, claim) for claim in claims])

    def run_holders(self, experiment: str) -> list[str]:
        """The workers holding unfinished runs of ``experiment`` (leases expired or not)."""
        return RUNS.holders(self, (experiment,))

    def release_runs_of(self, experiment: str, worker_id: str) -> int:
        """Hand back every unfinished run ``worker_id`` holds (it is known to be gone)."""
        return RUNS.release_of(self, (experiment,), worker_id)

    def run_keys(self, experiment: str, *, finished_only: bool = False) -> list[tuple[str, int]]:
        """The case id and trial of each run of ``experiment``, in dataset order, without
        their texts."""
        finished = " AND finished_at IS NOT NULL" if finished_only else ""
        rows = self._rows(
            "SELECT case_id, trial FROM ledger_experiment_runs"
            f" WHERE experiment = %s{finished} ORDER BY position, trial",
            (experiment,),
        )
        return [(str(case_id), int(trial)) for case_id, trial in rows]

    def runs(self, experiment: str, *, finished_only: bool = False) -> list[RunRow]:
        """The runs of ``experiment`` in dataset order (trials of a case together)."""
        finished = " AND finished_at IS NOT NULL" if finished_only else ""
        rows = self._rows(
            "SELECT case_id, trial, work, record FROM ledger_experiment_runs"
            f" WHERE experiment = %s{finished} ORDER BY position, trial",
            (experiment,),
        )
        return [
            RunRow(str(case_id), int(trial), str(work), None if record is None else str(record))
            for case_id, trial, work, record in rows
        ]


RUNS = LeasedQueue(
    "ledger_experiment_runs",
    key=("experiment", "case_id", "trial"),
    order="position, trial",
    carries=("work",),
    scope=("experiment",),
    queued="finished_at IS NULL",
)
"""The experiments' runs as a queue: one per experiment, in dataset order; a run is finished
(its record written, ``finished_at`` set) rather than removed. Transactions over several
runs lock them by case id, then trial."""


def _held(experiment: str, claim: RunClaim) -> Held:
    return Held((experiment, claim.case_id, claim.trial), claim.token)


def _write(experiment: str, write: RunWrite, now: float) -> Write:
    """``write`` as the queue makes it: the run's work kept, or its record written, which
    finishes the run (at ``now``) and lets it go."""
    held = _held(experiment, write.claim)
    if write.finished:
        return Write(held, {"record": write.text, "finished_at": now}, let_go=True)
    return Write(held, {"work": write.text})
