"""``run_experiment``: run a target over a dataset's cases, score every output, keep it all.

Each case runs ``trials`` times; each run is the target (with its trajectory captured) and
then every evaluator, at most ``max_concurrency`` runs at once. An evaluator gets the request
the online runtime would give it, from the same builder (``capture.build_request``):
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
each run is claimed, run and written as it goes (batched: within 10 to 50 ms). Started
again under the same name, an experiment runs only its unfinished runs; ``rescore`` scores
a stored experiment's outputs again without its target; ``work_on`` lets more processes
(``langchain-evals worker``) share an experiment's runs. Judges' model calls go through a
persistent cache by default (``judge.judge_defaults``), so an unchanged re-run asks no
judge anything.

This module is the API; ``_checks`` checks its arguments, ``_runner`` runs a process's share
of the runs, and ``_writes`` batches the runner's writes and claims to the store.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import warnings
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Literal, TypeAlias

from langchain_core.caches import BaseCache
from langchain_core.rate_limiters import BaseRateLimiter

from langchain_evals_port.core import Evaluator
from langchain_evals_port.core._calls import run_awaitable
from langchain_evals_port.core.errors import EvaluatorUsageError
from langchain_evals_port.judge import RefreshingCache, SqliteCache, judge_defaults
from langchain_evals_port.judge._cache_layers import CountingCache

from ._case import Case
from ._checks import (
    EvaluatorConfigs,
    ExperimentMismatchError,
    JudgeCacheMode,
    changed_evaluators,
    check_count,
    check_options,
    check_same,
    checked_cases,
    checked_configs,
    checked_evaluators,
    dataset_fingerprint,
    evaluator_fingerprints,
    judge_cache_mode,
)
from ._result import CaseResult, ExperimentResult, JudgeCacheUse
from ._runner import Runner
from ._store import ExperimentInfo, ExperimentStore
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


CacheLike: TypeAlias = "BaseCache | JudgeCacheMode | bool | None"
"""The judges' cache: ``None``, ``True`` or ``"use"`` for ``judge-cache.db`` beside a SQLite
store (in ``.langchain-evals/`` for a PostgreSQL one; none for ``store=False``), ``"refresh"``
for that file in refresh mode (``JudgeCacheMode``), ``False`` or ``"off"`` for none, or any
LangChain ``BaseCache`` (``RefreshingCache(cache)`` refreshes it)."""

EvaluatorsLike: TypeAlias = "Sequence[Evaluator] | str"
"""The evaluators of an experiment: a list, or ``"module:ATTR"`` naming one."""


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
    check_options(name, store, progress)
    runnable = target if isinstance(target, Target) else Target(target)
    cases = checked_cases(dataset)
    checked, evaluators_spec = checked_evaluators(evaluators)
    configs = checked_configs(evaluator_config, checked)
    check_count("trials", trials)
    check_count("max_concurrency", max_concurrency)
    async with _opened(store) as opened:
        experiment = name if name is not None else await _next_name(opened, runnable.name)
        info = ExperimentInfo(
            name=experiment,
            target=runnable.name,
            target_spec=target if isinstance(target, str) else None,
            evaluators=[ev.feedback_key for ev in checked],
            evaluators_spec=evaluators_spec,
            evaluator_fingerprints=evaluator_fingerprints(checked, configs),
            evaluator_config=configs,
            trials=trials,
            cases=len(cases),
            dataset=dataset_fingerprint(cases),
            cached_judges=judge_cache_mode(cache) != "off",
            judge_cache=judge_cache_mode(cache),
        )
        runs = [(case, trial, None) for case in cases for trial in range(trials)]
        runner = Runner(opened, experiment, runnable, checked, configs, max_concurrency, progress)
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
    check_options(name, store, progress)
    checked, evaluators_spec = checked_evaluators(evaluators)
    configs = checked_configs(evaluator_config, checked)
    check_count("max_concurrency", max_concurrency)
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
            evaluator_fingerprints=evaluator_fingerprints(checked, configs),
            evaluator_config=configs,
            trials=original.trials,
            cases=original.cases,
            dataset=original.dataset,
            rescored_from=source,
            cached_judges=judge_cache_mode(cache) != "off",
            judge_cache=judge_cache_mode(cache),
        )
        runs = [(run.case, run.trial, run.run) for run in stored.runs]
        runner = Runner(opened, experiment, None, checked, configs, max_concurrency, progress)
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
    check_options(name, store, progress)
    check_count("max_concurrency", max_concurrency)
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
        checked, _ = checked_evaluators(info.evaluators_spec)
        changed = changed_evaluators(info, evaluator_fingerprints(checked, info.evaluator_config))
        if changed:
            raise ExperimentMismatchError(
                f"experiment {name!r} was started with other evaluators than this worker "
                f"imports from {info.evaluators_spec}: {changed}; deploy the evaluators it was "
                "started with, or run the new ones as another experiment"
            )
        target = None if info.target_spec is None else Target(info.target_spec)
        runner = Runner(
            opened, name, target, checked, info.evaluator_config, max_concurrency, progress
        )
        mode = info.judge_cache or ("use" if info.cached_judges else "off")
        with _judging(opened, store, mode, rate_limiter):
            finished = await runner.run()
        return len(finished)


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
    runner: Runner,
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
        check_same(stored, info)
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
    mode = judge_cache_mode(cache)
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
    result = result.model_copy(update={"ran": len(known)})
    if counted is not None:
        use = JudgeCacheUse(hits=counted.hits, misses=counted.misses)
        result = result.model_copy(update={"judge_cache": use})
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
            result = result.model_copy(update={"langsmith_url": url})
    return result


async def _next_name(store: ExperimentStore, base: str) -> str:
    return await asyncio.to_thread(store.next_name, base)
