"""``ExperimentStore``: where experiments are kept, on the ledger's SQL storage.

An experiment is a row of ``ledger_experiments`` and one row per run (a case and a trial) in
``ledger_experiment_runs``, made by the same migrations as the rest of the ledger
(``runtime.ledger``). By default the store is the SQLite file
``.langchain-evals/experiments.db`` in the working directory, so ``langchain-evals run`` and
then ``compare`` find each other's experiments; a ``postgresql://`` location shares one store
between a team's machines and ``langchain-evals worker`` processes.

Every run is written as it goes: the case's output (as JSON: LangChain messages through
langchain-core's serialization, anything else as its JSON form or, failing that, its
``repr``) with everything the target's trajectory capture recorded, as the target returns;
every evaluator result once the run is scored (the runner batches its writes: the output
within 10 ms, the results within 50 ms). A run is claimed before it starts and written only
while its claim holds (see ``storage``), so a killed run resumes with the unfinished runs
alone, and processes sharing an experiment record each run once.
"""

from __future__ import annotations

import difflib
import math
import os
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from langchain_evals_port._locations import DEFAULT_STORE
from langchain_evals_port.core.errors import EvaluatorUsageError
from langchain_evals_port.storage import (
    Annotation,
    Holder,
    RunClaim,
    RunRow,
    RunWrite,
    SqliteLedger,
    SqlLedger,
    case_subject,
    is_dsn,
    open_storage,
)
from langchain_evals_port.trust import Agreement, agreement_by_key, pair_annotations

from ._case import Case
from ._result import CaseResult, ExperimentResult
from ._target import TargetRun

__all__ = [
    "DEFAULT_STORE",
    "ExperimentInfo",
    "ExperimentNotFoundError",
    "ExperimentStore",
    "ExperimentSummary",
    "PendingRun",
]


class ExperimentNotFoundError(EvaluatorUsageError, LookupError):
    """No experiment of that name is in the store (the message names the closest one)."""


class ExperimentInfo(BaseModel):
    """What an experiment is, as its store keeps it.

    Attributes:
        name: The experiment's name, unique in its store.
        target: The target's name.
        target_spec: ``"module:attr"`` of the target, when it was given as one (workers
            import it from there).
        evaluators: The evaluators' feedback keys.
        evaluators_spec: ``"module:ATTR"`` of the evaluator list, when given as one.
        evaluator_fingerprints: Per feedback key, what its evaluator was configured with
            (``configuration_fingerprint``): resuming the experiment with an evaluator
            configured otherwise is refused. ``None`` for experiments of earlier releases.
        evaluator_config: Per feedback key, the properties its evaluator reads as
            ``config`` (``run_experiment(evaluator_config=)``).
        trials: Runs per case.
        cases: The number of cases.
        dataset: A fingerprint of the case ids, in order.
        rescored_from: For a rescore, the experiment whose outputs it scored.
        cached_judges: Whether judges answer from a cache (``cache=False`` turns it off, for
            the workers that join too).
        judge_cache: The judges' cache mode (``"use"``, ``"refresh"``, ``"off"``), which the
            workers that join use too; ``None`` for experiments of earlier releases.
        created_at: When it was started.
    """

    # Stored records of a later release may hold fields this one does not know: ignored,
    # so listing a shared store never fails.
    model_config = ConfigDict(frozen=True, extra="ignore")

    name: str
    target: str
    target_spec: str | None = None
    evaluators: list[str]
    evaluators_spec: str | None = None
    evaluator_fingerprints: dict[str, dict[str, str]] | None = None
    evaluator_config: dict[str, dict[str, Any]] = {}
    trials: int
    cases: int
    dataset: str
    rescored_from: str | None = None
    cached_judges: bool = True
    judge_cache: Literal["use", "refresh", "off"] | None = None
    created_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))


@dataclass(frozen=True)
class ExperimentSummary:
    """An experiment in a listing: what it is, how many runs it has and has finished."""

    info: ExperimentInfo
    runs: int
    finished: int


class PendingRun(BaseModel):
    """A run this process claimed: its case and, for a rescore or a run whose target already
    ran, what the target did (``given``: the evaluators score it instead of running the
    target). It is what the store keeps as the run's work until the run is finished, and
    comes back from a claim as it was written, with the claim (``claim``: which run, and the
    fencing token its writes need)."""

    model_config = ConfigDict(frozen=True)

    case: Case
    given: TargetRun | None = None
    claim: RunClaim | None = Field(default=None, exclude=True)
    """The claim this process holds the run by (``None`` until claimed); never stored."""

    @classmethod
    def claimed(cls, claim: RunClaim) -> PendingRun:
        """The run ``claim`` holds, as its work was written."""
        return cls.model_validate_json(claim.work).model_copy(update={"claim": claim})

    @property
    def held(self) -> RunClaim:
        """The claim this process holds the run by (an error for a run not claimed)."""
        if self.claim is None:
            raise ValueError("this run was not claimed: it holds no claim")
        return self.claim

    @property
    def trial(self) -> int:
        """Which trial of its case the run is."""
        return self.held.trial

    def kept(self, run: TargetRun) -> PendingRun:
        """This run, its target having run with ``run`` (written before the run is scored)."""
        # Built, not copied: a model's copy costs twice its construction from valid parts.
        return PendingRun(case=self.case, given=run, claim=self.claim)


class ExperimentStore:
    """The experiments of one SQLite file or PostgreSQL database.

    Args:
        location: A ``postgresql://`` DSN (the ``postgres`` extra), the path of a SQLite
            file (created with its folder when missing), or ``None``: ``DEFAULT_STORE``.

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     with ExperimentStore(Path(folder) / "experiments.db") as store:
        ...         print(store.experiments(), store.next_name("agent"))
        [] agent-1
    """

    def __init__(self, location: str | os.PathLike[str] | None = None) -> None:
        self.location = str(DEFAULT_STORE if location is None else location)
        if not is_dsn(self.location):
            Path(self.location).parent.mkdir(parents=True, exist_ok=True)
        self._ledger: SqlLedger = open_storage(self.location)
        self.worker_id = str(Holder.current())
        # The runs this store created whose case reads back from its JSON as it is, by
        # the JSON text written as their work: a claim of one whose work is still that
        # text takes it as it is instead of reading it back (measured: reading a claimed
        # case back was about a twentieth of a run's CPU).
        self._created: dict[str, PendingRun] = {}

    def __repr__(self) -> str:
        return f"ExperimentStore({self._ledger!r})"

    @property
    def cache_path(self) -> Path:
        """Where experiments on this store keep their judges' cache by default: beside a
        SQLite store, in ``.langchain-evals/`` of the working directory for PostgreSQL."""
        folder = (
            Path(self.location).parent
            if isinstance(self._ledger, SqliteLedger)
            else DEFAULT_STORE.parent
        )
        folder.mkdir(parents=True, exist_ok=True)
        return folder / "judge-cache.db"

    def __enter__(self) -> ExperimentStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the store's connections."""
        self._ledger.close()

    # --- experiments ------------------------------------------------------------------------

    def create(
        self, info: ExperimentInfo, runs: Sequence[tuple[Case, int, TargetRun | None]]
    ) -> tuple[bool, ExperimentInfo]:
        """Store a new experiment with its runs (case, trial, stored run to rescore), unless
        one of its name exists; whether it was created, and the experiment stored."""
        works: list[tuple[str, int, str]] = []
        pending: dict[str, PendingRun] = {}
        for case, trial, given in runs:
            run = PendingRun(case=case, given=given)
            work = run.model_dump_json()
            works.append((case.id, trial, work))
            if given is None and _reads_back_as_is(case):
                pending[work] = run
        created, stored = self._ledger.create_experiment(info.name, info.model_dump_json(), works)
        if created:
            self._created.update(pending)
        return created, ExperimentInfo.model_validate_json(stored)

    def info(self, name: str) -> ExperimentInfo:
        """The experiment called ``name``; ``ExperimentNotFoundError`` names the closest."""
        rows = self._ledger.experiments(name)
        if not rows:
            raise self._not_found(name)
        return ExperimentInfo.model_validate_json(rows[0].record)

    def experiments(self) -> list[ExperimentSummary]:
        """Every experiment, oldest first."""
        return [
            ExperimentSummary(
                ExperimentInfo.model_validate_json(row.record), row.runs, row.finished
            )
            for row in self._ledger.experiments()
        ]

    def next_name(self, base: str) -> str:
        """``base-N`` with the first N (from 1) no experiment has taken."""
        taken = {row.name for row in self._ledger.experiments()}
        number = 1
        while f"{base}-{number}" in taken:
            number += 1
        return f"{base}-{number}"

    def latest_before(self, name: str) -> ExperimentInfo | None:
        """The newest finished experiment started before ``name`` with the same target
        (its name) on the same cases, for ``compare`` with last time; ``None`` when there
        is none."""
        listing = self.experiments()
        current = next((s.info for s in listing if s.info.name == name), None)
        if current is None:
            return None
        earlier = [
            s.info
            for s in listing
            if s.info.created_at < current.created_at
            and s.info.name != name
            and s.info.target == current.target
            and s.info.dataset == current.dataset
            and s.runs == s.finished
        ]
        return earlier[-1] if earlier else None

    def load(
        self, name: str, known: Mapping[tuple[str, int], CaseResult] | None = None
    ) -> ExperimentResult:
        """The finished runs of experiment ``name``, in dataset order; those in ``known``
        (by case id and trial: what this process just ran) are taken from there as they are,
        the rest read back."""
        self.info(name)
        known = known or {}
        if known:  # the texts are read only when some run is not known
            keys = self._ledger.run_keys(name, finished_only=True)
            if all(key in known for key in keys):
                return ExperimentResult(name=name, runs=tuple(known[key] for key in keys))
        return ExperimentResult(
            name=name,
            runs=tuple(
                known.get((row.case_id, row.trial)) or _case_result(row, name, self.location)
                for row in self._ledger.runs(name, finished_only=True)
            ),
        )

    def _not_found(self, name: str) -> ExperimentNotFoundError:
        names = [row.name for row in self._ledger.experiments()]
        close = difflib.get_close_matches(name, names, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        known = (
            f" (it has {', '.join(names[-5:])}{' …' if len(names) > 5 else ''})" if names else ""
        )
        return ExperimentNotFoundError(f"no experiment {name!r} in {self.location}{hint}{known}")

    # --- runs -------------------------------------------------------------------------------

    def claim(self, name: str, *, limit: int, lease_seconds: float) -> list[PendingRun]:
        """Claim up to ``limit`` unfinished runs of ``name`` for this process."""
        claims = self._ledger.claim_runs(
            name, self.worker_id, limit=limit, lease_seconds=lease_seconds
        )
        return [
            created.model_copy(update={"claim": claim})
            if (created := self._created.get(claim.work)) is not None
            else PendingRun.claimed(claim)
            for claim in claims
        ]

    def renew(self, name: str, runs: Sequence[PendingRun], *, lease_seconds: float) -> int:
        """Extend the leases of ``runs``; the number still held."""
        return self._ledger.renew_runs(
            name, [run.held for run in runs], lease_seconds=lease_seconds
        )

    def write(
        self, name: str, writes: Sequence[tuple[PendingRun, TargetRun | CaseResult]]
    ) -> list[bool]:
        """Write, in order and in one transaction, what runs of ``name`` did: a
        ``TargetRun`` (what the target did, kept before the run is scored, so a run
        interrupted while scoring is scored again without running the target) or a
        ``CaseResult`` (its evaluator results, which finish the run); for each, whether
        its claim still held (False: another process holds the run and records it)."""
        return self._ledger.write_runs(name, [_run_write(run, done) for run, done in writes])

    def without_waiting(self) -> AbstractContextManager[None]:
        """The writes and claims made in the block in one transaction on this thread, if
        the store can begin it without waiting (a SQLite file nobody else is writing to
        that moment); else ``WouldWait``, nothing done (always for PostgreSQL)."""
        return self._ledger.without_waiting()

    def release(self, name: str, runs: Sequence[PendingRun]) -> int:
        """Hand ``runs`` back unfinished, claimable at once."""
        return self._ledger.release_runs(name, [run.held for run in runs])

    def release_orphans(self, name: str) -> int:
        """Hand back the runs held by processes that are certainly gone (a run killed with
        SIGKILL on this machine, in this container), so a restart need not wait for their
        leases to expire; any other holder's runs wait for its lease (``Holder``)."""
        released = 0
        for holder in self._ledger.run_holders(name):
            found = Holder.parse(holder)
            if holder != self.worker_id and found is not None and found.is_gone():
                released += self._ledger.release_runs_of(name, holder)
        return released

    # --- people's annotations --------------------------------------------------------------

    def annotate(
        self,
        experiment: str,
        case_id: str,
        key: str,
        *,
        trial: int = 0,
        score: bool | float | None = None,
        label: str | None = None,
        note: str | None = None,
        annotator: str | None = None,
    ) -> Annotation:
        """Store a person's label or score for feedback ``key`` of one run (a case and a
        trial) of ``experiment``, beside the evaluators' results (which stay as they are);
        the ``Annotation`` stored (its subject id is ``case_subject(experiment, case_id,
        trial)``)."""
        self.info(experiment)
        return self._ledger.annotate(
            None,
            key,
            subject_kind="case",
            experiment=experiment,
            case_id=case_id,
            trial=trial,
            score=score,
            label=label,
            note=note,
            annotator=annotator,
        )

    def annotations(self, experiment: str | None = None) -> list[Annotation]:
        """The annotations of experiment cases (of ``experiment``, when given), oldest first."""
        return self._ledger.annotations(subject_kind="case", experiment=experiment)

    def agreement(self, name: str, *, threshold: float | None = None) -> dict[str, Agreement]:
        """Per feedback key, how well the evaluators of experiment ``name`` agree with the
        annotations of its runs (``reporting.agreement``; ``threshold`` as it takes it)."""
        results = [
            (case_subject(name, run.case.id, run.trial), result)
            for run in self.load(name).runs
            for result in run.results
        ]
        return agreement_by_key(
            pair_annotations(results, self.annotations(name)), threshold=threshold
        )

    def unfinished(self, name: str) -> int:
        """How many runs of ``name`` have no record yet."""
        [row] = self._ledger.experiments(name)
        return row.runs - row.finished


def _reads_back_as_is(case: Case) -> bool:
    """Whether ``case`` read back from its JSON is the case as it is: its values are all
    JSON's own (a tuple reads back as a list, a datetime as a string)."""
    return _plain(case.inputs) and _plain(case.reference_outputs) and _plain(case.metadata)


def _plain(value: Any) -> bool:
    kind = type(value)
    if value is None or kind is str or kind is int or kind is bool:
        return True
    if kind is float:
        return math.isfinite(value)
    if kind is list:
        return all(_plain(item) for item in value)
    if kind is dict:
        return all(type(key) is str and _plain(item) for key, item in value.items())
    return False


def _run_write(run: PendingRun, done: TargetRun | CaseResult) -> RunWrite:
    if isinstance(done, CaseResult):
        return RunWrite(run.held, done.stored_results(), finished=True)
    return RunWrite(run.held, run.kept(done).model_dump_json(fallback=repr))


def _case_result(row: RunRow, name: str, location: str) -> CaseResult:
    try:
        work = PendingRun.model_validate_json(row.work)
        if work.given is None:
            raise ValueError(f"run {row.case_id}:{row.trial} is finished but kept no output")
        return CaseResult.from_stored(
            row.record or "", case=work.case, trial=row.trial, run=work.given
        )
    except ValidationError as error:
        first = str(error).splitlines()[:3]
        raise ValueError(
            f"experiment {name!r} in {location}: the stored run of case {row.case_id!r} "
            f"(trial {row.trial}) cannot be read: {' '.join(part.strip() for part in first)}"
        ) from error
