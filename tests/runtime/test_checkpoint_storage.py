"""Where durable evaluators keep their steps: on the ledger's own storage when it keeps
LangGraph checkpoints, in a ``checkpointer=`` given to the runtime, and otherwise nowhere —
a startup error, never a silent fallback to memory."""

from __future__ import annotations

from typing import Any

import pytest
from _agents import echo_agent, reply_length, three_steps
from langgraph.checkpoint.memory import InMemorySaver

from langchain_evals_port.runtime import (
    CheckpointerUnavailableError,
    EvaluationRuntime,
    InMemoryLedger,
    SupportsCheckpoints,
)
from langchain_evals_port.runtime.testkit import runtime_testkit


class CountingSaver(InMemorySaver):
    """An in-memory saver that counts the checkpoints written to it."""

    def __init__(self) -> None:
        super().__init__()
        self.checkpoints_written = 0

    async def aput(self, *args: Any, **kwargs: Any) -> Any:
        self.checkpoints_written += 1
        return await super().aput(*args, **kwargs)


class RecordsOnly(InMemoryLedger):
    """A ledger that keeps records and work but no checkpoints."""

    open_checkpointer = None  # type: ignore[assignment]


def bound(evaluator_id: str) -> dict[str, Any]:
    return {"evaluation": {"evaluators": {evaluator_id: {"agents": {"support-agent": {}}}}}}


def test_every_ledger_of_the_package_keeps_checkpoints() -> None:
    assert isinstance(InMemoryLedger(), SupportsCheckpoints)
    assert not isinstance(RecordsOnly(), SupportsCheckpoints)


def test_a_durable_evaluator_on_a_ledger_without_checkpoints_is_a_startup_error() -> None:
    with pytest.raises(CheckpointerUnavailableError) as raised:
        EvaluationRuntime(
            bound("three-steps"), evaluators={"three-steps": three_steps()}, ledger=RecordsOnly()
        )

    message = str(raised.value)
    assert "RecordsOnly" in message
    assert "open_checkpointer()" in message
    assert "checkpointer=" in message
    assert isinstance(raised.value, TypeError)


def test_a_checkpointer_given_to_the_runtime_serves_such_a_ledger() -> None:
    saver = CountingSaver()
    options = {"checkpointer": saver}
    evaluators = {"three-steps": three_steps()}
    with runtime_testkit(bound("three-steps"), evaluators, ledger=RecordsOnly(), **options) as rt:
        reply = rt.bind(echo_agent(), agent_id="support-agent").invoke_detailed("hi")
        [record] = rt.wait_for_evaluations(reply.interaction_id)
    assert (record.passed, record.result.comment) == (True, "2 votes")
    assert saver.checkpoints_written >= 3  # a checkpoint per step, in the saver given


def test_plain_evaluators_need_no_checkpoints() -> None:
    evaluators = {"reply-length": reply_length}
    with runtime_testkit(bound("reply-length"), evaluators, ledger=RecordsOnly()) as runtime:
        reply = runtime.bind(echo_agent(), agent_id="support-agent").invoke_detailed("hello")
        [record] = runtime.wait_for_evaluations(reply.interaction_id)
    assert record.is_verdict
