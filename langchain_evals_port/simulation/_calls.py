"""Calling the simulation's user code: the core's sync/async helpers, the hint for its
synchronous path, and how many positional arguments a function takes (stop conditions and
evaluators are called with as many as they accept)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from langchain_evals_port.core._calls import call_async, call_sync

__all__ = ["RUN_ASYNC", "call_async", "call_sync", "positional_arity"]

RUN_ASYNC = "use `await simulation.arun()` instead of `simulation.run()`"
"""What to do when async user code meets the synchronous ``run`` inside an event loop."""


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
