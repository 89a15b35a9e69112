"""The background worker: claims work units from the ledger and runs them, boundedly.

It runs an asyncio loop in a daemon thread of its own, so it works the same under a sync
program and beside an application's running event loop. Each claim is a lease that a
heartbeat renews while the evaluation runs; a unit whose worker died becomes claimable again
when its lease expires, so a restarted process (or another one sharing the ledger) resumes it
within ``lease_seconds``. Completing and releasing are fenced on the claim: a worker that lost
its lease cannot record over the worker that took the unit over. Evaluator code raising
``SystemExit`` or ``KeyboardInterrupt`` fails its evaluation and never stops the worker's loop
(``stops_contained``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import queue
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain_evals_port.core._stops import stops_contained
from langchain_evals_port.storage import Ledger
from langchain_evals_port.storage._records import Claim, EvaluationRecord, WorkUnit

from ._execute import Park, Retry

__all__ = ["DispatchSettings", "Dispatcher"]

logger = logging.getLogger("langchain_evals_port.runtime")

T = TypeVar("T")

FOREVER = 100 * 365 * 24 * 3600.0
"""The delay that parks a unit with no deadline: a century."""

_MAX_EVALUATOR_THREADS = 1024
"""Threads for plain-``def`` evaluators; concurrency bounds the running ones, the rest are
abandoned after timeouts."""

_STOP_MARGIN = 5.0
"""Seconds ``stop`` waits beyond the grace period for units to be handed back."""

_NOTICE_DELAY = 0.002
"""Seconds between work being queued by this process and the worker claiming it."""


@dataclass(frozen=True)
class DispatchSettings:
    """How the background worker claims and runs work.

    Attributes:
        concurrency: Evaluations running at once in this process.
        lease_seconds: Length of a claim's lease; a heartbeat renews it every third of it.
        poll_interval: Seconds between looks at the ledger for work other processes queued
            or leases that expired (work this process queues wakes the worker at once).
    """

    concurrency: int = 8
    lease_seconds: float = 5.0
    poll_interval: float = 0.25

    def __post_init__(self) -> None:
        if not isinstance(self.concurrency, int) or self.concurrency < 1:
            raise ValueError(f"concurrency must be an int of at least 1, got {self.concurrency!r}")
        if self.lease_seconds <= 0 or self.poll_interval <= 0:
            raise ValueError("lease_seconds and poll_interval must be positive")


class DaemonThreadPool(ThreadPoolExecutor):
    """A thread pool of daemon threads that never waits for them at shutdown.

    A plain-``def`` evaluator cannot be interrupted; when the runtime stops, its unit is
    handed back to the ledger, and its thread must not keep the process alive (the standard
    pool's threads are joined at interpreter exit). It is a ``ThreadPoolExecutor`` only so
    that asyncio accepts it as a loop's default executor; none of that class's machinery
    runs.
    """

    def __init__(self, max_workers: int, *, name: str) -> None:
        super().__init__(max_workers=max_workers, thread_name_prefix=name)
        self._pool_size = max_workers
        self._name = name
        self._pending_jobs: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._pool_lock = threading.Lock()
        self._started_threads = 0
        self._idle_threads = 0
        self._closed = False

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        """Run ``fn(*args, **kwargs)`` on a pool thread; its future."""
        if self._closed:
            raise RuntimeError("cannot schedule new work after shutdown")
        future: Future[T] = Future()

        def job() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                result = fn(*args, **kwargs)
            except BaseException as error:
                future.set_exception(error)
            else:
                future.set_result(result)

        self._pending_jobs.put(job)
        with self._pool_lock:
            if self._idle_threads == 0 and self._started_threads < self._pool_size:
                self._started_threads += 1
                name = f"{self._name}-{self._started_threads}"
                threading.Thread(target=self._work, name=name, daemon=True).start()
        return future

    def _work(self) -> None:
        while True:
            with self._pool_lock:
                self._idle_threads += 1
            job = self._pending_jobs.get()
            with self._pool_lock:
                self._idle_threads -= 1
            if job is None:
                return
            job()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Accept no more work and let idle threads end; never wait for busy ones."""
        with self._pool_lock:
            self._closed = True
            threads = self._started_threads
        for _ in range(threads):
            self._pending_jobs.put(None)


class Dispatcher:
    """Claims units for ``worker_id`` and runs them with ``execute`` in a background thread.

    Args:
        ledger: Where the work queue lives.
        execute: Runs one unit; returns its record or raises ``Retry`` or ``Park``.
        on_recorded: Called (in the worker's loop) with each record this worker stored.
        on_stop: Called in the worker's loop as it stops (to close what lives in it).
        settings: Concurrency, lease and polling.
        worker_id: Names this worker's claims.
    """

    def __init__(
        self,
        ledger: Ledger,
        execute: Callable[[WorkUnit], Awaitable[EvaluationRecord]],
        on_recorded: Callable[[EvaluationRecord], Awaitable[None]],
        on_stop: Callable[[], Awaitable[None]],
        *,
        settings: DispatchSettings,
        worker_id: str,
    ) -> None:
        self._ledger = ledger
        self._execute = execute
        self._on_recorded = on_recorded
        self._on_stop = on_stop
        self._settings = settings
        self._worker_id = worker_id
        self._claims: dict[str, Claim] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._ready = threading.Event()
        self._idle = threading.Event()
        self._stopping = False
        self._grace = 0.0
        self._io: ThreadPoolExecutor | None = None
        self._notices = 0
        self._wake_scheduled = False
        self._thread: threading.Thread | None = None

    # --- control, from any thread ---------------------------------------------------------

    def start(self) -> None:
        """Start the worker thread (once)."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(
            target=self._serve, name=f"langchain-evals-{self._worker_id}", daemon=True
        )
        self._thread.start()
        self._ready.wait()
        if not self._thread.is_alive():
            raise RuntimeError("the evaluation worker failed to start; see the log above")

    def notify(self) -> None:
        """Tell the worker that work was queued, so it claims now instead of at the next poll."""
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None and not loop.is_closed():
            self._notices += 1
            self._idle.clear()
            # The loop may close in between: then there is nothing left to wake.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._wake_shortly, loop, wake)

    def _wake_shortly(self, loop: asyncio.AbstractEventLoop, wake: asyncio.Event) -> None:
        # The worker starts a moment after the notice, so that it does not compete (for the
        # GIL and the ledger) with the reply that the notifying call is still returning.
        if not self._wake_scheduled:
            self._wake_scheduled = True
            loop.call_later(_NOTICE_DELAY, self._wake_now, wake)

    def _wake_now(self, wake: asyncio.Event) -> None:
        self._wake_scheduled = False
        wake.set()

    def drain(self, timeout: float) -> bool:
        """Wait until no evaluation runs and none is due; True when that happened in time."""
        return self._thread is None or self._idle.wait(timeout)

    def stop(self, grace: float) -> None:
        """Claim nothing more; give running evaluations ``grace`` seconds to finish, then
        cancel them and hand their units back; join the worker thread."""
        if self._thread is None or self._loop is None:
            return
        self._grace = grace
        self._stopping = True
        self.notify()
        self._thread.join(grace + _STOP_MARGIN)

    # --- the worker loop -------------------------------------------------------------------

    def _serve(self) -> None:
        try:
            asyncio.run(self._main())
        finally:
            self._ready.set()  # never leave ``start`` waiting on a worker that failed

    async def _main(self) -> None:
        loop = asyncio.get_running_loop()
        # Plain-``def`` evaluators run in the default executor: daemon threads, as many as
        # needed (an evaluation that timed out may still hold one). Ledger calls have
        # threads of their own, so stuck evaluator code can never block recording.
        loop.set_default_executor(DaemonThreadPool(_MAX_EVALUATOR_THREADS, name="langchain-evals"))
        self._io = ThreadPoolExecutor(max_workers=2, thread_name_prefix="langchain-evals-ledger")
        self._loop, self._wake = loop, asyncio.Event()
        self._ready.set()
        # Evaluator code raising SystemExit or KeyboardInterrupt fails its evaluation; it
        # must not stop this loop (and with it every evaluation of the process).
        with stops_contained():
            await self._serve_until_stopped()

    async def _serve_until_stopped(self) -> None:
        assert self._wake is not None
        assert self._io is not None
        heartbeats = asyncio.create_task(self._heartbeat())
        try:
            while not self._stopping:
                self._wake.clear()
                notices = self._notices
                free = self._settings.concurrency - len(self._tasks)
                claimed = await self._trip(None, free) if free > 0 else 0
                # Idle only if no work was queued while this round looked for some.
                if not claimed and not self._tasks and notices == self._notices:
                    self._idle.set()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self._settings.poll_interval)
        finally:
            if self._tasks:  # running evaluations may finish within the grace period
                await asyncio.wait(set(self._tasks.values()), timeout=self._grace)
            heartbeats.cancel()
            for task in list(self._tasks.values()):
                task.cancel()
            await asyncio.gather(*self._tasks.values(), heartbeats, return_exceptions=True)
            try:
                await self._on_stop()
            except Exception:
                logger.exception("closing the worker's resources failed")
            self._io.shutdown(wait=False)
            self._idle.set()

    async def _trip(self, finished: tuple[Claim, EvaluationRecord] | None, free: int) -> int:
        """One trip to the ledger: record a finished evaluation (fenced on its claim), then
        claim units for ``free`` slots and start them; the number claimed."""
        recorded, claims = await self._ledger_call(self._complete_and_claim, finished, free)
        for claim in claims:
            evaluation_id = claim.unit.evaluation_id
            self._claims[evaluation_id] = claim
            self._tasks[evaluation_id] = asyncio.create_task(self._run(evaluation_id))
        if recorded and finished is not None:
            try:
                await self._on_recorded(finished[1])
            except Exception:  # metrics and feedback never hold up the work
                logger.exception("reporting evaluation %s failed", finished[1].evaluation_id)
        return len(claims)

    async def _ledger_call(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a ledger call on the ledger's own threads, which evaluator code never holds."""
        assert self._io is not None
        call = functools.partial(function, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self._io, call)

    def _complete_and_claim(
        self, finished: tuple[Claim, EvaluationRecord] | None, free: int
    ) -> tuple[bool, list[Claim]]:
        recorded = False
        if finished is not None:
            claim, record = finished
            try:
                recorded = self._ledger.complete(claim, record)
            except Exception:
                # The unit stays claimed; its lease expires and it runs again.
                logger.exception("recording evaluation %s failed", claim.unit.evaluation_id)
            else:
                if not recorded:
                    logger.warning("lost the claim on %s before recording it", record.evaluation_id)
        claims: list[Claim] = []
        if free > 0 and not self._stopping:
            try:
                claims = self._ledger.claim(
                    self._worker_id, limit=free, lease_seconds=self._settings.lease_seconds
                )
            except Exception:
                logger.exception("claiming work from the ledger failed; retrying at the next poll")
        return recorded, claims

    async def _run(self, evaluation_id: str) -> None:
        claim = self._claims[evaluation_id]
        try:
            record = await self._execute(claim.unit)
        except Retry as retry:
            await self._release(evaluation_id, retry.delay, retry.attempts)
        except Park as park:
            # Waits for ``resume``, or comes back at its deadline to be timed out.
            delay = FOREVER if park.deadline is None else max(0.0, park.deadline - time.time())
            await self._release(evaluation_id, delay, None, waiting=True, question=park.question)
        except asyncio.CancelledError:
            # Stopping (or the lease was lost): hand the unit back for another worker.
            await asyncio.shield(self._release(evaluation_id, 0.0, None))
            raise
        except Exception:
            logger.exception("running evaluation %s failed inside the runtime", evaluation_id)
            await self._release(evaluation_id, 5.0, None)
        else:
            # Out of the heartbeat's reach (``complete`` deletes the row), then recorded in
            # the same trip that claims the next unit for this slot.
            latest = self._claims.pop(evaluation_id, claim)
            await self._trip((latest, record), free=1)
        finally:
            self._tasks.pop(evaluation_id, None)
            if self._wake is not None:
                self._wake.set()

    async def _release(
        self,
        evaluation_id: str,
        delay: float,
        attempts: int | None,
        *,
        waiting: bool = False,
        question: Any = None,
    ) -> None:
        """Hand the unit back to the ledger (fenced on this worker's claim)."""
        claim = self._claims.pop(evaluation_id, None)  # out of the heartbeat's reach
        if claim is None:
            return
        try:
            await self._ledger_call(
                self._ledger.release,
                claim,
                delay=delay,
                attempts=attempts,
                waiting=waiting,
                question=question,
            )
        except Exception:
            logger.exception("handing %s back to the ledger failed", evaluation_id)

    async def _heartbeat(self) -> None:
        """Renew this worker's leases every third of a lease, and sweep: every lease period,
        units whose worker died (lease expired) are made claimable again."""
        interval = self._settings.lease_seconds / 3
        for beat in itertools.count(1):
            await asyncio.sleep(interval)
            if beat % 3 == 0:
                try:
                    await self._ledger_call(self._ledger.reclaim_expired)
                except Exception:
                    logger.exception("sweeping expired leases failed")
            claims = list(self._claims.values())
            if not claims:
                continue
            renewed = await self._ledger_call(self._renew, claims)
            for claim, fresh in zip(claims, renewed, strict=True):
                evaluation_id = claim.unit.evaluation_id
                if self._claims.get(evaluation_id) is not claim:
                    continue  # finished (or handed back) while the heartbeat ran
                if fresh is not None:
                    self._claims[evaluation_id] = fresh
                    continue
                logger.warning("lost the lease on %s; another worker has it", evaluation_id)
                self._claims.pop(evaluation_id, None)
                task = self._tasks.get(evaluation_id)
                if task is not None:
                    task.cancel()

    def _renew(self, claims: list[Claim]) -> list[Claim | None]:
        renewed: list[Claim | None] = []
        for claim in claims:
            try:
                renewed.append(
                    self._ledger.heartbeat(claim, lease_seconds=self._settings.lease_seconds)
                )
            except Exception:
                logger.exception("renewing the lease on %s failed", claim.unit.evaluation_id)
                renewed.append(claim)
        return renewed
