"""Run one work unit: build the request, call the evaluator, record its results.

Errors are sorted by the core's one classifier (``classify_failure``). A transient error (a
timeout or connection error inside the evaluator, HTTP 429 or 5xx from a provider, a
storage hiccup) asks for a retry with backoff that does not use up an attempt, until the
unit is ``retry_max_age`` old. Any other exception — and the evaluation passing its own
timeout — uses up an attempt; when the attempts are spent it is recorded as a ``failed``
result with its reason code, never as a verdict or as inconclusive. An evaluator that
records its own failures (``on_error="record"``) is treated the same: its ``failed``
results are retried by their code, then recorded as they are.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks.manager import AsyncCallbackManager
from langchain_core.runnables import RunnableConfig

from langchain_evals_port.capture._records import InteractionRecord
from langchain_evals_port.capture._request import build_request
from langchain_evals_port.capture._scope import evaluation_scope
from langchain_evals_port.core import EvaluatorResult, results_of
from langchain_evals_port.core.errors import (
    EvaluationFailure,
    EvaluationTimeoutError,
    EvaluatorUsageError,
    classify_failure,
)
from langchain_evals_port.storage._protocol import checkpoint_storage
from langchain_evals_port.storage._records import EvaluationRecord, WorkUnit

from ._context import EvaluationContext
from ._registry import Registered
from .durable._engine import CheckpointKept, DurableEngine, Paused

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from langchain_evals_port.storage import Ledger

    from ._config import EvaluationConfig

__all__ = ["Park", "Retry", "RetryPolicy", "UnitExecutor"]

logger = logging.getLogger("langchain_evals_port.runtime")


@dataclass(frozen=True)
class RetryPolicy:
    """How failed evaluations are retried.

    Attributes:
        max_attempts: Attempts an evaluation gets for non-transient errors (1: no retry).
        retry_max_age: Seconds after enqueueing during which transient errors are retried.
        backoff_base: The shortest delay before a retry, in seconds.
        backoff_max: The longest delay before a retry, in seconds.
    """

    max_attempts: int = 1
    retry_max_age: float = 600.0
    backoff_base: float = 0.5
    backoff_max: float = 30.0

    def __post_init__(self) -> None:
        if not isinstance(self.max_attempts, int) or self.max_attempts < 1:
            raise ValueError(
                f"max_attempts must be an int of at least 1, got {self.max_attempts!r}"
            )
        for name in ("retry_max_age", "backoff_base", "backoff_max"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative, got {getattr(self, name)!r}")

    def delay(self, age: float) -> float:
        """The delay before the next retry of a unit that is ``age`` seconds old.

        Half the age, within the bounds and with some jitter: the delays grow geometrically
        without the unit having to count its transient retries.
        """
        delay = min(self.backoff_max, max(self.backoff_base, age / 2))
        return delay * random.uniform(0.8, 1.2)


class Retry(Exception):
    """Put the unit back: due after ``delay`` seconds, with ``attempts`` attempts used."""

    def __init__(self, delay: float, attempts: int) -> None:
        super().__init__(f"retry in {delay:.2f}s (attempts used: {attempts})")
        self.delay = delay
        self.attempts = attempts


class Park(Exception):
    """Hand a durable evaluation that waits for a person back, with the ``question`` its
    step asked, until ``resume`` or ``deadline`` (epoch seconds; ``None``: no deadline)."""

    def __init__(self, question: Any, deadline: float | None) -> None:
        super().__init__("waiting to be resumed")
        self.question = question
        self.deadline = deadline


_RUN_TAG = "langchain_evals:evaluation"


class _TracingProbe:
    """Whether LangChain callbacks (LangSmith tracing, a tracing hook) are configured,
    looked up at most once a second: the answer rarely changes, and naming the run costs
    every evaluation a callback-manager setup (measured: about 0.1 ms of CPU) for nothing
    when no one is listening."""

    def __init__(self, interval: float = 1.0) -> None:
        self._interval = interval
        self._checked_at = -interval
        self._on = False

    def on(self) -> bool:
        now = time.monotonic()
        if now - self._checked_at >= self._interval:
            manager = AsyncCallbackManager.configure(None, None, inheritable_tags=[_RUN_TAG])
            self._on = bool(manager.handlers)
            self._checked_at = now
        return self._on


class UnitExecutor:
    """Runs work units' evaluations and returns their records (or raises ``Retry``).

    Args:
        registry: The registered evaluators by id.
        config: Returns the current configuration (read at the start of each evaluation).
        ledger: Where evaluators read the interaction.
        timeout: Seconds one plain evaluation may take.
        policy: How errors are retried.
        recent: Returns an interaction this process recorded lately, or ``None`` (saves
            evaluators a ledger read).
        checkpointer: Where durable evaluations keep their steps; by default the ledger's
            own, opened on first use.
    """

    def __init__(
        self,
        *,
        registry: Mapping[str, Registered],
        config: Callable[[], EvaluationConfig],
        ledger: Ledger,
        timeout: float,
        policy: RetryPolicy,
        recent: Callable[[str], InteractionRecord | None] = lambda interaction_id: None,
        checkpointer: BaseCheckpointSaver[str] | None = None,
    ) -> None:
        self._registry = registry
        if checkpointer is None and any(r.durable is not None for r in registry.values()):
            checkpoint_storage(ledger)  # a ledger that keeps none is an error now, not later
        self._checkpointer = checkpointer
        self._engines: dict[str, DurableEngine] = {}
        self._opening = asyncio.Lock()
        self._resources = AsyncExitStack()
        self._config = config
        self._ledger = ledger
        self._timeout = timeout
        self._policy = policy
        self._recent = recent
        self._tracing = _TracingProbe()

    async def run(self, unit: WorkUnit) -> EvaluationRecord:
        """Evaluate ``unit`` once; its record, or ``Retry`` when it should run again (or
        ``Park`` when a durable evaluation waits for a person)."""
        registered = self._registry.get(unit.evaluator_id)
        if registered is None:
            # Queued by an application whose evaluators this process does not have.
            unknown = EvaluatorUsageError(
                f"no evaluator with id {unit.evaluator_id!r} is registered with this runtime"
            )
            return self.record(unit, [EvaluatorResult.of_error(unit.evaluator_id, unknown)], 0.0)
        if registered.durable is not None:
            return await self._run_durable(unit, registered)
        started = time.perf_counter()
        config = self._config()
        threshold = _threshold(registered, config, unit)
        # Waiting on the task (not ``wait_for``) keeps a TimeoutError raised inside the
        # evaluator (a transient error) apart from the evaluation passing its own timeout.
        task = asyncio.ensure_future(self._evaluate(registered, unit, config))
        try:
            done, _ = await asyncio.wait({task}, timeout=self._timeout)
            if not done:
                raise EvaluationTimeoutError(f"the evaluation took longer than {self._timeout:g}s")
            results = _checked(task.result(), threshold)
        except Exception as error:
            results = self._after_error(unit, error, registered.feedback_key)
        finally:
            if not task.done():  # the evaluation timed out, or this run was cancelled
                task.cancel()
        return self.record(unit, results, time.perf_counter() - started, threshold)

    def record(
        self,
        unit: WorkUnit,
        results: list[EvaluatorResult],
        duration: float,
        pass_threshold: float | None = None,
    ) -> EvaluationRecord:
        """The record of ``unit`` with ``results``."""
        return EvaluationRecord.of(
            unit,
            results,
            control_id=self._config().control_id(unit.evaluator_id),
            pass_threshold=pass_threshold,
            duration=duration,
        )

    def context(self, unit: WorkUnit, config: EvaluationConfig | None = None) -> EvaluationContext:
        """The ``EvaluationContext`` of ``unit`` under the current (or given) configuration."""
        config = config or self._config()
        return EvaluationContext(
            subject=unit.subject,
            evaluation_id=unit.evaluation_id,
            config=config.config_for(unit.evaluator_id, unit.agent_id, unit.roles),
            ledger=self._ledger,
            trigger=unit.trigger,
            trigger_attributes=dict(unit.trigger_attributes),
            preloaded=self._recent(unit.interaction_id),
        )

    async def _evaluate(
        self, registered: Registered, unit: WorkUnit, config: EvaluationConfig
    ) -> list[EvaluatorResult]:
        evaluator = registered.make()
        context = self.context(unit, config)
        request = build_request(
            await context.ainteraction(),
            outputs_kind=evaluator.outputs_kind,
            config=context.config,
            subject=context.subject,
            evaluation_id=unit.evaluation_id,
            to_request=registered.to_request,
        )
        # With tracing on, the evaluation is a LangChain run named after its id, traced with
        # the judge calls inside it. The scope marks every call made inside as evaluation
        # traffic, which never triggers evaluations itself.
        run_config: RunnableConfig | None = None
        if self._tracing.on():
            run_config = {
                "run_name": unit.evaluator_id,
                "tags": [_RUN_TAG],
                "metadata": {
                    "evaluation_id": unit.evaluation_id,
                    "evaluator_id": unit.evaluator_id,
                    "interaction_id": unit.interaction_id,
                    "agent_id": unit.agent_id,
                },
            }
        # Not ``arun_evaluator``: the retry policy decides by the exception itself, which
        # ``_after_error`` turns into the failed result once no retry is left.
        with evaluation_scope(unit.evaluation_id):
            return results_of(await evaluator.ainvoke(request, run_config))

    async def _run_durable(self, unit: WorkUnit, registered: Registered) -> EvaluationRecord:
        """Run (or continue) a durable evaluation on its LangGraph thread. Its nodes retry
        by their own policies, so an error here is final: recorded as failed."""
        try:
            engine = await self._engine(registered)
        except Exception as error:
            # The checkpointer did not open (a storage hiccup: retried, until retry_max_age)
            # or the graph does not compile (recorded as failed).
            failed = self._after_error(unit, error, registered.feedback_key)
            return self.record(unit, failed, _age(unit))
        try:
            outcome = await engine.run(unit)
        except CheckpointKept as kept:
            # Retried like a plain evaluator's transient error (until retry_max_age).
            cause = kept.__cause__ if isinstance(kept.__cause__, Exception) else kept
            failed = self._after_error(unit, cause, registered.feedback_key)
            return self.record(unit, failed, _age(unit))
        except Exception as error:
            logger.warning("durable evaluator %s failed", unit.evaluator_id, exc_info=error)
            return self.record(
                unit, [EvaluatorResult.of_error(registered.feedback_key, error)], _age(unit)
            )
        if isinstance(outcome, Paused):
            raise Park(outcome.payload, outcome.deadline)
        return outcome

    async def _engine(self, registered: Registered) -> DurableEngine:
        # Units run concurrently: without the lock, each of the first ones would open (and
        # set up) a checkpointer of its own.
        async with self._opening:
            engine = self._engines.get(registered.evaluator_id)
            if engine is None:
                if self._checkpointer is None:
                    opened = checkpoint_storage(self._ledger).open_checkpointer()
                    self._checkpointer = await self._resources.enter_async_context(opened)
                assert registered.durable is not None
                engine = DurableEngine(
                    registered.durable,
                    evaluator_id=registered.evaluator_id,
                    checkpointer=self._checkpointer,
                    ledger=self._ledger,
                    context=self.context,
                    record=lambda unit, results: self._durable_record(registered, unit, results),
                )
                self._engines[registered.evaluator_id] = engine
            return engine

    def _durable_record(
        self, registered: Registered, unit: WorkUnit, results: list[EvaluatorResult]
    ) -> EvaluationRecord:
        threshold = _threshold(registered, self._config(), unit)
        verdicts = [_with_passed(result, threshold) for result in results]
        return self.record(unit, verdicts, _age(unit), threshold)

    async def aclose(self) -> None:
        """Close the checkpointer durable evaluations used (in the loop that opened it)."""
        await self._resources.aclose()

    def _after_error(self, unit: WorkUnit, error: Exception, key: str) -> list[EvaluatorResult]:
        age = time.time() - unit.enqueued_at
        recorded = error.results if isinstance(error, _RecordedFailures) else None
        if classify_failure(error).transient and age < self._policy.retry_max_age:
            logger.info(
                "evaluation %s hit a transient error, retrying: %r", unit.evaluation_id, error
            )
            raise Retry(self._policy.delay(age), unit.attempts) from error
        attempts = unit.attempts + 1
        logger.warning(
            "evaluator %s failed on interaction %s (attempt %d of %d)",
            unit.evaluator_id,
            unit.interaction_id,
            attempts,
            self._policy.max_attempts,
            exc_info=error,
        )
        if attempts < self._policy.max_attempts:
            raise Retry(self._policy.delay(age), attempts) from error
        return recorded if recorded is not None else [EvaluatorResult.of_error(key, error)]


class _RecordedFailures(EvaluationFailure):
    """An evaluator recorded failed results itself: retried and recorded like an error."""

    def __init__(self, results: list[EvaluatorResult]) -> None:
        first = next(r for r in results if r.outcome == "failed")
        super().__init__(f"{first.key}: {first.reason}", code=first.error_code or "evaluator_error")
        self.results = results


def _checked(results: list[EvaluatorResult], threshold: float | None) -> list[EvaluatorResult]:
    """``results`` with each verdict's ``passed``; failed ones raise for the retry policy."""
    if any(result.outcome == "failed" for result in results):
        raise _RecordedFailures(results)
    return [_with_passed(result, threshold) for result in results]


def _with_passed(result: EvaluatorResult, threshold: float | None) -> EvaluatorResult:
    """``result`` with ``passed``; online a numeric verdict needs a threshold to pass."""
    decided = result.with_passed(threshold)
    if decided.is_verdict and decided.passed is None:
        raise EvaluatorUsageError(
            f"{result.key} scored {result.score!r}, a number, and no pass_threshold applies "
            "to this evaluation; set pass_threshold in the configuration or on the "
            "registration"
        )
    return decided


def _threshold(registered: Registered, config: EvaluationConfig, unit: WorkUnit) -> float | None:
    """The configuration's ``pass_threshold`` for this binding, else the registration's."""
    configured = config.config_for(unit.evaluator_id, unit.agent_id, unit.roles).get(
        "pass_threshold"
    )
    return float(configured) if configured is not None else registered.pass_threshold


def _age(unit: WorkUnit) -> float:
    return max(0.0, time.time() - unit.enqueued_at)
