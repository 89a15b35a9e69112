"""The runtime end to end: bound agents, background evaluations, outcomes, retries, guards."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest
from _agents import Gate, ReplyLength, chat_agent, echo_agent, scripted_agent
from langchain_core.messages import HumanMessage

from langchain_evals_port.core.errors import EvaluatorUsageError
from langchain_evals_port.runtime import (
    ConfigurationError,
    Evaluation,
    EvaluationContext,
    EvaluationRuntime,
    Failed,
    Inconclusive,
    InMemoryLedger,
    InteractionNotFoundError,
    OnlineEvaluator,
    SqliteLedger,
    Verdict,
    redact_text,
    sampled,
)
from langchain_evals_port.runtime.testkit import runtime_testkit
from langchain_evals_port.testing import ScriptedChatModel, ScriptedProviderError

SUPPORT = {"evaluation": {"evaluators": {"reply-length": {"agents": {"support-agent": {}}}}}}


def bind_all(evaluator_id: str, **binding: Any) -> dict[str, Any]:
    """Configuration binding ``evaluator_id`` to support-agent."""
    return {"evaluation": {"evaluators": {evaluator_id: {"agents": {"support-agent": binding}}}}}


@pytest.fixture(params=["memory", "sqlite"])
def ledger_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_a_bound_graph_is_evaluated_in_the_background(ledger_kind: str) -> None:
    with runtime_testkit(SUPPORT, [ReplyLength], ledger=ledger_kind) as runtime:
        agent = runtime.bind(
            scripted_agent("Your parcel left on Monday."), agent_id="support-agent"
        )
        reply = agent.invoke_detailed({"messages": [HumanMessage("Where is my parcel?")]})
        assert reply.output["messages"][-1].content == "Your parcel left on Monday."

        [record] = runtime.wait_for_evaluations(reply.interaction_id)
        assert isinstance(record.outcome, Verdict)
        assert record.evaluation == Evaluation.passed(
            "reply of 27 characters, minimum 1"
        ).with_score(27.0).with_attribute("length", 27)
        assert (record.evaluator_id, record.agent_id, record.trigger) == (
            "reply-length",
            "support-agent",
            "on_interaction",
        )
        assert record.interaction_id == reply.interaction_id
        assert record.attempts == 1
        interaction = runtime.ledger.get_interaction(reply.interaction_id)
        assert interaction.input_text == "Where is my parcel?"


def test_an_agent_without_a_binding_is_recorded_but_not_evaluated() -> None:
    with runtime_testkit(SUPPORT, [ReplyLength]) as runtime:
        agent = runtime.bind(echo_agent(), agent_id="billing-agent", roles=["customer-facing"])
        reply = agent.invoke_detailed("refund?")
        assert runtime.wait_for_evaluations(reply.interaction_id) == []
        assert runtime.ledger.get_interaction(reply.interaction_id).output_text == (
            "You asked: refund?"
        )


def test_the_reply_returns_before_a_slow_evaluator_finishes() -> None:
    gate = Gate()

    class Slow(OnlineEvaluator):
        id = "slow"

        def evaluate(self, ctx: EvaluationContext) -> Any:
            gate.wait()
            return self.effects().complete(Evaluation.passed("done at last"))

    with runtime_testkit(bind_all("slow"), [Slow]) as runtime:
        agent = runtime.bind(echo_agent(), agent_id="support-agent")
        reply = agent.invoke_detailed("hello")
        assert gate.entered.wait(5), "the evaluation never started"
        # The reply is back and its interaction stored while the evaluation still runs.
        assert reply.output == "You asked: hello"
        assert runtime.ledger.get_evaluations(reply.interaction_id) == []
        assert runtime.ledger.pending_work(reply.interaction_id) == 1
        gate.opened.set()
        [record] = runtime.wait_for_evaluations(reply.interaction_id)
        assert record.evaluation is not None
        assert record.evaluation.explanation == "done at last"


class Judgement(OnlineEvaluator):
    """A verdict, an inconclusive outcome or an error, chosen by the question asked."""

    id = "judgement"

    async def evaluate(self, ctx: EvaluationContext) -> Any:
        question = ctx.interaction().input_text
        if question == "fail the verdict":
            return self.effects().complete(Evaluation.failed("the agent was rude"))
        if question == "nothing to judge":
            return self.effects().inconclusive("not applicable")
        if question == "crash":
            raise ValueError("the rubric is missing")
        return self.effects().complete(Evaluation.passed("fine"))


def test_verdicts_inconclusive_and_failed_outcomes_are_recorded_apart(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with runtime_testkit(bind_all("judgement"), [Judgement], ledger="sqlite") as runtime:
        agent = runtime.bind(echo_agent(), agent_id="support-agent")
        ids = {
            question: agent.invoke_detailed(question).interaction_id
            for question in ("all good", "fail the verdict", "nothing to judge", "crash")
        }
        with caplog.at_level(logging.WARNING, logger="langchain_evals_port.runtime"):
            records = {q: runtime.wait_for_evaluations(i)[0] for q, i in ids.items()}

    assert records["all good"].evaluation == Evaluation.passed("fine")
    failing = records["fail the verdict"]
    # A failing verdict is a verdict, not a Failed outcome.
    assert isinstance(failing.outcome, Verdict)
    assert not failing.is_failed
    assert failing.evaluation is not None
    assert failing.evaluation.passed is False
    assert records["nothing to judge"].outcome == Inconclusive(reason="not applicable")
    crashed = records["crash"]
    assert isinstance(crashed.outcome, Failed)
    assert crashed.evaluation is None
    assert (crashed.outcome.error.type, crashed.outcome.error.message) == (
        "ValueError",
        "the rubric is missing",
    )
    assert "the rubric is missing" in caplog.text


def test_an_evaluation_past_its_timeout_is_failed() -> None:
    class Stuck(OnlineEvaluator):
        id = "stuck"

        async def evaluate(self, ctx: EvaluationContext) -> Any:
            await asyncio.sleep(30)
            return self.effects().complete(Evaluation.passed("never"))

    with runtime_testkit(bind_all("stuck"), [Stuck], evaluation_timeout=0.2) as runtime:
        reply = runtime.bind(echo_agent(), agent_id="support-agent").invoke_detailed("hi")
        [record] = runtime.wait_for_evaluations(reply.interaction_id)
    assert isinstance(record.outcome, Failed)
    assert record.outcome.error.code == "timeout"
    assert "0.2s" in record.outcome.error.message


class Flaky(OnlineEvaluator):
    """Raises the errors queued in ``errors`` (one per attempt), then passes."""

    id = "flaky"
    errors: ClassVar[list[Exception]] = []
    calls = 0

    def evaluate(self, ctx: EvaluationContext) -> Any:
        type(self).calls += 1
        if type(self).errors:
            raise type(self).errors.pop(0)
        return self.effects().complete(Evaluation.passed("third time lucky"))


@pytest.fixture
def flaky() -> type[Flaky]:
    Flaky.errors, Flaky.calls = [], 0
    return Flaky


def test_transient_errors_are_retried_without_using_attempts(flaky: type[Flaky]) -> None:
    flaky.errors = [
        ScriptedProviderError.rate_limited(),
        ScriptedProviderError.server_error(),
        TimeoutError("read timed out"),
    ]
    with runtime_testkit(bind_all("flaky"), [flaky], retry_backoff=0.01) as runtime:
        reply = runtime.bind(echo_agent(), agent_id="support-agent").invoke_detailed("hi")
        [record] = runtime.wait_for_evaluations(reply.interaction_id)
    assert record.is_verdict
    assert record.attempts == 1
    assert flaky.calls == 4


def test_other_errors_use_attempts_then_fail(flaky: type[Flaky]) -> None:
    flaky.errors = [KeyError("a"), KeyError("b"), KeyError("c")]
    options = {"retry_backoff": 0.01, "max_attempts": 2}
    with runtime_testkit(bind_all("flaky"), [flaky], **options) as runtime:
        reply = runtime.bind(echo_agent(), agent_id="support-agent").invoke_detailed("hi")
        [record] = runtime.wait_for_evaluations(reply.interaction_id)
    assert isinstance(record.outcome, Failed)
    assert record.attempts == 2
    assert record.outcome.error.message == "'b'"
    assert flaky.calls == 2


def test_transient_errors_stop_being_retried_at_the_maximum_age(flaky: type[Flaky]) -> None:
    flaky.errors = [ScriptedProviderError.rate_limited() for _ in range(100)]
    options = {"retry_backoff": 0.01, "retry_max_age": 0.3}
    with runtime_testkit(bind_all("flaky"), [flaky], **options) as runtime:
        reply = runtime.bind(echo_agent(), agent_id="support-agent").invoke_detailed("hi")
        [record] = runtime.wait_for_evaluations(reply.interaction_id)
    assert isinstance(record.outcome, Failed)
    assert record.outcome.error.code == "rate_limited"
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
    with runtime_testkit(config, [ReplyLength], start=False) as runtime:
        agent = runtime.bind(echo_agent(), agent_id="support-agent")
        ids = [agent.invoke_detailed("q").interaction_id for _ in range(400)]
        queued = [runtime.ledger.pending_work(i) for i in ids]
    assert queued == [int(sampled(i, "reply-length", 0.25)) for i in ids]
    assert 0.18 <= sum(queued) / len(ids) <= 0.32


def test_a_repeated_trigger_keeps_one_record_and_new_attributes_evaluate_again() -> None:
    with runtime_testkit(bind_all("reply-length"), [ReplyLength]) as runtime:
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
    with runtime_testkit(SUPPORT, [ReplyLength]) as runtime:
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
    with runtime_testkit(config, [ReplyLength]) as runtime:
        verdicts = {}
        for agent_id in ("support-agent", "billing-agent"):
            agent = runtime.bind(echo_agent(), agent_id=agent_id)
            reply = agent.invoke_detailed("a question of some length")
            [record] = runtime.wait_for_evaluations(reply.interaction_id)
            verdicts[agent_id] = record.evaluation
    assert verdicts["support-agent"] is not None
    assert verdicts["support-agent"].passed
    assert verdicts["billing-agent"] is not None
    assert not verdicts["billing-agent"].passed
    assert "minimum 50" in verdicts["billing-agent"].explanation


def test_a_missing_property_fails_the_evaluation_not_the_startup() -> None:
    class NeedsRubric(OnlineEvaluator):
        id = "needs-rubric"

        def evaluate(self, ctx: EvaluationContext) -> Any:
            return self.effects().complete(Evaluation.passed(ctx.config.get_str("rubric")))

    with runtime_testkit(bind_all("needs-rubric"), [NeedsRubric]) as runtime:
        reply = runtime.bind(echo_agent(), agent_id="support-agent").invoke_detailed("hi")
        [record] = runtime.wait_for_evaluations(reply.interaction_id)
    assert isinstance(record.outcome, Failed)
    assert "rubric" in record.outcome.error.message


def test_failed_interactions_are_evaluated_only_when_configured() -> None:
    def broken(question: str) -> str:
        raise RuntimeError("the order service is down")

    from langchain_core.runnables import RunnableLambda

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
    with runtime_testkit(config, [ReplyLength]) as runtime:
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
    assert record.outcome == Inconclusive(reason="interaction failed, nothing to evaluate")


def test_a_judge_agent_called_from_an_evaluation_never_triggers_evaluations() -> None:
    """A ``"*"`` binding binds the judge agent too; its calls must not recurse."""
    judge_model = ScriptedChatModel(responder=lambda messages: "PASS")
    holder: dict[str, Any] = {}

    class AsksJudge(OnlineEvaluator):
        id = "asks-judge"

        def evaluate(self, ctx: EvaluationContext) -> Any:
            answer = holder["judge"].invoke({"messages": [HumanMessage("grade this")]})
            passed = answer["messages"][-1].content == "PASS"
            return self.effects().complete(Evaluation.of(passed, "the judge said so"))

    config = {"evaluation": {"evaluators": {"asks-judge": {"agent_roles": {"*": {}}}}}}
    with runtime_testkit(config, [AsksJudge], ledger="sqlite") as runtime:
        holder["judge"] = runtime.bind(chat_agent(judge_model), agent_id="judge", roles=["judge"])
        agent = runtime.bind(echo_agent(), agent_id="support-agent", roles=["customer-facing"])
        reply = agent.invoke_detailed("hello")
        [record] = runtime.wait_for_evaluations(reply.interaction_id)
        time.sleep(0.1)  # room for a wrongly triggered evaluation to be queued
        assert runtime.ledger.pending_work() == 0
        judged = runtime.ledger.query_interactions(agent_id="judge").items
        evaluations = runtime.ledger.query_evaluations().items

    assert record.evaluation is not None
    assert record.evaluation.passed
    [judge_interaction] = judged
    assert judge_interaction.evaluation_traffic
    assert judge_interaction.metadata["evaluation_id"] == record.evaluation_id
    assert [e.interaction_id for e in evaluations] == [reply.interaction_id]


def test_redaction_runs_before_anything_is_stored(tmp_path: Path) -> None:
    redact = redact_text(lambda text: text.replace("4111-1111", "****"))
    ledger = SqliteLedger(tmp_path / "evals.db")
    config = bind_all("reply-length")
    with runtime_testkit(config, [ReplyLength], ledger=ledger, redact=redact) as runtime:
        agent = runtime.bind(scripted_agent("Card 4111-1111 is blocked."), agent_id="support-agent")
        reply = agent.invoke_detailed({"messages": [HumanMessage("is 4111-1111 blocked?")]})
        [record] = runtime.wait_for_evaluations(reply.interaction_id)
        stored = runtime.ledger.get_interaction(reply.interaction_id)
    ledger.close()
    assert reply.output["messages"][-1].content == "Card 4111-1111 is blocked."  # caller unchanged
    assert stored.input_text == "is **** blocked?"
    assert stored.final_response_text == "Card **** is blocked."
    assert [m.text for m in stored.transcript] == ["is **** blocked?", "Card **** is blocked."]
    assert record.evaluation is not None
    assert "21 characters" in record.evaluation.explanation
    for file in tmp_path.iterdir():
        assert b"4111-1111" not in file.read_bytes(), file.name


def test_bad_configuration_fails_at_startup_with_the_key_path() -> None:
    with pytest.raises(ConfigurationError, match=r"evaluation\.evaluators\.unknown-evaluator"):
        EvaluationRuntime(
            bind_all("unknown-evaluator"),
            evaluators=[ReplyLength],
            start=False,
            ledger=InMemoryLedger(),
        )
    with pytest.raises(
        ConfigurationError, match=r"evaluation\.evaluators\.reply-length\.sampling_ratio"
    ):
        EvaluationRuntime(
            {"evaluation": {"evaluators": {"reply-length": {"sampling_ratio": 0.5}}}},
            evaluators=[ReplyLength],
            ledger=InMemoryLedger(),
            start=False,
        )


def test_evaluators_need_distinct_ids() -> None:
    class NoId(OnlineEvaluator):
        def evaluate(self, ctx: EvaluationContext) -> Any:
            raise AssertionError

    with pytest.raises(EvaluatorUsageError, match="needs a class attribute id"):
        EvaluationRuntime(None, evaluators=[NoId], ledger=InMemoryLedger(), start=False)
    with pytest.raises(EvaluatorUsageError, match="two evaluators have the id 'reply-length'"):
        EvaluationRuntime(
            None,
            evaluators=[ReplyLength, lambda: ReplyLength()],
            ledger=InMemoryLedger(),
            start=False,
        )


def test_factories_make_a_fresh_instance_per_evaluation() -> None:
    made: list[OnlineEvaluator] = []

    def factory() -> OnlineEvaluator:
        made.append(ReplyLength())
        return made[-1]

    with runtime_testkit(SUPPORT, [factory]) as runtime:
        agent = runtime.bind(echo_agent(), agent_id="support-agent")
        for _ in range(3):
            runtime.wait_for_evaluations(agent.invoke_detailed("hi").interaction_id)
    assert len(made) == 4  # one to learn the id at startup, one per evaluation
    assert len({id(m) for m in made}) == 4


async def test_async_agents_inside_a_running_loop() -> None:
    with runtime_testkit(SUPPORT, [ReplyLength], ledger="sqlite") as runtime:
        agent = runtime.bind(scripted_agent("Async reply"), agent_id="support-agent")
        reply = await agent.ainvoke_detailed({"messages": [HumanMessage("hi")]})
        [record] = await runtime.await_evaluations(reply.interaction_id)
    assert record.evaluation is not None
    assert record.evaluation.score == len("Async reply")


def test_wait_for_evaluations_times_out_naming_the_interaction() -> None:
    gate = Gate()

    class Slow(OnlineEvaluator):
        id = "slow"

        def evaluate(self, ctx: EvaluationContext) -> Any:
            gate.wait()
            return self.effects().complete(Evaluation.passed("ok"))

    with runtime_testkit(bind_all("slow"), [Slow]) as runtime:
        reply = runtime.bind(echo_agent(), agent_id="support-agent").invoke_detailed("hi")
        with pytest.raises(TimeoutError, match=reply.interaction_id):
            runtime.wait_for_evaluations(reply.interaction_id, timeout=0.1)
        gate.opened.set()


def test_close_drains_due_evaluations(tmp_path: Path) -> None:
    ledger = SqliteLedger(tmp_path / "evals.db")
    runtime = EvaluationRuntime(
        SUPPORT, evaluators=[ReplyLength], ledger=ledger, poll_interval=0.01
    )
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
    with runtime_testkit(config, [ReplyLength]) as runtime:
        evaluated = {}
        for agent_id in ("support-agent", "billing-agent"):
            agent = runtime.bind(approval_agent(), agent_id=agent_id)
            thread = {"configurable": {"thread_id": f"{agent_id}-thread"}}
            paused = agent.invoke_detailed({"messages": [HumanMessage("refund?")]}, thread)
            interaction = runtime.ledger.get_interaction(paused.interaction_id)
            assert interaction.status == "interrupted"
            assert interaction.thread_id == f"{agent_id}-thread"
            evaluated[agent_id] = runtime.wait_for_evaluations(paused.interaction_id)
            # Resuming is another interaction of the same thread, and it completes.
            resumed = agent.invoke_detailed(Command(resume=True), thread)
            assert resumed.output["messages"][-1].content == "Refund approved."
            [record] = runtime.wait_for_evaluations(resumed.interaction_id)
            assert record.evaluation is not None
    assert evaluated["support-agent"] == []
    assert len(evaluated["billing-agent"]) == 1


def test_code_that_cannot_wrap_its_agent_records_through_the_callback_handler() -> None:
    with runtime_testkit(SUPPORT, [ReplyLength], ledger="sqlite") as runtime:
        handler = runtime.callback_handler(agent_id="support-agent", roles=["customer-facing"])
        graph = scripted_agent("Handled through callbacks.")
        graph.invoke({"messages": [HumanMessage("hi")]}, {"callbacks": [handler]})
        [interaction] = runtime.ledger.query_interactions(agent_id="support-agent").items
        [record] = runtime.wait_for_evaluations(interaction.interaction_id)
    assert interaction.roles == ("customer-facing",)
    assert interaction.final_response_text == "Handled through callbacks."
    assert record.evaluation is not None
    assert record.evaluation.score == len("Handled through callbacks.")


def test_evaluators_stuck_past_their_timeout_never_block_recording() -> None:
    """A plain ``def`` that never returns holds a thread, not the worker: later evaluations
    still run and every outcome is recorded."""
    release = Gate()
    calls: list[str] = []

    class Hangs(OnlineEvaluator):
        id = "hangs"

        def evaluate(self, ctx: EvaluationContext) -> Any:
            calls.append(ctx.evaluation_id)
            if len(calls) <= 3:
                release.wait(timeout=60)
            return self.effects().complete(Evaluation.passed("answered"))

    options = {"concurrency": 1, "evaluation_timeout": 0.2}
    with runtime_testkit(bind_all("hangs"), [Hangs], **options) as runtime:
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
    with runtime_testkit(SUPPORT, [ReplyLength], tracer=Broken(), concurrency=1) as runtime:
        agent = runtime.bind(echo_agent(), agent_id="support-agent")
        ids = [agent.invoke_detailed(f"q{n}").interaction_id for n in range(3)]
        records = [runtime.wait_for_evaluations(i, timeout=5)[0] for i in ids]
    assert all(record.is_verdict for record in records)
    assert "tracer down" in caplog.text
