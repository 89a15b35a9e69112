"""Durable evaluators as LangGraph graphs: nodes, state, outcomes, retries, timeouts, restarts,
waiting for a person, and the durable test kit — on real graphs, checkpointers and ledgers."""

from __future__ import annotations

import asyncio
import operator
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from _factories import make_evaluation, make_interaction, make_unit
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import RetryPolicy, interrupt
from pydantic import BaseModel

from langchain_evals_port import EvaluatorResult, Score
from langchain_evals_port.core.errors import EvaluationTimeoutError, EvaluatorUsageError
from langchain_evals_port.runtime import (
    EvaluationContext,
    EvaluationRecord,
    EvaluatorConfig,
    InMemoryLedger,
    Ledger,
    SqliteLedger,
    WorkUnit,
    current_evaluation_id,
)
from langchain_evals_port.runtime.durable import DurableEvaluator
from langchain_evals_port.runtime.durable._engine import CheckpointKept, DurableEngine, Paused
from langchain_evals_port.runtime.durable.testkit import DurableTestKit
from langchain_evals_port.testing import ScriptedChatModel, ScriptedProviderError

INTERACTION = make_interaction("i-1", "support-agent")
FAST = RetryPolicy(initial_interval=0, jitter=False)  # three attempts, no waiting between


class JudgeVerdict(BaseModel):
    """What a scripted judge answers."""

    passed: bool
    score: float
    reason: str


class Panel(TypedDict, total=False):
    """The panel's state: the verdicts gathered so far, then the score."""

    verdicts: Annotated[list[JudgeVerdict], operator.add]
    score: Score


def verdict(score: float, reason: str = "fine") -> dict[str, Any]:
    return {"passed": score >= 0.5, "score": score, "reason": reason}


class ProcessStopped(BaseException):
    """Stands for the process being killed in the middle of a node."""


@dataclass
class Judges:
    """The scripted judges a panel calls, and what its nodes saw."""

    relevance: ScriptedChatModel = field(
        default_factory=lambda: ScriptedChatModel([verdict(0.9, "on topic")])
    )
    tone: ScriptedChatModel = field(
        default_factory=lambda: ScriptedChatModel([verdict(0.7, "polite")])
    )
    sessions: list[str] = field(default_factory=list)
    scopes: list[str | None] = field(default_factory=list)
    crash_in_tone: list[BaseException] = field(default_factory=list)


def quality_panel(judges: Judges, retry: RetryPolicy | None = FAST) -> DurableEvaluator:
    """Two judges (an async node, then a sync one) and a combining node; a failed interaction
    goes straight to an inconclusive outcome."""

    def screen(state: Panel, runtime: Runtime[EvaluationContext]) -> str:
        return "skip" if runtime.context.interaction().failed else "relevance"

    def skip(state: Panel) -> dict[str, Any]:
        return {"score": Score.unscored("interaction failed, nothing to evaluate")}

    async def relevance(state: Panel, runtime: Runtime[EvaluationContext]) -> dict[str, Any]:
        judges.scopes.append(current_evaluation_id())
        session = runtime.context.judge_session("relevance", runtime.execution_info.node_attempt)
        judges.sessions.append(session)
        interaction = await runtime.context.ainteraction()
        judge = judges.relevance.with_structured_output(JudgeVerdict)
        found = await judge.ainvoke(
            f"Judge relevance: {interaction.final_response_text}",
            config={"configurable": {"thread_id": session}},
        )
        return {"verdicts": [found]}

    def tone(state: Panel, runtime: Runtime[EvaluationContext]) -> dict[str, Any]:
        judges.scopes.append(current_evaluation_id())
        if judges.crash_in_tone:
            raise judges.crash_in_tone.pop()
        judges.sessions.append(
            runtime.context.judge_session()  # this node and attempt, read from LangGraph
        )
        wanted = runtime.context.config.get_str("tone", "polite and clear")
        reply = runtime.context.interaction().final_response_text
        found = judges.tone.with_structured_output(JudgeVerdict).invoke(
            f"Judge tone ({wanted}): {reply}"
        )
        return {"verdicts": [found]}

    def combine(state: Panel) -> dict[str, Any]:
        verdicts = state["verdicts"]
        mean = sum(v.score for v in verdicts) / len(verdicts)
        return {"score": Score(round(mean, 3), "; ".join(v.reason for v in verdicts))}

    builder = StateGraph(Panel, context_schema=EvaluationContext)
    builder.add_node("skip", skip)
    builder.add_node("relevance", relevance, retry_policy=retry)
    builder.add_node("tone", tone, retry_policy=retry)
    builder.add_node("combine", combine)
    builder.add_conditional_edges(START, screen, ["skip", "relevance"])
    builder.add_edge("skip", END)
    builder.add_edge("relevance", "tone")
    builder.add_edge("tone", "combine")
    builder.add_edge("combine", END)
    return DurableEvaluator(builder)


PANEL_CONFIG = {"control_id": "quality-control", "pass_threshold": 0.5}


def panel_kit(judges: Judges, retry: RetryPolicy | None = FAST) -> DurableTestKit:
    return DurableTestKit(
        quality_panel(judges, retry), evaluator_id="quality-panel", config=PANEL_CONFIG
    )


def one_node(node: Callable[..., Any], **options: Any) -> DurableEvaluator:
    """A durable evaluator of one node, ``work``; ``options`` go to ``add_node``, except
    ``evaluation_timeout``."""
    timeout = options.pop("evaluation_timeout", None)
    builder = StateGraph(Panel, context_schema=EvaluationContext)
    builder.add_node("work", node, **options)
    builder.add_edge(START, "work")
    builder.add_edge("work", END)
    return DurableEvaluator(builder, evaluation_timeout=timeout)


def make_engine(evaluator: DurableEvaluator, checkpointer: Any, ledger: Ledger) -> DurableEngine:
    """An engine whose context and record builders are shaped like the runtime's."""

    def context(unit: WorkUnit) -> EvaluationContext:
        return EvaluationContext(
            subject=unit.subject,
            evaluation_id=unit.evaluation_id,
            config=EvaluatorConfig({}),
            ledger=ledger,
            trigger=unit.trigger,
        )

    def record(unit: WorkUnit, results: list[EvaluatorResult]) -> EvaluationRecord:
        return make_evaluation(
            unit.evaluation_id,
            unit.interaction_id,
            unit.agent_id,
            unit.evaluator_id,
            results=results,
        )

    return DurableEngine(
        evaluator,
        evaluator_id="quality-panel",
        checkpointer=checkpointer,
        ledger=ledger,
        context=context,
        record=record,
    )


def panel_unit(**overrides: Any) -> WorkUnit:
    return make_unit("e-panel", "i-1", "support-agent", "quality-panel", **overrides)


def thread(unit: WorkUnit) -> Any:
    return {"configurable": {"thread_id": unit.evaluation_id}}


@pytest.fixture
async def sqlite_saver(tmp_path: Path) -> AsyncIterator[AsyncSqliteSaver]:
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "steps.db")) as saver:
        yield saver


# --- nodes, state and outcomes ------------------------------------------------------------


def test_three_nodes_gather_judge_verdicts_and_combine() -> None:
    judges = Judges()
    run = panel_kit(judges).run(INTERACTION)

    assert run.record is not None
    assert run.record.outcome == "verdict"
    assert run.record.passed is True
    assert (run.record.result.key, run.record.result.score) == ("quality-panel", 0.8)
    assert run.record.result.comment == "on topic; polite"
    assert (run.record.control_id, run.record.pass_threshold) == ("quality-control", 0.5)
    assert run.nodes_run == ("relevance", "tone", "combine")
    assert not run.thread_kept
    # Both judges read the interaction through the context.
    assert "Judge relevance: Your order A-17 shipped" in judges.relevance.calls[0].messages[0].text
    assert "Judge tone (polite and clear): Your order" in judges.tone.calls[0].messages[0].text


def test_a_failed_interaction_is_inconclusive_and_no_judge_is_called() -> None:
    judges = Judges()
    run = panel_kit(judges).run(make_interaction("i-2", status="failed"))

    assert run.record is not None
    assert run.record.outcome == "inconclusive"
    assert run.record.result.reason == "interaction failed, nothing to evaluate"
    assert run.record.passed is None
    assert run.nodes_run == ("skip",)
    assert judges.relevance.calls == judges.tone.calls == []


async def test_the_engine_on_sqlite_records_once_in_scope_and_deletes_the_thread(
    tmp_path: Path, sqlite_saver: AsyncSqliteSaver
) -> None:
    ledger = SqliteLedger(tmp_path / "ledger.db")
    ledger.record_interaction(make_interaction("i-1"))
    judges = Judges()
    engine = make_engine(quality_panel(judges), sqlite_saver, ledger)
    unit = panel_unit()

    finished = await engine.run(unit)

    assert isinstance(finished, EvaluationRecord)
    assert finished.result.score == 0.8
    assert [r.evaluation_id for r in ledger.get_evaluations("i-1")] == ["e-panel"]
    assert await sqlite_saver.aget_tuple(thread(unit)) is None
    # Nodes ran inside the evaluation's scope (their judge calls are evaluation traffic).
    assert judges.scopes == ["e-panel", "e-panel"]
    # A recorded evaluation is not run again: no judge is called a second time.
    assert await engine.run(unit) == finished
    assert (len(judges.relevance.calls), len(judges.tone.calls)) == (1, 1)
    ledger.close()


@pytest.mark.parametrize(
    ("score", "expected"),
    [
        (True, {"key": "scorer", "score": True, "passed": True}),
        (0.4, {"key": "scorer", "score": 0.4, "passed": False}),  # below pass_threshold 0.5
        (Score(0.9, "good", {"label": "ok"}), {"score": 0.9, "label": "ok", "passed": True}),
        (EvaluatorResult(key="custom", score=False), {"key": "custom", "passed": False}),
        ({"score": 1, "comment": "as a dict"}, {"score": 1.0, "comment": "as a dict"}),
        (Score.unscored("nothing to judge"), {"outcome": "inconclusive", "passed": None}),
    ],
    ids=["bool", "number", "Score", "EvaluatorResult", "dict", "unscored"],
)
def test_the_score_in_the_final_state_is_the_outcome(score: Any, expected: dict[str, Any]) -> None:
    kit = DurableTestKit(
        one_node(lambda state: {"score": score}), evaluator_id="scorer", pass_threshold=0.5
    )
    record = kit.run(INTERACTION).record

    assert record is not None
    seen = {
        "key": record.result.key,
        "score": record.result.score,
        "comment": record.result.comment,
        "outcome": record.outcome,
        "passed": record.passed,
        "label": record.result.metadata.get("label"),
    }
    assert {name: seen[name] for name in expected} == expected


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ({}, "ended without a 'score' in its state"),
        ({"score": "yes"}, "left score='yes'; expected a bool, a number"),
        ({"score": 0.7}, "scored 0.7, a number, and no pass_threshold applies"),
    ],
    ids=["no-score", "not-a-score", "number-without-threshold"],
)
def test_a_graph_that_ends_without_a_usable_score_is_failed_clearly(
    state: dict[str, Any], message: str
) -> None:
    run = DurableTestKit(one_node(lambda _: state, retry_policy=FAST)).run(INTERACTION)

    assert run.record is not None
    assert run.record.outcome == "failed"
    assert run.record.result.error_code == "evaluator_error"
    assert message in (run.record.result.reason or "")
    assert run.nodes_run == ("work",)  # a usage error is not the node's: not retried
    assert not run.thread_kept


# --- retries ----------------------------------------------------------------------------


def test_a_node_failing_twice_passes_on_its_third_attempt_each_in_a_fresh_judge_session() -> None:
    judges = Judges(
        relevance=ScriptedChatModel(
            [
                ScriptedProviderError.server_error(),
                ScriptedProviderError.server_error(),
                verdict(0.9, "on topic"),
            ]
        )
    )
    run = panel_kit(judges).run(INTERACTION)

    assert run.record is not None
    assert run.record.passed is True
    assert run.nodes_run == ("relevance", "relevance", "relevance", "tone", "combine")
    assert len(judges.relevance.calls) == 3
    # One judge session per evaluation, node and attempt: a retry does not see the last one.
    evaluation = run.evaluation_id
    assert judges.sessions == [
        f"{evaluation}:relevance:1",
        f"{evaluation}:relevance:2",
        f"{evaluation}:relevance:3",
        f"{evaluation}:tone:1",
    ]
    again = panel_kit(Judges()).run(INTERACTION, trigger_attributes={"prompt": "v2"})
    assert again.evaluation_id != evaluation


@pytest.mark.parametrize(
    ("retry", "fail", "code", "reason", "attempts"),
    [
        (FAST, 3, "evaluator_error", "InjectedNodeFailure: injected failure 3 of node 'tone'", 3),
        # A transient error that exhausts the node's retries is final too (the engine tells
        # it from a storage error by the error LangGraph keeps on the node's task).
        (
            FAST,
            [ConnectionError("judge unreachable")] * 3,
            "provider_error",
            "ConnectionError: judge unreachable",
            3,
        ),
        (None, 1, "evaluator_error", "InjectedNodeFailure: injected failure 1 of node 'tone'", 1),
    ],
    ids=["injected", "transient", "no-retry-policy"],
)
def test_a_node_that_exhausts_its_retries_is_failed_with_its_code(
    retry: RetryPolicy | None,
    fail: int | list[BaseException],
    code: str,
    reason: str,
    attempts: int,
) -> None:
    judges = Judges()
    run = panel_kit(judges, retry).run(INTERACTION, fail={"tone": fail})

    assert run.record is not None
    assert run.record.outcome == "failed"
    assert run.record.passed is None
    assert run.record.result.error_code == code
    assert run.record.result.reason == reason
    assert run.nodes_run == ("relevance", *["tone"] * attempts)
    assert judges.tone.calls == []  # every attempt failed before the judge was called
    assert not run.thread_kept


def test_a_node_past_its_own_timeout_is_retried_then_failed_as_a_timeout() -> None:
    attempts: list[int] = []

    async def work(state: Panel, runtime: Runtime[EvaluationContext]) -> dict[str, Any]:
        attempts.append(runtime.execution_info.node_attempt)
        await asyncio.sleep(5)
        return {"score": True}

    evaluator = one_node(
        work, timeout=0.05, retry_policy=FAST._replace(max_attempts=2), evaluation_timeout=60
    )
    started = time.monotonic()
    run = DurableTestKit(evaluator).run(INTERACTION)

    assert run.record is not None
    assert run.record.result.error_code == "timeout"
    assert "Node 'work' exceeded its run timeout of 0.050s" in (run.record.result.reason or "")
    assert attempts == [1, 2]
    assert time.monotonic() - started < 2  # the node's timeout, not the evaluation's


# --- the evaluation timeout -----------------------------------------------------------------


def test_the_evaluation_timeout_cuts_a_node_short_and_deletes_the_thread() -> None:
    attempts: list[int] = []

    async def work(state: Panel) -> dict[str, Any]:
        attempts.append(1)
        await asyncio.sleep(5)
        return {"score": True}

    started = time.monotonic()
    run = DurableTestKit(
        one_node(work, retry_policy=RetryPolicy(retry_on=Exception), evaluation_timeout=0.2)
    ).run(INTERACTION)

    assert run.record is not None
    assert run.record.result.error_code == "timeout"
    assert "took longer than its timeout of 0.2s" in (run.record.result.reason or "")
    assert attempts == [1]  # cut short, not retried
    assert not run.thread_kept
    assert time.monotonic() - started < 2


async def test_an_evaluation_already_past_its_timeout_runs_no_node() -> None:
    judges = Judges()
    evaluator = quality_panel(judges)
    evaluator = DurableEvaluator(evaluator.builder, evaluation_timeout=timedelta(minutes=5))
    engine = make_engine(evaluator, InMemorySaver(), InMemoryLedger().seed(INTERACTION))

    with pytest.raises(EvaluationTimeoutError, match=r"timeout of 300s") as raised:
        await engine.run(panel_unit(enqueued_at=time.time() - 301))
    assert raised.value.code == "timeout"
    assert judges.scopes == []


# --- restarts ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("restart_after", "restarts"), [(["relevance"], 1), (True, 2)], ids=["after-one", "after-all"]
)
def test_completed_nodes_do_not_run_again_after_a_restart(
    restart_after: list[str] | bool, restarts: int
) -> None:
    judges = Judges()
    run = panel_kit(judges).run(INTERACTION, restart_after=restart_after)

    assert run.record is not None
    assert run.record.passed is True
    assert run.restarts == restarts
    assert run.nodes_run == ("relevance", "tone", "combine")
    assert (len(judges.relevance.calls), len(judges.tone.calls)) == (1, 1)


def test_a_node_after_a_redeploy_reads_the_new_configuration() -> None:
    judges = Judges()
    run = panel_kit(judges).run(
        INTERACTION,
        restart_after=["relevance"],
        config_after_restart={**PANEL_CONFIG, "tone": "formal", "pass_threshold": 0.95},
    )

    assert run.restarts == 1
    assert "Judge tone (formal)" in judges.tone.calls[0].messages[0].text
    assert run.record is not None
    assert (run.record.result.score, run.record.pass_threshold) == (0.8, 0.95)
    assert run.record.passed is False


async def test_a_process_stopped_mid_node_resumes_from_the_last_completed_node(
    tmp_path: Path,
) -> None:
    ledger = InMemoryLedger().seed(INTERACTION)
    judges = Judges(crash_in_tone=[ProcessStopped()])
    unit = panel_unit()
    path = str(tmp_path / "steps.db")
    async with AsyncSqliteSaver.from_conn_string(path) as saver:
        with pytest.raises(ProcessStopped):
            await make_engine(quality_panel(judges), saver, ledger).run(unit)
    # A new process: a new connection to the same file, a newly compiled graph.
    async with AsyncSqliteSaver.from_conn_string(path) as saver:
        finished = await make_engine(quality_panel(judges), saver, ledger).run(unit)
        assert await saver.aget_tuple(thread(unit)) is None

    assert isinstance(finished, EvaluationRecord)
    # The relevance verdict came back from the SQLite checkpoint, as a JudgeVerdict.
    assert (finished.result.score, finished.result.comment) == (0.8, "on topic; polite")
    assert len(judges.relevance.calls) == 1  # completed before the stop: not run again
    assert len(judges.tone.calls) == 1  # stopped before its judge call: run once, after


async def test_a_lost_acknowledgement_of_the_record_write_keeps_the_thread_and_records_once() -> (
    None
):
    class LostAcknowledgement(InMemoryLedger):
        """Stores the first record, then fails as if the reply to the write was lost."""

        def __init__(self) -> None:
            super().__init__()
            self.writes: list[bool] = []

        def record_evaluation(self, record: EvaluationRecord) -> bool:
            stored = super().record_evaluation(record)
            self.writes.append(stored)
            if len(self.writes) == 1:
                raise ConnectionError("connection reset after the write")
            return stored

    ledger = LostAcknowledgement().seed(INTERACTION)
    judges = Judges()
    saver = InMemorySaver()
    engine = make_engine(quality_panel(judges), saver, ledger)

    with pytest.raises(CheckpointKept, match="connection reset"):
        await engine.run(panel_unit())
    assert await saver.aget_tuple(thread(panel_unit())) is not None  # run again, not lost
    finished = await engine.run(panel_unit())

    assert isinstance(finished, EvaluationRecord)
    assert ledger.writes == [True]  # the second run found the record: no write, no node
    assert len(ledger.get_evaluations("i-1")) == 1
    assert (len(judges.relevance.calls), len(judges.tone.calls)) == (1, 1)
    assert await saver.aget_tuple(thread(panel_unit())) is None


# --- waiting for a person ---------------------------------------------------------------


class Answers(TypedDict, total=False):
    """The review's state: the first answer, then the score."""

    first: str
    score: Score


def review(stops: list[BaseException] | None = None) -> DurableEvaluator:
    """Asks a reviewer (from an async and a sync node), then scores the two answers; a stop
    from ``stops`` is raised in the node between the questions."""

    async def ask(state: Answers) -> dict[str, Any]:
        return {"first": interrupt({"question": "Is the reply correct?"})}

    def between(state: Answers) -> dict[str, Any]:
        if stops:
            raise stops.pop()
        return {}

    def ask_again(state: Answers) -> dict[str, Any]:
        answer = interrupt({"question": "Sure?"})
        passed = state["first"] == "yes" and answer == "yes"
        return {"score": Score(passed, f"{state['first']}, {answer}")}

    builder = StateGraph(Answers)
    builder.add_node("ask", ask)
    builder.add_node("between", between)
    builder.add_node("ask_again", ask_again)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "between")
    builder.add_edge("between", "ask_again")
    builder.add_edge("ask_again", END)
    return DurableEvaluator(builder, evaluation_timeout=3600)


def test_a_waiting_evaluation_continues_when_resumed() -> None:
    kit = DurableTestKit(review(), evaluator_id="review")
    first = kit.run(INTERACTION)

    assert first.waiting
    assert first.question == {"question": "Is the reply correct?"}
    assert first.thread_kept
    second = first.resume("yes")
    assert (second.waiting, second.question) == (True, {"question": "Sure?"})
    done = second.resume("yes")
    assert done.record is not None
    assert (done.record.passed, done.record.result.comment) == (True, "yes, yes")
    assert done.nodes_run == ("ask", "ask", "between", "ask_again", "ask_again")
    assert not done.thread_kept
    with pytest.raises(ValueError, match="only an evaluation waiting"):
        done.resume("again")
    # The answers can also be given up front.
    answered = kit.run(INTERACTION, resume=["yes", "no"]).record
    assert answered is not None
    assert (answered.passed, answered.result.comment) == (False, "yes, no")


async def test_the_engine_pauses_with_a_deadline_and_a_stale_answer_is_not_reused() -> None:
    saver = InMemorySaver()
    ledger = InMemoryLedger().seed(INTERACTION)
    stops: list[BaseException] = []
    unit = make_unit("e-review", evaluator_id="review")

    paused = await make_engine(review(stops), saver, ledger).run(unit)
    assert isinstance(paused, Paused)
    assert paused.deadline == pytest.approx(unit.enqueued_at + 3600)

    # Resumed, then the process stops in the next node; the unit still carries the answer.
    resumed = unit.model_copy(update={"resumed": True, "resume_value": "yes"})
    stops.append(ProcessStopped())
    with pytest.raises(ProcessStopped):
        await make_engine(review(stops), saver, ledger).run(resumed)
    again = await make_engine(review(stops), saver, ledger).run(resumed)
    assert again == Paused({"question": "Sure?"}, paused.deadline)  # not answered by "yes"

    done = await make_engine(review(stops), saver, ledger).run(
        unit.model_copy(update={"resumed": True, "resume_value": "yes"})
    )
    assert isinstance(done, EvaluationRecord)
    assert done.result.score is True
    assert await saver.aget_tuple(thread(unit)) is None


async def test_a_unit_back_still_waiting_has_timed_out_and_its_thread_is_deleted(
    sqlite_saver: AsyncSqliteSaver,
) -> None:
    engine = make_engine(review(), sqlite_saver, InMemoryLedger().seed(INTERACTION))
    unit = make_unit("e-review", evaluator_id="review")
    assert isinstance(await engine.run(unit), Paused)
    assert await sqlite_saver.aget_tuple(thread(unit)) is not None

    with pytest.raises(EvaluationTimeoutError, match="deadline while waiting") as raised:
        await engine.run(unit.model_copy(update={"waiting": True}))
    assert raised.value.code == "timeout"
    assert await sqlite_saver.aget_tuple(thread(unit)) is None


# --- the evaluator's and the kit's arguments ---------------------------------------------------


def test_the_evaluation_timeout_is_seconds_or_a_timedelta() -> None:
    builder = review().builder
    assert DurableEvaluator(builder).evaluation_timeout is None
    assert DurableEvaluator(
        builder, evaluation_timeout=timedelta(minutes=5)
    ).evaluation_timeout == (300.0)
    assert DurableEvaluator(builder, evaluation_timeout=2).evaluation_timeout == 2.0


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda b: DurableEvaluator(b.compile()), EvaluatorUsageError, "not compiled"),
        (lambda b: DurableEvaluator(b, evaluation_timeout=0), EvaluatorUsageError, "positive"),
        (
            lambda b: DurableEvaluator(b, evaluation_timeout=float("inf")),
            EvaluatorUsageError,
            "positive",
        ),
        (
            lambda b: DurableEvaluator(b, evaluation_timeout=True),
            EvaluatorUsageError,
            "seconds or a timedelta",
        ),
        (lambda b: DurableTestKit(b), TypeError, "must be a DurableEvaluator"),
        (
            lambda b: DurableTestKit(DurableEvaluator(b)).run(INTERACTION, fail={"ask": -1}),
            ValueError,
            "count of at least 0 or a list of exceptions",
        ),
        (
            lambda b: DurableTestKit(DurableEvaluator(b)).run(INTERACTION, restart_after="ask"),
            TypeError,
            r"node names, e\.g\. \['ask'\]",
        ),
        (
            lambda b: DurableTestKit(DurableEvaluator(b)).run(INTERACTION, config_after_restart={}),
            ValueError,
            "needs restart_after",
        ),
        (
            lambda b: DurableTestKit(DurableEvaluator(b)).run(INTERACTION, resume="yes"),
            TypeError,
            "one per interrupt",
        ),
    ],
)
def test_wrong_arguments_are_rejected_with_a_clear_message(
    build: Callable[[Any], Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        build(review().builder)
