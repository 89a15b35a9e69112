"""Testing online evaluators: one evaluator in isolation, or a whole runtime.

``EvaluatorTestKit`` runs one evaluator's ``evaluate`` over a chosen ``Subject`` — no
configuration file, no background worker, exceptions propagate so a test shows them.
``runtime_testkit`` builds a real ``EvaluationRuntime`` on an in-memory or temporary SQLite
ledger with fast polling, for integration tests with ``ScriptedChatModel`` agents and judges.

Example:
    >>> from langchain_evals_port.runtime import Evaluation, OnlineEvaluator, Subject
    >>> from langchain_evals_port.runtime.testkit import EvaluatorTestKit
    >>> class MinLength(OnlineEvaluator):
    ...     id = "min-length"
    ...
    ...     def evaluate(self, ctx):
    ...         text = ctx.interaction().final_response_text
    ...         minimum = ctx.config.get_int("min_length")
    ...         return self.effects().complete(Evaluation.of(len(text) >= minimum, "length"))
    >>> from langchain_evals_port.runtime import InMemoryLedger, InteractionRecord
    >>> ledger = InMemoryLedger().seed(
    ...     InteractionRecord(interaction_id="i-1", agent_id="support", output_text="Hello!")
    ... )
    >>> result = (
    ...     EvaluatorTestKit.of(MinLength)
    ...     .with_ledger(ledger)
    ...     .with_config({"min_length": 3})
    ...     .evaluate(Subject.interaction("i-1", "support"))
    ... )
    >>> result.is_complete, result.evaluation.passed
    (True, True)
"""

from __future__ import annotations

import asyncio
import inspect
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from ._config import EvaluationConfig, EvaluatorConfig
from ._evaluation import Complete, Effect, Evaluation, InconclusiveEffect
from ._evaluator import EvaluationContext, EvaluatorFactory
from ._ids import evaluation_id
from ._records import Subject
from ._runtime import EvaluationRuntime
from ._scope import evaluation_scope
from .ledger import InMemoryLedger, Ledger

__all__ = ["EvaluatorTestKit", "TestKitResult", "runtime_testkit"]


@dataclass(frozen=True)
class TestKitResult:
    """What one ``evaluate`` returned."""

    __test__ = False  # not a pytest test class

    effect: Effect

    @property
    def is_complete(self) -> bool:
        """Whether the evaluator reached a verdict."""
        return isinstance(self.effect, Complete)

    @property
    def is_inconclusive(self) -> bool:
        """Whether the evaluator reached no verdict."""
        return isinstance(self.effect, InconclusiveEffect)

    @property
    def evaluation(self) -> Evaluation:
        """The verdict; ``AssertionError`` naming the reason when there is none."""
        if isinstance(self.effect, Complete):
            return self.effect.evaluation
        raise AssertionError(f"the evaluation was inconclusive: {self.effect.reason}")

    @property
    def inconclusive_reason(self) -> str | None:
        """Why the evaluator reached no verdict, or ``None`` when it did."""
        return self.effect.reason if isinstance(self.effect, InconclusiveEffect) else None


@dataclass(frozen=True)
class EvaluatorTestKit:
    """Runs one online evaluator's ``evaluate`` over a chosen subject.

    Build it with ``EvaluatorTestKit.of(factory)``, then ``with_config`` (the evaluator's
    ``ctx.config``) and ``with_ledger`` (``ctx.ledger``, by default an empty
    ``InMemoryLedger``; seed one with the interactions the evaluator reads).
    """

    __test__ = False  # not a pytest test class

    factory: EvaluatorFactory
    config: Mapping[str, Any] = field(default_factory=dict)
    ledger: Ledger = field(default_factory=InMemoryLedger)

    @classmethod
    def of(cls, factory: EvaluatorFactory) -> EvaluatorTestKit:
        """A test kit for the evaluators ``factory`` makes (a class or a callable)."""
        if not callable(factory):
            raise TypeError(
                f"factory must be an OnlineEvaluator class or callable, got {factory!r}"
            )
        return cls(factory=factory)

    def with_config(self, config: Mapping[str, Any]) -> EvaluatorTestKit:
        """This kit with ``ctx.config`` set to ``config``."""
        return replace(self, config=dict(config))

    def with_ledger(self, ledger: Ledger) -> EvaluatorTestKit:
        """This kit with ``ctx.ledger`` set to ``ledger``."""
        return replace(self, ledger=ledger)

    def evaluate(
        self, subject: Subject, *, trigger_attributes: Mapping[str, str] | None = None
    ) -> TestKitResult:
        """Run ``evaluate`` once (an ``async def`` one in a fresh event loop)."""
        evaluator, ctx = self._prepare(subject, trigger_attributes)
        with evaluation_scope(ctx.evaluation_id):
            effect = evaluator.evaluate(ctx)
            if inspect.isawaitable(effect):
                effect = asyncio.run(_awaited(effect))
        return _result(effect)

    async def aevaluate(
        self, subject: Subject, *, trigger_attributes: Mapping[str, str] | None = None
    ) -> TestKitResult:
        """Run ``evaluate`` once, inside the running event loop."""
        evaluator, ctx = self._prepare(subject, trigger_attributes)
        with evaluation_scope(ctx.evaluation_id):
            effect = evaluator.evaluate(ctx)
            if inspect.isawaitable(effect):
                effect = await effect
        return _result(effect)

    def _prepare(
        self, subject: Subject, trigger_attributes: Mapping[str, str] | None
    ) -> tuple[Any, EvaluationContext]:
        if not isinstance(subject, Subject):
            raise TypeError(f"subject must be a Subject, got {subject!r}")
        evaluator = self.factory()
        attributes = dict(trigger_attributes or {})
        evaluator_id = getattr(evaluator, "id", type(evaluator).__name__)
        ctx = EvaluationContext(
            subject=subject,
            evaluation_id=evaluation_id(evaluator_id, subject.interaction_id, attributes),
            config=EvaluatorConfig(self.config),
            ledger=self.ledger,
            trigger="manual",
            trigger_attributes=attributes,
        )
        return evaluator, ctx


async def _awaited(effect: Any) -> Any:
    return await effect


def _result(effect: Any) -> TestKitResult:
    if not isinstance(effect, (Complete, InconclusiveEffect)):
        raise AssertionError(
            f"evaluate returned {effect!r}; return self.effects().complete(...) or "
            ".inconclusive(reason)"
        )
    return TestKitResult(effect)


@contextmanager
def runtime_testkit(
    config: EvaluationConfig | Mapping[str, Any] | None,
    evaluators: Sequence[EvaluatorFactory],
    *,
    ledger: Literal["memory", "sqlite"] | Ledger = "memory",
    **options: Any,
) -> Iterator[EvaluationRuntime]:
    """A real ``EvaluationRuntime`` for integration tests, closed (drained) on exit.

    Args:
        config: The runtime configuration.
        evaluators: The evaluator classes or factories.
        ledger: ``"memory"`` (an ``InMemoryLedger``), ``"sqlite"`` (a ``SqliteLedger`` in a
            temporary directory removed afterwards) or a ledger of your own.
        options: Constructor options of ``EvaluationRuntime``; polling defaults to 10 ms.
    """
    options.setdefault("poll_interval", 0.01)
    with tempfile.TemporaryDirectory(prefix="langchain-evals-") as directory:
        if ledger == "memory":
            store: Ledger = InMemoryLedger()
        elif ledger == "sqlite":
            from .ledger import SqliteLedger

            store = SqliteLedger(Path(directory) / "evals.db")
        elif isinstance(ledger, str):
            raise ValueError(f"ledger must be 'memory', 'sqlite' or a Ledger, got {ledger!r}")
        else:
            store = ledger
        runtime = EvaluationRuntime(config, evaluators=evaluators, ledger=store, **options)
        try:
            yield runtime
        finally:
            runtime.close()
            if store is not ledger:
                store.close()
