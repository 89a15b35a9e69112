"""The evaluator test kit and the runtime test kit, used the way the spec tells users to."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _agents import chat_agent
from _factories import make_evaluation, make_interaction
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from pydantic import BaseModel

from langchain_evals_port.runtime import (
    ConfigKeyError,
    Evaluation,
    EvaluationContext,
    InMemoryLedger,
    OnlineEvaluator,
    SqliteLedger,
    Subject,
    Verdict,
)
from langchain_evals_port.runtime.testkit import EvaluatorTestKit, runtime_testkit
from langchain_evals_port.testing import ScriptedChatModel

SUBJECT = Subject.interaction("interaction-1", "support-agent")


def seeded_ledger(**overrides: Any) -> InMemoryLedger:
    """A ledger holding interaction-1 of support-agent (and an unrelated evaluation)."""
    return InMemoryLedger().seed(
        make_interaction("interaction-1", "support-agent", **overrides),
        make_evaluation("e-older", "interaction-0"),
    )


class MentionsOrder(OnlineEvaluator):
    """Passes when the reply names the order; inconclusive when there is no reply."""

    id = "mentions-order"

    def evaluate(self, ctx: EvaluationContext) -> Any:
        text = ctx.interaction().final_response_text
        if not text:
            return self.effects().inconclusive("the agent gave no reply")
        order = ctx.config.get_str("order_id")
        return self.effects().complete(
            Evaluation.of(order in text, f"looked for {order}").with_attribute("order", order)
        )


class AsyncMentionsOrder(MentionsOrder):
    id = "async-mentions-order"

    async def evaluate(self, ctx: EvaluationContext) -> Any:
        await asyncio.sleep(0)
        return super().evaluate(ctx)


def kit(factory: Any = MentionsOrder, **overrides: Any) -> EvaluatorTestKit:
    return (
        EvaluatorTestKit.of(factory)
        .with_config({"order_id": "A-17"})
        .with_ledger(seeded_ledger(**overrides))
    )


def test_a_verdict_is_complete_and_readable() -> None:
    result = kit().evaluate(SUBJECT)
    assert result.is_complete
    assert not result.is_inconclusive
    assert result.inconclusive_reason is None
    assert result.evaluation == Evaluation.passed("looked for A-17").with_attribute("order", "A-17")


def test_a_failing_verdict_is_still_complete() -> None:
    result = kit().with_config({"order_id": "B-99"}).evaluate(SUBJECT)
    assert result.is_complete
    assert result.evaluation.passed is False
    assert result.evaluation.explanation == "looked for B-99"


def test_an_inconclusive_result_has_a_reason_and_no_evaluation() -> None:
    result = kit(responses=[], output_text=None).evaluate(SUBJECT)
    assert result.is_inconclusive
    assert not result.is_complete
    assert result.inconclusive_reason == "the agent gave no reply"
    with pytest.raises(AssertionError, match="the agent gave no reply"):
        _ = result.evaluation


def test_an_async_evaluator_runs_through_evaluate() -> None:
    result = kit(AsyncMentionsOrder).evaluate(SUBJECT)
    assert result.evaluation.passed is True


async def test_an_async_evaluator_runs_through_aevaluate() -> None:
    result = await kit(AsyncMentionsOrder).aevaluate(SUBJECT)
    assert result.evaluation.passed is True
    # A plain evaluator works under aevaluate too.
    assert (await kit().aevaluate(SUBJECT)).evaluation.passed is True


def test_a_missing_config_key_raises_naming_it() -> None:
    with pytest.raises(ConfigKeyError, match="order_id") as caught:
        kit().with_config({"min_length": 3}).evaluate(SUBJECT)
    assert caught.value.key == "order_id"


def test_an_exception_in_evaluate_propagates() -> None:
    class Broken(OnlineEvaluator):
        id = "broken"

        def evaluate(self, ctx: EvaluationContext) -> Any:
            raise RuntimeError("the rubric file is missing")

    with pytest.raises(RuntimeError, match="the rubric file is missing"):
        EvaluatorTestKit.of(Broken).with_ledger(seeded_ledger()).evaluate(SUBJECT)


def test_an_unknown_interaction_propagates_the_ledger_error() -> None:
    with pytest.raises(KeyError, match="interaction-404"):
        kit().evaluate(Subject.interaction("interaction-404", "support-agent"))


def test_returning_something_that_is_not_an_effect_fails_the_test() -> None:
    class ReturnsEvaluation(OnlineEvaluator):
        id = "returns-evaluation"

        def evaluate(self, ctx: EvaluationContext) -> Any:
            return Evaluation.passed("forgot to wrap it")

    with pytest.raises(AssertionError, match="effects"):
        EvaluatorTestKit.of(ReturnsEvaluation).evaluate(SUBJECT)


class Grade(BaseModel):
    helpful: bool
    reasoning: str


class JudgedHelpfulness(OnlineEvaluator):
    """Asks an injected judge model whether the reply helped."""

    id = "judged-helpfulness"

    def __init__(self, judge: BaseChatModel) -> None:
        self.judge = judge

    async def evaluate(self, ctx: EvaluationContext) -> Any:
        interaction = ctx.interaction()
        prompt = (
            f"Question: {interaction.input_text}\n"
            f"Answer: {interaction.final_response_text}\nWas it helpful?"
        )
        grade = await self.judge.with_structured_output(Grade).ainvoke(prompt)
        assert isinstance(grade, Grade)
        return self.effects().complete(Evaluation.of(grade.helpful, grade.reasoning))


def test_a_factory_injects_a_judge_model() -> None:
    judge = ScriptedChatModel([{"helpful": False, "reasoning": "It dodged the question."}])
    result = (
        EvaluatorTestKit.of(lambda: JudgedHelpfulness(judge))
        .with_ledger(seeded_ledger())
        .evaluate(SUBJECT)
    )
    assert result.evaluation == Evaluation.failed("It dodged the question.")
    [call] = judge.calls
    assert call.kind == "structured"
    assert "Question: Where is my order A-17?" in call.messages[0].text
    assert "Answer: Your order A-17 shipped on 27 February." in call.messages[0].text


def test_the_sqlite_runtime_testkit_removes_its_temporary_directory() -> None:
    with runtime_testkit(None, [], ledger="sqlite") as runtime:
        ledger = runtime.ledger
        assert isinstance(ledger, SqliteLedger)
        directory = ledger.path.parent
        assert ledger.path.exists()
    assert not directory.exists()


def test_the_spec_flow_with_scripted_agent_and_judge() -> None:
    agent_model = ScriptedChatModel(["Order A-17 left the warehouse on Monday."])
    judge = ScriptedChatModel([{"helpful": True, "reasoning": "It gives the shipping date."}])
    config = {
        "evaluation": {
            "evaluators": {
                "judged-helpfulness": {
                    "control_id": "helpfulness-control",
                    "agents": {"support-agent": {}},
                }
            }
        }
    }
    with runtime_testkit(config, [lambda: JudgedHelpfulness(judge)], ledger="sqlite") as runtime:
        agent = runtime.bind(chat_agent(agent_model), agent_id="support-agent")
        reply = agent.invoke_detailed({"messages": [HumanMessage("When does A-17 ship?")]})
        assert reply.output["messages"][-1].content == "Order A-17 left the warehouse on Monday."

        [record] = runtime.wait_for_evaluations(reply.interaction_id, timeout=10)
        assert isinstance(record.outcome, Verdict), record.outcome
        assert record.outcome.evaluation == Evaluation.passed("It gives the shipping date.")
        assert record.control_id == "helpfulness-control"
        assert runtime.ledger.get_evaluation(record.evaluation_id) == record

    # The judge saw the agent's real exchange, and its own call did not become an interaction
    # that was evaluated.
    [call] = judge.calls
    assert "Question: When does A-17 ship?" in call.messages[0].text
    assert "Answer: Order A-17 left the warehouse on Monday." in call.messages[0].text
