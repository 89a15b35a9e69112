"""Durable evaluators on the LangGraph engine: steps, state, retries, timeouts, restarts,
waiting for a person, and the test kit — with real checkpointers, ledgers and records."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar

import pytest
from _factories import make_interaction, make_unit
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.types import interrupt
from pydantic import BaseModel

from langchain_evals_port.core.errors import EvaluatorUsageError
from langchain_evals_port.runtime import (
    Evaluation,
    EvaluationContext,
    EvaluationRecord,
    EvaluatorConfig,
    Inconclusive,
    InMemoryLedger,
    Ledger,
    Outcome,
    SqliteLedger,
    Subject,
    Verdict,
    WorkUnit,
    current_evaluation_id,
)
from langchain_evals_port.runtime._durable import (
    DurableEngine,
    DurableEvaluator,
    EvaluationTimeoutError,
    Finished,
    Paused,
    Settings,
    StepTimeoutError,
    step,
)
from langchain_evals_port.runtime.durable_testkit import DurableTestKit, InjectedStepFailure
from langchain_evals_port.testing import ScriptedChatModel, ScriptedProviderError

SUBJECT = Subject.interaction("i-1", "support-agent")
FAST = Settings.defaults().with_step_retry_interval(0)


class JudgeVerdict(BaseModel):
    """What a scripted judge answers."""

    passed: bool
    score: float
    reason: str


class Panel(BaseModel):
    """The panel evaluator's state: the verdicts gathered so far."""

    verdicts: list[JudgeVerdict] = []


class Criterion(BaseModel):
    """The input of the tone step."""

    name: str
    instructions: str


def verdict(score: float, reason: str = "fine") -> dict[str, Any]:
    return {"passed": score >= 0.5, "score": score, "reason": reason}


@dataclass
class Judges:
    """The scripted judges a panel evaluator calls, and what it saw."""

    relevance: ScriptedChatModel = field(
        default_factory=lambda: ScriptedChatModel([verdict(0.9, "on topic")])
    )
    tone: ScriptedChatModel = field(
        default_factory=lambda: ScriptedChatModel([verdict(0.7, "polite")])
    )
    settings: Settings = field(default_factory=lambda: FAST.with_max_step_retries(2))
    sessions: list[str] = field(default_factory=list)
    thresholds: list[float] = field(default_factory=list)
    scopes: list[str | None] = field(default_factory=list)
    crash_in_tone: list[BaseException] = field(default_factory=list)


class ProcessStopped(BaseException):
    """Stands for the process being killed in the middle of a step."""


class QualityPanel(DurableEvaluator[Panel]):
    """Three steps: two judges (async and sync), then a combining step."""

    id = "quality-panel"

    def __init__(self, judges: Judges) -> None:
        self.judges = judges

    def settings(self) -> Settings:
        return self.judges.settings

    def on_evaluation(self, ctx: EvaluationContext) -> Any:
        if ctx.interaction().failed:
            return self.effects().inconclusive("interaction failed, nothing to evaluate")
        return (
            self.effects()
            .update_state(Panel())
            .transition_to(self.relevance)
            .with_input("relevance")
        )

    async def relevance(self, criterion: str) -> Any:
        self.judges.scopes.append(current_evaluation_id())
        self.judges.sessions.append(self.session_id("relevance-judge"))
        interaction = await self.evaluation_context().ainteraction()
        judge = self.judges.relevance.with_structured_output(JudgeVerdict)
        found = await judge.ainvoke(f"Judge {criterion}: {interaction.final_response_text}")
        state = self.current_state()
        assert isinstance(state, Panel)
        tone = Criterion(name="tone", instructions="polite and clear")
        return (
            self.effects()
            .update_state(Panel(verdicts=[*state.verdicts, found]))
            .transition_to(self.tone)
            .with_input(tone)
        )

    def tone(self, criterion: Criterion) -> Any:
        self.judges.scopes.append(current_evaluation_id())
        if self.judges.crash_in_tone:
            raise self.judges.crash_in_tone.pop()
        interaction = self.evaluation_context().interaction()
        judge = self.judges.tone.with_structured_output(JudgeVerdict)
        found = judge.invoke(f"Judge {criterion.name} ({criterion.instructions}): {interaction}")
        state = self.current_state()
        assert isinstance(state, Panel)
        return (
            self.effects()
            .update_state(Panel(verdicts=[*state.verdicts, found]))
            .transition_to(self.combine)
        )

    def combine(self) -> Any:
        state = self.current_state()
        assert isinstance(state, Panel)
        threshold = self.evaluation_context().config.get_float("pass_threshold", 0.5)
        self.judges.thresholds.append(threshold)
        mean = sum(v.score for v in state.verdicts) / len(state.verdicts)
        evaluation = Evaluation.of(mean >= threshold, "; ".join(v.reason for v in state.verdicts))
        return self.effects().complete(evaluation.with_score(round(mean, 3)))


def seeded(**overrides: Any) -> InMemoryLedger:
    return InMemoryLedger().seed(make_interaction("i-1", "support-agent", **overrides))


def panel_kit(judges: Judges, ledger: Ledger | None = None) -> DurableTestKit:
    return (
        DurableTestKit.of(lambda: QualityPanel(judges))
        .with_ledger(ledger or seeded())
        .with_config({"control_id": "quality-control"})
    )


def make_engine(
    factory: Callable[[], DurableEvaluator[Any]],
    checkpointer: Any,
    ledger: Ledger,
    config: dict[str, Any] | None = None,
) -> DurableEngine:
    """An engine whose context and record builders mirror the runtime's."""

    def context(unit: WorkUnit) -> EvaluationContext:
        return EvaluationContext(
            subject=unit.subject,
            evaluation_id=unit.evaluation_id,
            config=EvaluatorConfig(config or {}),
            ledger=ledger,
            trigger=unit.trigger,
        )

    def record(unit: WorkUnit, outcome: Outcome) -> EvaluationRecord:
        return EvaluationRecord(
            evaluation_id=unit.evaluation_id,
            evaluator_id=unit.evaluator_id,
            interaction_id=unit.interaction_id,
            agent_id=unit.agent_id,
            outcome=outcome,
        )

    return DurableEngine(
        factory, checkpointer=checkpointer, ledger=ledger, context=context, record=record
    )


def panel_unit(**overrides: Any) -> WorkUnit:
    return make_unit("e-panel", "i-1", "support-agent", "quality-panel", **overrides)


def thread(unit: WorkUnit) -> Any:
    return {"configurable": {"thread_id": unit.evaluation_id}}


@pytest.fixture
async def sqlite_saver(tmp_path: Path) -> AsyncIterator[AsyncSqliteSaver]:
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "steps.db")) as saver:
        yield saver


# --- steps, state and outcomes ------------------------------------------------------------


def test_three_steps_accumulate_judge_verdicts_and_combine() -> None:
    judges = Judges()
    result = panel_kit(judges).run(SUBJECT)

    assert result.is_complete
    assert not result.is_failed
    assert result.evaluation.passed
    assert result.evaluation.score == 0.8
    assert result.evaluation.explanation == "on topic; polite"
    assert result.steps_run == ("on_evaluation", "relevance", "tone", "combine")
    # Each step's input arrived: a plain string, then a pydantic model.
    assert "Judge relevance: Your order A-17 shipped" in judges.relevance.calls[0].messages[0].text
    assert "Judge tone (polite and clear)" in judges.tone.calls[0].messages[0].text
    assert result.record is not None
    assert result.record.control_id == "quality-control"
    assert isinstance(result.record.outcome, Verdict)


async def test_engine_on_sqlite_saver_records_once_and_removes_the_thread(
    tmp_path: Path, sqlite_saver: AsyncSqliteSaver
) -> None:
    ledger = SqliteLedger(tmp_path / "ledger.db")
    ledger.record_interaction(make_interaction("i-1"))
    judges = Judges()
    engine = make_engine(lambda: QualityPanel(judges), sqlite_saver, ledger)
    unit = panel_unit()

    finished = await engine.run(unit)

    assert isinstance(finished, Finished)
    assert isinstance(finished.outcome, Verdict)
    assert finished.outcome.evaluation.score == 0.8
    assert [r.evaluation_id for r in ledger.get_evaluations("i-1")] == ["e-panel"]
    assert await sqlite_saver.aget_tuple(thread(unit)) is None
    # Steps ran inside the evaluation's scope (judge calls count as evaluation traffic).
    assert judges.scopes == ["e-panel", "e-panel"]
    # A recorded evaluation is not run again: no judge is called a second time.
    again = await engine.run(unit)
    assert again == finished
    assert len(judges.relevance.calls) == 1
    assert len(judges.tone.calls) == 1
    ledger.close()


def test_inconclusive_is_recorded_without_running_steps() -> None:
    result = panel_kit(Judges(), seeded(status="failed")).run(SUBJECT)

    assert result.is_inconclusive
    assert not result.is_complete
    assert result.inconclusive_reason == "interaction failed, nothing to evaluate"
    assert result.steps_run == ("on_evaluation",)
    assert result.record is not None
    assert isinstance(result.record.outcome, Inconclusive)
    with pytest.raises(AssertionError, match="inconclusive"):
        _ = result.evaluation


class Untyped(DurableEvaluator):  # type: ignore[type-arg]
    """No declared state type: the state comes back as plain JSON."""

    id = "untyped"
    seen: ClassVar[list[Any]] = []

    def on_evaluation(self, ctx: EvaluationContext) -> Any:
        state = Panel(verdicts=[JudgeVerdict(**verdict(0.2))])
        return self.effects().update_state(state).transition_to(self.read)

    def read(self) -> Any:
        Untyped.seen.append(self.current_state())
        return self.effects().complete(Evaluation.passed("read"))


def test_undeclared_state_type_is_kept_as_plain_json() -> None:
    assert DurableTestKit.of(Untyped).run(SUBJECT).is_complete
    assert Untyped.seen == [{"verdicts": [{"passed": False, "score": 0.2, "reason": "fine"}]}]


# --- retries ----------------------------------------------------------------------------


def test_a_step_failing_twice_succeeds_on_its_third_attempt() -> None:
    judges = Judges(
        relevance=ScriptedChatModel(
            [
                ScriptedProviderError.server_error(),
                ScriptedProviderError.server_error(),
                verdict(0.9, "on topic"),
            ]
        )
    )
    result = panel_kit(judges).run(SUBJECT)

    assert result.is_complete
    assert result.steps_run == (
        "on_evaluation",
        "relevance",
        "relevance",
        "relevance",
        "tone",
        "combine",
    )
    assert len(judges.relevance.calls) == 3


def test_the_judge_session_differs_per_attempt() -> None:
    judges = Judges(
        relevance=ScriptedChatModel([ScriptedProviderError.server_error(), verdict(0.9)])
    )
    result = panel_kit(judges).run(SUBJECT)

    first, second = judges.sessions
    assert first != second
    assert result.record is not None
    assert first.startswith(result.record.evaluation_id)
    assert first.endswith("attempt-1/relevance-judge")
    assert second.endswith("attempt-2/relevance-judge")


def test_injected_failures_are_retried() -> None:
    result = panel_kit(Judges()).run(SUBJECT, fail_step={"tone": 2, "on_evaluation": 1})

    assert result.is_complete
    assert result.steps_run.count("tone") == 3
    assert result.steps_run.count("on_evaluation") == 2


def test_exhausted_retries_fail_with_the_last_error_and_remove_the_instance() -> None:
    judges = Judges()
    result = panel_kit(judges).run(SUBJECT, fail_step={"tone": 3})

    assert result.is_failed
    assert not result.is_complete
    assert isinstance(result.error, InjectedStepFailure)
    assert "failure 3 of step 'tone'" in str(result.error)
    assert result.steps_run == ("on_evaluation", "relevance", "tone", "tone", "tone")
    assert result.record is None
    assert result._session.checkpointer.get_tuple(thread(result._session.unit)) is None
    with pytest.raises(AssertionError, match="failed: InjectedStepFailure"):
        _ = result.evaluation


def test_without_settings_a_failed_step_is_not_retried() -> None:
    judges = Judges(settings=Settings.defaults())
    result = panel_kit(judges).run(SUBJECT, fail_step={"relevance": 1})

    assert isinstance(result.error, InjectedStepFailure)
    assert result.steps_run == ("on_evaluation", "relevance")


# --- timeouts ---------------------------------------------------------------------------


class Slow(DurableEvaluator[int]):
    """One step that is slow on its first ``slow_attempts`` attempts."""

    id = "slow"
    settings_: ClassVar[Settings] = FAST
    slow_attempts: ClassVar[int] = 99
    attempts: ClassVar[list[str]] = []
    transition_timeout: ClassVar[float | None] = None

    def settings(self) -> Settings:
        return type(self).settings_

    def on_evaluation(self, ctx: EvaluationContext) -> Any:
        effect = self.effects().update_state(0).transition_to(self.work)
        timeout = type(self).transition_timeout
        return effect if timeout is None else effect.with_timeout(timeout)

    async def work(self) -> Any:
        type(self).attempts.append(self.session_id("x"))
        if len(type(self).attempts) <= type(self).slow_attempts:
            await asyncio.sleep(5)
        return self.effects().complete(Evaluation.passed("done in time"))


def slow_class(**attributes: Any) -> type[Slow]:
    return type("SlowVariant", (Slow,), {"attempts": [], **attributes})


class SyncSlow(Slow):
    """A plain (sync) step with its own timeout from the ``@step`` decorator."""

    @step(timeout=0.05)
    def work(self) -> Any:  # type: ignore[override]
        type(self).attempts.append("sync")
        if len(type(self).attempts) <= type(self).slow_attempts:
            time.sleep(0.3)
        return self.effects().complete(Evaluation.passed("done in time"))


@pytest.mark.parametrize(
    "evaluator",
    [
        slow_class(settings_=FAST.with_default_step_timeout(0.05).with_max_step_retries(1)),
        # The transition's own timeout wins over a generous default.
        slow_class(
            settings_=FAST.with_default_step_timeout(60).with_max_step_retries(1),
            transition_timeout=0.05,
        ),
        # The @step timeout wins over a generous default; the step is a plain def.
        type(
            "SyncVariant",
            (SyncSlow,),
            {
                "attempts": [],
                "settings_": FAST.with_default_step_timeout(60).with_max_step_retries(1),
            },
        ),
    ],
    ids=["default-step-timeout", "with-timeout", "step-decorator-sync"],
)
def test_a_step_timing_out_is_retried_then_fails(evaluator: type[Slow]) -> None:
    started = time.monotonic()
    result = DurableTestKit.of(evaluator).run(SUBJECT)

    assert isinstance(result.error, StepTimeoutError)
    assert "'work' took longer than its timeout of 0.05s" in str(result.error)
    assert result.steps_run == ("on_evaluation", "work", "work")
    assert time.monotonic() - started < 2


def test_a_step_slow_only_once_succeeds_on_retry() -> None:
    evaluator = slow_class(
        settings_=FAST.with_default_step_timeout(0.05).with_max_step_retries(1), slow_attempts=1
    )
    result = DurableTestKit.of(evaluator).run(SUBJECT)

    assert result.is_complete
    assert [a.split("/")[-2] for a in evaluator.attempts] == ["attempt-1", "attempt-2"]


async def test_the_evaluation_timeout_cuts_a_step_short_and_is_not_retried() -> None:
    evaluator = slow_class(
        settings_=FAST.with_evaluation_timeout(0.2)
        .with_default_step_timeout(60)
        .with_max_step_retries(3)
    )
    saver = InMemorySaver()
    engine = make_engine(evaluator, saver, seeded())
    unit = make_unit("e-slow", evaluator_id="slow")

    with pytest.raises(EvaluationTimeoutError, match=r"timeout of 0\.2s") as raised:
        await engine.run(unit)

    assert raised.value.code == "timeout"
    assert len(evaluator.attempts) == 1
    assert await saver.aget_tuple(thread(unit)) is None


async def test_an_evaluation_past_its_timeout_runs_no_step() -> None:
    judges = Judges(settings=FAST.with_evaluation_timeout(timedelta(minutes=5)))
    engine = make_engine(lambda: QualityPanel(judges), InMemorySaver(), seeded())

    with pytest.raises(EvaluationTimeoutError):
        await engine.run(panel_unit(enqueued_at=time.time() - 301))
    assert judges.relevance.calls == []
    assert judges.scopes == []


# --- restarts ---------------------------------------------------------------------------


def test_completed_steps_are_not_run_again_after_a_restart() -> None:
    judges = Judges()
    result = panel_kit(judges).run(SUBJECT, restart_between=["relevance"])

    assert result.is_complete
    assert result.restarts == 1
    assert result.steps_run == ("on_evaluation", "relevance", "tone", "combine")
    assert len(judges.relevance.calls) == 1
    assert len(judges.tone.calls) == 1


def test_a_restart_after_every_step_still_runs_each_step_once() -> None:
    judges = Judges()
    result = panel_kit(judges).run(SUBJECT, restart_between=True)

    assert result.is_complete
    assert result.restarts == 4
    assert result.steps_run == ("on_evaluation", "relevance", "tone", "combine")
    assert len(judges.relevance.calls) == 1
    assert len(judges.tone.calls) == 1


def test_a_step_after_a_redeploy_reads_the_new_configuration() -> None:
    judges = Judges()
    result = (
        panel_kit(judges)
        .with_config({"pass_threshold": 0.5})
        .run(SUBJECT, restart_between=["tone"], config_after_restart={"pass_threshold": 0.95})
    )

    assert judges.thresholds == [0.95]
    assert result.is_complete
    assert not result.evaluation.passed


async def test_a_process_stopped_mid_step_resumes_from_the_last_completed_step(
    tmp_path: Path,
) -> None:
    ledger = seeded()
    judges = Judges(crash_in_tone=[ProcessStopped()])
    unit = panel_unit()
    path = str(tmp_path / "steps.db")
    async with AsyncSqliteSaver.from_conn_string(path) as saver:
        with pytest.raises(ProcessStopped):
            await make_engine(lambda: QualityPanel(judges), saver, ledger).run(unit)
    # A new process: a new connection to the same file, a new engine.
    async with AsyncSqliteSaver.from_conn_string(path) as saver:
        finished = await make_engine(lambda: QualityPanel(judges), saver, ledger).run(unit)
        assert await saver.aget_tuple(thread(unit)) is None

    assert isinstance(finished, Finished)
    assert isinstance(finished.outcome, Verdict)
    assert len(judges.relevance.calls) == 1  # completed before the stop: not run again
    assert len(judges.tone.calls) == 1  # stopped before its judge call: run once, after


async def test_the_final_record_write_is_idempotent() -> None:
    class LostAcknowledgement(InMemoryLedger):
        """Stores the first record, then fails as if the reply to the write was lost."""

        writes: ClassVar[list[bool]] = []

        def record_evaluation(self, record: EvaluationRecord) -> bool:
            stored = super().record_evaluation(record)
            self.writes.append(stored)
            if len(self.writes) == 1:
                raise ConnectionError("connection reset after the write")
            return stored

    ledger = LostAcknowledgement().seed(make_interaction("i-1"))
    judges = Judges()

    finished = await make_engine(lambda: QualityPanel(judges), InMemorySaver(), ledger).run(
        panel_unit()
    )

    assert isinstance(finished, Finished)
    assert ledger.writes == [True, False]  # the finish node ran twice ...
    assert len(ledger.get_evaluations("i-1")) == 1  # ... and left one record
    assert len(judges.tone.calls) == 1


# --- waiting for a person ---------------------------------------------------------------


class Review(DurableEvaluator[dict[str, str]]):
    """Asks a reviewer (from an async and a sync step), then records the answers."""

    id = "review"
    stops: ClassVar[list[BaseException]] = []

    def settings(self) -> Settings:
        return FAST.with_evaluation_timeout(3600)

    def on_evaluation(self, ctx: EvaluationContext) -> Any:
        return self.effects().transition_to(self.ask)

    async def ask(self) -> Any:
        answer = interrupt({"question": "Is the reply correct?"})
        return self.effects().update_state({"first": answer}).transition_to(self.between)

    def between(self) -> Any:
        if Review.stops:
            raise Review.stops.pop()
        return self.effects().transition_to(self.ask_again)

    def ask_again(self) -> Any:
        answer = interrupt({"question": "Sure?"})
        state = self.current_state() or {}
        passed = state["first"] == "yes" and answer == "yes"
        return self.effects().complete(Evaluation.of(passed, f"{state['first']}, {answer}"))


def test_a_paused_evaluation_continues_when_resumed() -> None:
    result = DurableTestKit.of(Review).run(SUBJECT)

    assert result.is_paused
    assert result.pause_payload == {"question": "Is the reply correct?"}
    with pytest.raises(AssertionError, match="paused"):
        _ = result.evaluation
    second = result.resume("yes")
    assert second.is_paused
    assert second.pause_payload == {"question": "Sure?"}
    done = second.resume("yes")
    assert done.is_complete
    assert done.evaluation.explanation == "yes, yes"
    assert done.steps_run == ("on_evaluation", "ask", "ask", "between", "ask_again", "ask_again")
    with pytest.raises(ValueError, match="paused"):
        done.resume("again")


def test_run_can_answer_the_pauses() -> None:
    result = DurableTestKit.of(Review).run(SUBJECT, resume=["yes", "no"])
    assert result.is_complete
    assert not result.evaluation.passed


async def test_the_engine_pauses_with_a_deadline_and_a_stale_answer_is_not_reused() -> None:
    saver = InMemorySaver()
    ledger = seeded()
    engine = make_engine(Review, saver, ledger)
    unit = make_unit("e-review", evaluator_id="review")

    paused = await engine.run(unit)
    assert isinstance(paused, Paused)
    assert paused.deadline == pytest.approx(unit.enqueued_at + 3600)

    # Resumed, then the process stops in the next step; the unit still carries the answer.
    resumed = unit.model_copy(update={"resumed": True, "resume_value": "yes"})
    Review.stops.append(ProcessStopped())
    with pytest.raises(ProcessStopped):
        await engine.run(resumed)
    again = await make_engine(Review, saver, ledger).run(resumed)
    assert again == Paused({"question": "Sure?"}, paused.deadline)  # not answered by "yes"

    done = await engine.run(unit.model_copy(update={"resumed": True, "resume_value": "yes"}))
    assert isinstance(done, Finished)
    assert isinstance(done.outcome, Verdict)
    assert done.outcome.evaluation.passed
    assert await saver.aget_tuple(thread(unit)) is None


async def test_a_unit_back_still_waiting_has_timed_out(sqlite_saver: AsyncSqliteSaver) -> None:
    engine = make_engine(Review, sqlite_saver, seeded())
    unit = make_unit("e-review", evaluator_id="review")
    assert isinstance(await engine.run(unit), Paused)

    with pytest.raises(EvaluationTimeoutError, match="deadline while waiting") as raised:
        await engine.run(unit.model_copy(update={"waiting": True}))
    assert raised.value.code == "timeout"
    assert await sqlite_saver.aget_tuple(thread(unit)) is None


async def test_a_step_gone_after_a_redeploy_is_a_usage_error() -> None:
    saver = InMemorySaver()
    ledger = seeded()
    unit = make_unit("e-review", evaluator_id="review")
    assert isinstance(await make_engine(Review, saver, ledger).run(unit), Paused)

    redeployed = type("Redeployed", (Review,), {"ask": None})
    with pytest.raises(EvaluatorUsageError, match="'ask' is not a step method of Redeployed"):
        await make_engine(redeployed, saver, ledger).run(unit)
    assert await saver.aget_tuple(thread(unit)) is None


# --- misuse -----------------------------------------------------------------------------


def not_a_method() -> Any:
    return None


class Misuse(DurableEvaluator[None]):
    """Goes wrong in the way ``mistake`` names, in its first step."""

    id = "misuse"
    mistake: ClassVar[str] = ""

    def settings(self) -> Settings:
        return FAST.with_max_step_retries(3)  # usage errors are not retried

    def on_evaluation(self, ctx: EvaluationContext) -> Any:
        return self.effects().transition_to(self.first)

    def first(self) -> Any:
        effects = self.effects()
        done = effects.complete(Evaluation.passed("done"))
        mistakes: dict[str, Callable[[], Any]] = {
            "finished-transition": lambda: done.transition_to(self.second),
            "not-a-method": lambda: effects.transition_to(not_a_method),
            "base-method": lambda: effects.transition_to(self.on_evaluation),
            "none": lambda: None,
            "wrong-type": lambda: Evaluation.passed("not an effect"),
            "missing-input": lambda: effects.transition_to(self.takes_input),
            "unexpected-input": lambda: effects.transition_to(self.second).with_input(1),
            "bad-state": lambda: effects.update_state(object()).complete(  # type: ignore[arg-type]
                Evaluation.passed("x")
            ),
        }
        return mistakes[type(self).mistake]()

    def second(self) -> Any:
        return self.effects().complete(Evaluation.passed("second"))

    def takes_input(self, value: int) -> Any:
        return self.effects().complete(Evaluation.passed(str(value)))


@pytest.mark.parametrize(
    ("mistake", "message"),
    [
        ("finished-transition", "already finished, and a finished evaluation cannot transition"),
        ("not-a-method", r"\(first\): transition_to takes a step method of this evaluator"),
        ("base-method", "'on_evaluation' is not a step method"),
        ("none", r"Misuse\.first returned None"),
        ("wrong-type", r"Misuse\.first returned Evaluation\(.*not an effect"),
        ("missing-input", "step 'takes_input' takes an input"),
        ("unexpected-input", "step 'second' takes no parameter"),
        ("bad-state", r"Misuse\.first: the state .* cannot be stored as JSON"),
    ],
)
def test_misuse_is_a_clear_usage_error_naming_the_step(mistake: str, message: str) -> None:
    evaluator = type("Misuse", (Misuse,), {"mistake": mistake})
    result = DurableTestKit.of(evaluator).run(SUBJECT)

    assert isinstance(result.error, EvaluatorUsageError)
    with pytest.raises(AssertionError):
        _ = result.evaluation
    assert re.search(message, str(result.error)), str(result.error)
    assert result.steps_run == ("on_evaluation", "first")  # not retried


def test_step_accessors_need_a_running_step() -> None:
    with pytest.raises(EvaluatorUsageError, match="only inside on_evaluation or a step"):
        QualityPanel(Judges()).current_state()


# --- settings ---------------------------------------------------------------------------


def test_settings_default_to_no_timeouts_and_no_retries() -> None:
    defaults = Settings.defaults()
    assert (defaults.evaluation_timeout, defaults.default_step_timeout) == (None, None)
    assert defaults.max_step_retries == 0
    configured = (
        defaults.with_evaluation_timeout(timedelta(minutes=5))
        .with_default_step_timeout(timedelta(seconds=30))
        .with_max_step_retries(2)
    )
    assert configured == Settings(300.0, 30.0, 2)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Settings.defaults().with_evaluation_timeout(0), "evaluation_timeout must be"),
        (lambda: Settings.defaults().with_default_step_timeout(-1), "default_step_timeout"),
        (lambda: Settings.defaults().with_default_step_timeout(True), "number of seconds"),
        (lambda: Settings.defaults().with_max_step_retries(-1), "max_step_retries"),
        (lambda: Settings.defaults().with_max_step_retries(1.5), "max_step_retries"),
        (lambda: Settings.defaults().with_step_retry_interval(-1), "step_retry_interval"),
        (lambda: step(timeout=float("inf")), "timeout must be positive and finite"),
    ],
)
def test_bad_settings_are_rejected(build: Callable[[], Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()
