"""Evaluation tracers and the ambient ``eval_scope``.

A tracer sees every evaluation start, each result it produced and each error it raised.
Evaluators built with ``tracer=...`` report to that tracer; evaluators built without one
report to the tracer of the innermost enclosing ``with eval_scope(tracer):`` block, if any
(a configured tracer beats the ambient one).

The scope lives in a ``contextvars.ContextVar``, so it reaches asyncio tasks created inside
the block and the executor threads LangChain's ``batch`` uses (LangChain copies the
context into them). A raw ``threading.Thread`` does not inherit context: start it with
``contextvars.copy_context().run`` to carry the scope along::

    ctx = contextvars.copy_context()
    threading.Thread(target=ctx.run, args=(evaluator.invoke, request)).start()
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from ._request import EvalRequest
from ._result import EvaluatorResult


@runtime_checkable
class EvalTracer(Protocol):
    """Receives evaluation events. Implementations must be thread-safe."""

    def on_start(self, evaluator: str, request: EvalRequest) -> None:
        """An evaluator named ``evaluator`` started on ``request``."""

    def on_result(self, evaluator: str, result: EvaluatorResult) -> None:
        """It produced ``result`` (once per result; a recorded failure is a result too)."""

    def on_error(self, evaluator: str, error: BaseException) -> None:
        """It raised ``error`` (reported before a recorded failure or before re-raising)."""


_AMBIENT: ContextVar[EvalTracer | None] = ContextVar("langchain_evals_port_tracer", default=None)


@contextmanager
def eval_scope(tracer: EvalTracer) -> Iterator[EvalTracer]:
    """Make ``tracer`` the ambient tracer for evaluators run inside the block.

    Example:
        >>> from langchain_evals_port import ExactMatch
        >>> from langchain_evals_port.testing import RecordingTracer
        >>> tracer = RecordingTracer()
        >>> with eval_scope(tracer):
        ...     _ = ExactMatch()(outputs="a", reference_outputs="a")
        >>> [event.kind for event in tracer.events]
        ['start', 'result']
    """
    token = _AMBIENT.set(tracer)
    try:
        yield tracer
    finally:
        _AMBIENT.reset(token)


def current_tracer() -> EvalTracer | None:
    """The ambient tracer of the innermost ``eval_scope``, or ``None`` outside any scope."""
    return _AMBIENT.get()


@dataclass(frozen=True)
class TraceEvent:
    """One event seen by a ``RecordingTracer``; ``payload`` is the request, result or error."""

    kind: Literal["start", "result", "error"]
    evaluator: str
    payload: EvalRequest | EvaluatorResult | BaseException


class RecordingTracer:
    """A tracer that keeps every event in ``events``, for tests and notebooks."""

    def __init__(self) -> None:
        self.events: list[TraceEvent] = []
        self._lock = threading.Lock()

    def _add(self, event: TraceEvent) -> None:
        with self._lock:
            self.events.append(event)

    def on_start(self, evaluator: str, request: EvalRequest) -> None:
        """Record a start event."""
        self._add(TraceEvent("start", evaluator, request))

    def on_result(self, evaluator: str, result: EvaluatorResult) -> None:
        """Record a result event."""
        self._add(TraceEvent("result", evaluator, result))

    def on_error(self, evaluator: str, error: BaseException) -> None:
        """Record an error event."""
        self._add(TraceEvent("error", evaluator, error))
