"""Unit testing durable evaluators: one evaluation in-process, with failures and restarts.

``DurableTestKit`` runs a ``DurableEvaluator`` over a chosen ``Subject`` on the real
``DurableEngine`` with LangGraph's in-memory checkpointer. ``run`` can make steps fail
(``fail_step``) to exercise retries, simulate a process restart after chosen steps
(``restart_between``; a fresh engine and fresh evaluator instances continue from the last
checkpoint, optionally with a new configuration) and answer a step waiting for a person
(``resume``). The result tells the outcome and which steps ran, in order.

Example:
    >>> from langchain_evals_port.runtime import Evaluation, InMemoryLedger, Subject
    >>> from langchain_evals_port.runtime import InteractionRecord
    >>> from langchain_evals_port.runtime._durable import DurableEvaluator, Settings
    >>> class Replied(DurableEvaluator[None]):
    ...     id = "replied"
    ...
    ...     def settings(self):
    ...         return Settings.defaults().with_max_step_retries(1).with_step_retry_interval(0)
    ...
    ...     def on_evaluation(self, ctx):
    ...         return self.effects().transition_to(self.judge)
    ...
    ...     def judge(self):
    ...         text = self.evaluation_context().interaction().final_response_text
    ...         return self.effects().complete(Evaluation.of(bool(text), "replied"))
    >>> ledger = InMemoryLedger().seed(
    ...     InteractionRecord(interaction_id="i-1", agent_id="support", output_text="Hi!")
    ... )
    >>> result = (
    ...     DurableTestKit.of(Replied)
    ...     .with_ledger(ledger)
    ...     .run(Subject.interaction("i-1", "support"), fail_step={"judge": 1})
    ... )
    >>> result.is_complete, result.evaluation.passed, result.steps_run
    (True, True, ('on_evaluation', 'judge', 'judge'))
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from langgraph.checkpoint.memory import InMemorySaver

from ._config import EvaluatorConfig
from ._durable import _FINISH, DurableEngine, DurableEvaluator, Finished, Paused
from ._evaluation import Evaluation
from ._evaluator import EvaluationContext
from ._ids import evaluation_id
from ._records import EvaluationRecord, Inconclusive, Outcome, Subject, Verdict, WorkUnit
from .ledger import InMemoryLedger, Ledger

__all__ = ["DurableTestKit", "DurableTestResult", "InjectedStepFailure"]

T = TypeVar("T")


class InjectedStepFailure(Exception):
    """The failure ``fail_step`` makes a step raise (before the step's own code runs)."""

    def __init__(self, step_name: str, number: int) -> None:
        super().__init__(f"injected failure {number} of step {step_name!r}")
        self.step_name = step_name


class _SimulatedRestart(BaseException):
    """Stops the engine the way a stopped process would: nothing is cleaned up."""


@dataclass
class _Probe:
    """What the kit's engines report to, across restarts."""

    failures: dict[str, int]
    restart_after: Callable[[str], bool]
    steps_run: list[str] = field(default_factory=list)
    injected: dict[str, int] = field(default_factory=dict)
    restart_pending: bool = False


class _KitEngine(DurableEngine):
    """A ``DurableEngine`` that counts steps, injects failures and stops for restarts."""

    def __init__(self, probe: _Probe, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._probe = probe

    async def _perform(self, label: str, work: Callable[[], Awaitable[T]]) -> T:
        probe = self._probe
        if probe.restart_pending:  # the previous step's checkpoint is committed by now
            probe.restart_pending = False
            raise _SimulatedRestart
        if label != _FINISH:
            probe.steps_run.append(label)
            if probe.failures.get(label, 0) > probe.injected.get(label, 0):
                probe.injected[label] = probe.injected.get(label, 0) + 1
                raise InjectedStepFailure(label, probe.injected[label])
        result = await work()
        if label != _FINISH and probe.restart_after(label):
            probe.restart_pending = True
        return result


@dataclass
class _Session:
    """One evaluation the kit runs: its unit, checkpointer and configuration, kept for
    ``resume``."""

    kit: DurableTestKit
    unit: WorkUnit
    probe: _Probe
    config: Mapping[str, Any]
    config_after_restart: Mapping[str, Any] | None
    checkpointer: InMemorySaver = field(default_factory=InMemorySaver)
    records: InMemoryLedger = field(default_factory=InMemoryLedger)
    restarts: int = 0

    def context(self, unit: WorkUnit) -> EvaluationContext:
        return EvaluationContext(
            subject=unit.subject,
            evaluation_id=unit.evaluation_id,
            config=EvaluatorConfig(self.config),
            ledger=self.kit.ledger,
            trigger=unit.trigger,
            trigger_attributes=dict(unit.trigger_attributes),
        )

    def record(self, unit: WorkUnit, outcome: Outcome) -> EvaluationRecord:
        control_id = self.config.get("control_id")
        return EvaluationRecord(
            evaluation_id=unit.evaluation_id,
            evaluator_id=unit.evaluator_id,
            control_id=control_id if isinstance(control_id, str) else None,
            trigger=unit.trigger,
            trigger_attributes=unit.trigger_attributes,
            interaction_id=unit.interaction_id,
            agent_id=unit.agent_id,
            outcome=outcome,
            duration=max(0.0, time.time() - unit.enqueued_at),
        )

    async def drive(self, answers: Sequence[Any], *, resuming: bool = False) -> DurableTestResult:
        """Run (and restart, and resume with ``answers``) until finished, failed or paused;
        ``resuming``: the evaluation waits already, and the first answer is for it."""
        pending = list(answers)
        unit = self._resumed(pending.pop(0)) if resuming else self.unit
        while True:
            engine = _KitEngine(
                self.probe,
                self.kit.factory,
                checkpointer=self.checkpointer,
                ledger=self.records,
                context=self.context,
                record=self.record,
            )
            try:
                result = await engine.run(unit)
            except _SimulatedRestart:
                self.restarts += 1
                if self.config_after_restart is not None:
                    self.config = self.config_after_restart
                unit = self.unit  # a restarted process holds no resume value
                continue
            except Exception as error:
                return self._result(error=error)
            if isinstance(result, Paused) and pending:
                unit = self._resumed(pending.pop(0))
                continue
            return self._result(result=result)

    def _resumed(self, value: Any) -> WorkUnit:
        return self.unit.model_copy(update={"resumed": True, "resume_value": value})

    def _result(
        self, *, result: Finished | Paused | None = None, error: Exception | None = None
    ) -> DurableTestResult:
        return DurableTestResult(
            outcome=result.outcome if isinstance(result, Finished) else None,
            error=error,
            is_paused=isinstance(result, Paused),
            pause_payload=result.payload if isinstance(result, Paused) else None,
            steps_run=tuple(self.probe.steps_run),
            restarts=self.restarts,
            record=self.records.get_evaluation(self.unit.evaluation_id),
            _session=self,
        )


@dataclass(frozen=True)
class DurableTestResult:
    """What one durable evaluation did in the test kit.

    Attributes:
        outcome: The recorded outcome when it finished (a verdict or inconclusive).
        error: The exception that failed it (exhausted retries, a timeout, a usage error).
        is_paused: Whether it waits for a person (``resume`` continues it).
        pause_payload: What the waiting step passed to ``interrupt``.
        steps_run: The steps run, in order, every attempt counted (``on_evaluation`` first).
        restarts: How many simulated restarts happened.
        record: The evaluation record the engine wrote, if any.
    """

    __test__ = False  # not a pytest test class

    outcome: Outcome | None
    error: Exception | None
    is_paused: bool
    pause_payload: Any
    steps_run: tuple[str, ...]
    restarts: int
    record: EvaluationRecord | None
    _session: _Session = field(repr=False, compare=False)

    @property
    def is_complete(self) -> bool:
        """Whether the evaluation reached a verdict."""
        return isinstance(self.outcome, Verdict)

    @property
    def is_inconclusive(self) -> bool:
        """Whether the evaluation finished without a verdict."""
        return isinstance(self.outcome, Inconclusive)

    @property
    def is_failed(self) -> bool:
        """Whether the evaluation failed with an error (see ``error``)."""
        return self.error is not None

    @property
    def evaluation(self) -> Evaluation:
        """The verdict; ``AssertionError`` saying what happened instead when there is none."""
        if isinstance(self.outcome, Verdict):
            return self.outcome.evaluation
        if isinstance(self.outcome, Inconclusive):
            raise AssertionError(f"the evaluation was inconclusive: {self.outcome.reason}")
        if self.error is not None:
            raise AssertionError(
                f"the evaluation failed: {type(self.error).__name__}: {self.error}"
            ) from self.error
        raise AssertionError(f"the evaluation is paused, waiting on {self.pause_payload!r}")

    @property
    def inconclusive_reason(self) -> str | None:
        """Why no verdict was reached, or ``None`` when the outcome is not inconclusive."""
        return self.outcome.reason if isinstance(self.outcome, Inconclusive) else None

    def resume(self, value: Any) -> DurableTestResult:
        """Continue the paused evaluation, handing ``value`` to the waiting step."""
        return asyncio.run(self.aresume(value))

    async def aresume(self, value: Any) -> DurableTestResult:
        """``resume`` inside the running event loop."""
        if not self.is_paused:
            raise ValueError("only a paused evaluation can be resumed")
        return await self._session.drive([value], resuming=True)


@dataclass(frozen=True)
class DurableTestKit:
    """Runs one durable evaluator over a chosen subject, in-process.

    Build it with ``DurableTestKit.of(factory)``, then ``with_config`` (what
    ``evaluation_context().config`` holds) and ``with_ledger`` (``ctx.ledger``, by default an
    empty ``InMemoryLedger``; seed it with the interactions the evaluator reads). Outcome
    records go to a ledger of each run's own (``result.record``).
    """

    __test__ = False  # not a pytest test class

    factory: Callable[[], DurableEvaluator[Any]]
    config: Mapping[str, Any] = field(default_factory=dict)
    ledger: Ledger = field(default_factory=InMemoryLedger)

    @classmethod
    def of(cls, factory: Callable[[], DurableEvaluator[Any]]) -> DurableTestKit:
        """A test kit for the evaluators ``factory`` makes (a class or a callable)."""
        if not callable(factory):
            raise TypeError(
                f"factory must be a DurableEvaluator class or callable, got {factory!r}"
            )
        return cls(factory=factory)

    def with_config(self, config: Mapping[str, Any]) -> DurableTestKit:
        """This kit with the evaluator's configuration set to ``config``."""
        return replace(self, config=dict(config))

    def with_ledger(self, ledger: Ledger) -> DurableTestKit:
        """This kit with ``ctx.ledger`` set to ``ledger``."""
        return replace(self, ledger=ledger)

    def run(
        self,
        subject: Subject,
        *,
        fail_step: Mapping[str, int] | None = None,
        restart_between: Collection[str] | bool | None = None,
        config_after_restart: Mapping[str, Any] | None = None,
        resume: Sequence[Any] | None = None,
        trigger_attributes: Mapping[str, str] | None = None,
    ) -> DurableTestResult:
        """Run one evaluation (in a fresh event loop) until it finishes, fails or pauses.

        Args:
            subject: The interaction to evaluate.
            fail_step: Step name → how many times that step fails (``InjectedStepFailure``)
                before its code runs; ``"on_evaluation"`` names the start.
            restart_between: Simulate a process restart after these steps complete (``True``:
                after every step): a fresh engine with fresh evaluator instances continues
                from the checkpoint.
            config_after_restart: The configuration from the first restart on (a redeploy).
            resume: Values to hand, in order, to the steps that wait for a person.
            trigger_attributes: The attributes identifying this evaluation.
        """
        return asyncio.run(
            self.arun(
                subject,
                fail_step=fail_step,
                restart_between=restart_between,
                config_after_restart=config_after_restart,
                resume=resume,
                trigger_attributes=trigger_attributes,
            )
        )

    async def arun(
        self,
        subject: Subject,
        *,
        fail_step: Mapping[str, int] | None = None,
        restart_between: Collection[str] | bool | None = None,
        config_after_restart: Mapping[str, Any] | None = None,
        resume: Sequence[Any] | None = None,
        trigger_attributes: Mapping[str, str] | None = None,
    ) -> DurableTestResult:
        """``run`` inside the running event loop."""
        if not isinstance(subject, Subject):
            raise TypeError(f"subject must be a Subject, got {subject!r}")
        failures = dict(fail_step or {})
        for name, count in failures.items():
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                raise ValueError(f"fail_step[{name!r}] must be an int of at least 0, got {count!r}")
        if config_after_restart is not None and not restart_between:
            raise ValueError("config_after_restart needs restart_between")
        if isinstance(resume, (str, bytes)):
            raise TypeError("resume takes a sequence of values, one per pause, e.g. ['yes']")
        restart_after = _restart_rule(restart_between)
        attributes = dict(trigger_attributes or {})
        evaluator_id = getattr(self.factory(), "id", None)
        if not isinstance(evaluator_id, str) or not evaluator_id:
            raise TypeError("the evaluator needs a class attribute id (a non-empty str)")
        unit = WorkUnit(
            evaluation_id=evaluation_id(evaluator_id, subject.interaction_id, attributes),
            evaluator_id=evaluator_id,
            interaction_id=subject.interaction_id,
            agent_id=subject.agent_id,
            flow_id=subject.flow_id,
            trigger="manual",
            trigger_attributes=attributes,
            enqueued_at=time.time(),
        )
        session = _Session(
            kit=self,
            unit=unit,
            probe=_Probe(failures=failures, restart_after=restart_after),
            config=self.config,
            config_after_restart=config_after_restart,
        )
        return await session.drive(list(resume or ()))


def _restart_rule(restart_between: Collection[str] | bool | None) -> Callable[[str], bool]:
    if restart_between is None or restart_between is False:
        return lambda label: False
    if restart_between is True:
        return lambda label: True
    if isinstance(restart_between, str) or not all(isinstance(n, str) for n in restart_between):
        raise TypeError(
            f"restart_between takes step names (e.g. ['judge']) or True, got {restart_between!r}"
        )
    names = frozenset(restart_between)
    return lambda label: label in names
