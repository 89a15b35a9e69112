"""Run one work unit: make the evaluator, call ``evaluate``, turn the result into a record.

Errors are sorted here. A transient error (a timeout or connection error inside the
evaluator, HTTP 429 or 5xx from a provider) asks for a retry with backoff that does not use
up an attempt, until the unit is ``retry_max_age`` old. Any other exception — and the
evaluation passing its own timeout — uses up an attempt; when the attempts are spent it is
recorded as a Failed outcome, never as a verdict or as inconclusive.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import random
import time
from collections.abc import Callable, Collection, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks.manager import AsyncCallbackManager
from langchain_core.runnables import RunnableConfig, RunnableLambda

from langchain_evals_port.core.errors import (
    EvaluationFailure,
    EvaluatorUsageError,
    FailureCode,
    failure_code,
)

from ._durable import CheckpointKept, DurableEngine, Paused
from ._evaluation import Complete, Effect, InconclusiveEffect
from ._evaluator import EvaluationContext, EvaluatorFactory
from ._records import (
    EvaluationError,
    EvaluationRecord,
    Failed,
    Inconclusive,
    InteractionRecord,
    Outcome,
    Verdict,
    WorkUnit,
)
from ._scope import evaluation_scope
from .ledger._protocol import checkpoint_storage

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from ._config import EvaluationConfig
    from .ledger import Ledger

__all__ = ["Park", "Retry", "RetryPolicy", "UnitExecutor", "is_transient"]

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


def is_transient(error: BaseException) -> bool:
    """Whether ``error`` (or an exception it was raised from) is worth retrying unchanged.

    Timeouts and connection errors of any library, and provider errors with HTTP status 429
    or 5xx, are transient; everything else is not.
    """
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        name = type(current).__name__.lower()
        if isinstance(current, (TimeoutError, ConnectionError)) or any(
            word in name for word in ("timeout", "connection", "ratelimit")
        ):
            return True
        status = getattr(current, "status_code", None)
        if status == 429 or (isinstance(status, int) and status >= 500):
            return True
        # Our own reason codes (an evaluator with on_error="record" keeps no cause), and the
        # database drivers' "locked" or "connection lost" errors.
        if isinstance(current, EvaluationFailure) and current.code in ("rate_limited", "timeout"):
            return True
        if name == "operationalerror":
            return True
        current = current.__cause__ or current.__context__
    return False


_RUN_TAG = "langchain_evals:evaluation"


class _TracingProbe:
    """Whether LangChain callbacks (LangSmith tracing, a tracing hook) are configured,
    looked up at most once a second: the answer rarely changes and the lookup is not free."""

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


class _EvaluationTimeout(EvaluationFailure):
    def __init__(self, timeout: float) -> None:
        super().__init__(f"the evaluation took longer than {timeout:g}s", code="timeout")


class UnitExecutor:
    """Runs work units' evaluations and returns their records (or raises ``Retry``).

    Args:
        factories: Evaluator factories by evaluator id.
        config: Returns the current configuration (read at the start of each evaluation).
        ledger: Handed to evaluators as ``ctx.ledger``.
        timeout: Seconds one evaluation may take.
        policy: How errors are retried.
        recent: Returns an interaction this process recorded lately, or ``None`` (saves
            evaluators a ledger read).
        durable: The ids of the durable evaluators among ``factories``.
        checkpointer: Where durable evaluations keep their steps; by default one on the
            ledger's storage, opened on first use.
    """

    def __init__(
        self,
        *,
        factories: Mapping[str, EvaluatorFactory],
        config: Callable[[], EvaluationConfig],
        ledger: Ledger,
        timeout: float,
        policy: RetryPolicy,
        recent: Callable[[str], InteractionRecord | None] = lambda interaction_id: None,
        durable: Collection[str] = (),
        checkpointer: BaseCheckpointSaver[str] | None = None,
    ) -> None:
        self._factories = factories
        self._durable = frozenset(durable)
        if self._durable and checkpointer is None:
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
        if unit.evaluator_id in self._durable:
            return await self._run_durable(unit)
        started = time.perf_counter()
        config = self._config()
        # Waiting on the task (not ``wait_for``) keeps a TimeoutError raised inside the
        # evaluator (a transient error) apart from the evaluation passing its own timeout.
        task = asyncio.ensure_future(self._evaluate(unit, config))
        outcome: Outcome
        try:
            done, _ = await asyncio.wait({task}, timeout=self._timeout)
            if not done:
                raise _EvaluationTimeout(self._timeout)
            outcome = _outcome(task.result())
        except Exception as error:
            outcome = self._after_error(unit, error)
        finally:
            if not task.done():  # the evaluation timed out, or this run was cancelled
                task.cancel()
        return self._record(unit, outcome, time.perf_counter() - started)

    def _record(self, unit: WorkUnit, outcome: Outcome, duration: float) -> EvaluationRecord:
        return EvaluationRecord(
            evaluation_id=unit.evaluation_id,
            evaluator_id=unit.evaluator_id,
            control_id=self._config().control_id(unit.evaluator_id),
            trigger=unit.trigger,
            trigger_attributes=unit.trigger_attributes,
            interaction_id=unit.interaction_id,
            agent_id=unit.agent_id,
            outcome=outcome,
            attempts=unit.attempts + 1,
            duration=duration,
        )

    def _context(self, unit: WorkUnit, config: EvaluationConfig) -> EvaluationContext:
        return EvaluationContext(
            subject=unit.subject,
            evaluation_id=unit.evaluation_id,
            config=config.config_for(unit.evaluator_id, unit.agent_id, unit.roles),
            ledger=self._ledger,
            trigger=unit.trigger,
            trigger_attributes=dict(unit.trigger_attributes),
            preloaded=self._recent(unit.interaction_id),
        )

    async def _evaluate(self, unit: WorkUnit, config: EvaluationConfig) -> Any:
        factory = self._factories.get(unit.evaluator_id)
        if factory is None:
            raise EvaluatorUsageError(
                f"no evaluator with id {unit.evaluator_id!r} is registered with this runtime"
            )
        evaluator = factory()
        ctx = self._context(unit, config)
        call = _caller(evaluator.evaluate)
        # The scope marks every call made inside as evaluation traffic (no recursion).
        with evaluation_scope(unit.evaluation_id):
            if self._tracing.on():
                # Tracing is on: the evaluation is a LangChain run named after the evaluator,
                # traced together with the judge calls inside it.
                run_config: RunnableConfig = {
                    "run_name": unit.evaluator_id,
                    "tags": [_RUN_TAG],
                    "metadata": {
                        "evaluation_id": unit.evaluation_id,
                        "evaluator_id": unit.evaluator_id,
                        "interaction_id": unit.interaction_id,
                        "agent_id": unit.agent_id,
                    },
                }
                return await RunnableLambda(call).ainvoke(ctx, run_config)
            if inspect.iscoroutinefunction(call):
                return await call(ctx)
            return await asyncio.to_thread(call, ctx)

    async def _run_durable(self, unit: WorkUnit) -> EvaluationRecord:
        """Run (or continue) a durable evaluation on its LangGraph thread. Its steps retry
        by its own settings, so an error here is final: recorded as Failed."""
        try:
            engine = await self._engine(unit.evaluator_id)
            result = await engine.run(unit)
        except CheckpointKept as kept:
            # Retried like a plain evaluator's transient error (until retry_max_age).
            cause = kept.__cause__ if isinstance(kept.__cause__, Exception) else kept
            return self._record(unit, self._after_error(unit, cause), self._age(unit))
        except Exception as error:
            logger.warning("durable evaluator %s failed", unit.evaluator_id, exc_info=error)
            return self._record(unit, _failed(error), self._age(unit))
        if isinstance(result, Paused):
            raise Park(result.payload, result.deadline)
        return self._record(unit, result.outcome, self._age(unit))

    async def _engine(self, evaluator_id: str) -> DurableEngine:
        # Units run concurrently: without the lock, each of the first ones would open (and
        # set up) a checkpointer of its own.
        async with self._opening:
            return await self._open_engine(evaluator_id)

    async def _open_engine(self, evaluator_id: str) -> DurableEngine:
        engine = self._engines.get(evaluator_id)
        if engine is None:
            if self._checkpointer is None:
                opened = checkpoint_storage(self._ledger).open_checkpointer()
                self._checkpointer = await self._resources.enter_async_context(opened)
            engine = DurableEngine(
                self._factories[evaluator_id],
                checkpointer=self._checkpointer,
                ledger=self._ledger,
                context=lambda unit: self._context(unit, self._config()),
                record=lambda unit, outcome: self._record(unit, outcome, self._age(unit)),
            )
            self._engines[evaluator_id] = engine
        return engine

    @staticmethod
    def _age(unit: WorkUnit) -> float:
        return max(0.0, time.time() - unit.enqueued_at)

    async def aclose(self) -> None:
        """Close the checkpointer durable evaluations used (in the loop that opened it)."""
        await self._resources.aclose()

    def _after_error(self, unit: WorkUnit, error: Exception) -> Failed:
        age = time.time() - unit.enqueued_at
        if (
            is_transient(error)
            and not isinstance(error, _EvaluationTimeout)
            and age < self._policy.retry_max_age
        ):
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
        return _failed(error)


def _failed(error: BaseException) -> Failed:
    """The Failed outcome of ``error``: its type, message and failure code."""
    code: FailureCode = failure_code(error)
    return Failed(error=EvaluationError(type=type(error).__name__, message=str(error), code=code))


def _caller(evaluate: Callable[[EvaluationContext], Any]) -> Callable[[EvaluationContext], Any]:
    """``evaluate`` as a plain function: an ``async def`` stays a coroutine function; a plain
    ``def`` that returns an awaitable is a usage error (it would never be awaited)."""
    if inspect.iscoroutinefunction(evaluate):
        return evaluate

    def call(ctx: EvaluationContext) -> Any:
        result = evaluate(ctx)
        if inspect.isawaitable(result):
            raise EvaluatorUsageError(
                "evaluate returned an awaitable from a plain def; declare it `async def`"
            )
        return result

    return call


def _outcome(effect: Effect | Any) -> Outcome:
    if isinstance(effect, Complete):
        return Verdict(evaluation=effect.evaluation)
    if isinstance(effect, InconclusiveEffect):
        return Inconclusive(reason=effect.reason)
    raise EvaluatorUsageError(
        f"evaluate returned {effect!r}; return self.effects().complete(...) or "
        ".inconclusive(reason)"
    )
