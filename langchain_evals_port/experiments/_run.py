"""``run_experiment``: run a target over a dataset's cases, score every output, keep it all.

Each case runs ``trials`` times; each run is the target (with its trajectory captured) and
then every evaluator, at most ``max_concurrency`` runs at once. An evaluator gets the request
the online runtime would give it, from the same builder (``runtime._context.build_request``):
the case's ``inputs`` and ``reference_outputs``, the target's return value as ``outputs`` — or
its transcript as LangChain messages, or its text parsed as JSON, as the evaluator's
``outputs_kind`` says — and the variables ``interaction`` (the captured
``InteractionRecord``), ``config`` (its ``evaluator_config``), ``subject``,
``evaluation_id``, ``case``, ``case_id``, ``trial`` and ``metadata``. It runs through
``core.run_evaluator``: nothing is lost to an exception (a target that raised leaves its
evaluators ``inconclusive``, the reason says why; an evaluator that fails is a ``failed``
result with its reason code), but an evaluator asking for a variable no run gives is a
usage error, raised.

Runs go through an ``ExperimentStore``: the experiment and its runs are stored first, then
each run is claimed, run and written the moment it finishes. Started again under the same
name, an experiment runs only its unfinished runs; ``rescore`` scores a stored experiment's
outputs again without its target; ``work_on`` lets more processes (``langchain-evals worker``)
share an experiment's runs. Judges' model calls go through a persistent cache by default
(``judge.judge_defaults``), so an unchanged re-run asks no judge anything.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import difflib
import hashlib
import logging
import os
import tempfile
import warnings
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, Literal, TypeAlias, TypeVar

from langchain_core.caches import BaseCache
from langchain_core.rate_limiters import BaseRateLimiter

from langchain_evals_port.capture import EvaluatorConfig, Subject
from langchain_evals_port.capture._request import build_request
from langchain_evals_port.core import Evaluator, EvaluatorResult, arun_evaluator, canonical_json
from langchain_evals_port.core._calls import run_awaitable
from langchain_evals_port.core._fingerprint import changed_fields, configuration_fingerprint
from langchain_evals_port.core._stops import stops_contained
from langchain_evals_port.core.errors import (
    CanonicalizationError,
    EvaluatorUsageError,
)
from langchain_evals_port.judge import RefreshingCache, SqliteCache, judge_defaults
from langchain_evals_port.judge._cache_layers import CountingCache
from langchain_evals_port.reporting._display import Progress

from ._case import Case
from ._dataset import Dataset
from ._result import CaseResult, ExperimentResult, JudgeCacheUse
from ._specs import import_spec
from ._store import ExperimentInfo, ExperimentStore, PendingRun
from ._target import Target, TargetLike, TargetRun
from ._upload import LangSmithUploadError
from ._upload import upload_to_langsmith as upload

__all__ = [
    "CacheLike",
    "EvaluatorConfigs",
    "ExperimentMismatchError",
    "JudgeCacheMode",
    "StoreLike",
    "arescore",
    "arun_experiment",
    "awork_on",
    "rescore",
    "run_experiment",
]

StoreLike: TypeAlias = "ExperimentStore | str | os.PathLike[str] | Literal[False] | None"
"""Where an experiment is kept: an ``ExperimentStore``, its location (a SQLite path or a
``postgresql://`` DSN), ``None`` for ``.langchain-evals/experiments.db``, or ``False`` for a
store in a temporary folder that is deleted afterwards (nothing kept, nothing resumable)."""

JudgeCacheMode: TypeAlias = Literal["use", "refresh", "off"]
"""How judges use the default cache: ``"use"`` answers from it and stores new replies,
``"refresh"`` asks the judges again and writes their replies over the old ones (so the next
run answers with the new ones), ``"off"`` neither reads nor writes it."""

CacheLike: TypeAlias = "BaseCache | JudgeCacheMode | bool | None"
"""The judges' cache: ``None``, ``True`` or ``"use"`` for ``judge-cache.db`` beside a SQLite
store (in ``.langchain-evals/`` for a PostgreSQL one; none for ``store=False``), ``"refresh"``
for that file in refresh mode (``JudgeCacheMode``), ``False`` or ``"off"`` for none, or any
LangChain ``BaseCache`` (``RefreshingCache(cache)`` refreshes it)."""

EvaluatorsLike: TypeAlias = "Sequence[Evaluator] | str"
"""The evaluators of an experiment: a list, or ``"module:ATTR"`` naming one."""

EvaluatorConfigs: TypeAlias = "Mapping[str, Mapping[str, Any]]"
"""``evaluator_config``: per feedback key, the properties its evaluator reads as ``config``."""

_NO_CONFIG = EvaluatorConfig()

logger = logging.getLogger("langchain_evals_port.experiments")

_LEASE_SECONDS = 60.0
"""How long a claimed run stays this process's without a renewal; renewed every third of
it while the run is going. A process killed outright holds its runs that long, unless it
ran on the same machine as the process that resumes (see ``release_orphans``)."""

_POLL_SECONDS = 0.5
"""How often a process with nothing left to claim looks for runs other processes let go."""

T = TypeVar("T")


class ExperimentMismatchError(EvaluatorUsageError):
    """An experiment of that name exists with another target, other cases, trials or
    evaluators, or an evaluator configured otherwise (another judge prompt, model, output
    schema, threshold); resuming it would mix two experiments (choose another name, or
    ``rescore`` it)."""


async def arun_experiment(
    target: TargetLike | Target,
    dataset: Iterable[Case],
    evaluators: EvaluatorsLike,
    *,
    name: str | None = None,
    trials: int = 1,
    max_concurrency: int = 8,
    evaluator_config: EvaluatorConfigs | None = None,
    store: StoreLike = None,
    cache: CacheLike = None,
    rate_limiter: BaseRateLimiter | None = None,
    upload_to_langsmith: bool = False,
    progress: bool | None = None,
) -> ExperimentResult:
    """Run ``target`` on every case of ``dataset`` ``trials`` times, score each run, and
    store everything as it finishes; with the ``name`` of an unfinished experiment, run only
    what it has not finished.

    Args:
        target: A ``Target``, or anything ``Target`` takes (a Runnable, a compiled graph, a
            function of the inputs, ``"module:attr"``). Workers can share the experiment
            only when it is ``"module:attr"``.
        dataset: A ``Dataset`` or any iterable of ``Case``.
        evaluators: The evaluators scoring each run, or ``"module:ATTR"`` naming the list
            (empty: keep the outputs only, to ``rescore`` later).
        name: The experiment's name; an existing experiment of this name is resumed. Default:
            the target's name with the next free number (``my-agent-3``).
        trials: How many times each case runs.
        max_concurrency: Runs (target and its evaluators) at once in this process.
        evaluator_config: Per feedback key, the properties its evaluator reads as its
            ``config`` variable (an ``EvaluatorConfig``, as a binding's are online). They
            are kept with the experiment, for the workers that join and for resuming.
        store: Where the experiment is kept (see ``StoreLike``).
        cache: Where judges' model calls are answered from (see ``CacheLike``): by default
            a persistent cache, so an unchanged re-run makes no judge calls; ``"refresh"``
            asks the judges again and replaces their cached replies, ``"off"`` (or
            ``False``) leaves the cache alone. The target's own model calls are never
            cached by it (give its model a ``cache`` for that).
        rate_limiter: A LangChain rate limiter (``InMemoryRateLimiter``) every judge model
            call waits for, unless the model has its own.
        upload_to_langsmith: Also send the experiment and its feedback to LangSmith
            (``upload_to_langsmith``; its URL is the result's ``langsmith_url``). A failed
            upload is a ``RuntimeWarning``, and the experiment stays in the store.
        progress: ``None`` shows a progress bar on a terminal or in a notebook, never under
            ``CI`` or in a pipe; ``False`` never, ``True`` always.

    Raises:
        ExperimentMismatchError: ``name`` is an experiment of another target, other cases,
            trials or evaluators, or of an evaluator configured otherwise (its prompt,
            model, output schema, thresholds: each evaluator's configuration is kept).

    Example:
        >>> import asyncio
        >>> from langchain_evals_port import ExactMatch
        >>> from langchain_evals_port.experiments import Dataset
        >>> dataset = Dataset.from_records([
        ...     {"inputs": {"q": "2 + 2"}, "reference_outputs": "4"},
        ...     {"inputs": {"q": "3 + 3"}, "reference_outputs": "6"},
        ... ])
        >>> result = asyncio.run(
        ...     arun_experiment(lambda inputs: "4", dataset, [ExactMatch()], store=False)
        ... )
        >>> result.statistics()["exact_match"].mean
        0.5
    """
    _check_options(name, store, progress)
    runnable = target if isinstance(target, Target) else Target(target)
    cases = _cases(dataset)
    checked, evaluators_spec = _evaluators(evaluators)
    configs = _configs(evaluator_config, checked)
    _check_count("trials", trials)
    _check_count("max_concurrency", max_concurrency)
    async with _opened(store) as opened:
        experiment = name if name is not None else await _next_name(opened, runnable.name)
        info = ExperimentInfo(
            name=experiment,
            target=runnable.name,
            target_spec=target if isinstance(target, str) else None,
            evaluators=[ev.feedback_key for ev in checked],
            evaluators_spec=evaluators_spec,
            evaluator_fingerprints=_fingerprints(checked, configs),
            evaluator_config=configs,
            trials=trials,
            cases=len(cases),
            dataset=_fingerprint(cases),
            cached_judges=_mode(cache) != "off",
            judge_cache=_mode(cache),
        )
        runs = [(case, trial, None) for case in cases for trial in range(trials)]
        runner = _Runner(opened, experiment, runnable, checked, configs, max_concurrency, progress)
        return await _start(
            runner,
            info,
            runs,
            store,
            cache,
            rate_limiter,
            upload_to_langsmith,
            generated=name is None,
            base=runnable.name,
        )


def run_experiment(
    target: TargetLike | Target,
    dataset: Iterable[Case],
    evaluators: EvaluatorsLike,
    *,
    name: str | None = None,
    trials: int = 1,
    max_concurrency: int = 8,
    evaluator_config: EvaluatorConfigs | None = None,
    store: StoreLike = None,
    cache: CacheLike = None,
    rate_limiter: BaseRateLimiter | None = None,
    upload_to_langsmith: bool = False,
    progress: bool | None = None,
) -> ExperimentResult:
    """``arun_experiment`` for synchronous code (in a running event loop, await that)."""
    return run_awaitable(
        arun_experiment(
            target,
            dataset,
            evaluators,
            name=name,
            trials=trials,
            max_concurrency=max_concurrency,
            evaluator_config=evaluator_config,
            store=store,
            cache=cache,
            rate_limiter=rate_limiter,
            upload_to_langsmith=upload_to_langsmith,
            progress=progress,
        ),
        hint="use `await arun_experiment(...)` instead",
        name="run_experiment",
    )


async def arescore(
    source: str,
    evaluators: EvaluatorsLike,
    *,
    name: str | None = None,
    max_concurrency: int = 8,
    evaluator_config: EvaluatorConfigs | None = None,
    store: StoreLike = None,
    cache: CacheLike = None,
    rate_limiter: BaseRateLimiter | None = None,
    upload_to_langsmith: bool = False,
    progress: bool | None = None,
) -> ExperimentResult:
    """Score the stored outputs of experiment ``source`` with ``evaluators`` again, without
    running its target, as a new experiment (to change a judge prompt and compare).

    Args:
        source: The experiment whose outputs are scored (its finished runs).
        evaluators: The evaluators, or ``"module:ATTR"`` naming the list.
        name: The new experiment's name (resumed when it exists). Default:
            ``<source>-rescored-N``.
        max_concurrency: Runs scored at once.
        evaluator_config: As for ``arun_experiment``.
        store: The store holding ``source``, where the new experiment is kept too.
        cache, rate_limiter, upload_to_langsmith, progress: As for ``arun_experiment``.
    """
    _check_options(name, store, progress)
    checked, evaluators_spec = _evaluators(evaluators)
    configs = _configs(evaluator_config, checked)
    _check_count("max_concurrency", max_concurrency)
    if store is False:
        raise EvaluatorUsageError("rescore needs the store that holds the experiment, not False")
    async with _opened(store) as opened:
        original = await asyncio.to_thread(opened.info, source)
        unfinished = await asyncio.to_thread(opened.unfinished, source)
        if unfinished:
            raise EvaluatorUsageError(
                f"experiment {source!r} has {unfinished} unfinished runs: finish it first "
                "(run it again under its name), then rescore it"
            )
        stored = await asyncio.to_thread(opened.load, source)
        experiment = name if name is not None else await _next_name(opened, f"{source}-rescored")
        info = ExperimentInfo(
            name=experiment,
            target=original.target,
            target_spec=original.target_spec,
            evaluators=[ev.feedback_key for ev in checked],
            evaluators_spec=evaluators_spec,
            evaluator_fingerprints=_fingerprints(checked, configs),
            evaluator_config=configs,
            trials=original.trials,
            cases=original.cases,
            dataset=original.dataset,
            rescored_from=source,
            cached_judges=_mode(cache) != "off",
            judge_cache=_mode(cache),
        )
        runs = [(run.case, run.trial, run.run) for run in stored.runs]
        runner = _Runner(opened, experiment, None, checked, configs, max_concurrency, progress)
        return await _start(
            runner,
            info,
            runs,
            store,
            cache,
            rate_limiter,
            upload_to_langsmith,
            generated=name is None,
            base=f"{source}-rescored",
        )


def rescore(
    source: str,
    evaluators: EvaluatorsLike,
    *,
    name: str | None = None,
    max_concurrency: int = 8,
    evaluator_config: EvaluatorConfigs | None = None,
    store: StoreLike = None,
    cache: CacheLike = None,
    rate_limiter: BaseRateLimiter | None = None,
    upload_to_langsmith: bool = False,
    progress: bool | None = None,
) -> ExperimentResult:
    """``arescore`` for synchronous code (in a running event loop, await that)."""
    return run_awaitable(
        arescore(
            source,
            evaluators,
            name=name,
            max_concurrency=max_concurrency,
            evaluator_config=evaluator_config,
            store=store,
            cache=cache,
            rate_limiter=rate_limiter,
            upload_to_langsmith=upload_to_langsmith,
            progress=progress,
        ),
        hint="use `await arescore(...)` instead",
        name="rescore",
    )


async def awork_on(
    name: str,
    *,
    store: StoreLike = None,
    max_concurrency: int = 8,
    rate_limiter: BaseRateLimiter | None = None,
    progress: bool | None = False,
) -> int:
    """Share the unfinished runs of experiment ``name`` with the processes already on it,
    until none is left; the number of runs this process finished. The target and the
    evaluators are imported from the ``"module:attr"`` names the experiment was started
    with (``langchain-evals worker --experiment NAME`` calls this). Judges answer from the
    default cache of this process's store (``CacheLike``) unless the experiment was started
    with ``cache=False``; in the mode it was started with (``JudgeCacheMode``)."""
    _check_options(name, store, progress)
    _check_count("max_concurrency", max_concurrency)
    if store is False:
        raise EvaluatorUsageError("a worker needs the store that holds the experiment, not False")
    async with _opened(store) as opened:
        info = await asyncio.to_thread(opened.info, name)
        if info.evaluators_spec is None or (
            info.target_spec is None and info.rescored_from is None
        ):
            raise EvaluatorUsageError(
                f"experiment {name!r} was started with a target and evaluators given as "
                "objects; workers import them, so start it with target='module:attr' and "
                "evaluators='module:ATTR' (the command line always does)"
            )
        checked, _ = _evaluators(info.evaluators_spec)
        changed = _changed_evaluators(info, _fingerprints(checked, info.evaluator_config))
        if changed:
            raise ExperimentMismatchError(
                f"experiment {name!r} was started with other evaluators than this worker "
                f"imports from {info.evaluators_spec}: {changed}; deploy the evaluators it was "
                "started with, or run the new ones as another experiment"
            )
        target = None if info.target_spec is None else Target(info.target_spec)
        runner = _Runner(
            opened, name, target, checked, info.evaluator_config, max_concurrency, progress
        )
        mode = info.judge_cache or ("use" if info.cached_judges else "off")
        with _judging(opened, store, mode, rate_limiter):
            finished = await runner.run()
        return len(finished)


class _Runner:
    """This process's share of an experiment's runs: claim, run, score, write; until every
    run of the experiment is written (by this process or another).

    At most ``max_concurrency`` runs are under way (their target and evaluators). Claims
    are made a batch at a time, in the background and a batch ahead: the next runs are
    claimed while these run, so a free slot starts one at once instead of waiting for a
    claim's write. A run's slot is free once it is scored: its record is written after,
    batched with others', and counts as finished once that write held."""

    def __init__(
        self,
        store: ExperimentStore,
        name: str,
        target: Target | None,
        evaluators: Sequence[Evaluator],
        configs: Mapping[str, Mapping[str, Any]],
        max_concurrency: int,
        progress: bool | None,
    ) -> None:
        self.store = store
        self.name = name
        self.target = target
        self.evaluators = evaluators
        self.configs = {key: EvaluatorConfig(config) for key, config in configs.items()}
        self.max_concurrency = max_concurrency
        self.progress = progress
        # Claimed a few at a time rather than one as each run ends: a claim is a write.
        self.claim_batch = max(1, max_concurrency // 4)
        self.writes = _Writes(store, name)
        self.finished: dict[tuple[str, int], CaseResult] = {}
        # Runs under way (target and evaluators), claimed runs waiting for a slot, and
        # scored runs whose record is being written: all held by this process.
        self.running: dict[asyncio.Future[_Scored | None], PendingRun] = {}
        self.waiting: collections.deque[PendingRun] = collections.deque()
        self.recording: dict[asyncio.Future[bool], tuple[PendingRun, CaseResult]] = {}
        self.claiming: asyncio.Future[list[PendingRun]] | None = None
        # Claimed ahead: up to this many runs wait for a slot.
        self.ahead = 2 * self.claim_batch
        self.ended: collections.deque[asyncio.Future[Any]] = collections.deque()
        self.waker: asyncio.Future[None] | None = None

    @property
    def held(self) -> list[PendingRun]:
        """Every run this process holds and has not finished."""
        recording = [pending for pending, _ in self.recording.values()]
        return [*self.running.values(), *self.waiting, *recording]

    async def run(self) -> dict[tuple[str, int], CaseResult]:
        """Run until every run of the experiment is written; this process's runs.

        Raises:
            KeyboardInterrupt: A target or evaluator raised it (or Ctrl-C, as ever): the
                runs this process held are handed back first, so a restart takes them.
        """
        await self._store(self.store.release_orphans, self.name)
        total = await self._store(self.store.unfinished, self.name)
        shown = Progress(self.name, total, self.progress)
        interrupts: list[KeyboardInterrupt] = []
        stopping = asyncio.current_task()

        def interrupt(stop: KeyboardInterrupt) -> None:
            # Stop as Ctrl-C does under asyncio.run: cancel the run, which hands back.
            if not interrupts and stopping is not None:
                interrupts.append(stop)
                stopping.cancel()

        renewing = asyncio.create_task(self._renew())
        try:
            # SystemExit in a target's or evaluator's task fails that run; KeyboardInterrupt
            # stops the experiment. Neither may stop the event loop under the runner.
            with stops_contained(on_interrupt=interrupt):
                await self._claim_until_done(shown)
        except asyncio.CancelledError:
            if interrupts:
                raise KeyboardInterrupt from interrupts[0]
            raise
        finally:
            renewing.cancel()
            shown.close()
            await self._hand_back()
        return self.finished

    async def _hand_back(self) -> None:
        """Stopped early (Ctrl-C, a cancelled task, an error): stop the runs under way, and
        let the next run take every run still held at once, those of a claim being made
        too (its thread commits regardless)."""
        running = list(self.running)
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        claiming, self.claiming = self.claiming, None
        if claiming is not None:
            with contextlib.suppress(Exception):
                self.waiting.extend(await asyncio.shield(claiming))
        held = self.held
        if held:
            await self._store(self.store.release, self.name, held)

    async def _claim_until_done(self, shown: Progress) -> None:
        loop = asyncio.get_running_loop()
        asked = 0  # how many runs the claim under way asks for
        found_none_at: float | None = None  # when a claim last found fewer than it asked
        while True:
            while self.waiting and len(self.running) < self.max_concurrency:
                self._start(self.waiting.popleft())
            wanted = self.max_concurrency + self.ahead - len(self.running) - len(self.waiting)
            idle = not self.running and not self.waiting
            if (
                self.claiming is None
                and (wanted >= self.claim_batch or (wanted and idle))
                and (found_none_at is None or loop.time() - found_none_at >= _POLL_SECONDS)
            ):
                asked = wanted
                self.claiming = self._watched(self.writes.claim(wanted))
            if idle and self.claiming is None and not self.recording:
                if not await self._store(self.store.unfinished, self.name):
                    return
                # The rest is held by other processes: take over those that died here.
                await self._store(self.store.release_orphans, self.name)
                await asyncio.sleep(_POLL_SECONDS)
                found_none_at = None
                continue
            if not self.ended:
                await self._woken(loop)
            while self.ended:
                done = self.ended.popleft()
                if done is self.claiming:
                    self.claiming = None
                    claimed = done.result()
                    found_none_at = loop.time() if len(claimed) < asked else None
                    self.waiting.extend(claimed)
                elif done in self.running:
                    pending = self.running.pop(done)
                    scored = done.result()  # a bug of the runner itself surfaces here
                    if scored is not None:
                        written, result = scored
                        self.recording[written] = (pending, result)
                        written.add_done_callback(self._ended)
                else:
                    pending, result = self.recording.pop(done)
                    if done.result():
                        self.finished[(pending.case.id, pending.claim.trial)] = result
                    shown.advance()

    async def _woken(self, loop: asyncio.AbstractEventLoop) -> None:
        """Wait until a run, a claim or a record's write ends, or ``_POLL_SECONDS`` pass."""
        self.waker = waker = loop.create_future()
        timer = loop.call_later(_POLL_SECONDS, _wake, waker)
        try:
            await waker
        finally:
            timer.cancel()
            self.waker = None

    def _watched(self, awaitable: Awaitable[T]) -> asyncio.Future[T]:
        """A future of ``awaitable`` (a task of a coroutine) that wakes the claiming loop
        when it ends."""
        task = asyncio.ensure_future(awaitable)
        task.add_done_callback(self._ended)
        return task

    def _ended(self, done: asyncio.Future[Any]) -> None:
        self.ended.append(done)
        if self.waker is not None:
            _wake(self.waker)

    def _start(self, pending: PendingRun) -> None:
        self.running[self._watched(self._one(pending))] = pending

    async def _one(self, pending: PendingRun) -> _Scored | None:
        """Run and score one run; the write of its record (its future says whether the
        claim still held) and the record, or ``None`` when the run was taken over."""
        case, trial = pending.case, pending.claim.trial
        run = pending.given
        kept: Awaitable[bool] | None = None
        if run is None:
            assert self.target is not None  # only a rescore's runs come without a target
            run = await self.target.arun(case.inputs, case_id=case.id, trial=trial)
            # Kept while it is scored (written before its results): an interrupted run is
            # scored again, not run again.
            kept = self.writes.submit(pending, run)
        interaction = run.interaction
        subject = Subject.interaction(interaction.interaction_id, interaction.agent_id)
        scorings = [
            _score(ev, case, trial, run, self.configs.get(ev.feedback_key, _NO_CONFIG), subject)
            for ev in self.evaluators
        ]
        scored = await _all(scorings)
        if kept is not None and not await kept:
            return None  # the run was taken over (this lease lapsed): its holder records it
        result = CaseResult(case, trial, run, tuple(r for results in scored for r in results))
        return self.writes.submit(pending, result), result

    async def _renew(self) -> None:
        while True:
            await asyncio.sleep(_LEASE_SECONDS / 3)
            try:
                await self._store(
                    self.store.renew, self.name, self.held, lease_seconds=_LEASE_SECONDS
                )
            except Exception:
                # A passing storage error: the next renewal comes well before leases lapse.
                logger.warning("experiment %r: renewing leases failed", self.name, exc_info=True)

    @staticmethod
    async def _store(call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """A call of the store, off the event loop (its SQL blocks)."""
        return await asyncio.to_thread(call, *args, **kwargs)


async def _all(scorings: list[Coroutine[Any, Any, T]]) -> list[T]:
    """``asyncio.gather(*scorings)``, with the last one awaited in this task instead of a
    task of its own (a run's evaluators are its only work; one task fewer per run)."""
    if not scorings:
        return []
    *others, last = scorings
    started = [asyncio.ensure_future(scoring) for scoring in others]
    try:
        final = await last
    except BaseException:
        for task in started:
            task.cancel()
        raise
    return [*await asyncio.gather(*started), final]


_Scored: TypeAlias = "tuple[asyncio.Future[bool], CaseResult]"
"""A scored run: the write of its record under way, and the record."""


def _wake(waker: asyncio.Future[None]) -> None:
    if not waker.done():
        waker.set_result(None)


class _Writes:
    """A runner's writes of its runs, in order, and its claims, a batch at a time: while
    one batch is written (one transaction, off the event loop), the next gathers, and the
    claims asked for meanwhile are made in the same trip to the store's thread, after the
    batch's writes. A busy runner so makes a few trips where it would make one per run and
    step (measured: a trip to a thread costs more CPU than a batch's SQL, and the runs'
    claims and writes fall due together, as runs end)."""

    def __init__(self, store: ExperimentStore, name: str) -> None:
        self.store = store
        self.name = name
        self.queued: list[tuple[PendingRun, TargetRun | CaseResult, asyncio.Future[bool]]] = []
        self.claims: list[tuple[int, asyncio.Future[list[PendingRun]]]] = []
        self.writing: asyncio.Task[None] | None = None

    def submit(self, run: PendingRun, done: TargetRun | CaseResult) -> asyncio.Future[bool]:
        """Queue a write of ``run``; its future says whether the run's claim still held."""
        written: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.queued.append((run, done, written))
        self._going()
        return written

    def claim(self, limit: int) -> asyncio.Future[list[PendingRun]]:
        """Queue a claim of up to ``limit`` runs, made after the writes queued before it."""
        claimed: asyncio.Future[list[PendingRun]] = asyncio.get_running_loop().create_future()
        self.claims.append((limit, claimed))
        self._going()
        return claimed

    def _going(self) -> None:
        if self.writing is None or self.writing.done():
            self.writing = asyncio.create_task(self._write())

    async def _write(self) -> None:
        while self.queued or self.claims:
            batch, self.queued = self.queued, []
            claims, self.claims = self.claims, []
            writes = [(run, done) for run, done, _ in batch]
            try:
                held, claimed = await asyncio.to_thread(
                    self._apply, writes, [limit for limit, _ in claims]
                )
            except BaseException as error:
                futures: list[asyncio.Future[Any]] = [written for _, _, written in batch]
                futures.extend(claimed for _, claimed in claims)
                for future in futures:
                    if not future.done():
                        future.set_exception(error)
                if not isinstance(error, Exception):
                    raise
                continue
            for (_, _, written), outcome in zip(batch, held, strict=True):
                if not written.done():
                    written.set_result(outcome)
            for (_, future), runs in zip(claims, claimed, strict=True):
                if not future.done():
                    if isinstance(runs, Exception):
                        future.set_exception(runs)
                    else:
                        future.set_result(runs)

    def _apply(
        self, writes: list[tuple[PendingRun, TargetRun | CaseResult]], limits: list[int]
    ) -> tuple[list[bool], list[list[PendingRun] | Exception]]:
        """The writes, then the claims (each claim's runs, or what it raised), on the
        store's thread."""
        held = self.store.write(self.name, writes) if writes else []
        claimed: list[list[PendingRun] | Exception] = []
        for limit in limits:
            try:
                claimed.append(
                    self.store.claim(self.name, limit=limit, lease_seconds=_LEASE_SECONDS)
                )
            except Exception as error:
                claimed.append(error)
        return held, claimed


async def _score(
    evaluator: Evaluator,
    case: Case,
    trial: int,
    run: TargetRun,
    config: EvaluatorConfig,
    subject: Subject,
) -> list[EvaluatorResult]:
    """``evaluator``'s results for one run, from the request the runtime would build (about
    ``subject``, the run's interaction); a usage error (a variable no run gives it) is
    raised, anything else is a result."""
    key = evaluator.feedback_key
    if run.failed:
        failure = run.interaction.failure
        reason = f"the target raised {failure.reason}: {failure.summary}" if failure else ""
        return [EvaluatorResult.inconclusive(key, reason or "the target raised")]
    interaction = run.interaction
    request = build_request(
        interaction,
        outputs_kind=evaluator.outputs_kind,
        config=config,
        subject=subject,
        evaluation_id=f"{interaction.interaction_id}:{key}",
        inputs=case.inputs,
        outputs=run.outputs,
        reference_outputs=case.reference_outputs,
        variables={"case": case, "case_id": case.id, "trial": trial, "metadata": case.metadata},
    )
    return await arun_evaluator(evaluator, request)


@asynccontextmanager
async def _opened(store: StoreLike) -> AsyncIterator[ExperimentStore]:
    """The store ``store`` names, closed afterwards unless it was given open."""
    if isinstance(store, ExperimentStore):
        yield store
        return
    if store is False:
        with tempfile.TemporaryDirectory(prefix="langchain-evals-") as folder:
            opened = await asyncio.to_thread(ExperimentStore, Path(folder) / "experiments.db")
            try:
                yield opened
            finally:
                opened.close()
        return
    opened = await asyncio.to_thread(ExperimentStore, store)
    try:
        yield opened
    finally:
        opened.close()


async def _start(
    runner: _Runner,
    info: ExperimentInfo,
    runs: Sequence[tuple[Case, int, TargetRun | None]],
    store: StoreLike,
    cache: CacheLike,
    rate_limiter: BaseRateLimiter | None,
    upload_to_langsmith: bool,
    *,
    generated: bool,
    base: str,
) -> ExperimentResult:
    """Store the experiment ``info`` with its ``runs`` (or resume it), let ``runner`` run
    them with the judges' cache and limiter, and return the experiment as stored. A
    ``generated`` name (``base-N``) is never resumed: when it is taken, the next is used."""
    created, stored = await asyncio.to_thread(runner.store.create, info, runs)
    while not created and generated:
        # Another process took the generated name at the same moment: take the next one.
        info = info.model_copy(update={"name": await _next_name(runner.store, base)})
        runner.name = info.name
        created, stored = await asyncio.to_thread(runner.store.create, info, runs)
    if not created:
        _check_same(stored, info)
    with _judging(runner.store, store, cache, rate_limiter) as counted:
        finished = await runner.run()
    return await _finished(runner.store, info.name, finished, counted, upload_to_langsmith)


@contextmanager
def _judging(
    opened: ExperimentStore,
    store: StoreLike,
    cache: CacheLike,
    rate_limiter: BaseRateLimiter | None,
) -> Iterator[CountingCache | None]:
    """The judges' cache (counting its hits) and rate limiter for the block
    (``judge_defaults``)."""
    chosen: BaseCache | None
    mode = _mode(cache)
    if isinstance(cache, BaseCache):
        chosen = cache
    elif mode == "off" or store is False:
        chosen = None  # nothing kept: no persistent cache either
    else:
        chosen = SqliteCache(opened.cache_path)
        if mode == "refresh":
            chosen = RefreshingCache(chosen)
    counting = None if chosen is None else CountingCache(chosen)
    with judge_defaults(cache=counting, rate_limiter=rate_limiter):
        yield counting


async def _finished(
    store: ExperimentStore,
    name: str,
    known: dict[tuple[str, int], CaseResult],
    counted: CountingCache | None,
    upload_to_langsmith: bool,
) -> ExperimentResult:
    """The experiment as stored (what this process ran, as it ran it), with how the judges'
    cache answered, uploaded if asked."""
    result = await asyncio.to_thread(store.load, name, known)
    result = dataclasses.replace(result, ran=len(known))
    if counted is not None:
        use = JudgeCacheUse(hits=counted.hits, misses=counted.misses)
        result = dataclasses.replace(result, judge_cache=use)
    if upload_to_langsmith:
        try:
            url = await asyncio.to_thread(upload, result)
        except LangSmithUploadError as error:
            # The experiment is kept either way; losing it to an upload would be worse.
            warnings.warn(
                f"experiment {name!r} was not uploaded: {error}; it is kept in the store, and "
                f"upload_to_langsmith(ExperimentStore(...).load({name!r})) tries again",
                RuntimeWarning,
                stacklevel=2,
            )
        else:
            result = dataclasses.replace(result, langsmith_url=url)
    return result


async def _next_name(store: ExperimentStore, base: str) -> str:
    return await asyncio.to_thread(store.next_name, base)


def _fingerprint(cases: Sequence[Case]) -> str:
    """16 hex digits naming the dataset's case ids in order: equal datasets, equal names."""
    digest = hashlib.sha256("\n".join(case.id for case in cases).encode("utf-8"))
    return digest.hexdigest()[:16]


def _check_same(stored: ExperimentInfo, wanted: ExperimentInfo) -> None:
    """Resuming ``stored`` as ``wanted`` must not mix two experiments."""
    differences = [
        f"{field} {getattr(stored, field)!r} (now {getattr(wanted, field)!r})"
        for field in ("target", "dataset", "cases", "trials", "evaluators", "rescored_from")
        if getattr(stored, field) != getattr(wanted, field)
    ]
    if differences:
        raise ExperimentMismatchError(
            f"experiment {stored.name!r} exists with another {'; '.join(differences)}: "
            "give this run another name (or none, for the next free one)"
        )
    changed = _changed_evaluators(stored, wanted.evaluator_fingerprints)
    if changed:
        raise ExperimentMismatchError(
            f"experiment {stored.name!r} was scored with other evaluators: {changed}; its "
            "stored results would be mixed with the new ones: give this run another name "
            "(or none, for the next free one), or rescore the experiment with the new evaluators"
        )


def _changed_evaluators(
    stored: ExperimentInfo, fingerprints: dict[str, dict[str, str]] | None
) -> str:
    """How the evaluators of ``fingerprints`` differ from those ``stored`` was started with
    (``"evaluator 'k' changed its prompt (… → …)"``), or ``""``."""
    before = stored.evaluator_fingerprints
    if before is None or fingerprints is None:
        return ""  # an experiment of an earlier release kept no fingerprints
    return "; ".join(
        f"evaluator {key!r} changed its {', '.join(changed_fields(before[key], now))}"
        for key, now in fingerprints.items()
        if key in before and before[key] != now
    )


def _mode(cache: object) -> JudgeCacheMode:
    """The mode ``cache`` (a ``CacheLike``) stands for; a clear error for anything else."""
    if cache is None or cache is True or cache == "use" or isinstance(cache, BaseCache):
        return "use"
    if cache is False or cache == "off":
        return "off"
    if cache == "refresh":
        return "refresh"
    close = difflib.get_close_matches(str(cache), ["use", "refresh", "off"], n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise EvaluatorUsageError(
        f"cache must be a LangChain BaseCache, 'use', 'refresh', 'off', True, False or None, "
        f"got {cache!r}{hint}"
    )


def _fingerprints(
    evaluators: Sequence[Evaluator], configs: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, str]]:
    """What each evaluator is configured with, by feedback key (``configuration_fingerprint``,
    and the ``evaluator_config`` it reads, if any)."""
    fingerprints = {}
    for ev in evaluators:
        fingerprint = configuration_fingerprint(ev)
        if configs.get(ev.feedback_key):
            fingerprint["config"] = canonical_json(configs[ev.feedback_key])
        fingerprints[ev.feedback_key] = fingerprint
    return fingerprints


def _configs(
    given: EvaluatorConfigs | None, evaluators: Sequence[Evaluator]
) -> dict[str, dict[str, Any]]:
    """``evaluator_config`` checked: mappings of JSON values, by the feedback key of one of
    ``evaluators``."""
    if given is None:
        return {}
    if not isinstance(given, Mapping):
        raise EvaluatorUsageError(
            "evaluator_config must map feedback keys to mappings of properties, got "
            f"{type(given).__name__}"
        )
    keys = [ev.feedback_key for ev in evaluators]
    configs: dict[str, dict[str, Any]] = {}
    for key, properties in given.items():
        if key not in keys:
            close = difflib.get_close_matches(str(key), keys, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f" (feedback keys: {keys})"
            raise EvaluatorUsageError(
                f"evaluator_config[{key!r}]: no evaluator reports this feedback key{hint}"
            )
        if not isinstance(properties, Mapping):
            raise EvaluatorUsageError(
                f"evaluator_config[{key!r}] must be a mapping of properties, got "
                f"{type(properties).__name__}"
            )
        try:
            canonical_json(properties)
        except CanonicalizationError as error:
            raise EvaluatorUsageError(
                f"evaluator_config[{key!r}]: the properties must be JSON values ({error})"
            ) from None
        configs[key] = dict(properties)
    return configs


def _check_options(name: object, store: object, progress: object) -> None:
    """The keyword arguments every experiment function shares, checked before any work."""
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise EvaluatorUsageError(f"name must be a non-empty string or None, got {name!r}")
    if not (
        store is None or store is False or isinstance(store, (ExperimentStore, str, os.PathLike))
    ):
        raise EvaluatorUsageError(
            "store must be an ExperimentStore, a SQLite path, a postgresql:// DSN, None (the "
            f"default file) or False (keep nothing), got {type(store).__name__} {store!r}"
        )
    if progress is not None and not isinstance(progress, bool):
        raise EvaluatorUsageError(f"progress must be True, False or None, got {progress!r}")


def _check_count(name: str, value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise EvaluatorUsageError(f"{name} must be a whole number of at least 1, got {value!r}")


def _cases(dataset: Iterable[Case]) -> list[Case]:
    if isinstance(dataset, Dataset):
        return list(dataset)
    cases = list(dataset)
    for index, case in enumerate(cases):
        if not isinstance(case, Case):
            raise EvaluatorUsageError(
                f"dataset[{index}] is a {type(case).__name__}, not a Case; build the dataset "
                "with Dataset.from_records(...), Dataset.load(...) or Case(inputs=...)"
            )
    return list(Dataset(cases))  # refuses two cases with one id, naming both


def _evaluators(evaluators: object) -> tuple[list[Evaluator], str | None]:
    """The evaluator list, and the ``"module:ATTR"`` it was imported from."""
    spec = evaluators if isinstance(evaluators, str) else None
    if spec is not None:
        evaluators = import_spec(spec, "evaluators")
    if isinstance(evaluators, (dict, str)) or not isinstance(evaluators, Sequence):
        raise EvaluatorUsageError(
            f"evaluators{f' ({spec})' if spec else ''} must be a list of evaluators, "
            f"got {type(evaluators).__name__}"
        )
    keys: dict[str, int] = {}
    for index, evaluator in enumerate(evaluators):
        if not isinstance(evaluator, Evaluator):
            raise EvaluatorUsageError(
                f"evaluators[{index}] is {evaluator!r}, not an Evaluator (wrap a function "
                "with @evaluator)"
            )
        key = evaluator.feedback_key
        if key in keys:
            raise EvaluatorUsageError(
                f"evaluators[{keys[key]}] and evaluators[{index}] both report {key!r}; their "
                "scores would be mixed: give one another feedback_key="
            )
        keys[key] = index
    return list(evaluators), spec
