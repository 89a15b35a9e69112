"""Calling user code that may be sync or async, from the sync and the async loop alike.

The simulation accepts plain functions and coroutine functions for the app, the simulated
user, the stop condition and the evaluators. These two helpers are the only place that
knows the difference, so every other module is written once.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

from langchain_core.runnables.config import run_in_executor

from langchain_evals_port.core.errors import EvaluatorUsageError

T = TypeVar("T")


def call_sync(function: Callable[..., T | Awaitable[T]], *args: Any) -> T:
    """Call ``function``; when it returns an awaitable, run it to completion here."""
    result = function(*args)
    if not inspect.isawaitable(result):
        return result
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return cast("T", asyncio.run(_awaited(result)))
    # Blocking on a coroutine inside a running loop would deadlock that loop; closing it
    # spares the caller a "coroutine was never awaited" warning on top of the error.
    if inspect.iscoroutine(result):
        result.close()
    raise EvaluatorUsageError(
        f"{_name(function)} is async and the event loop is already running; "
        "use `await simulation.arun()` instead of `simulation.run()`"
    )


async def call_async(
    function: Callable[..., T | Awaitable[T]], *args: Any, blocking: bool = False
) -> T:
    """Call ``function`` and await its result when it is awaitable.

    Args:
        function: A plain function or a coroutine function.
        *args: Its positional arguments.
        blocking: A plain function that may block (an app doing I/O) runs in LangChain's
            executor, so other simulations sharing the event loop keep running.
    """
    if blocking and not inspect.iscoroutinefunction(function):
        result = await run_in_executor(None, function, *args)
    else:
        result = function(*args)
    if inspect.isawaitable(result):
        return cast("T", await result)
    return result


async def _awaited(awaitable: Awaitable[T]) -> T:
    return await awaitable


def _name(function: Callable[..., Any]) -> str:
    return getattr(function, "__name__", None) or type(function).__name__


def positional_arity(function: Callable[..., Any]) -> int | None:
    """How many positional arguments ``function`` takes (None for ``*args`` or unknown)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters):
        return None
    return sum(p.kind in kinds for p in parameters)
