"""Offline evaluators bound online with ``OnlineEvaluator.from_evaluator``, end to end."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, ClassVar

import pytest
from _agents import chat_agent, echo_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from pydantic import Field

from langchain_evals_port.core import EvalRequest, Evaluator, OutputsKind
from langchain_evals_port.core.errors import EvaluatorUsageError
from langchain_evals_port.json_match import JsonMatch
from langchain_evals_port.judge import LLMJudge
from langchain_evals_port.runtime import (
    BoundAgent,
    EvaluationRecord,
    EvaluationRuntime,
    Failed,
    InteractionRecord,
    OnlineEvaluator,
    Verdict,
)
from langchain_evals_port.runtime.testkit import runtime_testkit
from langchain_evals_port.string import LevenshteinDistance
from langchain_evals_port.testing import ScriptedChatModel, ScriptedProviderError, ToolCallReply
from langchain_evals_port.trajectory import GraphTrajectoryMatch, TrajectoryMatch

AGENT = "support-agent"


def bound_to_support(*evaluator_ids: str) -> dict[str, Any]:
    return {
        "evaluation": {
            "evaluators": {name: {"agents": {AGENT: {}}} for name in evaluator_ids},
        }
    }


def only_record(runtime: EvaluationRuntime, interaction_id: str) -> EvaluationRecord:
    [record] = runtime.wait_for_evaluations(interaction_id, timeout=10)
    return record


def verdict_of(record: EvaluationRecord) -> Any:
    assert isinstance(record.outcome, Verdict), record.outcome
    return record.outcome.evaluation


def ask(question: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


# --- LLMJudge ------------------------------------------------------------------------------


def test_an_llm_judge_verdict_carries_the_judge_reasoning() -> None:
    judge_model = ScriptedChatModel(
        [{"reasoning": "The reply is courteous and answers the question.", "score": True}]
    )
    judge = LLMJudge(
        prompt="Question: {inputs}\nReply: {outputs}\nIs the reply polite?",
        feedback_key="politeness",
        model=judge_model,
    )
    politeness = OnlineEvaluator.from_evaluator("politeness", judge)
    with runtime_testkit(bound_to_support("politeness"), [politeness]) as runtime:
        agent = runtime.bind(
            chat_agent(ScriptedChatModel(["Happy to help: your refund is on its way."])),
            agent_id=AGENT,
        )
        reply = agent.invoke_detailed(ask("Where is my refund?"))
        record = only_record(runtime, reply.interaction_id)

    evaluation = verdict_of(record)
    assert evaluation.passed is True
    assert evaluation.explanation == "The reply is courteous and answers the question."
    assert evaluation.score is None
    assert record.evaluator_id == "politeness"
    [call] = judge_model.calls
    assert call.messages[-1].text == (
        "Question: Where is my refund?\n"
        "Reply: Happy to help: your refund is on its way.\n"
        "Is the reply polite?"
    )


def test_numeric_evaluators_need_a_pass_threshold_when_bound() -> None:
    continuous = LLMJudge(prompt="Rate {outputs}", continuous=True, model=ScriptedChatModel())
    with pytest.raises(EvaluatorUsageError, match="pass_threshold"):
        OnlineEvaluator.from_evaluator("rated", continuous)
    with pytest.raises(EvaluatorUsageError, match="pass_threshold"):
        OnlineEvaluator.from_evaluator("similar", LevenshteinDistance())
    choices = LLMJudge(prompt="Rate {outputs}", choices=[0.0, 0.5, 1.0], model=ScriptedChatModel())
    with pytest.raises(EvaluatorUsageError, match="pass_threshold"):
        OnlineEvaluator.from_evaluator("graded", choices)


def test_a_continuous_judge_passes_by_threshold_and_keeps_its_score() -> None:
    def grade(messages: list[BaseMessage]) -> dict[str, Any]:
        text = messages[-1].text
        if "precise" in text:
            return {"reasoning": "Specific and correct.", "score": 0.85}
        return {"reasoning": "Vague.", "score": 0.4}

    judge = LLMJudge(
        prompt="Rate the answer: {outputs}",
        continuous=True,
        model=ScriptedChatModel(responder=grade),
    )
    quality = OnlineEvaluator.from_evaluator("quality", judge, pass_threshold=0.7)
    with runtime_testkit(bound_to_support("quality"), [quality], ledger="sqlite") as runtime:
        agent = runtime.bind(echo_agent(), agent_id=AGENT)
        good = agent.invoke_detailed("a precise question")
        poor = agent.invoke_detailed("something else")
        good_evaluation = verdict_of(only_record(runtime, good.interaction_id))
        poor_evaluation = verdict_of(only_record(runtime, poor.interaction_id))

    assert (good_evaluation.passed, good_evaluation.score) == (True, 0.85)
    assert good_evaluation.explanation == "Specific and correct."
    assert (poor_evaluation.passed, poor_evaluation.score) == (False, 0.4)
    assert poor_evaluation.explanation == "Vague."


def test_levenshtein_with_a_threshold_and_a_reference() -> None:
    references = {"hello": "You asked: hello", "bye": "Goodbye to you, friend!"}

    def request(interaction: InteractionRecord) -> dict[str, Any]:
        return {
            "outputs": interaction.final_response_text,
            "reference_outputs": references[interaction.input_text],
        }

    similar = OnlineEvaluator.from_evaluator(
        "similar", LevenshteinDistance(), pass_threshold=0.9, to_request=request
    )
    with runtime_testkit(bound_to_support("similar"), [similar]) as runtime:
        model = ScriptedChatModel(responder=lambda messages: f"You asked: {messages[-1].text}")
        agent = runtime.bind(chat_agent(model), agent_id=AGENT)
        exact = agent.invoke_detailed(ask("hello"))
        far = agent.invoke_detailed(ask("bye"))
        exact_evaluation = verdict_of(only_record(runtime, exact.interaction_id))
        far_evaluation = verdict_of(only_record(runtime, far.interaction_id))

    assert (exact_evaluation.passed, exact_evaluation.score) == (True, 1.0)
    assert far_evaluation.passed is False
    assert far_evaluation.score is not None
    assert 0.0 <= far_evaluation.score < 0.9
    # Without a comment, the explanation says what was scored.
    assert far_evaluation.explanation.startswith("levenshtein_distance scored 0.")


# --- trajectories --------------------------------------------------------------------------


@tool
def lookup_order(order_id: str) -> str:
    """Look up where an order is."""
    return f"Order {order_id} shipped yesterday."


def order_agent(model: ScriptedChatModel) -> Any:
    """A LangGraph agent: model -> tool -> model."""
    chat = model.bind_tools([lookup_order])

    def call_model(state: MessagesState) -> dict[str, Any]:
        reply = chat.invoke([SystemMessage("You track orders."), *state["messages"]])
        return {"messages": [reply]}

    def route(state: MessagesState) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    graph = StateGraph(MessagesState)
    graph.add_node("model", call_model)
    graph.add_node("tools", ToolNode([lookup_order]))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", route)
    graph.add_edge("tools", "model")
    return graph.compile()


def reference_call(order_id: str) -> AIMessage:
    return AIMessage(
        "", tool_calls=[{"name": "lookup_order", "args": {"order_id": order_id}, "id": "ref"}]
    )


def test_a_trajectory_match_judges_the_interaction_transcript() -> None:
    seen: list[list[BaseMessage]] = []

    def request(interaction: InteractionRecord) -> EvalRequest:
        transcript = interaction.transcript_messages
        seen.append(transcript)
        expected = "A-17" if "A-17" in interaction.input_text else "Z-00"
        return EvalRequest(outputs=transcript, reference_outputs=[reference_call(expected)])

    trajectory = OnlineEvaluator.from_evaluator(
        "tool-use", TrajectoryMatch(mode="superset"), to_request=request
    )
    model = ScriptedChatModel(
        responder=lambda messages: (
            ToolCallReply("lookup_order", {"order_id": "A-17"})
            if isinstance(messages[-1], HumanMessage)
            else "It shipped yesterday."
        )
    )
    with runtime_testkit(bound_to_support("tool-use"), [trajectory], ledger="sqlite") as runtime:
        agent = runtime.bind(order_agent(model), agent_id=AGENT)
        right = agent.invoke_detailed(ask("Where is order A-17?"))
        wrong = agent.invoke_detailed(ask("Where is order B-2?"))
        right_evaluation = verdict_of(only_record(runtime, right.interaction_id))
        wrong_evaluation = verdict_of(only_record(runtime, wrong.interaction_id))

    assert right_evaluation.passed is True
    assert wrong_evaluation.passed is False
    assert "lookup_order" in wrong_evaluation.explanation
    assert "Z-00" in wrong_evaluation.explanation
    # The outputs were the interaction's transcript, as LangChain messages.
    for transcript in seen:
        assert all(isinstance(message, BaseMessage) for message in transcript)
        assert [message.type for message in transcript] == ["human", "ai", "tool", "ai"]
        assert transcript[1].tool_calls[0]["args"] == {"order_id": "A-17"}  # type: ignore[attr-defined]
        assert transcript[2].text == "Order A-17 shipped yesterday."
        assert transcript[3].text == "It shipped yesterday."


def test_a_graph_trajectory_match_needs_to_request() -> None:
    with pytest.raises(EvaluatorUsageError, match="to_request"):
        OnlineEvaluator.from_evaluator("graph-steps", GraphTrajectoryMatch())


# --- JSON ----------------------------------------------------------------------------------

EXPECTED_ORDER = {"order_id": "A-17", "status": "shipped", "eta_days": 2}


def json_reference(interaction: InteractionRecord) -> dict[str, Any]:
    return {
        "outputs": json.loads(interaction.final_response_text),
        "reference_outputs": EXPECTED_ORDER,
    }


def test_json_match_passes_only_when_every_key_passes() -> None:
    json_match = OnlineEvaluator.from_evaluator(
        "order-json", JsonMatch(), pass_threshold=1.0, to_request=json_reference
    )
    replies = {
        "all right": json.dumps({"order_id": "A-17", "status": "shipped", "eta_days": 2.0}),
        "one wrong": json.dumps({"order_id": "A-17", "status": "pending", "eta_days": 2}),
    }
    with runtime_testkit(bound_to_support("order-json"), [json_match]) as runtime:
        agent: BoundAgent[str, str] = runtime.bind(
            RunnableLambda(lambda q: replies[q]), agent_id=AGENT
        )
        good = agent.invoke_detailed("all right")
        bad = agent.invoke_detailed("one wrong")
        good_evaluation = verdict_of(only_record(runtime, good.interaction_id))
        bad_evaluation = verdict_of(only_record(runtime, bad.interaction_id))

    assert good_evaluation.passed is True
    assert good_evaluation.attributes == {
        "json_match:eta_days": "1.0",
        "json_match:order_id": "1.0",
        "json_match:status": "1.0",
    }
    assert bad_evaluation.passed is False
    assert bad_evaluation.attributes == {
        "json_match:eta_days": "1.0",
        "json_match:order_id": "1.0",
        "json_match:status": "0.0",
    }
    assert "json_match:status: failed" in bad_evaluation.explanation
    assert "json_match:order_id: passed" in bad_evaluation.explanation


def test_json_match_without_a_threshold_is_refused_when_bound() -> None:
    with pytest.raises(EvaluatorUsageError, match="pass_threshold"):
        OnlineEvaluator.from_evaluator("order-json", JsonMatch(), to_request=json_reference)


class OrderFields(Evaluator):
    """Checks fields of a parsed JSON reply; one boolean result per field."""

    outputs_kind: ClassVar[OutputsKind] = "json"
    feedback_key: str = "order_fields"
    received: list[Any] = Field(default_factory=list)

    def _score(self, request: EvalRequest, config: RunnableConfig) -> Any:
        self.received.append(request.outputs)
        outputs = request.outputs if isinstance(request.outputs, dict) else {}
        return {
            "has_order_id": bool(re.fullmatch(r"[A-Z]-\d+", str(outputs.get("order_id", "")))),
            "has_status": outputs.get("status") in ("pending", "shipped"),
        }


def test_a_json_evaluator_gets_the_final_response_parsed() -> None:
    checker = OrderFields()
    fields = OnlineEvaluator.from_evaluator("order-fields", checker)
    replies = {
        "complete": '{"order_id": "A-17", "status": "shipped"}',
        "partial": '{"order_id": "A-17", "status": "lost"}',
    }
    with runtime_testkit(bound_to_support("order-fields"), [fields]) as runtime:
        agent = runtime.bind(
            chat_agent(ScriptedChatModel(responder=lambda m: replies[m[-1].text])), agent_id=AGENT
        )
        complete = agent.invoke_detailed(ask("complete"))
        partial = agent.invoke_detailed(ask("partial"))
        complete_evaluation = verdict_of(only_record(runtime, complete.interaction_id))
        partial_evaluation = verdict_of(only_record(runtime, partial.interaction_id))

    assert sorted(checker.received, key=str) == sorted(
        [json.loads(text) for text in replies.values()], key=str
    )
    assert complete_evaluation.passed is True
    assert complete_evaluation.attributes == {"has_order_id": "True", "has_status": "True"}
    assert partial_evaluation.passed is False
    assert partial_evaluation.attributes == {"has_order_id": "True", "has_status": "False"}


# --- judge failures ------------------------------------------------------------------------


def polite_judge(replies: Sequence[Any]) -> tuple[LLMJudge, ScriptedChatModel]:
    model = ScriptedChatModel(list(replies))
    judge = LLMJudge(
        prompt="Is this polite? {outputs}", model=model, structured_output_mode="prompted"
    )
    return judge, model


def test_a_judge_rejecting_the_request_is_a_failed_outcome_not_retried() -> None:
    judge, model = polite_judge([ScriptedProviderError.bad_request("model not found")])
    politeness = OnlineEvaluator.from_evaluator("politeness", judge)
    with runtime_testkit(
        bound_to_support("politeness"), [politeness], retry_backoff=0.01
    ) as runtime:
        agent = runtime.bind(echo_agent(), agent_id=AGENT)
        reply = agent.invoke_detailed("hello")
        record = only_record(runtime, reply.interaction_id)

    assert isinstance(record.outcome, Failed), record.outcome
    assert record.evaluation is None
    assert record.outcome.error.code == "provider_error"
    assert "model not found" in record.outcome.error.message
    assert record.attempts == 1
    assert len(model.calls) == 1


def test_a_rate_limited_judge_is_retried_until_it_answers() -> None:
    judge, model = polite_judge(
        [ScriptedProviderError.rate_limited(), {"reasoning": "Kind words.", "score": True}]
    )
    politeness = OnlineEvaluator.from_evaluator("politeness", judge)
    with runtime_testkit(
        bound_to_support("politeness"), [politeness], retry_backoff=0.01
    ) as runtime:
        agent = runtime.bind(echo_agent(), agent_id=AGENT)
        reply = agent.invoke_detailed("hello")
        record = only_record(runtime, reply.interaction_id)

    evaluation = verdict_of(record)
    assert (evaluation.passed, evaluation.explanation) == (True, "Kind words.")
    assert record.attempts == 1  # a transient error does not use up an attempt
    assert len(model.calls) == 2
