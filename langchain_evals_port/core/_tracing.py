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

Automatic metrics: when the application has imported ``opentelemetry`` and configured a
global meter provider, ``current_tracer()`` also yields an
``integrations.otel.OpenTelemetryEvalTracer`` on that provider, next to any ``eval_scope``
tracer (both receive every event). The core names no integration: automatic tracers are
declared in the ``langchain_evals_port.automatic_tracers`` entry-point group (the
OpenTelemetry one by this package's own metadata). Set ``LANGCHAIN_EVALS_OTEL=off`` or call
``integrations.otel.set_auto_metrics(False)`` to opt out.
Inside ``reported_by_caller()`` — the online runtime's evaluations — the automatic tracer is
left out: the caller publishes the evaluation's metrics itself, so a judge called inside must
not add a second measurement of the same verdict.
"""

from __future__ import annotations

import functools
import importlib.metadata
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

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


_logger = logging.getLogger(__name__)

_AMBIENT: ContextVar[EvalTracer | None] = ContextVar("langchain_evals_port_tracer", default=None)
_CALLER_REPORTS: ContextVar[bool] = ContextVar("langchain_evals_port_caller_reports", default=False)


@contextmanager
def eval_scope(tracer: EvalTracer, *more: EvalTracer) -> Iterator[EvalTracer]:
    """Make ``tracer`` (and any ``more`` tracers, which all receive every event) the ambient
    tracer for evaluators run inside the block.

    Example:
        >>> from langchain_evals_port import ExactMatch
        >>> from langchain_evals_port.testing import RecordingTracer
        >>> tracer = RecordingTracer()
        >>> with eval_scope(tracer):
        ...     _ = ExactMatch()(outputs="a", reference_outputs="a")
        >>> [event.kind for event in tracer.events]
        ['start', 'result']
    """
    token = _AMBIENT.set(_FanOut((tracer, *more)) if more else tracer)
    try:
        yield tracer
    finally:
        _AMBIENT.reset(token)


@contextmanager
def reported_by_caller() -> Iterator[None]:
    """Leave the automatic metrics of the evaluators run inside the block to the caller,
    which reports the evaluation itself; ``eval_scope`` tracers still receive every event."""
    token = _CALLER_REPORTS.set(True)
    try:
        yield
    finally:
        _CALLER_REPORTS.reset(token)


def current_tracer() -> EvalTracer | None:
    """The tracer for evaluators without one of their own.

    That is the tracer of the innermost ``eval_scope`` and the automatic OpenTelemetry
    metrics tracer (see the module docstring), both when both exist; ``None`` when neither.
    """
    ambient = _AMBIENT.get()
    automatic = None if _CALLER_REPORTS.get() else _automatic_tracer()
    if automatic is None or _publishes_metrics(ambient):
        return ambient
    if ambient is None:
        return automatic
    return _FanOut((ambient, automatic))


def _publishes_metrics(tracer: EvalTracer | None) -> bool:
    # A scope that already has a metrics tracer must not count every evaluation twice.
    tracers = tracer.tracers if isinstance(tracer, _FanOut) else (tracer,)
    return any(getattr(t, "publishes_metrics", False) for t in tracers)


AUTOMATIC_TRACERS = "langchain_evals_port.automatic_tracers"
"""The entry-point group of automatic tracers: zero-argument callables returning a tracer
every evaluation reports to, or ``None`` when theirs is off. An integration registers itself
there in its package metadata; the core names none."""


@functools.cache
def _automatic_factories() -> tuple[Callable[[], EvalTracer | None], ...]:
    """The automatic tracers the installed packages declare, loaded once per process."""
    factories = []
    for entry in importlib.metadata.entry_points(group=AUTOMATIC_TRACERS):
        try:
            factories.append(entry.load())
        except Exception:  # a broken plugin must not stop evaluations
            _logger.exception("automatic tracer %r could not be loaded", entry.value)
    return tuple(factories)


def _automatic_tracer() -> EvalTracer | None:
    for factory in _automatic_factories():
        tracer = factory()
        if tracer is not None:
            return tracer
    return None


class _FanOut:
    """Sends every event to each of ``tracers``; a failing one does not stop the others."""

    def __init__(self, tracers: Sequence[EvalTracer]) -> None:
        self.tracers = tuple(tracers)

    def _each(self, event: str, evaluator: str, payload: Any) -> None:
        for tracer in self.tracers:
            try:
                getattr(tracer, event)(evaluator, payload)
            except Exception:
                _logger.exception("tracer %r failed on %s; the evaluation goes on", tracer, event)

    def on_start(self, evaluator: str, request: EvalRequest) -> None:
        """Forward a start event."""
        self._each("on_start", evaluator, request)

    def on_result(self, evaluator: str, result: EvaluatorResult) -> None:
        """Forward a result event."""
        self._each("on_result", evaluator, result)

    def on_error(self, evaluator: str, error: BaseException) -> None:
        """Forward an error event."""
        self._each("on_error", evaluator, error)


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
