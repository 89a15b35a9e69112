"""Which evaluation, if any, the current code runs inside — the judge-recursion guard.

The dispatcher sets it around every evaluation; capture reads it, so an interaction started
from inside an evaluation (its judge agent or model) is recorded as evaluation traffic and
never triggers evaluations, even under a ``"*"`` binding. A ``contextvars`` variable follows
the evaluation into asyncio tasks and LangChain's executor threads.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["current_evaluation_id", "evaluation_scope"]

_CURRENT: ContextVar[str | None] = ContextVar("langchain_evals_evaluation_id", default=None)


def current_evaluation_id() -> str | None:
    """The id of the evaluation the caller runs inside, or ``None`` outside evaluations."""
    return _CURRENT.get()


@contextmanager
def evaluation_scope(evaluation_id: str) -> Iterator[None]:
    """Mark the code in the ``with`` block as running inside evaluation ``evaluation_id``."""
    token = _CURRENT.set(evaluation_id)
    try:
        yield
    finally:
        _CURRENT.reset(token)
