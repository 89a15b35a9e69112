"""Testing online evaluators the way the spec tells users to: call the evaluator with
``request_for`` an interaction (a seeded ledger holds the records), or run a real runtime with
``runtime_testkit``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _agents import chat_agent
from _factories import make_evaluation, make_interaction
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from pydantic import BaseModel

from langchain_evals_port import EvaluatorResult, Score, evaluator
from langchain_evals_port.core import Evaluator
from langchain_evals_port.core.errors import EvaluationFailure, EvaluatorUsageError
from langchain_evals_port.json_match import JsonMatch
from langchain_evals_port.runtime import (
    ConfigKeyError,
    EvaluatorConfig,
    InMemoryLedger,
    InteractionNotFoundError,
    InteractionRecord,
    SqliteLedger,
    Subject,
    request_for,
)
from langchain_evals_port.runtime.testkit import runtime_testkit
from langchain_evals_port.testing import ScriptedChatModel
from langchain_evals_port.trajectory import GraphTrajectoryMatch, TrajectoryMatch

ORDER = {"order_id": "A-17"}


def seeded_ledger(**overrides: Any) -> InMemoryLedger:
    """A ledger holding interaction-1 of support-agent (and an unrelated evaluation)."""
    return InMemoryLedger().seed(
        make_interaction("interaction-1", "support-agent", **overrides),
        make_evaluation("e-older", "interaction-0"),
    )


def interaction(**overrides: Any) -> InteractionRecord:
    """interaction-1, read from the seeded ledger as the runtime would."""
    return seeded_ledger(**overrides).get_interaction("interaction-1")


@evaluator
def mentions_order(outputs: str, config: EvaluatorConfig) -> Any:
    """Passes when the reply names the order; inconclusive when there is no reply."""
    if not outputs:
        return Score.unscored("the agent gave no reply")
    order = config.get_str("order_id")
    return Score(order in outputs, f"looked for {order}", {"order": order})


@evaluator
async def async_mentions_order(outputs: str, config: EvaluatorConfig) -> Any:
    """Whether the reply names the order, asynchronously."""
    await asyncio.sleep(0)
    order = config.get_str("order_id")
    return order in outputs, f"looked for {order}"


def test_a_verdict_is_the_core_result() -> None:
    result = mentions_order.invoke(request_for(interaction(), mentions_order, config=ORDER))
    assert result == EvaluatorResult(
        key="mentions_order", score=True, comment="looked for A-17", metadata={"order": "A-17"}
    )
    assert result.is_verdict


def test_a_failing_verdict_is_still_a_verdict() -> None:
    result = mentions_order.invoke(request_for(interaction(), config={"order_id": "B-99"}))
    assert isinstance(result, EvaluatorResult)
    assert (result.outcome, result.score, result.comment) == ("verdict", False, "looked for B-99")


def test_an_inconclusive_result_has_a_reason_and_no_score() -> None:
    silent = interaction(responses=[], output_text=None)
    result = mentions_order.invoke(request_for(silent, config=ORDER))
    assert isinstance(result, EvaluatorResult)
    assert result.outcome == "inconclusive"
    assert not result.is_verdict
    assert result.reason == "the agent gave no reply"
    assert result.score is None


def test_an_async_evaluator_runs_through_invoke() -> None:
    result = async_mentions_order.invoke(request_for(interaction(), config=ORDER))
    assert isinstance(result, EvaluatorResult)
    assert result.score is True


async def test_an_async_evaluator_runs_through_ainvoke() -> None:
    request = request_for(interaction(), config=ORDER)
    result = await async_mentions_order.ainvoke(request)
    assert isinstance(result, EvaluatorResult)
    assert result.score is True
    # A plain evaluator works under ainvoke too.
    plain = await mentions_order.ainvoke(request)
    assert isinstance(plain, EvaluatorResult)
    assert plain.score is True


def test_a_missing_config_key_raises_naming_it() -> None:
    with pytest.raises(ConfigKeyError, match="order_id") as caught:
        mentions_order.invoke(request_for(interaction(), config={"min_length": 3}))
    assert caught.value.key == "order_id"


def test_an_exception_in_the_evaluator_propagates_with_its_cause() -> None:
    @evaluator
    def broken() -> bool:
        raise RuntimeError("the rubric file is missing")

    with pytest.raises(EvaluationFailure, match="the rubric file is missing") as caught:
        broken.invoke(request_for(interaction()))
    assert isinstance(caught.value.__cause__, RuntimeError)


def test_the_seeded_ledger_holds_the_records_by_id_and_names_a_missing_one() -> None:
    ledger = seeded_ledger()
    assert ledger.get_interaction("interaction-1").final_response_text == (
        "Your order A-17 shipped on 27 February."
    )
    assert ledger.get_evaluation("e-older") == make_evaluation("e-older", "interaction-0")
    with pytest.raises(InteractionNotFoundError, match="interaction-404"):
        ledger.get_interaction("interaction-404")


def test_returning_something_that_is_not_a_score_fails_the_test() -> None:
    @evaluator
    def forgets_the_score(outputs: str) -> Any:
        return f"looked at {outputs}"

    with pytest.raises(EvaluatorUsageError, match="returned a str"):
        forgets_the_score.invoke(request_for(interaction()))


# --- what request_for builds -----------------------------------------------------------------


def test_the_request_holds_the_input_the_reply_and_the_runtime_variables() -> None:
    record = interaction()
    request = request_for(record, config={"min_length": 20}, evaluation_id="e-7")
    assert (request.inputs, request.outputs) == (
        "Where is my order A-17?",
        "Your order A-17 shipped on 27 February.",
    )
    assert request.variables["interaction"] == record
    assert request.variables["config"].get_int("min_length") == 20
    # The subject is the interaction's own, unless the test says otherwise.
    assert request.variables["subject"] == Subject.interaction("interaction-1", "support-agent")
    assert request.variables["evaluation_id"] == "e-7"
    flow = Subject.interaction("interaction-1", "support-agent", "flow-3")
    assert request_for(record, subject=flow).variables["subject"] == flow


def test_the_request_fits_what_the_evaluator_judges() -> None:
    record = interaction()
    transcript = request_for(record, TrajectoryMatch()).outputs
    assert all(isinstance(message, BaseMessage) for message in transcript)
    assert [message.type for message in transcript] == ["human", "ai", "tool", "ai"]
    json_reply = interaction(output_text='{"order_id": "A-17"}', responses=[])
    assert request_for(json_reply, JsonMatch()).outputs == {"order_id": "A-17"}
    # A reply that is not JSON reaches a JSON evaluator as the text it is.
    assert request_for(record, JsonMatch()).outputs == record.final_response_text
    with pytest.raises(EvaluatorUsageError, match="to_request"):
        request_for(record, GraphTrajectoryMatch())


def test_to_request_sets_its_fields_and_keeps_the_runtime_s_others() -> None:
    def with_reference(record: InteractionRecord) -> dict[str, Any]:
        return {"reference_outputs": "A-17 shipped", "inputs": "order A-17"}

    request = request_for(interaction(), to_request=with_reference, config=ORDER)
    assert request.inputs == "order A-17"
    assert request.outputs == "Your order A-17 shipped on 27 February."
    assert request.reference_outputs == "A-17 shipped"
    assert request.variables["config"] == ORDER
    assert request.variables["interaction"].interaction_id == "interaction-1"


# --- injecting a judge ------------------------------------------------------------------------


class Grade(BaseModel):
    helpful: bool
    reasoning: str


def judged_helpfulness(judge: BaseChatModel) -> Evaluator:
    """An evaluator asking the injected ``judge`` whether the reply helped (registered as
    ``lambda: judged_helpfulness(model)``, a factory)."""

    @evaluator(feedback_key="helpfulness")
    async def helpfulness(inputs: str, outputs: str) -> tuple[bool, str]:
        prompt = f"Question: {inputs}\nAnswer: {outputs}\nWas it helpful?"
        grade = await judge.with_structured_output(Grade).ainvoke(prompt)
        assert isinstance(grade, Grade)
        return grade.helpful, grade.reasoning

    return helpfulness


def test_a_factory_injects_a_judge_model() -> None:
    judge = ScriptedChatModel([{"helpful": False, "reasoning": "It dodged the question."}])
    result = judged_helpfulness(judge).invoke(request_for(interaction()))
    assert result == EvaluatorResult(
        key="helpfulness", score=False, comment="It dodged the question."
    )
    [call] = judge.calls
    assert call.kind == "structured"
    assert "Question: Where is my order A-17?" in call.messages[0].text
    assert "Answer: Your order A-17 shipped on 27 February." in call.messages[0].text


# --- the runtime test kit ---------------------------------------------------------------------


def test_the_sqlite_runtime_testkit_removes_its_temporary_directory() -> None:
    with runtime_testkit(None, {}, ledger="sqlite") as runtime:
        ledger = runtime.ledger
        assert isinstance(ledger, SqliteLedger)
        directory = ledger.path.parent
        assert ledger.path.exists()
    assert not directory.exists()


def test_the_runtime_testkit_refuses_an_unknown_ledger_kind() -> None:
    unknown = runtime_testkit(None, {}, ledger="postgres")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'memory', 'sqlite' or a Ledger"), unknown:
        pass


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
    evaluators = {"judged-helpfulness": lambda: judged_helpfulness(judge)}
    with runtime_testkit(config, evaluators, ledger="sqlite") as runtime:
        agent = runtime.bind(chat_agent(agent_model), agent_id="support-agent")
        reply = agent.invoke_detailed({"messages": [HumanMessage("When does A-17 ship?")]})
        assert reply.output["messages"][-1].content == "Order A-17 left the warehouse on Monday."

        [record] = runtime.wait_for_evaluations(reply.interaction_id, timeout=10)
        # The outcome first, then the verdict.
        assert record.outcome == "verdict", record.results
        assert record.passed is True
        assert record.result.comment == "It gives the shipping date."
        assert record.control_id == "helpfulness-control"
        assert runtime.ledger.get_evaluation(record.evaluation_id) == record

    # The judge saw the agent's real exchange, and its own call did not become an interaction
    # that was evaluated.
    [call] = judge.calls
    assert "Question: When does A-17 ship?" in call.messages[0].text
    assert "Answer: Order A-17 left the warehouse on Monday." in call.messages[0].text
