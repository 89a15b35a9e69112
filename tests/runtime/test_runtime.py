"""The runtime end to end: bound agents, background evaluations, outcomes, retries, guards,
and the registry of evaluators it runs."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest
from _agents import Gate, chat_agent, echo_agent, reply_length, scripted_agent
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda

from langchain_evals_port import EvaluatorResult, ExactMatch, Score, evaluator
from langchain_evals_port.core import EvalRequest, Evaluator
from langchain_evals_port.core.errors import EvaluatorUsageError
from langchain_evals_port.runtime import (
    ConfigurationError,
    EvaluationRecord,
    EvaluationRuntime,
    EvaluatorConfig,
    InMemoryLedger,
    InteractionNotFoundError,
    InteractionRecord,
    Registration,
    SqliteLedger,
    Subject,
    redact_text,
    sampled,
)
from langchain_evals_port.runtime.testkit import runtime_testkit
from langchain_evals_port.testing import ScriptedChatModel, ScriptedProviderError
from langchain_evals_port.trajectory import GraphTrajectoryMatch

SUPPORT = {"evaluation": {"evaluators": {"reply-length": {"agents": {"support-agent": {}}}}}}
REPLY_LENGTH = {"reply-length": reply_length}


def bind_all(evaluator_id: str, **binding: Any) -> dict[str, Any]:
    """Configuration binding ``evaluator_id`` to support-agent."""
    return {"evaluation": {"evaluators": {evaluator_id: {"agents": {"support-agent": binding}}}}}


def evaluate_once(evaluator_id: str, target: Any, question: str = "hi", **options: Any) -> Any:
    """The one record of ``target`` (bound to support-agent as ``evaluator_id``) on the echo
    agent's answer to ``question``."""
    evaluators = {evaluator_id: target}
    with runtime_testkit(bind_all(evaluator_id), evaluators, **options) as runtime:
        reply = runtime.bind(echo_agent(), agent_id="support-agent").invoke_detailed(question)
        [record] = runtime.wait_for_evaluations(reply.interaction_id, timeout=10)
    return record


@pytest.fixture(params=["memory", "sqlite"])
def ledger_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_a_bound_graph_is_evaluated_in_the_background_by_a_plain_function(
    ledger_kind: str,
) -> None:
    with runtime_testkit(SUPPORT, REPLY_LENGTH, ledger=ledger_kind) as runtime:
        agent = runtime.bind(
            scripted_agent("Your parcel left on Monday."), agent_id="support-agent"
        )
        reply = agent.invoke_detailed({"messages": [HumanMessage("Where is my parcel?")]})
        assert reply.output["messages"][-1].content == "Your parcel left on Monday."

        [record] = runtime.wait_for_evaluations(reply.interaction_id)
        assert record.outcome == "verdict"
        assert record.passed is True
        # The core result the @evaluator function gave, with the runtime's verdict added.
        assert record.result == EvaluatorResult(
            key="reply_length",
            score=True,
            comment="reply of 27 characters, minimum 1",
            metadata={"length": 27, "passed": True},
        )
        assert (record.evaluator_id, record.agent_id, record.trigger) == (
            "reply-length",
            "support-agent",
            "on_interaction",
        )
        assert record.interaction_id == reply.interaction_id
        assert record.attempts == 1
        assert runtime.ledger.get_evaluation(record.evaluation_id) == record
        interaction = runtime.ledger.get_interaction(reply.interaction_id)
        assert interaction.input_text == "Where is my parcel?"


def test_a_function_evaluator_asks_for_the_runtime_variables_by_name() -> None:
    seen: dict[str, Any] = {}

    @evaluator
    def inspects(
        inputs: str,
        outputs: str,
        interaction: InteractionRecord,
        config: EvaluatorConfig,
        subject: Subject,
        evaluation_id: str,
    ) -> bool:
        seen.update(
            inputs=inputs,
            outputs=outputs,
            interaction=interaction,
            config=config,
            subject=subject,
            evaluation_id=evaluation_id,
        )
        return True

    config = bind_all("inspects", min_length=5)
    with runtime_testkit(config, {"inspects": inspects}) as runtime:
        agent = runtime.bind(echo_agent(), agent_id="support-agent")
        reply = agent.invoke_detailed("Where is A-17?", {"configurable": {"flow_id": "flow-9"}})
        [record] = runtime.wait_for_evaluations(reply.interaction_id)
        stored = runtime.ledger.get_interaction(reply.interaction_id)

    assert (seen["inputs"], seen["outputs"]) == ("Where is A-17?", "You asked: Where is A-17?")
    assert seen["interaction"] == stored
    assert isinstance(seen["config"], EvaluatorConfig)
    assert seen["config"].get_int("min_length") == 5
    assert seen["subject"] == Subject.interaction(reply.interaction_id, "support-agent", "flow-9")
    assert seen["evaluation_id"] == record.evaluation_id


def test_an_agent_without_a_binding_is_recorded_but_not_evaluated() -> None:
    with runtime_testkit(SUPPORT, REPLY_LENGTH) as runtime:
        agent = runtime.bind(echo_agent(), agent_id="billing-agent", roles=["customer-facing"])
        reply = agent.invoke_detailed("refund?")
        assert runtime.wait_for_evaluations(reply.interaction_id) == []
        assert runtime.ledger.get_interaction(reply.interaction_id).output_text == (
            "You asked: refund?"
        )


def test_the_reply_returns_before_a_slow_evaluator_finishes() -> None:
    gate = Gate()

    @evaluator
    def slow() -> tuple[bool, str]:
        gate.wait()
        return True, "done at last"

    with runtime_testkit(bind_all("slow"), {"slow": slow}) as runtime:
        agent = runtime.bind(echo_agent(), agent_id="support-agent")
        reply = agent.invoke_detailed("hello")
        assert gate.entered.wait(5), "the evaluation never started"
        # The reply is back and its interaction stored while the evaluation still runs.
        assert reply.output == "You asked: hello"
        assert runtime.ledger.get_evaluations(reply.interaction_id) == []
        assert runtime.ledger.pending_work(reply.interaction_id) == 1
        gate.opened.set()
        [record] = runtime.wait_for_evaluations(reply.interaction_id)
        assert record.result.comment == "done at last"


@evaluator
async def judgement(inputs: str) -> Any:
    """A verdict, an inconclusive outcome or an error, chosen by the question asked."""
    if inputs == "fail the verdict":
        return False, "the agent was rude"
    if inputs == "nothing to judge":
        return Score.unscored("not applicable")
    if inputs == "crash":
        raise ValueError("the rubric is missing")
    return True, "fine"


def test_verdicts_inconclusive_and_failed_outcomes_are_recorded_apart(
    caplog: pytest.LogCaptureFixture,
) -> None:
    evaluators = {"judgement": judgement}
    with runtime_testkit(bind_all("judgement"), evaluators, ledger="sqlite") as runtime:
        agent = runtime.bind(RunnableLambda(lambda question: "ok"), agent_id="support-agent")
        ids = {
            question: agent.invoke_detailed(question).interaction_id
            for question in ("all good", "fail the verdict", "nothing to judge", "crash")
        }
        with caplog.at_level(logging.WARNING, logger="langchain_evals_port.runtime"):
            records = {q: runtime.wait_for_evaluations(i)[0] for q, i in ids.items()}

    good = records["all good"]
    assert (good.outcome, good.passed, good.result.comment) == ("verdict", True, "fine")
    failing = records["fail the verdict"]
    # A failing verdict is a verdict, not a failed outcome.
    assert failing.outcome == "verdict"
    assert not failing.is_failed
    assert failing.passed is False
    assert failing.result.score is False
    assert failing.result.comment == "the agent was rude"
    inconclusive = records["nothing to judge"]
    assert inconclusive.outcome == "inconclusive"
    assert inconclusive.passed is None
    assert inconclusive.result.reason == "not applicable"
    crashed = records["crash"]
    assert crashed.outcome == "failed"
    assert crashed.passed is None
    assert crashed.result.score is None
    assert crashed.result.error_code == "evaluator_error"
    assert crashed.result.reason is not None
    assert "ValueError: the rubric is missing" in crashed.result.reason
    assert "the rubric is missing" in caplog.text


def test_an_evaluation_past_its_timeout_is_failed() -> None:
    @evaluator
    async def stuck() -> bool:
        await asyncio.sleep(30)
        return True

    record = evaluate_once("stuck", stuck, evaluation_timeout=0.2)
    assert record.outcome == "failed"
    assert record.result.error_code == "timeout"
    assert record.result.reason is not None
    assert "0.2s" in record.result.reason
    assert record.attempts == 1  # the evaluation's own timeout is not retried as transient


@dataclass
class Flaky:
    """An evaluator raising the errors queued in ``errors`` (one per call), then passing."""

    errors: list[Exception] = field(default_factory=list)
    calls: int = 0

    def evaluator(self) -> Evaluator:
        @evaluator(feedback_key="flaky")
        def flaky() -> tuple[bool, str]:
            self.calls += 1
            if self.errors:
                raise self.errors.pop(0)
            return True, "lucky at last"

        return flaky


def test_transient_errors_are_retried_without_using_attempts() -> None:
    flaky = Flaky(
        [
            ScriptedProviderError.rate_limited(),
            ScriptedProviderError.server_error(),
            TimeoutError("read timed out"),
            ConnectionResetError("the judge's connection was reset"),
        ]
    )
    record = evaluate_once("flaky", flaky.evaluator(), retry_backoff=0.01)
    assert record.is_verdict
    assert record.result.comment == "lucky at last"
    assert record.attempts == 1
    assert flaky.calls == 5


def test_other_errors_use_attempts_then_fail() -> None:
    flaky = Flaky([KeyError("a"), KeyError("b"), KeyError("c")])
    record = evaluate_once("flaky", flaky.evaluator(), retry_backoff=0.01, max_attempts=2)
    assert record.outcome == "failed"
    assert record.attempts == 2
    assert record.result.error_code == "evaluator_error"
    assert record.result.reason is not None
    assert "KeyError: 'b'" in record.result.reason
    assert flaky.calls == 2


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (ScriptedProviderError.rate_limited(), "rate_limited"),
        (ConnectionRefusedError("the judge is unreachable"), "provider_error"),
    ],
    ids=["rate-limited", "connection-error"],
)
def test_transient_errors_stop_being_retried_at_the_maximum_age_and_keep_their_code(
    error: Exception, code: str
) -> None:
    flaky = Flaky([error] * 100)
    record = evaluate_once("flaky", flaky.evaluator(), retry_backoff=0.01, retry_max_age=0.3)
    assert record.outcome == "failed"
    assert record.result.error_code == code
    assert record.attempts == 1
    assert 2 <= flaky.calls < 100


def test_sampling_is_deterministic_and_near_the_ratio() -> None:
    ids = [f"interaction-{n:05d}" for n in range(4000)]
    chosen = [sampled(i, "reply-length", 0.25) for i in ids]
    assert 0.22 <= sum(chosen) / len(ids) <= 0.28
    assert chosen == [sampled(i, "reply-length", 0.25) for i in ids]
    # Another evaluator draws independently.
    assert chosen != [sampled(i, "other-evaluator", 0.25) for i in ids]


def test_the_runtime_samples_with_the_binding_ratio() -> None:
    config = bind_all("reply-length", sampling_ratio=0.25)
    with runtime_testkit(config, REPLY_LENGTH, start=False) as runtime:
        agent = runtime.bind(echo_agent(), agent_id="support-agent")
        ids = [agent.invoke_detailed("q").interaction_id for _ in range(400)]
        queued = [runtime.ledger.pending_work(i) for i in ids]
    assert queued == [int(sampled(i, "reply-length", 0.25)) for i in ids]
    assert 0.18 <= sum(queued) / len(ids) <= 0.32


def test_a_repeated_trigger_keeps_one_record_and_new_attributes_evaluate_again() -> None:
    with runtime_testkit(bind_all("reply-length"), REPLY_LENGTH) as runtime:
        reply = runtime.bind(echo_agent(), agent_id="support-agent").invoke_detailed("hi")
        runtime.wait_for_evaluations(reply.interaction_id)
        first = runtime.evaluate_now("reply-length", reply.interaction_id)
        again = runtime.evaluate_now("reply-length", reply.interaction_id)
        versioned = runtime.evaluate_now(
            "reply-length", reply.interaction_id, trigger_attributes={"prompt": "v2"}
        )
        records = {r.evaluation_id: r for r in runtime.wait_for_evaluations(reply.interaction_id)}
    assert first == again != versioned
    # Without attributes the manual trigger is the automatic evaluation again: one record.
    assert set(records) == {first, versioned}
    assert records[first].trigger == "on_interaction"
    assert records[versioned].trigger == "manual"
    assert records[versioned].trigger_attributes == {"prompt": "v2"}


def test_evaluate_now_errors_name_the_problem() -> None:
    with runtime_testkit(SUPPORT, REPLY_LENGTH) as runtime:
        with pytest.raises(EvaluatorUsageError, match="no evaluator 'missing'"):
            runtime.evaluate_now("missing", "i-1")
        with pytest.raises(InteractionNotFoundError, match="i-404"):
            runtime.evaluate_now("reply-length", "i-404")


def test_evaluator_properties_come_from_the_binding_over_the_entry() -> None:
    config = {
        "evaluation": {
            "evaluators": {
                "reply-length": {
                    "min_length": 20,
                    "agents": {"support-agent": {}, "billing-agent": {"min_length": 50}},
                }
            }
        }
    }
    with runtime_testkit(config, REPLY_LENGTH) as runtime:
        records = {}
        for agent_id in ("support-agent", "billing-agent"):
            agent = runtime.bind(echo_agent(), agent_id=agent_id)
            reply = agent.invoke_detailed("a question of some length")
            [records[agent_id]] = runtime.wait_for_evaluations(reply.interaction_id)
    assert records["support-agent"].passed is True
    assert records["billing-agent"].passed is False
    assert records["billing-agent"].result.comment == "reply of 36 characters, minimum 50"


def test_a_missing_property_fails_the_evaluation_not_the_startup() -> None:
    @evaluator
    def needs_rubric(config: EvaluatorConfig) -> tuple[bool, str]:
        return True, config.get_str("rubric")

    record = evaluate_once("needs-rubric", needs_rubric)
    assert record.outcome == "failed"
    assert record.result.error_code == "evaluator_error"
    assert record.result.reason is not None
    assert "rubric: not set in the evaluator configuration" in record.result.reason


def test_a_function_annotated_to_return_a_number_needs_a_pass_threshold_at_startup() -> None:
    """``-> int`` says the function scores with numbers: without a threshold the runtime
    does not start (before, every evaluation of it failed later, one by one)."""

    @evaluator
    def length(outputs: str) -> int:
        return len(outputs)

    with pytest.raises(
        EvaluatorUsageError,
        match=r"evaluators\['length'\]: FunctionEvaluator scores with numbers, so a "
        r"pass_threshold is needed",
    ):
        evaluate_once("length", length)
    # With a threshold the same number is a verdict.
    held = evaluate_once("length", Registration(length, pass_threshold=5))
    assert (held.outcome, held.passed, held.result.score, held.pass_threshold) == (
        "verdict",
        True,
        len("You asked: hi"),
        5.0,
    )


def test_a_number_without_a_pass_threshold_is_a_failed_evaluation_naming_the_key() -> None:
    """A function without a return annotation cannot say at startup that it scores with
    numbers; the first number it returns without a threshold fails the evaluation rather
    than guess a verdict."""

    @evaluator
    def length(outputs: str):  # type: ignore[no-untyped-def]
        return len(outputs)

    record = evaluate_once("length", length)
    assert record.outcome == "failed"
    assert record.result.reason is not None
    assert "pass_threshold" in record.result.reason


def test_failed_interactions_are_evaluated_only_when_configured() -> None:
    def broken(question: str) -> str:
        raise RuntimeError("the order service is down")

    config = {
        "evaluation": {
            "evaluators": {
                "reply-length": {
                    "agents": {
                        "support-agent": {},
                        "billing-agent": {"trigger_on_failure": True},
                    }
                }
            }
        }
    }
    with runtime_testkit(config, REPLY_LENGTH) as runtime:
        outcomes = {}
        for agent_id in ("support-agent", "billing-agent"):
            agent = runtime.bind(RunnableLambda(broken), agent_id=agent_id)
            with pytest.raises(RuntimeError, match="order service is down"):
                agent.invoke("hi")
            [interaction] = runtime.ledger.query_interactions(agent_id=agent_id).items
            assert interaction.failed
            assert interaction.failure_summary == "the order service is down"
            outcomes[agent_id] = runtime.wait_for_evaluations(interaction.interaction_id)
    assert outcomes["support-agent"] == []
    [record] = outcomes["billing-agent"]
    assert record.outcome == "inconclusive"
    assert record.result.reason == "interaction failed, nothing to evaluate"


def test_a_judge_agent_called_from_an_evaluation_never_triggers_evaluations() -> None:
    """A ``"*"`` binding binds the judge agent too; its calls must not recurse."""
    judge_model = ScriptedChatModel(responder=lambda messages: "PASS")
    holder: dict[str, Any] = {}

    @evaluator
    def asks_judge() -> tuple[bool, str]:
        answer = holder["judge"].invoke({"messages": [HumanMessage("grade this")]})
        return answer["messages"][-1].content == "PASS", "the judge said so"

    config = {"evaluation": {"evaluators": {"asks-judge": {"agent_roles": {"*": {}}}}}}
    with runtime_testkit(config, {"asks-judge": asks_judge}, ledger="sqlite") as runtime:
        holder["judge"] = runtime.bind(chat_agent(judge_model), agent_id="judge", roles=["judge"])
        agent = runtime.bind(echo_agent(), agent_id="support-agent", roles=["customer-facing"])
        reply = agent.invoke_detailed("hello")
        [record] = runtime.wait_for_evaluations(reply.interaction_id)
        time.sleep(0.1)  # room for a wrongly triggered evaluation to be queued
        assert runtime.ledger.pending_work() == 0
        judged = runtime.ledger.query_interactions(agent_id="judge").items
        evaluations = runtime.ledger.query_evaluations().items

    assert record.passed is True
    [judge_interaction] = judged
    assert judge_interaction.evaluation_traffic
    assert judge_interaction.metadata["evaluation_id"] == record.evaluation_id
    assert [e.interaction_id for e in evaluations] == [reply.interaction_id]


def test_redaction_runs_before_anything_is_stored(tmp_path: Path) -> None:
    redact = redact_text(lambda text: text.replace("4111-1111", "****"))
    ledger = SqliteLedger(tmp_path / "evals.db")
    config = bind_all("reply-length")
    with runtime_testkit(config, REPLY_LENGTH, ledger=ledger, redact=redact) as runtime:
        agent = runtime.bind(scripted_agent("Card 4111-1111 is blocked."), agent_id="support-agent")
        reply = agent.invoke_detailed({"messages": [HumanMessage("is 4111-1111 blocked?")]})
        [record] = runtime.wait_for_evaluations(reply.interaction_id)
        stored = runtime.ledger.get_interaction(reply.interaction_id)
    ledger.close()
    assert reply.output["messages"][-1].content == "Card 4111-1111 is blocked."  # caller unchanged
    assert stored.input_text == "is **** blocked?"
    assert stored.final_response_text == "Card **** is blocked."
    assert [m.text for m in stored.transcript] == ["is **** blocked?", "Card **** is blocked."]
    # The evaluator judged the redacted text.
    assert record.result.comment == "reply of 21 characters, minimum 1"
    for file in tmp_path.iterdir():
        assert b"4111-1111" not in file.read_bytes(), file.name


def test_bad_configuration_fails_at_startup_with_the_key_path() -> None:
    with pytest.raises(ConfigurationError, match=r"evaluation\.evaluators\.unknown-evaluator"):
        EvaluationRuntime(
            bind_all("unknown-evaluator"),
            evaluators=REPLY_LENGTH,
            start=False,
            ledger=InMemoryLedger(),
        )
    with pytest.raises(
        ConfigurationError, match=r"evaluation\.evaluators\.reply-length\.sampling_ratio"
    ):
        EvaluationRuntime(
            {"evaluation": {"evaluators": {"reply-length": {"sampling_ratio": 0.5}}}},
            evaluators=REPLY_LENGTH,
            ledger=InMemoryLedger(),
            start=False,
        )


# --- the registry ---------------------------------------------------------------------------


def registry_error(evaluators: Any) -> str:
    """The message of the ``EvaluatorUsageError`` the runtime raises at startup."""
    with pytest.raises(EvaluatorUsageError) as caught:
        EvaluationRuntime(None, evaluators=evaluators, ledger=InMemoryLedger(), start=False)
    return str(caught.value)


def needs_a_model(model: Any) -> Evaluator:
    """A factory that is not a zero-argument one."""
    raise AssertionError("never called")


def fails_to_build() -> Evaluator:
    """A factory whose evaluator cannot be built (a misspelt keyword)."""
    return ExactMatch(feedback_kye="exact")


@pytest.mark.parametrize(
    ("evaluators", "expected"),
    [
        pytest.param([reply_length], "evaluators must be a mapping", id="a-list"),
        pytest.param({"": reply_length}, "ids must be non-empty strings", id="empty-id"),
        pytest.param(
            {"quality": "helpfulness"},
            "evaluators['quality']: expected an evaluator, a zero-argument factory",
            id="not-an-evaluator",
        ),
        pytest.param(
            {"quality": lambda: "helpfulness"},
            "evaluators['quality']: the factory <function",
            id="factory-returns-a-str",
        ),
        pytest.param(
            {"quality": needs_a_model},
            "evaluators['quality']: <function needs_a_model",
            id="factory-needs-arguments",
        ),
        pytest.param(
            {"quality": fails_to_build},
            "evaluators['quality']: the factory <function fails_to_build",
            id="factory-raises",
        ),
        pytest.param(
            {"graph-steps": GraphTrajectoryMatch()},
            "evaluators['graph-steps']: GraphTrajectoryMatch does not judge text or messages",
            id="outputs-kind-other",
        ),
    ],
)
def test_registry_errors_are_usage_errors_at_startup_naming_the_id(
    evaluators: Any, expected: str
) -> None:
    assert expected in registry_error(evaluators)


def test_registry_errors_say_what_to_do() -> None:
    assert "returned 'helpfulness', not an Evaluator" in registry_error(
        {"quality": lambda: "helpfulness"}
    )
    assert "neither an evaluator nor a zero-argument factory" in registry_error(
        {"quality": needs_a_model}
    )
    assert "feedback_kye" in registry_error({"quality": fails_to_build})
    assert "Registration(..., to_request=...)" in registry_error(
        {"graph-steps": GraphTrajectoryMatch()}
    )


def test_a_graph_evaluator_is_accepted_with_a_request_builder() -> None:
    def request(interaction: InteractionRecord) -> dict[str, Any]:
        raise AssertionError("not called at startup")

    runtime = EvaluationRuntime(
        None,
        evaluators={"graph-steps": Registration(GraphTrajectoryMatch(), to_request=request)},
        ledger=InMemoryLedger(),
        start=False,
    )
    runtime.close()


class Instances(Evaluator):
    """Records which instance ran each evaluation."""

    feedback_key: str = "instances"
    ran: ClassVar[list[int]] = []

    def _score(self, request: EvalRequest, config: RunnableConfig) -> bool:
        type(self).ran.append(id(self))
        return True


@pytest.fixture
def instances() -> type[Instances]:
    Instances.ran = []
    return Instances


def evaluate_three_times(target: Any) -> list[EvaluationRecord]:
    with runtime_testkit(bind_all("instances"), {"instances": target}) as runtime:
        agent = runtime.bind(echo_agent(), agent_id="support-agent")
        return [
            record
            for _ in range(3)
            for record in runtime.wait_for_evaluations(agent.invoke_detailed("hi").interaction_id)
        ]


def test_a_factory_makes_a_fresh_evaluator_per_evaluation(instances: type[Instances]) -> None:
    made: list[Instances] = []

    def factory() -> Instances:
        made.append(instances())
        return made[-1]

    records = evaluate_three_times(factory)
    assert all(record.passed for record in records)
    assert len(made) == 4  # one to check at startup, one per evaluation
    assert instances.ran == [id(evaluator) for evaluator in made[1:]]


def test_an_evaluator_object_is_reused_for_every_evaluation(instances: type[Instances]) -> None:
    shared = instances()
    records = evaluate_three_times(shared)
    assert all(record.passed for record in records)
    assert instances.ran == [id(shared)] * 3


async def test_async_agents_inside_a_running_loop() -> None:
    with runtime_testkit(SUPPORT, REPLY_LENGTH, ledger="sqlite") as runtime:
        agent = runtime.bind(scripted_agent("Async reply"), agent_id="support-agent")
        reply = await agent.ainvoke_detailed({"messages": [HumanMessage("hi")]})
        [record] = await runtime.await_evaluations(reply.interaction_id)
    assert record.result.metadata["length"] == len("Async reply")


def test_wait_for_evaluations_times_out_naming_the_interaction() -> None:
    gate = Gate()

    @evaluator
    def slow() -> bool:
        gate.wait()
        return True

    with runtime_testkit(bind_all("slow"), {"slow": slow}) as runtime:
        reply = runtime.bind(echo_agent(), agent_id="support-agent").invoke_detailed("hi")
        with pytest.raises(TimeoutError, match=reply.interaction_id):
            runtime.wait_for_evaluations(reply.interaction_id, timeout=0.1)
        gate.opened.set()


def test_close_drains_due_evaluations(tmp_path: Path) -> None:
    ledger = SqliteLedger(tmp_path / "evals.db")
    runtime = EvaluationRuntime(SUPPORT, evaluators=REPLY_LENGTH, ledger=ledger, poll_interval=0.01)
    agent = runtime.bind(echo_agent(), agent_id="support-agent")
    ids = [agent.invoke_detailed(f"question {n}").interaction_id for n in range(20)]
    runtime.close(timeout=10)
    assert ledger.pending_work() == 0
    assert all(len(ledger.get_evaluations(i)) == 1 for i in ids)
    ledger.close()


def approval_agent() -> Any:
    """A LangGraph graph that stops at an interrupt for a person's approval."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.types import interrupt

    def ask(state: MessagesState) -> dict[str, Any]:
        approved = interrupt("approve the refund?")
        return {"messages": [("ai", f"Refund {'approved' if approved else 'declined'}.")]}

    graph = StateGraph(MessagesState)
    graph.add_node("ask", ask)
    graph.add_edge(START, "ask")
    graph.add_edge("ask", END)
    return graph.compile(checkpointer=InMemorySaver())


def test_interrupted_interactions_are_evaluated_only_when_configured() -> None:
    from langgraph.types import Command

    config = {
        "evaluation": {
            "evaluators": {
                "reply-length": {
                    "agents": {
                        "support-agent": {},
                        "billing-agent": {"trigger_on_interrupt": True},
                    }
                }
            }
        }
    }
    with runtime_testkit(config, REPLY_LENGTH) as runtime:
        evaluated = {}
        for agent_id in ("support-agent", "billing-agent"):
            agent = runtime.bind(approval_agent(), agent_id=agent_id)
            thread: RunnableConfig = {"configurable": {"thread_id": f"{agent_id}-thread"}}
            paused = agent.invoke_detailed({"messages": [HumanMessage("refund?")]}, thread)
            interaction = runtime.ledger.get_interaction(paused.interaction_id)
            assert interaction.status == "interrupted"
            assert interaction.thread_id == f"{agent_id}-thread"
            evaluated[agent_id] = runtime.wait_for_evaluations(paused.interaction_id)
            # Resuming is another interaction of the same thread, and it completes.
            resumed = agent.invoke_detailed(Command(resume=True), thread)
            assert resumed.output["messages"][-1].content == "Refund approved."
            [record] = runtime.wait_for_evaluations(resumed.interaction_id)
            assert record.is_verdict
    assert evaluated["support-agent"] == []
    assert len(evaluated["billing-agent"]) == 1


def test_code_that_cannot_wrap_its_agent_records_through_the_callback_handler() -> None:
    with runtime_testkit(SUPPORT, REPLY_LENGTH, ledger="sqlite") as runtime:
        handler = runtime.callback_handler(agent_id="support-agent", roles=["customer-facing"])
        graph = scripted_agent("Handled through callbacks.")
        graph.invoke({"messages": [HumanMessage("hi")]}, {"callbacks": [handler]})
        [interaction] = runtime.ledger.query_interactions(agent_id="support-agent").items
        [record] = runtime.wait_for_evaluations(interaction.interaction_id)
    assert interaction.roles == ("customer-facing",)
    assert interaction.final_response_text == "Handled through callbacks."
    assert record.result.metadata["length"] == len("Handled through callbacks.")


def test_evaluators_stuck_past_their_timeout_never_block_recording() -> None:
    """A plain ``def`` that never returns holds a thread, not the worker: later evaluations
    still run and every outcome is recorded."""
    release = Gate()
    calls: list[str] = []

    @evaluator
    def hangs(evaluation_id: str) -> bool:
        calls.append(evaluation_id)
        if len(calls) <= 3:
            release.wait(timeout=60)
        return True

    options = {"concurrency": 1, "evaluation_timeout": 0.2}
    with runtime_testkit(bind_all("hangs"), {"hangs": hangs}, **options) as runtime:
        agent = runtime.bind(echo_agent(), agent_id="support-agent")
        ids = [agent.invoke_detailed(f"q{n}").interaction_id for n in range(5)]
        records = [runtime.wait_for_evaluations(i, timeout=10)[0] for i in ids]
        release.opened.set()
    assert [r.is_failed for r in records].count(True) == 3
    assert [r.is_verdict for r in records].count(True) == 2


class Broken:
    """A tracer that fails at everything."""

    def on_start(self, evaluator: str, request: Any) -> None:
        raise RuntimeError("tracer down")

    def on_result(self, evaluator: str, result: Any) -> None:
        raise RuntimeError("tracer down")

    def on_error(self, evaluator: str, error: BaseException) -> None:
        raise RuntimeError("tracer down")


def test_a_broken_tracer_changes_no_outcome_and_holds_nothing_up(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with runtime_testkit(SUPPORT, REPLY_LENGTH, tracer=Broken(), concurrency=1) as runtime:
        agent = runtime.bind(echo_agent(), agent_id="support-agent")
        ids = [agent.invoke_detailed(f"q{n}").interaction_id for n in range(3)]
        records = [runtime.wait_for_evaluations(i, timeout=5)[0] for i in ids]
    assert all(record.is_verdict for record in records)
    assert "tracer down" in caplog.text


def test_the_default_ledger_is_in_the_one_default_folder_and_an_old_one_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    EvaluationRuntime({}, start=False).close()
    assert sorted(p.name for p in (tmp_path / ".langchain-evals").iterdir())[0] == "evals.db"
    assert not (tmp_path / "evals.db").exists()

    # An evals.db an earlier release made in the working directory is used, with a warning.
    elsewhere = tmp_path / "older"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    SqliteLedger(elsewhere / "evals.db").close()
    with pytest.warns(DeprecationWarning, match=r"the default is now .langchain-evals/evals.db"):
        runtime = EvaluationRuntime({}, start=False)
    try:
        assert isinstance(runtime.ledger, SqliteLedger)
    finally:
        runtime.close()
    assert not (elsewhere / ".langchain-evals").exists()
