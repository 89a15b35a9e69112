"""``ExperimentStore``: where experiments are kept, on the ledger's SQL storage.

An experiment is a row of ``ledger_experiments`` and one row per run (a case and a trial) in
``ledger_experiment_runs``, made by the same migrations as the rest of the ledger
(``runtime.ledger``). By default the store is the SQLite file
``.langchain-evals/experiments.db`` in the working directory, so ``langchain-evals run`` and
then ``compare`` find each other's experiments; a ``postgresql://`` location shares one store
between a team's machines and ``langchain-evals worker`` processes.

Every run is written as it goes: the case's output (as JSON: LangChain messages through
langchain-core's serialization, anything else as its JSON form or, failing that, its
``repr``) with everything the target's trajectory capture recorded, the moment the target
returns; every evaluator result once the run is scored. A run is claimed before it starts
and written only while its claim holds (see ``runtime.ledger``), so a killed run resumes
with the unfinished runs alone, and processes sharing an experiment record each run once.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from langchain_core.load import Serializable, load
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import to_jsonable_python

from langchain_evals_port._locations import DEFAULT_STORE
from langchain_evals_port.capture import InteractionRecord
from langchain_evals_port.core._langchain_internals import suppress_langchain_beta_warning
from langchain_evals_port.core._result import StoredResult
from langchain_evals_port.core.errors import EvaluatorUsageError
from langchain_evals_port.storage import (
    Annotation,
    Holder,
    PostgresLedger,
    RunClaim,
    RunRow,
    RunWrite,
    SqliteLedger,
    SqlLedger,
    case_subject,
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


@dataclass(frozen=True)
class PendingRun:
    """A run this process claimed: its case and trial, and for a rescore the stored run
    (``given``) the evaluators score instead of running the target."""

    claim: RunClaim
    case: Case
    given: TargetRun | None


class _StoredRun(BaseModel):
    outputs: Any = None
    interaction: InteractionRecord


class _Work(BaseModel):
    case: Case
    given: _StoredRun | None = None


class _Record(BaseModel):
    results: list[StoredResult]


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
        self._ledger: SqlLedger
        if self.location.startswith(("postgresql://", "postgres://")):
            self._ledger = PostgresLedger(self.location)
        else:
            path = Path(self.location)
            path.parent.mkdir(parents=True, exist_ok=True)
            self._ledger = SqliteLedger(path)
        self.worker_id = str(Holder.current())

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
        created, stored = self._ledger.create_experiment(
            info.name,
            info.model_dump_json(),
            [
                (case.id, trial, _Work(case=case, given=_stored(given)).model_dump_json())
                for case, trial, given in runs
            ],
        )
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
        return ExperimentResult(
            name,
            tuple(
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
        pending = []
        for claim in claims:
            work = _Work.model_validate_json(claim.work)
            pending.append(PendingRun(claim, work.case, _target_run(work.given)))
        return pending

    def renew(self, name: str, runs: Sequence[PendingRun], *, lease_seconds: float) -> int:
        """Extend the leases of ``runs``; the number still held."""
        return self._ledger.renew_runs(
            name, [run.claim for run in runs], lease_seconds=lease_seconds
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

    def release(self, name: str, runs: Sequence[PendingRun]) -> int:
        """Hand ``runs`` back unfinished, claimable at once."""
        return self._ledger.release_runs(name, [run.claim for run in runs])

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


def _run_write(run: PendingRun, done: TargetRun | CaseResult) -> RunWrite:
    if isinstance(done, CaseResult):
        record = _Record(results=list(done.results))
        return RunWrite(run.claim, record.model_dump_json(fallback=repr), finished=True)
    work = _Work(case=run.case, given=_stored(done))
    return RunWrite(run.claim, work.model_dump_json(fallback=repr))


def _jsonable(value: Any) -> Any:
    """``value`` in a JSON form ``_revived`` reads back: LangChain objects (messages) in
    langchain-core's serialization, anything else as pydantic writes it, else its repr
    (also for a value JSON cannot hold at all, such as a dict with tuple keys)."""

    def default(item: Any) -> Any:
        if isinstance(item, Serializable) and item.is_lc_serializable():
            return item.to_json()
        return to_jsonable_python(item, fallback=repr)

    try:
        return json.loads(json.dumps(value, default=default))
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def _revived(value: Any) -> Any:
    with suppress_langchain_beta_warning():
        return load(value, allowed_objects="messages")


def _stored(run: TargetRun | None) -> _StoredRun | None:
    if run is None:
        return None
    return _StoredRun(outputs=_jsonable(run.outputs), interaction=run.interaction)


def _target_run(stored: _StoredRun | None) -> TargetRun | None:
    if stored is None:
        return None
    return TargetRun(_revived(stored.outputs), stored.interaction)


def _case_result(row: RunRow, name: str, location: str) -> CaseResult:
    try:
        work = _Work.model_validate_json(row.work)
        record = _Record.model_validate_json(row.record or "")
    except ValidationError as error:
        first = str(error).splitlines()[:3]
        raise ValueError(
            f"experiment {name!r} in {location}: the stored run of case {row.case_id!r} "
            f"(trial {row.trial}) cannot be read: {' '.join(part.strip() for part in first)}"
        ) from error
    run = _target_run(work.given)
    if run is None:
        raise ValueError(f"run {row.case_id}:{row.trial} is finished but kept no output")
    return CaseResult(work.case, row.trial, run, tuple(record.results))
