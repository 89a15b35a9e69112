"""``Runner``: one process's share of an experiment's runs — claim, run the target, score,
write — until every run of the experiment is written, by this process or another."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import Any, TypeAlias, TypeVar

from langchain_evals_port.capture import EvaluatorConfig, Subject
from langchain_evals_port.capture._request import build_request
from langchain_evals_port.core import Evaluator, EvaluatorResult, arun_evaluator
from langchain_evals_port.core._stops import stops_contained
from langchain_evals_port.reporting._display import Progress

from ._case import Case
from ._result import CaseResult
from ._store import ExperimentStore, PendingRun
from ._target import Target, TargetRun
from ._writes import LEASE_SECONDS, Writes

__all__ = ["Runner"]

_NO_CONFIG = EvaluatorConfig()

logger = logging.getLogger("langchain_evals_port.experiments")

_POLL_SECONDS = 0.5
"""How often a process with nothing left to claim looks for runs other processes let go."""

T = TypeVar("T")


class Runner:
    """This process's share of an experiment's runs: claim, run, score, write; until every
    run of the experiment is written (by this process or another).

    At most ``max_concurrency`` runs are under way (their target and evaluators), each
    slot a task that takes the next claimed run as soon as it has scored one: a task per
    run cost its making and a turn of the claiming loop between one run and the next, and
    the next run waited for every other run that ended at the same moment. Claims are
    made a batch at a time, in the background and a batch ahead: the next runs are claimed
    while these run, so a free slot starts one at once instead of waiting for a claim's
    write. A run's slot is free once it is scored: its record is written after, batched
    with others', and counts as finished once that write held."""

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
        self.claim_batch = max(1, max_concurrency // 2)
        self.writes = Writes(store, name)
        self.finished: dict[tuple[str, int], CaseResult] = {}
        # The slots' tasks and the run each has under way (target and evaluators; ``None``
        # once it is scored), claimed runs waiting for a slot, and scored runs whose record
        # is being written: all held by this process.
        self.running: dict[asyncio.Future[None], PendingRun | None] = {}
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
        running = [pending for pending in self.running.values() if pending is not None]
        recording = [pending for pending, _ in self.recording.values()]
        return [*running, *self.waiting, *recording]

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
        with contextlib.suppress(Exception):
            await self.writes.flush()  # what was scored is kept, not run again
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
            if idle and self.recording:
                self.writes.send()  # nothing else is left to share their trip
            if idle and self.claiming is None and not self.recording:
                if not await self._store(self.store.unfinished, self.name):
                    return
                # The rest is held by other processes: take over those that died here.
                await self._store(self.store.release_orphans, self.name)
                await asyncio.sleep(_POLL_SECONDS)
                found_none_at = None
                continue
            if not self.ended:
                await self._woken(loop, poll=found_none_at is not None)
            while self.ended:
                done = self.ended.popleft()
                if done is self.claiming:
                    self.claiming = None
                    claimed = done.result()
                    found_none_at = loop.time() if len(claimed) < asked else None
                    self.waiting.extend(claimed)
                elif done in self.running:
                    del self.running[done]
                    done.result()  # a bug of the runner itself surfaces here
                else:
                    pending, result = self.recording.pop(done)
                    if done.result():
                        self.finished[(pending.case.id, pending.trial)] = result
                    shown.advance()

    async def _woken(self, loop: asyncio.AbstractEventLoop, *, poll: bool) -> None:
        """Wait until a run, a claim or a record's write ends (something is under way
        whenever this waits), or, to ``poll`` for runs other processes let go, until
        ``_POLL_SECONDS`` pass."""
        self.waker = waker = loop.create_future()
        timer = loop.call_later(_POLL_SECONDS, _wake, waker) if poll else None
        try:
            await waker
        finally:
            if timer is not None:
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
        self._wake_loop()

    def _start(self, pending: PendingRun) -> None:
        """Start a slot with ``pending``; it goes on with the runs waiting after it."""
        task: asyncio.Future[None] = self._watched(self._slot(pending))
        self.running[task] = pending

    async def _slot(self, pending: PendingRun) -> None:
        """Run ``pending``, then each run waiting when it is scored, in this task, until
        none waits; each scored run's record is written meanwhile."""
        task = asyncio.current_task()
        assert task is not None
        while True:
            scored = await self._one(pending)
            self.running[task] = None
            if scored is not None:
                written, result = scored
                self.recording[written] = (pending, result)
                written.add_done_callback(self._ended)
            if not self.waiting:
                return
            pending = self.running[task] = self.waiting.popleft()
            if self.claiming is None and len(self.waiting) <= self.claim_batch:
                self._wake_loop()  # the loop claims the next batch meanwhile

    def _wake_loop(self) -> None:
        if self.waker is not None:
            _wake(self.waker)

    async def _one(self, pending: PendingRun) -> _Scored | None:
        """Run and score one run; the write of its record (its future says whether the
        claim still held) and the record, or ``None`` when the run was taken over."""
        case, trial = pending.case, pending.trial
        run = pending.given
        kept: asyncio.Future[bool] | None = None
        if run is None:
            assert self.target is not None  # only a rescore's runs come without a target
            run = await self.target.arun(case.inputs, case_id=case.id, trial=trial)
            # Kept while it is scored (written before its results): an interrupted run is
            # scored again, not run again.
            kept = self.writes.submit(pending, run)
        interaction = run.interaction
        subject = Subject.interaction(interaction.interaction_id, interaction.agent_id)
        scorings = [
            (
                ev.scores_in_loop,
                _score(
                    ev, case, trial, run, self.configs.get(ev.feedback_key, _NO_CONFIG), subject
                ),
            )
            for ev in self.evaluators
        ]
        scored = await _all(scorings)
        if kept is not None and kept.done() and not kept.exception() and not kept.result():
            return None  # the run was taken over (this lease lapsed): its holder records it
        # Otherwise the record is written after the kept run, with the same claim: when
        # that lapsed, neither holds, and the record's write says so.
        result = CaseResult(
            case=case, trial=trial, run=run, results=tuple(r for rs in scored for r in rs)
        )
        return self.writes.submit(pending, result), result

    async def _renew(self) -> None:
        while True:
            await asyncio.sleep(LEASE_SECONDS / 3)
            try:
                await self._store(
                    self.store.renew, self.name, self.held, lease_seconds=LEASE_SECONDS
                )
            except Exception:
                # A passing storage error: the next renewal comes well before leases lapse.
                logger.warning("experiment %r: renewing leases failed", self.name, exc_info=True)

    @staticmethod
    async def _store(call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """A call of the store, off the event loop (its SQL blocks)."""
        return await asyncio.to_thread(call, *args, **kwargs)


async def _all(scorings: list[tuple[bool, Coroutine[Any, Any, T]]]) -> list[T]:
    """What ``asyncio.gather`` of the scorings gives, in their order, with fewer tasks (a
    run's evaluators are its only work): those that never wait (``True``: an evaluator that
    ``scores_in_loop``) awaited one after the other in this task, then the others together,
    the last of them in this task too. A task costs about as much CPU as an exact match."""
    results: dict[int, T] = {}
    waiting = [(index, scoring) for index, (in_loop, scoring) in enumerate(scorings) if not in_loop]
    started: list[tuple[int, asyncio.Future[T]]] = []
    try:
        for index, (in_loop, scoring) in enumerate(scorings):
            if in_loop:
                results[index] = await scoring
        if waiting:
            *others, (last_index, last) = waiting
            started = [(index, asyncio.ensure_future(scoring)) for index, scoring in others]
            results[last_index] = await last
    except BaseException:
        for _, task in started:
            task.cancel()
        if not started:  # close those not started yet (a finished coroutine ignores it)
            for _, scoring in scorings:
                scoring.close()
        raise
    gathered = await asyncio.gather(*(task for _, task in started))
    results.update((index, result) for (index, _), result in zip(started, gathered, strict=True))
    return [results[index] for index in range(len(scorings))]


_Scored: TypeAlias = "tuple[asyncio.Future[bool], CaseResult]"
"""A scored run: the write of its record under way, and the record."""


def _wake(waker: asyncio.Future[None]) -> None:
    if not waker.done():
        waker.set_result(None)


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
