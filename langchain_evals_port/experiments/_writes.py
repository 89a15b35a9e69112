"""A runner's writes and claims, batched: one transaction for the writes and claims that
fall due together, made on the event loop when the store can begin it without waiting (a
SQLite file), else in a trip to a thread."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_evals_port.storage import WouldWait

from ._result import CaseResult
from ._store import ExperimentStore, PendingRun
from ._target import TargetRun

__all__ = ["LEASE_SECONDS", "Writes"]

FLUSH_SECONDS = 0.05
"""How long a write waits for others to share its trip when no claim is due: a run's slot
is free before its record is written, so only the count of finished runs waits."""

KEPT_SECONDS = 0.01
"""How long a kept run (what the target did, written before the run is scored) waits: a
process killed while scoring finds it and need not run the target again (measured on the
anchors' workload: app calls after a SIGKILL at half way 1.016-1.032 of the cases, as
1.013-1.025 when every kept run had a trip of its own; 50 ms gave 1.03-1.04)."""

FLUSH_SIZE = 64
"""This many queued writes go at once, without waiting for ``FLUSH_SECONDS``."""

LEASE_SECONDS = 60.0
"""How long a claimed run stays this process's without a renewal; renewed every third of
it while the run is going. A process killed outright holds its runs that long, unless it
ran on the same machine as the process that resumes (see ``release_orphans``)."""


class Writes:
    """A runner's writes of its runs, in order, and its claims, a batch at a time: a batch
    and the claims asked for meanwhile are one transaction, the writes first. It is made on
    the event loop when the store can begin it without waiting (``without_waiting``: a
    SQLite file no other process or thread is writing to at that moment), else in a trip to
    a thread, while the next batch gathers (PostgreSQL, a busy file). A busy runner so makes
    a few transactions where it would make one per run and step (measured: a trip to a
    thread costs more CPU than a batch's SQL, and the runs' claims and writes fall due
    together, as runs end; on the anchors' workload a thread's trips and its contention for
    the GIL cost about a tenth of a run's CPU more than the same SQL on the event loop).

    Writes wait for a claim (which is needed at once, and takes them along), for
    ``FLUSH_SIZE`` of them, or until the first of them is due (a kept run after
    ``KEPT_SECONDS``, a record after ``FLUSH_SECONDS``), whichever comes first (measured on
    the anchors' workload: trips per 1,000 runs fell from about 330 to 75, and the runner's
    CPU per run by about a tenth); ``flush`` sends them at once."""

    def __init__(self, store: ExperimentStore, name: str) -> None:
        self.store = store
        self.name = name
        self.queued: list[tuple[PendingRun, TargetRun | CaseResult, asyncio.Future[bool]]] = []
        self.claims: list[tuple[int, asyncio.Future[list[PendingRun]]]] = []
        self.writing: asyncio.Task[None] | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.kept_queued = False

    def submit(self, run: PendingRun, done: TargetRun | CaseResult) -> asyncio.Future[bool]:
        """Queue a write of ``run``; its future says whether the run's claim still held."""
        written: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.queued.append((run, done, written))
        if not isinstance(done, CaseResult):
            self.kept_queued = True
        self._going()
        return written

    def claim(self, limit: int) -> asyncio.Future[list[PendingRun]]:
        """Queue a claim of up to ``limit`` runs, made after the writes queued before it."""
        claimed: asyncio.Future[list[PendingRun]] = asyncio.get_running_loop().create_future()
        self.claims.append((limit, claimed))
        self._going()
        return claimed

    async def flush(self) -> None:
        """Send every queued write now, and wait until they are written."""
        while self.queued or self.claims or (self.writing and not self.writing.done()):
            self.send()
            assert self.writing is not None
            await asyncio.shield(self.writing)

    def _going(self) -> None:
        if self.writing is not None and not self.writing.done():
            return  # the trip under way looks again when it is back
        if self.claims or len(self.queued) >= FLUSH_SIZE:
            self.send()
        else:
            self._arm()

    def send(self) -> None:
        """Send the queued writes now, unless a trip is under way (it takes them)."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.writing is None or self.writing.done():
            self.writing = asyncio.create_task(self._write())

    async def _write(self) -> None:
        sending = True
        while sending and (self.queued or self.claims):
            batch, self.queued = self.queued, []
            self.kept_queued = False
            claims, self.claims = self.claims, []
            writes = [(run, done) for run, done, _ in batch]
            limits = [limit for limit, _ in claims]
            try:
                held, claimed = await self._transaction(writes, limits)
            except BaseException as error:
                futures: list[asyncio.Future[Any]] = [written for _, _, written in batch]
                futures.extend(claimed for _, claimed in claims)
                for future in futures:
                    if not future.done():
                        future.set_exception(error)
                        # Seen: a kept run's error reaches its run through the record's
                        # write (made after it), a record's and a claim's are awaited.
                        future.exception()
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
            sending = bool(self.claims) or len(self.queued) >= FLUSH_SIZE
        self._arm()

    def _arm(self) -> None:
        """Send the queued writes when the first of them is due: a kept run's within
        ``KEPT_SECONDS``, a record's within ``FLUSH_SECONDS``."""
        if not self.queued:
            return
        loop = asyncio.get_running_loop()
        when = loop.time() + (KEPT_SECONDS if self.kept_queued else FLUSH_SECONDS)
        if self.timer is not None:
            if self.timer.when() <= when:
                return
            self.timer.cancel()
        self.timer = loop.call_at(when, self.send)

    async def _transaction(
        self, writes: list[tuple[PendingRun, TargetRun | CaseResult]], limits: list[int]
    ) -> tuple[list[bool], list[list[PendingRun] | Exception]]:
        """``_apply`` on the event loop when the store can begin it without waiting, else
        in a thread."""
        try:
            with self.store.without_waiting():
                return self._apply(writes, limits)
        except WouldWait:
            return await asyncio.to_thread(self._apply, writes, limits)

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
                    self.store.claim(self.name, limit=limit, lease_seconds=LEASE_SECONDS)
                )
            except Exception as error:
                claimed.append(error)
        return held, claimed
