"""Durable evaluators inside the runtime: bound by configuration, parked for a person,
resumed, timed out, failed — on the ledger's own checkpointer (memory or the SQLite file)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any, TypedDict

import pytest
from _agents import echo_agent, three_steps
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import RetryPolicy, interrupt

from langchain_evals_port import Score
from langchain_evals_port.core.errors import EvaluatorUsageError
from langchain_evals_port.runtime import (
    DurableEvaluator,
    EvaluationContext,
    EvaluationRecord,
    EvaluationRuntime,
    InMemoryLedger,
    SqliteLedger,
    evaluation_id,
)
from langchain_evals_port.runtime.testkit import runtime_testkit

AGENT = "support-agent"


def bound(evaluator_id: str) -> dict[str, Any]:
    return {"evaluation": {"evaluators": {evaluator_id: {"agents": {AGENT: {}}}}}}


@pytest.fixture(params=["memory", "sqlite"])
def ledger_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Reviewed(TypedDict, total=False):
    """The state of a review: just its score."""

    score: Score


def one_node_graph(node: Any, **options: Any) -> StateGraph[Any, Any, Any, Any]:
    """A graph of the one node ``node`` (``options`` go to ``add_node``)."""
    builder = StateGraph(Reviewed, context_schema=EvaluationContext)
    builder.add_node(getattr(node, "__name__", "node"), node, **options)
    builder.add_edge(START, getattr(node, "__name__", "node"))
    builder.add_edge(getattr(node, "__name__", "node"), END)
    return builder


def ask(state: Reviewed, runtime: Runtime[EvaluationContext]) -> dict[str, Any]:
    """Asks a person whether the reply is right; their answer is the verdict."""
    reply = runtime.context.interaction().final_response_text
    answer = interrupt({"question": "Is this reply right?", "reply": reply})
    if answer["approved"] is None:
        return {"score": Score.unscored("the reviewer skipped it")}
    return {"score": Score(answer["approved"], answer["note"])}


def human_review(timeout: float | timedelta = timedelta(hours=1)) -> DurableEvaluator:
    return DurableEvaluator(one_node_graph(ask), evaluation_timeout=timeout)


def evaluate_once(runtime: EvaluationRuntime, question: str = "hi") -> tuple[str, str]:
    """Invoke the bound agent once; the interaction id and the durable evaluation's id."""
    reply = runtime.bind(echo_agent(), agent_id=AGENT).invoke_detailed(question)
    [evaluator_id] = runtime.config.evaluator_ids
    return reply.interaction_id, evaluation_id(evaluator_id, reply.interaction_id)


def waiting_for(runtime: EvaluationRuntime, evaluation: str, timeout: float = 10) -> None:
    """Wait until ``evaluation`` is parked, waiting for a person."""
    deadline = time.monotonic() + timeout
    while evaluation not in {w.evaluation_id for w in runtime.waiting_evaluations()}:
        assert time.monotonic() < deadline, f"{evaluation} never waited for a person"
        time.sleep(0.01)


def test_a_three_node_evaluation_runs_in_the_background(ledger_kind: str) -> None:
    with runtime_testkit(
        bound("three-steps"), {"three-steps": three_steps()}, ledger=ledger_kind
    ) as runtime:
        interaction, evaluation = evaluate_once(runtime)
        [record] = runtime.wait_for_evaluations(interaction)
    assert (record.evaluation_id, record.evaluator_id) == (evaluation, "three-steps")
    assert (record.outcome, record.passed, record.result.comment) == ("verdict", True, "2 votes")


def test_an_evaluation_waits_for_a_person_and_resumes_with_the_answer(ledger_kind: str) -> None:
    with runtime_testkit(
        bound("review"), {"review": human_review()}, ledger=ledger_kind
    ) as runtime:
        interaction, waiting = evaluate_once(runtime, "refund?")
        with pytest.raises(TimeoutError):  # parked: nothing recorded until someone answers
            runtime.wait_for_evaluations(interaction, timeout=0.5)
        [asked] = runtime.waiting_evaluations(interaction)
        assert (asked.evaluation_id, asked.evaluator_id) == (waiting, "review")
        assert asked.question == {"question": "Is this reply right?", "reply": "You asked: refund?"}
        assert asked.deadline == pytest.approx(time.time() + 3600, abs=30)  # the timedelta

        runtime.resume(waiting, {"approved": False, "note": "promised a refund it can't give"})
        [record] = runtime.wait_for_evaluations(interaction)
        assert runtime.waiting_evaluations() == []
        with pytest.raises(EvaluatorUsageError, match="no evaluation"):
            runtime.resume(waiting, {"approved": True, "note": "too late"})
    assert record.evaluation_id == waiting
    assert (record.outcome, record.passed) == ("verdict", False)
    assert record.result.comment == "promised a refund it can't give"


def test_a_skipped_review_is_inconclusive_and_none_is_no_answer() -> None:
    with runtime_testkit(bound("review"), {"review": human_review()}, ledger="sqlite") as runtime:
        interaction, review = evaluate_once(runtime, "refund?")
        waiting_for(runtime, review)
        with pytest.raises(EvaluatorUsageError, match="value must not be None"):
            runtime.resume(review, None)
        runtime.resume(review, {"approved": None, "note": ""})
        [record] = runtime.wait_for_evaluations(interaction)
    assert (record.outcome, record.result.reason) == ("inconclusive", "the reviewer skipped it")


def test_a_review_resumed_after_a_redeploy_reads_the_new_configuration(tmp_path: Path) -> None:
    def ask_team(state: Reviewed, runtime: Runtime[EvaluationContext]) -> dict[str, Any]:
        approved = interrupt({"question": "Is this reply right?"})
        return {"score": Score(approved, f"for {runtime.context.config.get_str('team')}")}

    def deployed(team: str) -> dict[str, Any]:
        return {"evaluation": {"evaluators": {"review": {"team": team, "agents": {AGENT: {}}}}}}

    evaluators = {"review": DurableEvaluator(one_node_graph(ask_team))}
    ledger = SqliteLedger(tmp_path / "evals.db")
    with runtime_testkit(deployed("day-shift"), evaluators, ledger=ledger) as before:
        interaction, review = evaluate_once(before)
        waiting_for(before, review)
    # A new process with a new configuration, on the same file: the review still waits.
    with runtime_testkit(deployed("night-shift"), evaluators, ledger=ledger) as after:
        assert [w.evaluation_id for w in after.waiting_evaluations()] == [review]
        after.resume(review, True)
        [record] = after.wait_for_evaluations(interaction)
    ledger.close()
    assert (record.passed, record.result.comment) == (True, "for night-shift")


def test_a_review_nobody_answers_fails_at_the_evaluation_timeout(ledger_kind: str) -> None:
    with runtime_testkit(
        bound("review"), {"review": human_review(0.5)}, ledger=ledger_kind
    ) as runtime:
        interaction, _ = evaluate_once(runtime)
        [record] = runtime.wait_for_evaluations(interaction, timeout=10)
    assert record.outcome == "failed"
    assert record.result.error_code == "timeout"
    # Parked first, then run again at its deadline, still waiting: timed out.
    assert "reached its deadline while waiting" in (record.result.reason or "")


def test_resuming_an_unknown_evaluation_is_an_error() -> None:
    with (
        runtime_testkit(None, {"review": human_review()}) as runtime,
        pytest.raises(EvaluatorUsageError, match="'nope'"),
    ):
        runtime.resume("nope", True)


def test_a_node_that_exhausts_its_retries_is_a_failed_outcome(ledger_kind: str) -> None:
    attempts: list[int] = []

    def judge(state: Reviewed, runtime: Runtime[EvaluationContext]) -> dict[str, Any]:
        attempts.append(runtime.execution_info.node_attempt)
        raise ValueError("the judge is confused")

    retry = RetryPolicy(initial_interval=0.01, jitter=False, retry_on=ValueError)
    stubborn = DurableEvaluator(one_node_graph(judge, retry_policy=retry))
    with runtime_testkit(bound("stubborn"), {"stubborn": stubborn}, ledger=ledger_kind) as runtime:
        interaction, _ = evaluate_once(runtime)
        [record] = runtime.wait_for_evaluations(interaction)
    assert record.outcome == "failed"
    assert (record.result.error_code, record.result.reason) == (
        "evaluator_error",
        "ValueError: the judge is confused",
    )
    assert attempts == [1, 2, 3]


def test_a_graph_that_cannot_compile_is_refused_at_startup() -> None:
    builder = StateGraph(Reviewed, context_schema=EvaluationContext)
    builder.add_node("judge", lambda state: {"score": True})  # no edge from START
    with pytest.raises(EvaluatorUsageError, match=r"graph is invalid: .*entrypoint"):
        DurableEvaluator(builder)


class FlakyStorage(InMemoryLedger):
    """A ledger whose first read of an evaluation record (``where="ledger-read"``) or first
    opening of its checkpoints (``where="checkpointer-open"``) loses its connection."""

    def __init__(self, where: str) -> None:
        super().__init__()
        self.where = where
        self.failures = [ConnectionError("connection to the ledger lost")]

    def get_evaluation(self, evaluation_id: str) -> EvaluationRecord | None:
        if self.where == "ledger-read" and self.failures:
            raise self.failures.pop()
        return super().get_evaluation(evaluation_id)

    @asynccontextmanager
    async def open_checkpointer(self) -> AsyncIterator[Any]:
        if self.where == "checkpointer-open" and self.failures:
            raise self.failures.pop()
        async with super().open_checkpointer() as checkpointer:
            yield checkpointer


@pytest.mark.parametrize("where", ["ledger-read", "checkpointer-open"])
def test_a_storage_hiccup_retries_the_durable_evaluation_without_losing_it(where: str) -> None:
    ledger = FlakyStorage(where)
    evaluators = {"three-steps": three_steps()}
    with runtime_testkit(
        bound("three-steps"), evaluators, ledger=ledger, retry_backoff=0.01
    ) as runtime:
        interaction, _ = evaluate_once(runtime)
        [record] = runtime.wait_for_evaluations(interaction, timeout=10)
    assert (record.outcome, record.result.comment) == ("verdict", "2 votes"), record.results
    assert record.attempts == 1  # a transient error does not use up an attempt


def test_a_timeout_before_the_first_node_on_a_new_ledger_is_recorded_as_a_timeout(
    ledger_kind: str,
) -> None:
    # The thread is deleted before any checkpoint was written: the checkpointer's tables must
    # exist by then, or the storage error would hide the timeout.
    hasty = DurableEvaluator(three_steps().builder, evaluation_timeout=1e-6)
    with runtime_testkit(bound("hasty"), {"hasty": hasty}, ledger=ledger_kind) as runtime:
        interaction, _ = evaluate_once(runtime)
        [record] = runtime.wait_for_evaluations(interaction)
    assert record.outcome == "failed"
    assert record.result.error_code == "timeout"
    assert record.result.reason is not None
    assert record.result.reason.startswith(f"evaluation {record.evaluation_id} took longer")
