"""``OnlineEvaluator``: the evaluator a team writes once and binds to agents in configuration.

A subclass names itself with a class attribute ``id`` (its key under
``evaluation.evaluators`` in the configuration) and implements ``evaluate(ctx)``, plain or
``async``, returning ``self.effects().complete(Evaluation...)`` or
``self.effects().inconclusive(reason)``. An exception escaping ``evaluate`` is not a verdict:
the runtime logs it and records a **Failed** outcome with the error's type and message.

``OnlineEvaluator.from_evaluator`` binds any offline ``Evaluator`` (an ``LLMJudge``, a
``TrajectoryMatch``, ...) the same way.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

from langchain_evals_port.core import EvalRequest, Evaluator, EvaluatorResult
from langchain_evals_port.core.errors import EvaluationFailure, EvaluatorUsageError

from ._evaluation import Effect, Effects, Evaluation
from ._records import InteractionRecord, Subject, Trigger

if TYPE_CHECKING:
    from ._config import EvaluatorConfig
    from .ledger import Ledger

__all__ = [
    "EvaluationContext",
    "EvaluatorFactory",
    "OnlineEvaluator",
    "evaluator_class",
]


@dataclass(frozen=True)
class EvaluationContext:
    """What an evaluator gets for one evaluation.

    Attributes:
        subject: The interaction, its agent and the flow it ran in (ids only).
        evaluation_id: The deterministic id this evaluation is recorded under.
        config: The binding's configuration over the evaluator entry (``ctx.config``).
        ledger: The ledger, to fetch the interaction (``ctx.interaction()`` does).
        trigger: ``"on_interaction"`` or ``"manual"``.
        trigger_attributes: The attributes that identify this evaluation, if any.
    """

    subject: Subject
    evaluation_id: str
    config: EvaluatorConfig
    ledger: Ledger
    trigger: Trigger = "on_interaction"
    trigger_attributes: Mapping[str, str] = field(default_factory=dict)
    preloaded: InteractionRecord | None = field(default=None, repr=False, compare=False)
    """The interaction, when the runtime already holds it (it recorded it lately)."""

    def interaction(self) -> InteractionRecord:
        """The interaction under evaluation (from the ledger, unless already at hand)."""
        if self.preloaded is not None:
            return self.preloaded
        return self.ledger.get_interaction(self.subject.interaction_id)

    async def ainteraction(self) -> InteractionRecord:
        """``interaction()`` for ``async def evaluate``: a ledger read runs in a thread, so
        it does not hold up the other evaluations on the event loop."""
        if self.preloaded is not None:
            return self.preloaded
        return await asyncio.to_thread(self.ledger.get_interaction, self.subject.interaction_id)


class OnlineEvaluator:
    """Base class of evaluators the runtime triggers after agents' interactions.

    Example:
        >>> from langchain_evals_port.runtime import Evaluation, OnlineEvaluator
        >>> class ReplyGiven(OnlineEvaluator):
        ...     id = "reply-given"
        ...
        ...     def evaluate(self, ctx):
        ...         text = ctx.interaction().final_response_text
        ...         if not text:
        ...             return self.effects().complete(Evaluation.failed("no reply"))
        ...         return self.effects().complete(Evaluation.passed("replied"))
    """

    id: ClassVar[str]
    """The evaluator's id: its key under ``evaluation.evaluators`` in the configuration."""

    def evaluate(self, ctx: EvaluationContext) -> Effect | Awaitable[Effect]:
        """Judge the interaction ``ctx.subject`` names; return an ``Effect``."""
        raise NotImplementedError(f"{type(self).__name__} must implement evaluate(ctx)")

    def effects(self) -> Effects:
        """The effect builder: ``complete(evaluation)`` or ``inconclusive(reason)``."""
        return Effects()

    @classmethod
    def from_evaluator(
        cls,
        id: str,
        evaluator: Evaluator,
        *,
        pass_threshold: float | None = None,
        to_request: Callable[[InteractionRecord], EvalRequest | Mapping[str, Any]] | None = None,
    ) -> type[OnlineEvaluator]:
        """An online evaluator (a class, usable in ``evaluators=[...]``) running ``evaluator``.

        By default the interaction's input text becomes ``inputs`` and, per the evaluator's
        ``outputs_kind``, its final response text, its transcript (LangChain messages) or its
        final response parsed as JSON becomes ``outputs``; ``to_request`` replaces that
        (return an ``EvalRequest`` or a mapping of its fields, e.g. with
        ``reference_outputs``). A boolean score is the verdict; a numeric score passes when it
        is at least ``pass_threshold``; a result with several keys passes when every key
        passes, and each key's score becomes an attribute. The judge's comment (its
        reasoning) is the explanation; an unscored result is inconclusive.

        Raises:
            EvaluatorUsageError: ``id`` is empty, ``evaluator`` is not an ``Evaluator``, its
                scores are numeric and ``pass_threshold`` is missing, or its outputs cannot
                be taken from an interaction and ``to_request`` is missing.
        """
        if not isinstance(id, str) or not id:
            raise EvaluatorUsageError(f"id must be a non-empty str, got {id!r}")
        if not isinstance(evaluator, Evaluator):
            raise EvaluatorUsageError(f"evaluator must be an Evaluator, got {evaluator!r}")
        if evaluator.numeric_scores and pass_threshold is None:
            raise EvaluatorUsageError(
                f"{id}: {type(evaluator).__name__} scores with numbers; "
                "pass_threshold is required to turn a score into a verdict"
            )
        if to_request is None and evaluator.outputs_kind == "other":
            raise EvaluatorUsageError(
                f"{id}: {type(evaluator).__name__} does not judge text or messages; "
                "give to_request to build its request from the interaction"
            )
        attributes = {
            "id": id,
            "_offline": evaluator,
            "_pass_threshold": pass_threshold,
            "_to_request": staticmethod(to_request) if to_request else None,
            "__doc__": f"Runs {type(evaluator).__name__} on each interaction.",
        }
        return type(f"Online{type(evaluator).__name__}", (_OfflineEvaluatorAdapter,), attributes)


class _OfflineEvaluatorAdapter(OnlineEvaluator):
    """Runs an offline ``Evaluator`` on an interaction and turns its results into an Effect."""

    _offline: ClassVar[Evaluator]
    _pass_threshold: ClassVar[float | None]
    _to_request: ClassVar[Callable[[InteractionRecord], EvalRequest | Mapping[str, Any]] | None]

    async def evaluate(self, ctx: EvaluationContext) -> Effect:
        interaction = await ctx.ainteraction()
        build = type(self)._to_request or self._default_request
        request = EvalRequest.coerce(build(interaction))
        output = await self._offline.ainvoke(request)
        return self._effect(output if isinstance(output, list) else [output])

    def _default_request(self, interaction: InteractionRecord) -> EvalRequest:
        kind = self._offline.outputs_kind
        outputs: Any
        if kind == "messages":
            outputs = interaction.transcript_messages
        elif kind == "json":
            outputs = _json_or_text(interaction.final_response_text)
        else:
            outputs = interaction.final_response_text
        return EvalRequest.of(inputs=interaction.input_text, outputs=outputs)

    def _effect(self, results: list[EvaluatorResult]) -> Effect:
        effects = self.effects()
        for result in results:
            if result.outcome == "failed":
                raise EvaluationFailure(
                    f"{result.key}: {result.reason}", code=result.error_code or "evaluator_error"
                )
        unscored = [r for r in results if r.outcome == "inconclusive"]
        if unscored:
            return effects.inconclusive("; ".join(f"{r.key}: {r.reason}" for r in unscored))
        verdicts = [(result, self._passed(result)) for result in results]
        if len(verdicts) == 1:
            result, passed = verdicts[0]
            evaluation = Evaluation.of(passed, result.comment or _score_text(result))
            if _is_number(result.score):
                evaluation = evaluation.with_score(float(result.score))  # type: ignore[arg-type]
            return effects.complete(evaluation)
        explanation = "; ".join(
            f"{result.key}: {'passed' if passed else 'failed'}"
            + (f" ({result.comment})" if result.comment else "")
            for result, passed in verdicts
        )
        evaluation = Evaluation.of(all(passed for _, passed in verdicts), explanation)
        for result, _ in verdicts:
            evaluation = evaluation.with_attribute(result.key, _score_text(result, bare=True))
        return effects.complete(evaluation)

    def _passed(self, result: EvaluatorResult) -> bool:
        if isinstance(result.score, bool):
            return result.score
        threshold = type(self)._pass_threshold
        if threshold is None:
            raise EvaluatorUsageError(
                f"{type(self).id}: {result.key} scored {result.score!r}, a number; "
                "bind it with pass_threshold to turn the score into a verdict"
            )
        return float(result.score) >= threshold  # type: ignore[arg-type]


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _score_text(result: EvaluatorResult, *, bare: bool = False) -> str:
    return str(result.score) if bare else f"{result.key} scored {result.score}"


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


EvaluatorFactory: TypeAlias = Callable[[], Any]
"""An ``OnlineEvaluator`` or ``DurableEvaluator`` subclass, or a zero-argument callable
returning a fresh instance of one."""


def evaluator_class(factory: EvaluatorFactory) -> type[Any]:
    """The class of the evaluators ``factory`` makes, checked to have an ``id``.

    A class is its own; any other factory is called once to learn it.

    Raises:
        EvaluatorUsageError: The factory is not callable, makes something that is neither an
            ``OnlineEvaluator`` nor a ``DurableEvaluator``, or the evaluator has no ``id``.
    """
    from ._durable import DurableEvaluator

    kinds = (OnlineEvaluator, DurableEvaluator)
    if inspect.isclass(factory):
        if not issubclass(factory, kinds):
            raise EvaluatorUsageError(
                f"evaluators: {factory.__name__} is not an OnlineEvaluator or "
                "DurableEvaluator subclass"
            )
        cls: type[Any] = factory
    elif callable(factory):
        instance = factory()
        if not isinstance(instance, kinds):
            raise EvaluatorUsageError(
                f"evaluators: the factory {factory!r} returned {instance!r}, "
                "not an OnlineEvaluator or DurableEvaluator"
            )
        cls = type(instance)
    else:
        raise EvaluatorUsageError(
            f"evaluators: expected an evaluator class or a factory, got {factory!r}"
        )
    evaluator_id = getattr(cls, "id", None)
    if not isinstance(evaluator_id, str) or not evaluator_id:
        raise EvaluatorUsageError(
            f"evaluators: {cls.__name__} needs a class attribute id (a non-empty str)"
        )
    return cls
