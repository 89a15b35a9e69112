"""OpenTelemetryEvalTracer: metrics through the SDK's in-memory reader, and auto-attachment."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from langchain_evals_port import ExactMatch, evaluator
from langchain_evals_port.core import eval_scope
from langchain_evals_port.integrations.otel import OpenTelemetryEvalTracer
from langchain_evals_port.testing import RecordingTracer

Points = dict[str, dict[tuple[tuple[str, Any], ...], Any]]


def collect(reader: InMemoryMetricReader) -> Points:
    """Data points by metric name, then by sorted attributes."""
    points: Points = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else []:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    attributes = tuple(sorted((point.attributes or {}).items()))
                    points.setdefault(metric.name, {})[attributes] = point
    return points


def tags(evaluator: str, key: str, outcome: str, **extra: str) -> tuple[tuple[str, Any], ...]:
    attributes = {"evaluator": evaluator, "feedback_key": key, "outcome": outcome, **extra}
    return tuple(sorted(attributes.items()))


@pytest.fixture
def reader() -> InMemoryMetricReader:
    return InMemoryMetricReader()


@pytest.fixture
def tracer(reader: InMemoryMetricReader) -> OpenTelemetryEvalTracer:
    return OpenTelemetryEvalTracer(MeterProvider(metric_readers=[reader]).get_meter("test"))


def test_booleans_are_pass_fail_as_1_and_0_so_the_mean_is_the_pass_rate(
    reader: InMemoryMetricReader, tracer: OpenTelemetryEvalTracer
) -> None:
    match = ExactMatch(tracer=tracer)
    for outputs in ("a", "a", "b"):
        match.invoke({"outputs": outputs, "reference_outputs": "a"})
    points = collect(reader)
    verdict = tags("exact_match", "exact_match", "verdict")
    passed = points["evals.evaluation.passed"][verdict]
    assert (passed.count, passed.sum) == (3, 2)
    assert "evals.evaluation.score" not in points  # a boolean is not a numeric score
    assert points["evals.evaluation.outcomes"][verdict].value == 3
    duration = points["evals.evaluation.duration"][verdict]
    assert duration.count == 3
    assert duration.sum > 0


def test_numbers_failures_and_constant_attributes(reader: InMemoryMetricReader) -> None:
    tracer = OpenTelemetryEvalTracer(
        MeterProvider(metric_readers=[reader]).get_meter("test"), attributes={"agent": "bot"}
    )

    @evaluator(feedback_key="length", on_error="record", tracer=tracer)
    def length(outputs: str) -> float:
        if not outputs:
            raise ValueError("nothing to measure")
        time.sleep(0.01)
        return len(outputs) / 10

    for outputs in ("abcd", "abcdef", ""):
        length.invoke({"outputs": outputs})
    points = collect(reader)
    verdict = tags("length", "length", "verdict", agent="bot")
    failed = tags("length", "length", "failed", agent="bot")
    score = points["evals.evaluation.score"]
    assert list(score) == [verdict]
    assert (score[verdict].count, score[verdict].sum) == (2, pytest.approx(1.0))
    assert "evals.evaluation.passed" not in points  # a number alone has no pass/fail
    outcomes = points["evals.evaluation.outcomes"]
    assert (outcomes[verdict].value, outcomes[failed].value) == (2, 1)
    durations = points["evals.evaluation.duration"]
    assert durations[verdict].count == 2
    assert durations[verdict].min >= 0.01
    assert durations[failed].count == 1


def test_a_multi_key_evaluation_records_one_duration_per_result(
    reader: InMemoryMetricReader, tracer: OpenTelemetryEvalTracer
) -> None:
    @evaluator(tracer=tracer)
    def facts(outputs: str) -> dict[str, bool]:
        return {"has_a": "a" in outputs, "has_b": "b" in outputs}

    facts.invoke({"outputs": "a"})
    durations = collect(reader)["evals.evaluation.duration"]
    assert {dict(key)["feedback_key"]: point.count for key, point in durations.items()} == {
        "has_a": 1,
        "has_b": 1,
    }


def test_on_error_alone_records_nothing(
    reader: InMemoryMetricReader, tracer: OpenTelemetryEvalTracer
) -> None:
    tracer.on_error("x", ValueError("boom"))
    assert collect(reader) == {}


def _run_isolated(code: str, **env: str) -> str:
    """Run ``code`` in a fresh interpreter: the global meter provider can be set only once."""
    prelude = """
        from opentelemetry import metrics
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        from langchain_evals_port import ExactMatch
        from langchain_evals_port.core import eval_scope
        from langchain_evals_port.testing import RecordingTracer
        reader = InMemoryMetricReader()

        def outcomes():
            data = reader.get_metrics_data()
            return sum(
                point.value
                for resource in (data.resource_metrics if data else [])
                for scope in resource.scope_metrics
                for metric in scope.metrics if metric.name == "evals.evaluation.outcomes"
                for point in metric.data.data_points
            )
    """
    completed = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(prelude) + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout.strip()


@pytest.mark.processes
def test_a_global_meter_provider_gets_metrics_automatically_and_alongside_a_scope() -> None:
    output = _run_isolated("""
        ExactMatch()(outputs=1, reference_outputs=1)  # before: the proxy provider, no metrics
        metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
        ExactMatch()(outputs=1, reference_outputs=1)
        recording = RecordingTracer()
        with eval_scope(recording):
            ExactMatch()(outputs=1, reference_outputs=2)
        print(outcomes(), [event.kind for event in recording.events])
    """)
    assert output == "2 ['start', 'result']"


@pytest.mark.processes
def test_the_automatic_tracer_is_cached_per_provider() -> None:
    output = _run_isolated("""
        from langchain_evals_port.integrations.otel import automatic_tracer
        assert automatic_tracer() is None
        metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
        print(automatic_tracer() is automatic_tracer() is not None)
    """)
    assert output == "True"


@pytest.mark.processes
def test_a_provider_the_environment_names_gets_metrics_automatically() -> None:
    # OTEL_PYTHON_METER_PROVIDER: the API loads the provider on its first call, not before.
    output = _run_isolated(
        """
        from langchain_evals_port.integrations.otel import automatic_tracer
        tracer = automatic_tracer()
        print(tracer is not None, type(metrics.get_meter_provider()).__name__)
        """,
        OTEL_PYTHON_METER_PROVIDER="sdk_meter_provider",
    )
    assert output == "True MeterProvider"


@pytest.mark.processes
def test_opting_out_by_environment_variable() -> None:
    code = """
        metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
        ExactMatch()(outputs=1, reference_outputs=1)
        print(outcomes())
    """
    assert _run_isolated(code, LANGCHAIN_EVALS_OTEL="off") == "0"


@pytest.mark.processes
def test_opting_out_by_function() -> None:
    output = _run_isolated("""
        from langchain_evals_port.integrations.otel import set_auto_metrics
        metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
        set_auto_metrics(False)
        ExactMatch()(outputs=1, reference_outputs=1)
        set_auto_metrics(True)
        ExactMatch()(outputs=1, reference_outputs=1)
        print(outcomes())
    """)
    assert output == "1"


@pytest.mark.processes
def test_a_scope_tracer_and_a_failing_tracer_do_not_stop_the_metrics() -> None:
    output = _run_isolated("""
        class Broken:
            def on_start(self, evaluator, request): raise RuntimeError("broken")
            on_result = on_error = on_start
        metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
        with eval_scope(Broken()):
            print(ExactMatch()(outputs=1, reference_outputs=1)["score"], outcomes())
    """)
    assert output == "True 1"


@pytest.mark.processes
def test_a_configured_tracer_beats_the_ambient_ones() -> None:
    output = _run_isolated("""
        metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
        recording = RecordingTracer()
        ExactMatch(tracer=recording)(outputs=1, reference_outputs=1)
        print(outcomes(), len(recording.events))
    """)
    assert output == "0 2"


def test_without_a_provider_there_is_no_automatic_tracer() -> None:
    recording = RecordingTracer()
    with eval_scope(recording):
        ExactMatch()(outputs=1, reference_outputs=1)
    assert len(recording.events) == 2


@pytest.mark.processes
def test_the_module_imports_and_stays_off_without_the_otel_extra() -> None:
    # None in sys.modules is how Python itself spells "not installed" (ModuleNotFoundError).
    code = textwrap.dedent("""
        import sys
        sys.modules["opentelemetry"] = None
        from langchain_evals_port.integrations import otel
        otel.set_auto_metrics(True)
        print(otel.automatic_tracer())
    """)
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "None"
