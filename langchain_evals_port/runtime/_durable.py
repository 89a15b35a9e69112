"""Durable evaluators: evaluations in several steps that survive restarts, run on LangGraph.

A ``DurableEvaluator`` starts in ``on_evaluation(ctx)`` and moves through step methods; each
returns an effect — ``self.effects().transition_to(self.next_step)`` (with
``.with_input(value)`` for a step taking one parameter and, first, ``update_state(state)``
to keep a result), ``complete(evaluation)`` or ``inconclusive(reason)``.

``DurableEngine`` runs every evaluation of one durable evaluator as a thread (its id is the
evaluation id) of one compiled LangGraph ``StateGraph``: node ``start`` runs
``on_evaluation``, node ``step`` runs the next named step, node ``finish`` records the
outcome. Each node's checkpoint is committed before the next node starts, so a process that
stops resumes from the last completed step; a step that was running when it stopped runs
again from its beginning. The graph state holds only names and JSON: the next step's name
and input, the evaluator's state, the outcome.

A step waits for a person by calling LangGraph's ``interrupt(payload)``: ``run`` returns
``Paused``, and once the unit is resumed the step runs again from its beginning, where
``interrupt`` now returns the resume value.

Example:
    >>> from langchain_evals_port.runtime import Evaluation
    >>> class Replied(DurableEvaluator[None]):
    ...     id = "replied"
    ...
    ...     def settings(self):
    ...         return Settings.defaults().with_max_step_retries(2)
    ...
    ...     def on_evaluation(self, ctx):
    ...         return self.effects().transition_to(self.judge)
    ...
    ...     @step(timeout=30)
    ...     async def judge(self):
    ...         interaction = await self.evaluation_context().ainteraction()
    ...         passed = bool(interaction.final_response_text)
    ...         return self.effects().complete(Evaluation.of(passed, "replied or not"))
    >>> Replied().settings().max_step_retries
    2
"""

from __future__ import annotations

import asyncio
import inspect
import math
import time
import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, ClassVar, Generic, NoReturn, TypeAlias, TypedDict, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command, RetryPolicy
from pydantic import TypeAdapter
from pydantic_core import to_jsonable_python

from langchain_evals_port.core.errors import EvaluationFailure, EvaluatorUsageError

from ._evaluation import Complete, Evaluation, InconclusiveEffect
from ._evaluator import EvaluationContext
from ._records import EvaluationRecord, Inconclusive, Outcome, Verdict, WorkUnit
from ._scope import evaluation_scope
from .ledger import Ledger

__all__ = [
    "CheckpointKept",
    "DurableEffect",
    "DurableEffects",
    "DurableEngine",
    "DurableEvaluator",
    "EvaluationTimeoutError",
    "Finish",
    "Finished",
    "Paused",
    "Settings",
    "StepTimeoutError",
    "Transition",
    "step",
]

S = TypeVar("S")
T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

_ON_EVALUATION = "on_evaluation"
_FINISH = "(finish)"
"""The label ``DurableEngine._perform`` gets for the finish node (no step can be named so)."""
_TIMEOUT_ATTRIBUTE = "__durable_step_timeout__"
_OUTCOMES: TypeAdapter[Verdict | Inconclusive] = TypeAdapter(Verdict | Inconclusive)


def _seconds(value: object, name: str) -> float:
    """``value`` (a positive number of seconds or a ``timedelta``) in seconds."""
    if isinstance(value, timedelta):
        value = value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number of seconds or a timedelta, got {value!r}")
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{name} must be positive and finite, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Settings:
    """How long a durable evaluation and its steps may take, and how often a step is retried.

    Attributes:
        evaluation_timeout: Seconds from enqueueing after which the evaluation fails
            (``None``: no limit).
        default_step_timeout: Seconds one attempt of a step may take unless the step sets its
            own (``None``: no limit).
        max_step_retries: How often a failed step is run again (0: never).
        step_retry_interval: Seconds before the first retry of a step; each further retry
            waits twice as long as the one before.

    A duration given as a ``timedelta`` (here or to a ``with_*`` method) is kept in seconds.

    Example:
        >>> from datetime import timedelta
        >>> s = Settings.defaults().with_evaluation_timeout(timedelta(minutes=5))
        >>> s.with_default_step_timeout(30).with_max_step_retries(2)
        Settings(evaluation_timeout=300.0, default_step_timeout=30.0, max_step_retries=2, \
step_retry_interval=0.5)
    """

    evaluation_timeout: float | None = None
    default_step_timeout: float | None = None
    max_step_retries: int = 0
    step_retry_interval: float = 0.5

    def __post_init__(self) -> None:
        # Frozen: the checked values (seconds, whatever was given) are set past the freeze.
        for name in ("evaluation_timeout", "default_step_timeout"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, _seconds(getattr(self, name), name))
        retries = self.max_step_retries
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ValueError(f"max_step_retries must be an int of at least 0, got {retries!r}")
        interval: object = self.step_retry_interval
        if isinstance(interval, timedelta):
            interval = interval.total_seconds()
        if isinstance(interval, bool) or not isinstance(interval, (int, float)) or interval < 0:
            raise ValueError(
                f"step_retry_interval must be a number of seconds, at least 0, got {interval!r}"
            )
        object.__setattr__(self, "step_retry_interval", float(interval))

    @classmethod
    def defaults(cls) -> Settings:
        """The runtime defaults: no timeouts, a failed step is not retried."""
        return cls()

    def with_evaluation_timeout(self, timeout: float | timedelta) -> Settings:
        """These settings with the whole evaluation limited to ``timeout``."""
        return replace(self, evaluation_timeout=_seconds(timeout, "evaluation_timeout"))

    def with_default_step_timeout(self, timeout: float | timedelta) -> Settings:
        """These settings with each step attempt limited to ``timeout`` by default."""
        return replace(self, default_step_timeout=_seconds(timeout, "default_step_timeout"))

    def with_max_step_retries(self, retries: int) -> Settings:
        """These settings with a failed step run again up to ``retries`` times."""
        return replace(self, max_step_retries=retries)

    def with_step_retry_interval(self, interval: float | timedelta) -> Settings:
        """These settings with the first step retry after ``interval`` (then doubling)."""
        if isinstance(interval, timedelta):
            interval = interval.total_seconds()
        return replace(self, step_retry_interval=interval)


def step(*, timeout: float | timedelta) -> Callable[[F], F]:
    """Mark a step method with its own timeout (per attempt), instead of the default one.

    ``transition_to(...).with_timeout(...)`` overrides it for one transition.
    """
    seconds = _seconds(timeout, "timeout")

    def mark(method: F) -> F:
        setattr(method, _TIMEOUT_ATTRIBUTE, seconds)
        return method

    return mark


class EvaluationTimeoutError(EvaluationFailure):
    """The durable evaluation passed its evaluation timeout (counted from enqueueing)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="timeout")


class StepTimeoutError(TimeoutError):
    """One attempt of a step took longer than its step timeout."""

    def __init__(self, step_name: str, timeout: float) -> None:
        super().__init__(f"step {step_name!r} took longer than its timeout of {timeout:g}s")
        self.step_name = step_name


@dataclass(frozen=True)
class Transition:
    """The effect that continues with step ``step`` (a method name of the evaluator).

    Attributes:
        step: The name of the next step.
        takes_input: Whether that step has an input parameter.
        has_input / input: The value handed to it (``with_input``).
        timeout: Seconds each attempt of that step may take, this time (``with_timeout``).
        has_state / state: The new evaluator state (``update_state``).
    """

    step: str
    takes_input: bool = False
    has_input: bool = False
    input: Any = None
    timeout: float | None = None
    has_state: bool = False
    state: Any = None

    def with_input(self, value: Any) -> Transition:
        """This transition handing ``value`` (JSON or pydantic-serialisable) to the step."""
        if not self.takes_input:
            raise EvaluatorUsageError(
                f"step {self.step!r} takes no parameter, so it cannot get an input"
            )
        return replace(self, has_input=True, input=value)

    def with_timeout(self, timeout: float | timedelta) -> Transition:
        """This transition with each attempt of the step limited to ``timeout``."""
        return replace(self, timeout=_seconds(timeout, "timeout"))


@dataclass(frozen=True)
class Finish:
    """The effect that records the outcome (a verdict or inconclusive) and ends the
    evaluation; a finished evaluation cannot transition further."""

    outcome: Complete | InconclusiveEffect
    has_state: bool = False
    state: Any = None

    def transition_to(self, step: Callable[..., Any]) -> NoReturn:
        """Always a usage error: a finished evaluation cannot transition."""
        raise EvaluatorUsageError(
            f"cannot transition to {getattr(step, '__name__', step)!r}: the evaluation is "
            "already finished, and a finished evaluation cannot transition further"
        )


DurableEffect: TypeAlias = Transition | Finish | Complete | InconclusiveEffect
"""What ``on_evaluation`` and each step return (``complete(...)`` and ``inconclusive(...)``
of the plain evaluator API count as finishing effects)."""


class DurableEffects(Generic[S]):
    """The effect builder ``DurableEvaluator.effects()`` returns."""

    def __init__(
        self, evaluator: DurableEvaluator[S], *, has_state: bool = False, state: Any = None
    ) -> None:
        self._evaluator = evaluator
        self._has_state = has_state
        self._state = state

    def update_state(self, state: S) -> DurableEffects[S]:
        """A builder whose effect also replaces the evaluator state with ``state``."""
        return DurableEffects(self._evaluator, has_state=True, state=state)

    def transition_to(self, step: Callable[..., Any]) -> Transition:
        """Continue with ``step``, a step method of this evaluator (e.g. ``self.judge``)."""
        name, takes_input = self._evaluator._step_of(step)
        return Transition(name, takes_input, has_state=self._has_state, state=self._state)

    def complete(self, evaluation: Evaluation) -> Finish:
        """Record ``evaluation`` as the verdict and end the evaluation."""
        return Finish(Complete(evaluation), self._has_state, self._state)

    def inconclusive(self, reason: str) -> Finish:
        """Record that no verdict was reached, and why, and end the evaluation."""
        return Finish(InconclusiveEffect(reason), self._has_state, self._state)


@dataclass(frozen=True)
class _StepRun:
    """What one attempt of a step sees through the evaluator's accessors."""

    label: str
    context: EvaluationContext
    state: Any
    visit: int
    attempt: int


class DurableEvaluator(Generic[S]):
    """Base class of evaluators that run in steps, keep a state and survive restarts.

    ``S`` is the state type (a pydantic model, a JSON type, or ``None`` for no state); the
    state is stored as JSON and validated back into ``S``. Subclasses set ``id`` and
    implement ``on_evaluation``; steps are further methods (plain or ``async``) taking no
    parameter or one input and returning an effect. See the module docstring for an
    example.
    """

    id: ClassVar[str]
    """The evaluator's id: its key under ``evaluation.evaluators`` in the configuration."""

    _durable_step: _StepRun | None = None

    def settings(self) -> Settings:
        """Timeouts and step retries; by default ``Settings.defaults()``."""
        return Settings.defaults()

    def on_evaluation(self, ctx: EvaluationContext) -> DurableEffect | Awaitable[DurableEffect]:
        """Start the evaluation: usually ``self.effects().transition_to(self.first_step)``."""
        raise NotImplementedError(f"{type(self).__name__} must implement on_evaluation(ctx)")

    def effects(self) -> DurableEffects[S]:
        """The effect builder: ``transition_to``, ``update_state``, ``complete``,
        ``inconclusive``."""
        return DurableEffects(self)

    def current_state(self) -> S | None:
        """The state the previous steps left (``None`` before the first ``update_state``)."""
        state: S | None = self._current().state
        return state

    def evaluation_context(self) -> EvaluationContext:
        """The context of the running step, built for it (configuration read afresh)."""
        return self._current().context

    def session_id(self, name: str) -> str:
        """A judge session id for ``name``, unique to this evaluation, the running step (and
        its visit number) and the attempt, so a retried step starts without memory."""
        if not isinstance(name, str) or not name:
            raise EvaluatorUsageError(f"session_id takes a non-empty name, got {name!r}")
        run = self._current()
        return f"{run.context.evaluation_id}/{run.visit}-{run.label}/attempt-{run.attempt}/{name}"

    def _current(self) -> _StepRun:
        if self._durable_step is None:
            raise EvaluatorUsageError(
                f"{type(self).__name__}: the step accessors work only inside on_evaluation or "
                "a step the durable engine runs"
            )
        return self._durable_step

    def _step_of(self, step: Callable[..., Any]) -> tuple[str, bool]:
        """The name of step method ``step`` and whether it takes an input."""
        where = self._durable_step.label if self._durable_step is not None else "outside a step"
        name = getattr(step, "__name__", None)
        if not inspect.ismethod(step) or step.__self__ is not self or not isinstance(name, str):
            raise EvaluatorUsageError(
                f"{type(self).__name__} ({where}): transition_to takes a step method of this "
                f"evaluator, such as self.judge; got {step!r}"
            )
        if name in vars(DurableEvaluator) or getattr(type(self), name, None) is not step.__func__:
            raise EvaluatorUsageError(
                f"{type(self).__name__} ({where}): {name!r} is not a step method of this evaluator"
            )
        return name, _takes_input(type(self), name)


def _check_step(cls: type, name: str) -> None:
    """Reject a step name that is not a step method of ``cls`` (say, renamed since the
    checkpoint was written)."""
    if name in vars(DurableEvaluator) or not inspect.isfunction(getattr(cls, name, None)):
        raise EvaluatorUsageError(f"{name!r} is not a step method of {cls.__name__}")


def _takes_input(cls: type, name: str) -> bool:
    """Whether step ``name`` of ``cls`` has an input parameter (checking it has at most one)."""
    parameters = list(inspect.signature(getattr(cls, name)).parameters.values())[1:]
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if len(parameters) > 1 or any(p.kind not in kinds for p in parameters):
        raise EvaluatorUsageError(
            f"{cls.__name__}.{name}: a step takes no parameter or one input parameter"
        )
    return bool(parameters)


def _state_adapter(cls: type) -> TypeAdapter[Any] | None:
    """The adapter of ``cls``'s declared state type ``S``, or ``None`` when undeclared."""
    for klass in cls.__mro__:
        for base in getattr(klass, "__orig_bases__", ()):
            origin = typing.get_origin(base)
            if isinstance(origin, type) and issubclass(origin, DurableEvaluator):
                declared = typing.get_args(base)[0]
                if not isinstance(declared, TypeVar):
                    return TypeAdapter(declared)
    return None


def _input_adapter(cls: type, name: str) -> TypeAdapter[Any] | None:
    """The adapter of step ``name``'s annotated input type, or ``None`` (plain JSON)."""
    method = getattr(cls, name)
    parameter = list(inspect.signature(method).parameters)[1]
    try:
        hints = typing.get_type_hints(method)
    except NameError:  # an annotation naming a class this module cannot see
        return None
    return TypeAdapter(hints[parameter]) if parameter in hints else None


def _to_json(value: Any, adapter: TypeAdapter[Any] | None, what: str) -> Any:
    try:
        if adapter is None:
            return to_jsonable_python(value)
        return adapter.dump_python(adapter.validate_python(value), mode="json")
    except (TypeError, ValueError) as error:
        raise EvaluatorUsageError(f"{what} {value!r} cannot be stored as JSON: {error}") from error


def _from_json(value: Any, adapter: TypeAdapter[Any] | None) -> Any:
    return value if adapter is None or value is None else adapter.validate_python(value)


class CheckpointKept(Exception):
    """The evaluation stopped on a storage or connection error outside its steps; its
    checkpoints were kept, so running it again continues from the last completed step."""


_FROM_STEP = "__durable_step__"


def _infrastructure_hiccup(error: BaseException) -> bool:
    """A transient error that did not come out of the evaluator's own code."""
    from ._execute import is_transient  # the executor imports this module

    if isinstance(error, (EvaluationTimeoutError, EvaluatorUsageError)):
        return False
    return _FROM_STEP not in getattr(error, "__dict__", {}) and is_transient(error)


@dataclass(frozen=True)
class Finished:
    """``DurableEngine.run`` finished the evaluation and recorded ``outcome`` (for an
    evaluation the ledger held already, the outcome recorded then, which may be Failed)."""

    outcome: Outcome


@dataclass(frozen=True)
class Paused:
    """``DurableEngine.run`` stopped at a step waiting for a person (``interrupt(payload)``);
    run the unit again after ``Ledger.resume`` or at ``deadline`` (epoch seconds, ``None``:
    no deadline), when it times out."""

    payload: Any
    deadline: float | None


class _Thread(TypedDict, total=False):
    """The graph state of one evaluation."""

    step: str
    has_input: bool
    input: Any
    timeout: float | None
    visit: int
    state: Any
    outcome: dict[str, Any] | None


@dataclass(frozen=True)
class _Unit:
    """The LangGraph run context: the work unit being run."""

    unit: WorkUnit


class DurableEngine:
    """Runs the evaluations of one durable evaluator on LangGraph threads.

    Args:
        factory: Makes a fresh evaluator (one per step attempt; the state lives in the graph).
        checkpointer: An async-capable LangGraph checkpoint saver; it decides what survives
            a restart.
        ledger: Where the finish node records the outcome (``record_evaluation``,
            first writer wins).
        context: Builds the ``EvaluationContext`` of a unit, at the start and for each step.
        record: Builds the ``EvaluationRecord`` of a unit and its outcome.
    """

    def __init__(
        self,
        factory: Callable[[], DurableEvaluator[Any]],
        *,
        checkpointer: BaseCheckpointSaver[Any],
        ledger: Ledger,
        context: Callable[[WorkUnit], EvaluationContext],
        record: Callable[[WorkUnit, Outcome], EvaluationRecord],
    ) -> None:
        self._factory = factory
        self._checkpointer = checkpointer
        self._ledger = ledger
        self._context = context
        self._record = record
        probe = self._new_evaluator()
        self._state_adapter = _state_adapter(type(probe))
        self._input_adapters: dict[str, TypeAdapter[Any] | None] = {}
        self._settings = probe.settings()
        if not isinstance(self._settings, Settings):
            raise EvaluatorUsageError(f"settings() returned {self._settings!r}, not a Settings")
        policy = RetryPolicy(
            initial_interval=self._settings.step_retry_interval,
            max_attempts=self._settings.max_step_retries + 1,
            jitter=False,
            retry_on=_retryable,
        )
        graph = StateGraph(_Thread, context_schema=_Unit)
        graph.add_node("start", self._start, retry_policy=policy)
        graph.add_node("step", self._step, retry_policy=policy)
        graph.add_node("finish", self._finish, retry_policy=policy)
        graph.add_edge(START, "start")
        graph.add_conditional_edges("start", _route, ["step", "finish"])
        graph.add_conditional_edges("step", _route, ["step", "finish"])
        graph.add_edge("finish", END)
        self._graph = graph.compile(checkpointer=checkpointer)

    @property
    def settings(self) -> Settings:
        """The evaluator's settings, read once when the engine was made."""
        return self._settings

    async def run(self, unit: WorkUnit) -> Finished | Paused:
        """Start, continue or resume the evaluation of ``unit`` until it finishes or pauses.

        Raises:
            EvaluationTimeoutError: The evaluation passed its timeout (also when ``unit``
                comes back still waiting: its deadline passed without a resume).
            Exception: The last error of a step that exhausted its retries, or an
                ``EvaluatorUsageError`` for an evaluator written wrongly.

        After finishing or raising, the evaluation's thread is deleted from the
        checkpointer; an evaluation already recorded is not run again.
        """
        config: Any = {"configurable": {"thread_id": unit.evaluation_id}}
        try:
            recorded = await asyncio.to_thread(self._ledger.get_evaluation, unit.evaluation_id)
            if recorded is not None:
                await self._checkpointer.adelete_thread(unit.evaluation_id)
                return Finished(recorded.outcome)
            if unit.waiting:
                raise EvaluationTimeoutError(
                    f"evaluation {unit.evaluation_id} reached its deadline while waiting to "
                    "be resumed"
                )
            self._check_deadline(unit)
            graph_input: Any
            if await self._checkpointer.aget_tuple(config) is None:
                graph_input = {"visit": 0}
            elif unit.resumed and (await self._graph.aget_state(config)).interrupts:
                # Only a step waiting in ``interrupt`` takes the value: a unit resumed earlier
                # and run again after a crash must not answer a later step's question.
                graph_input = Command(resume=unit.resume_value)
            else:
                graph_input = None
            output = await self._graph.ainvoke(
                graph_input, config, context=_Unit(unit), durability="sync", version="v2"
            )
        except Exception as error:
            if _infrastructure_hiccup(error):
                # Storage or connection trouble outside the steps: keep the checkpoints, so
                # the evaluation continues from its last completed step when run again.
                raise CheckpointKept(str(error)) from error
            await self._checkpointer.adelete_thread(unit.evaluation_id)
            raise
        if output.interrupts:
            return Paused(output.interrupts[0].value, self._deadline(unit))
        await self._checkpointer.adelete_thread(unit.evaluation_id)
        return Finished(_OUTCOMES.validate_python(output.value["outcome"]))

    async def _perform(self, label: str, work: Callable[[], Awaitable[T]]) -> T:
        """Do the work of one node: ``on_evaluation``, a step (by name) or the finish
        (``_FINISH``). The test kit overrides this to watch and disturb steps."""
        return await work()

    async def _perform_marked(self, label: str, work: Callable[[], Awaitable[T]]) -> T:
        """``_perform``, marking what escapes it as the evaluator's own error (final once the
        step's retries are spent), not the storage's."""
        try:
            return await self._perform(label, work)
        except Exception as error:
            error.__dict__[_FROM_STEP] = label
            raise

    # --- nodes -----------------------------------------------------------------------------

    async def _start(self, state: _Thread, *, runtime: Runtime[_Unit]) -> dict[str, Any]:
        return await self._run_step(state, runtime, _ON_EVALUATION)

    async def _step(self, state: _Thread, *, runtime: Runtime[_Unit]) -> dict[str, Any]:
        return await self._run_step(state, runtime, state["step"])

    async def _finish(self, state: _Thread, *, runtime: Runtime[_Unit]) -> dict[str, Any]:
        unit = runtime.context.unit
        outcome = _OUTCOMES.validate_python(state["outcome"])

        async def write() -> None:
            record = self._record(unit, outcome)
            await asyncio.to_thread(self._ledger.record_evaluation, record)

        await self._perform_marked(_FINISH, write)
        return {}

    async def _run_step(
        self, thread: _Thread, runtime: Runtime[_Unit], label: str
    ) -> dict[str, Any]:
        unit = runtime.context.unit
        self._check_deadline(unit)
        evaluator = self._new_evaluator()
        cls = type(evaluator)
        context = self._context(unit)
        info = runtime.execution_info
        evaluator._durable_step = _StepRun(
            label=label,
            context=context,
            state=_from_json(thread.get("state"), self._state_adapter),
            visit=thread.get("visit", 0),
            attempt=info.node_attempt if info is not None else 1,
        )
        if label == _ON_EVALUATION:
            method: Callable[..., Any] = evaluator.on_evaluation
            arguments: tuple[Any, ...] = (context,)
        else:
            _check_step(cls, label)
            method = getattr(evaluator, label)
            arguments = (
                (_from_json(thread.get("input"), self._input_adapter(cls, label)),)
                if thread.get("has_input")
                else ()
            )
        limit = thread.get("timeout") or getattr(
            method, _TIMEOUT_ATTRIBUTE, self._settings.default_step_timeout
        )
        with evaluation_scope(unit.evaluation_id):
            effect = await self._perform_marked(
                label, lambda: self._call(unit, label, method, arguments, limit)
            )
        return self._update(evaluator, label, effect, thread.get("visit", 0))

    # --- helpers ---------------------------------------------------------------------------

    async def _call(
        self,
        unit: WorkUnit,
        label: str,
        method: Callable[..., Any],
        arguments: tuple[Any, ...],
        limit: float | None,
    ) -> Any:
        """Call the step, within its timeout and what is left of the evaluation timeout."""
        deadline = self._deadline(unit)
        remaining = None if deadline is None else deadline - time.time()
        budget = min((t for t in (limit, remaining) if t is not None), default=None)
        if inspect.iscoroutinefunction(method):
            running: Awaitable[Any] = method(*arguments)
        else:
            running = asyncio.to_thread(_plain_step, label, method, arguments)
        # Waiting on a task (not ``wait_for``) keeps a TimeoutError raised inside the step
        # apart from the step running out of time.
        task = asyncio.ensure_future(running)
        try:
            done, _ = await asyncio.wait({task}, timeout=budget)
        finally:
            if not task.done():
                task.cancel()
        if done:
            return task.result()
        if limit is None or (remaining is not None and remaining <= limit):
            raise self._timed_out(unit)
        raise StepTimeoutError(label, limit)

    def _update(
        self, evaluator: DurableEvaluator[Any], label: str, effect: Any, visit: int
    ) -> dict[str, Any]:
        """The graph update that stores ``effect`` of step ``label``."""
        cls = type(evaluator)
        where = f"{cls.__name__}.{label}"
        if isinstance(effect, (Complete, InconclusiveEffect)):
            effect = Finish(effect)
        if effect is None:
            raise EvaluatorUsageError(
                f"{where} returned None; return self.effects().transition_to(...), "
                ".complete(evaluation) or .inconclusive(reason)"
            )
        if not isinstance(effect, (Transition, Finish)):
            raise EvaluatorUsageError(
                f"{where} returned {effect!r}, not an effect; return "
                "self.effects().transition_to(...), .complete(evaluation) or "
                ".inconclusive(reason)"
            )
        update: dict[str, Any] = {}
        if effect.has_state:
            update["state"] = _to_json(effect.state, self._state_adapter, f"{where}: the state")
        if isinstance(effect, Finish):
            outcome = effect.outcome
            finished: Verdict | Inconclusive = (
                Verdict(evaluation=outcome.evaluation)
                if isinstance(outcome, Complete)
                else Inconclusive(reason=outcome.reason)
            )
            update["outcome"] = finished.model_dump(mode="json")
            return update
        _check_step(cls, effect.step)
        if _takes_input(cls, effect.step) and not effect.has_input:
            raise EvaluatorUsageError(
                f"{where}: step {effect.step!r} takes an input; give it with "
                f".transition_to(self.{effect.step}).with_input(value)"
            )
        stored = (
            _to_json(effect.input, self._input_adapter(cls, effect.step), f"{where}: the input")
            if effect.has_input
            else None
        )
        update.update(
            step=effect.step,
            has_input=effect.has_input,
            input=stored,
            timeout=effect.timeout,
            visit=visit + 1,
        )
        return update

    def _input_adapter(self, cls: type, name: str) -> TypeAdapter[Any] | None:
        if name not in self._input_adapters:
            self._input_adapters[name] = _input_adapter(cls, name)
        return self._input_adapters[name]

    def _new_evaluator(self) -> DurableEvaluator[Any]:
        evaluator = self._factory()
        if not isinstance(evaluator, DurableEvaluator):
            raise EvaluatorUsageError(
                f"the factory {self._factory!r} returned {evaluator!r}, not a DurableEvaluator"
            )
        return evaluator

    def _timed_out(self, unit: WorkUnit) -> EvaluationTimeoutError:
        return EvaluationTimeoutError(
            f"evaluation {unit.evaluation_id} took longer than its timeout of "
            f"{self._settings.evaluation_timeout:g}s"
        )

    def _deadline(self, unit: WorkUnit) -> float | None:
        timeout = self._settings.evaluation_timeout
        return None if timeout is None else unit.enqueued_at + timeout

    def _check_deadline(self, unit: WorkUnit) -> None:
        deadline = self._deadline(unit)
        if deadline is not None and time.time() >= deadline:
            raise self._timed_out(unit)


def _route(thread: _Thread) -> str:
    return "finish" if thread.get("outcome") else "step"


def _retryable(error: Exception) -> bool:
    """Whether a failed node is run again: not for usage errors or a passed deadline."""
    return not isinstance(error, (EvaluatorUsageError, EvaluationTimeoutError))


def _plain_step(label: str, method: Callable[..., Any], arguments: tuple[Any, ...]) -> Any:
    result = method(*arguments)
    if inspect.isawaitable(result):
        if inspect.iscoroutine(result):
            result.close()
        raise EvaluatorUsageError(
            f"step {label!r} is a plain def that returned an awaitable; declare it `async def`"
        )
    return result
