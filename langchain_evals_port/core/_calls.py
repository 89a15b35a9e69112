"""Calling user code that may be sync or async, from sync and async callers alike.

Scoring functions, code extractors, simulated users, apps and stop conditions may each be a
plain function or a coroutine function. These two helpers are the one place that knows the
difference ("call it, await it if it is a coroutine"), so every caller is written once.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import run_in_executor

from .errors import EvaluatorUsageError

__all__ = ["call_async", "call_sync", "is_async", "run_awaitable"]

T = TypeVar("T")


def call_sync(function: Callable[..., T | Awaitable[T]], *args: Any, hint: str) -> T:
    """Call ``function``; when it returns an awaitable, run it to completion here
    (``run_awaitable``).

    Keyword arguments go in a ``functools.partial``, so no name of the caller's can collide
    with this helper's own.
    """
    result = function(*args)
    if not inspect.isawaitable(result):
        return result
    return run_awaitable(cast("Awaitable[T]", result), name=_name(function), hint=hint)


def run_awaitable(awaitable: Awaitable[T], *, name: str, hint: str) -> T:
    """Run ``awaitable`` to completion for a synchronous caller: the one way the package
    runs async code from sync code (``run_experiment`` over ``arun_experiment`` too).

    Inside a running event loop that would deadlock the loop, so it raises
    ``EvaluatorUsageError`` naming ``name`` with ``hint`` (what to call instead), after
    closing the coroutine.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_awaited(awaitable))
    # Closing it spares the caller a "coroutine was never awaited" warning on top of the error.
    if inspect.iscoroutine(awaitable):
        awaitable.close()
    raise EvaluatorUsageError(
        f"{name} is async and was called synchronously inside a running event loop; {hint}"
    )


async def call_async(
    function: Callable[..., T | Awaitable[T]],
    *args: Any,
    blocking: bool = False,
    config: RunnableConfig | None = None,
) -> T:
    """Call ``function`` and await its result when it is awaitable.

    Args:
        function: A plain function or a coroutine function.
        *args: Its positional arguments.
        blocking: A plain function that may block (an app doing I/O, a scoring function)
            runs in LangChain's executor (``config``'s), so the event loop keeps running.
        config: The run's config, whose executor ``blocking`` calls use.

    Keyword arguments go in a ``functools.partial``, as for ``call_sync``.
    """
    if blocking and not is_async(function):
        result = await run_in_executor(config, function, *args)
    else:
        result = function(*args)
    if inspect.isawaitable(result):
        return cast("T", await result)
    return result


def is_async(function: Callable[..., Any]) -> bool:
    """Whether ``function`` is a coroutine function or an object whose ``__call__`` is one
    (a decorated or wrapped one may not show it: callers still check what it returns)."""
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
        getattr(function, "__call__", None)  # noqa: B004
    )


async def _awaited(awaitable: Awaitable[T]) -> T:
    return await awaitable


def _name(function: Callable[..., Any]) -> str:
    return getattr(function, "__name__", None) or type(function).__name__
