"""The evaluators a runtime runs, by configuration id: ``Registration`` and the registry.

``EvaluationRuntime(config, evaluators={...})`` takes, under each id, any evaluator of the
package (reused for every evaluation: evaluators are stateless), a zero-argument factory
returning a fresh one (to inject a judge model or a client per evaluation), a
``DurableEvaluator``, or a ``Registration`` of one of those with options. Everything that
can be checked is checked here, at startup.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from langchain_evals_port.capture._request import RequestBuilder
from langchain_evals_port.core import Evaluator
from langchain_evals_port.core.errors import EvaluatorUsageError

from .durable import DurableEvaluator

if TYPE_CHECKING:
    from ._config import EvaluationConfig

__all__ = ["Registered", "Registration", "RegistrationTarget", "registry"]

RegistrationTarget: TypeAlias = "Evaluator | Callable[[], Evaluator] | DurableEvaluator"
"""What may be registered under an id: an evaluator, a factory of one, a durable evaluator."""


@dataclass(frozen=True)
class Registration:
    """An evaluator registered with options.

    Args:
        evaluator: An evaluator, a zero-argument factory returning one, or a
            ``DurableEvaluator``.
        pass_threshold: The score at or above which a numeric score passes (the
            configuration's ``pass_threshold`` wins where it is set).
        to_request: Builds request fields from the interaction (e.g. only
            ``reference_outputs``); the fields it sets replace the runtime's, the others and
            the runtime's variables stay.

    Example:
        >>> from langchain_evals_port import LevenshteinDistance
        >>> Registration(LevenshteinDistance(), pass_threshold=0.8).pass_threshold
        0.8
    """

    evaluator: Any
    pass_threshold: float | None = None
    to_request: RequestBuilder | None = None

    def __post_init__(self) -> None:
        threshold = self.pass_threshold
        if threshold is not None and (
            isinstance(threshold, bool)
            or not isinstance(threshold, (int, float))
            or not math.isfinite(threshold)
        ):
            raise EvaluatorUsageError(f"pass_threshold must be a number, got {threshold!r}")
        if self.to_request is not None and not callable(self.to_request):
            raise EvaluatorUsageError(f"to_request must be callable, got {self.to_request!r}")


@dataclass(frozen=True)
class Registered:
    """One checked registration: how to get the evaluator for an evaluation, and its options."""

    evaluator_id: str
    make: Callable[[], Evaluator]
    """The shared evaluator, or a fresh one from the factory."""
    probe: Evaluator | None
    """An instance, to read ``outputs_kind`` and ``feedback_key`` (``None`` when durable)."""
    durable: DurableEvaluator | None
    pass_threshold: float | None
    to_request: RequestBuilder | None

    @property
    def feedback_key(self) -> str:
        """The key of a failed result: the evaluator's own, or the id of a durable one."""
        return self.probe.feedback_key if self.probe is not None else self.evaluator_id


def registry(evaluators: Mapping[str, Any], config: EvaluationConfig) -> dict[str, Registered]:
    """Check ``evaluators`` against ``config`` and return them by id.

    Raises:
        EvaluatorUsageError: ``evaluators`` is not a mapping of non-empty ids, an entry is
            not an evaluator, a factory of one or a durable evaluator, a factory fails or
            returns something else, an evaluator that does not judge text or messages has
            no ``to_request``, or one scoring with numbers has no ``pass_threshold`` (on
            the registration, its configuration entry, or every binding).
        ConfigurationError: The configuration names an evaluator id that is not registered.
    """
    if not isinstance(evaluators, Mapping):
        raise EvaluatorUsageError(
            "evaluators must be a mapping of configuration id to evaluator, e.g. "
            f'{{"helpfulness": LLMJudge(...)}}; got {type(evaluators).__name__}'
        )
    checked: dict[str, Registered] = {}
    for evaluator_id, target in evaluators.items():
        if not isinstance(evaluator_id, str) or not evaluator_id:
            raise EvaluatorUsageError(
                f"evaluators: ids must be non-empty strings, got {evaluator_id!r}"
            )
        options = target if isinstance(target, Registration) else Registration(target)
        checked[evaluator_id] = _checked(evaluator_id, options)
    config.check_registered(checked)
    for registered in checked.values():
        _check_threshold(registered, config)
    return checked


def _checked(evaluator_id: str, options: Registration) -> Registered:
    where = f"evaluators[{evaluator_id!r}]"
    target = options.evaluator
    if isinstance(target, DurableEvaluator):
        return Registered(evaluator_id, _no_evaluator, None, target, options.pass_threshold, None)
    if isinstance(target, Evaluator):
        probe = target

        def make() -> Evaluator:
            return target

    elif callable(target):
        _check_factory(target, where)
        probe = _made(target, where)

        def make() -> Evaluator:
            return _made(target, where)

    else:
        raise EvaluatorUsageError(
            f"{where}: expected an evaluator, a zero-argument factory returning one, or a "
            f"DurableEvaluator; got {target!r}"
        )
    if options.to_request is None and probe.outputs_kind == "other":
        raise EvaluatorUsageError(
            f"{where}: {type(probe).__name__} does not judge text or messages; register it "
            "with Registration(..., to_request=...) to build its request from the interaction"
        )
    return Registered(evaluator_id, make, probe, None, options.pass_threshold, options.to_request)


def _check_factory(factory: Callable[..., Any], where: str) -> None:
    """Refuse a callable that cannot be called without arguments (checked once, at startup)."""
    try:
        inspect.signature(factory).bind()
    except TypeError as error:
        raise EvaluatorUsageError(
            f"{where}: {factory!r} is neither an evaluator nor a zero-argument factory of one "
            f"({error})"
        ) from error
    except ValueError:  # no signature to read (a builtin): calling it will tell
        pass


def _made(factory: Callable[[], Any], where: str) -> Evaluator:
    """A fresh evaluator from ``factory``, or an error naming the registration."""
    try:
        made = factory()
    except Exception as error:
        # Not only a TypeError: whatever building the evaluator raised, named by its id.
        raise EvaluatorUsageError(
            f"{where}: the factory {factory!r} raised {type(error).__name__}: {error}"
        ) from error
    if not isinstance(made, Evaluator):
        raise EvaluatorUsageError(
            f"{where}: the factory {factory!r} returned {made!r}, not an Evaluator"
        )
    return made


def _no_evaluator() -> Evaluator:
    raise EvaluatorUsageError("a durable evaluator runs as a graph, not as an Evaluator")


def _check_threshold(registered: Registered, config: EvaluationConfig) -> None:
    probe = registered.probe
    if probe is None or not probe.numeric_scores or registered.pass_threshold is not None:
        return
    unset = config.missing_pass_threshold(registered.evaluator_id)
    if unset is not None:
        raise EvaluatorUsageError(
            f"evaluators[{registered.evaluator_id!r}]: {type(probe).__name__} scores with "
            f"numbers, so a pass_threshold is needed to turn a score into a verdict; none is "
            f"set at {unset} (set pass_threshold there, on the evaluator entry, or register "
            "it with Registration(..., pass_threshold=...))"
        )
