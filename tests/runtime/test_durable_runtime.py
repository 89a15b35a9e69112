"""Durable evaluators inside the runtime: bound by configuration, paused for a person,
resumed, timed out, failed — with the ledger's own checkpointer."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from _agents import ThreeSteps, echo_agent
from langgraph.types import interrupt

from langchain_evals_port.core.errors import EvaluatorUsageError
from langchain_evals_port.runtime import (
    DurableEvaluator,
    Evaluation,
    EvaluationContext,
    Failed,
    Inconclusive,
    InMemoryLedger,
    Settings,
    Verdict,
    evaluation_id,
)
from langchain_evals_port.runtime.testkit import runtime_testkit


def bound(evaluator_id: str) -> dict[str, Any]:
    return {"evaluation": {"evaluators": {evaluator_id: {"agents": {"support-agent": {}}}}}}


@pytest.fixture(params=["memory", "sqlite"])
def ledger_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class HumanReview(DurableEvaluator[None]):
    """Asks a person whether the reply is right, then records their answer."""

    id = "human-review"

    def on_evaluation(self, ctx: EvaluationContext) -> Any:
        return self.effects().transition_to(self.ask)

    def ask(self) -> Any:
        reply = self.evaluation_context().interaction().final_response_text
        answer = interrupt({"question": "Is this reply right?", "reply": reply})
        if answer["approved"] is None:
            return self.effects().inconclusive("the reviewer skipped it")
        return self.effects().complete(Evaluation.of(answer["approved"], answer["note"]))


class QuickReview(HumanReview):
    """A review that must be answered within half a second."""

    id = "quick-review"

    def settings(self) -> Settings:
        return Settings.defaults().with_evaluation_timeout(0.5)


def test_a_three_step_evaluation_runs_in_the_background(ledger_kind: str) -> None:
    with runtime_testkit(bound(ThreeSteps.id), [ThreeSteps], ledger=ledger_kind) as runtime:
        reply = runtime.bind(echo_agent(), agent_id="support-agent").invoke_detailed("hi")
        [record] = runtime.wait_for_evaluations(reply.interaction_id)
    assert record.evaluation == Evaluation.of(True, "2 votes")
    assert record.evaluator_id == "three-steps"


def test_an_evaluation_waits_for_a_person_and_resumes_with_the_answer(ledger_kind: str) -> None:
    with runtime_testkit(bound(HumanReview.id), [HumanReview], ledger=ledger_kind) as runtime:
        reply = runtime.bind(echo_agent(), agent_id="support-agent").invoke_detailed("refund?")
        waiting = evaluation_id(HumanReview.id, reply.interaction_id)
        with pytest.raises(TimeoutError):  # parked: nothing recorded until someone answers
            runtime.wait_for_evaluations(reply.interaction_id, timeout=0.5)
        [asked] = runtime.waiting_evaluations(reply.interaction_id)
        assert (asked.evaluation_id, asked.evaluator_id, asked.deadline) == (
            waiting,
            HumanReview.id,
            None,
        )
        assert asked.question == {"question": "Is this reply right?", "reply": "You asked: refund?"}

        runtime.resume(waiting, {"approved": False, "note": "promised a refund it can't give"})
        [record] = runtime.wait_for_evaluations(reply.interaction_id)
        assert runtime.waiting_evaluations() == []
        with pytest.raises(EvaluatorUsageError, match="no evaluation"):
            runtime.resume(waiting, {"approved": True, "note": "too late"})
    assert record.evaluation_id == waiting
    assert record.evaluation == Evaluation.failed("promised a refund it can't give")


def test_a_skipped_review_is_inconclusive() -> None:
    with runtime_testkit(bound(HumanReview.id), [HumanReview], ledger="sqlite") as runtime:
        reply = runtime.bind(echo_agent(), agent_id="support-agent").invoke_detailed("refund?")
        time.sleep(0.2)
        review = evaluation_id(HumanReview.id, reply.interaction_id)
        with pytest.raises(EvaluatorUsageError, match="value must not be None"):
            runtime.resume(review, None)
        runtime.resume(review, {"approved": None, "note": ""})
        [record] = runtime.wait_for_evaluations(reply.interaction_id)
    assert record.outcome == Inconclusive(reason="the reviewer skipped it")


def test_a_review_nobody_answers_fails_at_the_evaluation_timeout() -> None:
    with runtime_testkit(bound(QuickReview.id), [QuickReview], ledger="sqlite") as runtime:
        reply = runtime.bind(echo_agent(), agent_id="support-agent").invoke_detailed("refund?")
        [record] = runtime.wait_for_evaluations(reply.interaction_id, timeout=10)
    assert isinstance(record.outcome, Failed)
    assert record.outcome.error.code == "timeout"


def test_resuming_an_unknown_evaluation_is_an_error() -> None:
    with (
        runtime_testkit(None, [HumanReview]) as runtime,
        pytest.raises(EvaluatorUsageError, match="'nope'"),
    ):
        runtime.resume("nope", True)


class Stubborn(DurableEvaluator[None]):
    """A step that always fails: retried by its settings, then recorded as Failed."""

    id = "stubborn"
    attempts = 0

    def settings(self) -> Settings:
        return Settings.defaults().with_max_step_retries(2).with_step_retry_interval(0.01)

    def on_evaluation(self, ctx: EvaluationContext) -> Any:
        return self.effects().transition_to(self.judge)

    def judge(self) -> Any:
        type(self).attempts += 1
        raise ValueError("the judge is confused")


def test_a_step_that_exhausts_its_retries_is_a_failed_outcome(ledger_kind: str) -> None:
    Stubborn.attempts = 0
    with runtime_testkit(bound(Stubborn.id), [Stubborn], ledger=ledger_kind) as runtime:
        reply = runtime.bind(echo_agent(), agent_id="support-agent").invoke_detailed("hi")
        [record] = runtime.wait_for_evaluations(reply.interaction_id)
    assert isinstance(record.outcome, Failed)
    assert (record.outcome.error.type, record.outcome.error.message) == (
        "ValueError",
        "the judge is confused",
    )
    assert Stubborn.attempts == 3


class NoSettings(DurableEvaluator[None]):
    """Written wrongly: ``settings`` returns nothing."""

    id = "no-settings"

    def settings(self) -> Any:
        return None

    def on_evaluation(self, ctx: EvaluationContext) -> Any:
        return self.effects().complete(Evaluation.passed("never"))


def test_a_durable_evaluator_that_cannot_start_is_a_failed_outcome() -> None:
    with runtime_testkit(bound(NoSettings.id), [NoSettings]) as runtime:
        reply = runtime.bind(echo_agent(), agent_id="support-agent").invoke_detailed("hi")
        [record] = runtime.wait_for_evaluations(reply.interaction_id, timeout=5)
    assert isinstance(record.outcome, Failed)


class FlakyStorage(InMemoryLedger):
    """A ledger whose first read of evaluation records loses its connection."""

    def __init__(self) -> None:
        super().__init__()
        self.failures = 1

    def get_evaluation(self, evaluation_id: str) -> Any:
        if self.failures:
            self.failures -= 1
            raise ConnectionError("connection to the ledger lost")
        return super().get_evaluation(evaluation_id)


def test_a_storage_hiccup_retries_the_durable_evaluation_without_losing_it() -> None:
    ledger = FlakyStorage()
    options = {"retry_backoff": 0.01}
    with runtime_testkit(bound(ThreeSteps.id), [ThreeSteps], ledger=ledger, **options) as runtime:
        reply = runtime.bind(echo_agent(), agent_id="support-agent").invoke_detailed("hi")
        [record] = runtime.wait_for_evaluations(reply.interaction_id, timeout=10)
    assert ledger.failures == 0
    assert record.evaluation == Evaluation.of(True, "2 votes")


class PatientSteps(ThreeSteps):
    """``ThreeSteps`` with its settings built in the constructor, timeouts as ``timedelta``."""

    id = "patient-steps"

    def settings(self) -> Settings:
        return Settings(
            evaluation_timeout=timedelta(minutes=5),
            default_step_timeout=timedelta(seconds=30),
            step_retry_interval=timedelta(milliseconds=10),
        )


def test_timeouts_given_to_settings_as_timedelta_are_seconds(ledger_kind: str) -> None:
    assert PatientSteps().settings() == Settings(300.0, 30.0, 0, 0.01)
    with runtime_testkit(bound(PatientSteps.id), [PatientSteps], ledger=ledger_kind) as runtime:
        reply = runtime.bind(echo_agent(), agent_id="support-agent").invoke_detailed("hi")
        [record] = runtime.wait_for_evaluations(reply.interaction_id)
    assert record.outcome == Verdict(evaluation=Evaluation.of(True, "2 votes"))


class Hasty(ThreeSteps):
    """``ThreeSteps`` with no time to run even its first step."""

    id = "hasty"

    def settings(self) -> Settings:
        return Settings.defaults().with_evaluation_timeout(1e-6)


def test_a_timeout_before_the_first_step_on_a_new_ledger_is_recorded_as_a_timeout(
    ledger_kind: str,
) -> None:
    # The thread is deleted before any checkpoint was written: the checkpointer's tables must
    # exist by then, or the storage error would hide the timeout.
    with runtime_testkit(bound(Hasty.id), [Hasty], ledger=ledger_kind) as runtime:
        reply = runtime.bind(echo_agent(), agent_id="support-agent").invoke_detailed("hi")
        [record] = runtime.wait_for_evaluations(reply.interaction_id)
    assert isinstance(record.outcome, Failed), record.outcome
    assert (record.outcome.error.type, record.outcome.error.code) == (
        "EvaluationTimeoutError",
        "timeout",
    )
