"""Evaluators that misbehave where an ``except Exception`` does not look: a score of ±inf, a
record an older version stored unreadable, and ``SystemExit`` or ``KeyboardInterrupt`` raised
inside an evaluation. Each is one ``failed`` evaluation with a reason; the worker goes on,
and every sibling result stays readable."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from typing import Any, TypedDict

import pytest
from _agents import echo_agent, reply_length
from langgraph.graph import END, START, StateGraph

from langchain_evals_port import Score, evaluator
from langchain_evals_port.core import Evaluator
from langchain_evals_port.runtime import (
    DurableEvaluator,
    EvaluationContext,
    EvaluationRuntime,
    Registration,
    SqliteLedger,
)
from langchain_evals_port.runtime.testkit import runtime_testkit

AGENT = "support-agent"


def bound(*evaluator_ids: str) -> dict[str, Any]:
    """Configuration binding each of ``evaluator_ids`` to the support agent."""
    return {"evaluation": {"evaluators": {e: {"agents": {AGENT: {}}} for e in evaluator_ids}}}


@pytest.mark.parametrize("score", [math.inf, -math.inf])
def test_a_score_of_infinity_is_a_failed_result_and_its_sibling_stays_readable(
    score: float,
) -> None:
    @evaluator
    def unbounded(outputs: str) -> float:
        return score

    evaluators = {"unbounded": Registration(unbounded, pass_threshold=0.5)}
    evaluators["reply-length"] = Registration(reply_length)
    with runtime_testkit(bound(*evaluators), evaluators, ledger="sqlite") as runtime:
        reply = runtime.bind(echo_agent(), agent_id=AGENT).invoke_detailed("hi")
        records = {r.evaluator_id: r for r in runtime.wait_for_evaluations(reply.interaction_id)}
    assert records["reply-length"].passed is True
    failed = records["unbounded"]
    assert (failed.outcome, failed.result.error_code) == ("failed", "evaluator_error")
    assert failed.result.reason is not None
    assert f"score is {score}" in failed.result.reason
    assert "finite" in failed.result.reason


def unreadable(path: Path, evaluation_id: str) -> None:
    """Store the record of ``evaluation_id`` as versions that accepted a score of inf did:
    a verdict whose score JSON could only hold as ``null``."""
    with sqlite3.connect(path) as db:
        db.execute(
            "UPDATE ledger_evaluations SET record = json_set(record, '$.results[0].score', NULL)"
            " WHERE evaluation_id = ?",
            (evaluation_id,),
        )


def test_a_result_stored_unreadable_reads_back_failed_beside_its_siblings(tmp_path: Path) -> None:
    @evaluator
    def polite(outputs: str) -> bool:
        return "please" not in outputs

    evaluators = {"reply-length": reply_length, "polite": polite}
    ledger = SqliteLedger(tmp_path / "evals.db")
    with runtime_testkit(bound(*evaluators), evaluators, ledger=ledger) as runtime:
        reply = runtime.bind(echo_agent(), agent_id=AGENT).invoke_detailed("hi")
        before = {r.evaluator_id: r for r in runtime.wait_for_evaluations(reply.interaction_id)}
        unreadable(tmp_path / "evals.db", before["polite"].evaluation_id)
        after = {r.evaluator_id: r for r in runtime.wait_for_evaluations(reply.interaction_id)}
    assert after["reply-length"] == before["reply-length"]
    damaged = after["polite"]
    assert damaged.evaluation_id == before["polite"].evaluation_id
    assert (damaged.outcome, damaged.result.key, damaged.result.error_code) == (
        "failed",
        "polite",
        "storage_error",
    )
    assert damaged.result.reason is not None
    assert "could not be read back" in damaged.result.reason
    assert "a verdict needs a score" in damaged.result.reason
    assert ledger.get_evaluation(damaged.evaluation_id) == damaged
    ledger.close()


class Graded(TypedDict, total=False):
    """The state of a one-node durable evaluator: its score."""

    score: Score


def stopping(how: str, stop: BaseException) -> Evaluator | DurableEvaluator:
    """An evaluator (plain ``def``, ``async def`` or a durable graph's node) that raises
    ``stop`` when the reply contains "bye", and passes otherwise."""
    if how == "durable":

        def node(state: Graded, runtime: Any) -> dict[str, Any]:
            if "bye" in runtime.context.interaction().output_text:
                raise stop
            return {"score": Score(True)}

        builder = StateGraph(Graded, context_schema=EvaluationContext)
        builder.add_node("node", node)
        builder.add_edge(START, "node")
        builder.add_edge("node", END)
        return DurableEvaluator(builder)

    if how == "async":

        @evaluator(feedback_key="stopping")
        async def stops_async(outputs: str) -> bool:
            if "bye" in outputs:
                raise stop
            return True

        return stops_async

    @evaluator(feedback_key="stopping")
    def stops(outputs: str) -> bool:
        if "bye" in outputs:
            raise stop
        return True

    return stops


@pytest.mark.parametrize("how", ["def", "async", "durable"])
@pytest.mark.parametrize(
    "stop",
    [SystemExit(0), SystemExit("bye bye"), KeyboardInterrupt()],
    ids=["exit-0", "exit-message", "keyboard-interrupt"],
)
def test_system_exit_or_keyboard_interrupt_in_an_evaluator_fails_it_and_the_worker_goes_on(
    tmp_path: Path, how: str, stop: BaseException
) -> None:
    evaluators = {"stopping": stopping(how, stop)}
    ledger = SqliteLedger(tmp_path / "evals.db")
    runtime = EvaluationRuntime(
        bound("stopping"), evaluators=evaluators, ledger=ledger, poll_interval=0.01
    )
    agent = runtime.bind(echo_agent(), agent_id=AGENT)
    stopped = agent.invoke_detailed("bye").interaction_id
    [record] = runtime.wait_for_evaluations(stopped)
    assert (record.outcome, record.result.error_code) == ("failed", "evaluator_error")
    assert record.result.reason is not None
    assert f"{type(stop).__name__} raised inside the evaluation" in record.result.reason
    assert all(str(arg) in record.result.reason for arg in stop.args)
    # Later evaluations run; those still queued when the runtime closes are recorded first.
    later = [agent.invoke_detailed(question).interaction_id for question in ("hi", "bye", "ho")]
    runtime.close()
    outcomes = [[r.outcome for r in ledger.get_evaluations(i)] for i in later]
    assert outcomes == [["verdict"], ["failed"], ["verdict"]]
    ledger.close()
