"""OpenTelemetry metrics for evaluations (the optional ``otel`` extra).

``OpenTelemetryEvalTracer(meter)`` is an ``EvalTracer`` publishing, under the names the
runtime uses:

* ``evals.evaluation.passed`` (histogram): 1 for each passing verdict and 0 for each failing
  one, so the mean is the pass rate. A verdict passes or fails by its boolean score or, when
  its score is a number, by its ``passed`` (the online runtime decides it for every
  verdict); a number without one has no pass/fail.
* ``evals.evaluation.score`` (histogram): each numeric score — never a boolean, so a length
  or a similarity never mixes with the pass rate. Inconclusive and failed results carry no
  score.
* ``evals.evaluation.duration`` (histogram, seconds): for each result, the time from its
  evaluation's start to the moment the result is reported. A multi-key evaluation thus
  records one duration per result, each tagged with its own key, so every key's duration
  count matches its outcome count.
* ``evals.evaluation.outcomes`` (counter): every result.

Each is tagged with ``evaluator``, ``feedback_key`` and ``outcome``, plus any constant
``attributes`` and, for the online runtime's results, the evaluated ``agent`` (taken from
``result.metadata["agent"]``). ``on_error`` alone records nothing: an error
recorded as a failure arrives as a failed result, and a re-raised one produces no result.

When the application has configured a global meter provider, evaluators without a tracer
of their own report to one automatically (see ``core._tracing``); ``set_auto_metrics(False)``
or the environment variable ``LANGCHAIN_EVALS_OTEL=off`` (read once, at the first
evaluation) turns that off.

Example:
    >>> from opentelemetry.sdk.metrics import MeterProvider
    >>> from langchain_evals_port import ExactMatch
    >>> tracer = OpenTelemetryEvalTracer(MeterProvider().get_meter("evals"))
    >>> ExactMatch(tracer=tracer).invoke({"outputs": "a", "reference_outputs": "a"}).score
    True
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import time
from collections.abc import Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING

from langchain_evals_port.core._request import EvalRequest
from langchain_evals_port.core._result import EvaluatorResult

if TYPE_CHECKING:
    # Only for annotations: the module imports without the ``otel`` extra, so walking or
    # importing the package never needs it; a meter handed in brings the API with it.
    from opentelemetry import metrics

__all__ = ["OpenTelemetryEvalTracer", "automatic_tracer", "set_auto_metrics"]

_METER_NAME = "langchain_evals_port"


class OpenTelemetryEvalTracer:
    """An ``EvalTracer`` that records evaluation metrics on an OpenTelemetry ``meter``.

    Args:
        meter: The meter that creates the four instruments.
        attributes: Constant attributes added to every measurement.
    """

    publishes_metrics = True
    """Tells the ambient scope that this tracer already publishes the metrics, so the
    automatic tracer is not added beside it."""

    def __init__(self, meter: metrics.Meter, *, attributes: Mapping[str, str] | None = None):
        self._attributes = dict(attributes or {})
        self._passed = meter.create_histogram(
            "evals.evaluation.passed", unit="1", description="1 per passing, 0 per failing verdict"
        )
        self._score = meter.create_histogram(
            "evals.evaluation.score", unit="1", description="Numeric score of each verdict"
        )
        self._duration = meter.create_histogram(
            "evals.evaluation.duration", unit="s", description="Time from start to each result"
        )
        self._outcomes = meter.create_counter(
            "evals.evaluation.outcomes", unit="{result}", description="Results by outcome"
        )
        # Start and results of one evaluation happen in the same thread or task, so each
        # context keeps its own start times, by evaluator name.
        self._starts: ContextVar[Mapping[str, float] | None] = ContextVar(
            f"otel_eval_starts_{id(self)}", default=None
        )

    def on_start(self, evaluator: str, request: EvalRequest) -> None:
        """Remember when ``evaluator`` started, for the durations of its results."""
        self._starts.set({**(self._starts.get() or {}), evaluator: time.perf_counter()})

    def on_result(self, evaluator: str, result: EvaluatorResult) -> None:
        """Record the result's outcome, its pass/fail and numeric score if a verdict, and its
        duration."""
        attributes = {
            **self._attributes,
            "evaluator": evaluator,
            "feedback_key": result.key,
            "outcome": result.outcome,
        }
        agent = result.metadata.get("agent")
        if agent is not None:
            attributes["agent"] = str(agent)
        self._outcomes.add(1, attributes)
        passed = result.passed
        if passed is not None:
            self._passed.record(int(passed), attributes)
        if isinstance(result.score, float):  # a bool is pass/fail, not a score
            self._score.record(result.score, attributes)
        started = (self._starts.get() or {}).get(evaluator)
        if started is not None:
            self._duration.record(time.perf_counter() - started, attributes)

    def on_error(self, evaluator: str, error: BaseException) -> None:
        """Record nothing: a recorded failure is reported again as a failed result."""


_auto_enabled = True
_lock = threading.Lock()
_cached: tuple[metrics.MeterProvider, OpenTelemetryEvalTracer] | None = None


def set_auto_metrics(enabled: bool) -> None:
    """Turn the automatic tracer on the global meter provider on or off (on by default)."""
    global _auto_enabled
    _auto_enabled = enabled


@functools.cache
def _off_by_environment() -> bool:
    """Whether ``LANGCHAIN_EVALS_OTEL`` is ``off``: read once per process (every evaluation
    asks), as OpenTelemetry reads its own variables when the provider is made."""
    return os.environ.get("LANGCHAIN_EVALS_OTEL", "").lower() == "off"


@functools.cache
def _provider_named_by_environment() -> bool:
    """Whether ``OTEL_PYTHON_METER_PROVIDER`` names a provider for the API to load: read
    once per process (``get_meter_provider`` reads it on every call until a provider is
    set, about a microsecond an evaluation)."""
    return "OTEL_PYTHON_METER_PROVIDER" in os.environ


def automatic_tracer() -> OpenTelemetryEvalTracer | None:
    """The tracer on the global meter provider, or ``None`` when off or none is configured.

    The tracer is made once per provider object. It is off when ``set_auto_metrics(False)``
    was called or ``LANGCHAIN_EVALS_OTEL`` is ``off``; the API's default provider (a proxy
    or a no-op, both defined in ``opentelemetry.metrics``) counts as none configured.
    """
    global _cached
    # Only an application that imported the metrics API can have configured a provider, so
    # this never imports opentelemetry itself (the API's module holds the global provider).
    api = sys.modules.get("opentelemetry.metrics._internal")
    if api is None or not _auto_enabled or _off_by_environment():
        return None
    if api._METER_PROVIDER is None and not _provider_named_by_environment():
        return None  # the API's default, its proxy: known without reading the environment
    provider: metrics.MeterProvider = api.get_meter_provider()
    if type(provider).__module__.startswith("opentelemetry.metrics"):
        return None
    with _lock:
        if _cached is None or _cached[0] is not provider:
            _cached = (provider, OpenTelemetryEvalTracer(provider.get_meter(_METER_NAME)))
        return _cached[1]
