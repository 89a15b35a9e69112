"""``SystemExit`` and ``KeyboardInterrupt`` raised by user code in an event loop's tasks.

asyncio lets these two escape a task: raised in any task — an evaluator's, a target's, a
LangGraph node's — they stop the whole loop, so an online worker thread dies with its
evaluations pending and an experiment exits (``sys.exit(0)``: with status 0) with nothing
done. An ``except`` clause cannot help, since the task boundary is where they escape.
``stops_contained`` makes the tasks started inside it end with an ordinary exception
instead, which the code awaiting them records as a failed evaluation like any other.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from contextvars import Context, ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from .errors import StoppedInEvaluation

__all__ = ["stops_contained"]

T = TypeVar("T")


@dataclass(frozen=True)
class _Containment:
    on_interrupt: Callable[[KeyboardInterrupt], None] | None


_CONTAINMENT: ContextVar[_Containment | None] = ContextVar("stops_contained", default=None)


@contextmanager
def stops_contained(
    on_interrupt: Callable[[KeyboardInterrupt], None] | None = None,
) -> Iterator[None]:
    """Within the block, tasks started from it (and from their tasks) do not stop the
    running event loop with ``SystemExit`` or ``KeyboardInterrupt``.

    A ``SystemExit`` ends its task with ``StoppedInEvaluation``. So does a
    ``KeyboardInterrupt`` when ``on_interrupt`` is ``None`` (a background worker, where no
    person pressed Ctrl-C); otherwise ``on_interrupt`` is called with it (to stop the way
    Ctrl-C does) and the task ends cancelled. Tasks started elsewhere are untouched.
    """
    _install(asyncio.get_running_loop())
    token = _CONTAINMENT.set(_Containment(on_interrupt))
    try:
        yield
    finally:
        _CONTAINMENT.reset(token)


def _install(loop: asyncio.AbstractEventLoop) -> None:
    """Wrap the loop's task factory (once) so that tasks started where a containment is
    active run their coroutine inside ``_contained``."""
    previous = loop.get_task_factory()
    if getattr(previous, "contains_stops", False):
        return

    def factory(
        loop: asyncio.AbstractEventLoop, coro: Any, /, **options: Any
    ) -> asyncio.Future[Any]:
        # asyncio passes ``context`` when the task was given one; else it copies the current.
        context: Context | None = options.get("context")
        active = _CONTAINMENT.get() if context is None else context.get(_CONTAINMENT)
        if active is not None:
            coro = _contained(coro)
        if previous is None:
            return asyncio.Task(coro, loop=loop, **options)
        chained: Callable[..., asyncio.Future[Any]] = previous
        return chained(loop, coro, **options)

    factory.contains_stops = True  # type: ignore[attr-defined]
    loop.set_task_factory(factory)

    # An interrupted task ends cancelled; ``asyncio.gather`` sets a cancellation on its own
    # future as an exception, which nobody retrieves once the run is stopping, and the loop
    # would log it with a traceback after the run said it was interrupted. A cancellation is
    # how a stop is carried out, never an error of its own: not logged.
    handler = loop.get_exception_handler()

    def quiet_interrupts(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if isinstance(context.get("exception"), asyncio.CancelledError):
            return
        if handler is None:
            loop.default_exception_handler(context)
        else:
            handler(loop, context)

    loop.set_exception_handler(quiet_interrupts)


async def _contained(coro: Coroutine[Any, Any, T]) -> T:
    try:
        return await coro
    except (SystemExit, KeyboardInterrupt) as stop:
        containment = _CONTAINMENT.get()
        if isinstance(stop, KeyboardInterrupt) and containment and containment.on_interrupt:
            containment.on_interrupt(stop)
            raise asyncio.CancelledError("interrupted") from stop
        raise StoppedInEvaluation(stop) from stop
