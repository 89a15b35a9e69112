"""The package's offline evaluators bound online as they are — an ``LLMJudge``, a
``TrajectoryMatch``, ``LevenshteinDistance``, ``JsonMatch``, an ``Evaluator`` subclass — end
to end on real LangGraph agents, recording the same core results they give offline."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, ClassVar

import httpx
import openai
import pytest
from _agents import chat_agent, echo_agent, reply_length
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from pydantic import Field

from langchain_evals_port import EvaluatorResult, evaluator
from langchain_evals_port.core import EvalRequest, Evaluator, OutputsKind
from langchain_evals_port.core.errors import EvaluatorUsageError
from langchain_evals_port.json_match import JsonMatch
from langchain_evals_port.judge import LLMJudge
from langchain_evals_port.runtime import (
    BoundAgent,
    EvaluationRecord,
    EvaluationRuntime,
    EvaluatorConfig,
    InMemoryLedger,
    InteractionRecord,
    Registration,
    request_for,
)
from langchain_evals_port.runtime.testkit import runtime_testkit
from langchain_evals_port.string import LevenshteinDistance
from langchain_evals_port.testing import ScriptedChatModel, ScriptedProviderError, ToolCallReply
from langchain_evals_port.trajectory import TrajectoryLLMJudge, TrajectoryMatch

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


def verdict_of(record: EvaluationRecord) -> EvaluatorResult:
    """The one result of a single-key evaluation that reached a verdict."""
    assert record.outcome == "verdict", record.results
    return record.result


def ask(question: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


def without(result: EvaluatorResult, *keys: str) -> EvaluatorResult:
    """``result`` without ``keys``: without ``passed``, what the evaluator itself gave (a
    bool score passes as it is, a number is undecided); without the metadata key
    ``latency_ms``, what a judge gives every time."""
    metadata = {k: v for k, v in result.metadata.items() if k not in keys}
    update: dict[str, Any] = {"metadata": metadata}
    if "passed" in keys:
        update["passed"] = result.score if isinstance(result.score, bool) else None
    return result.model_copy(update=update)


# --- LLMJudge ------------------------------------------------------------------------------


def test_an_llm_judge_bound_as_it_is_records_the_judge_verdict_and_reasoning() -> None:
    judge_model = ScriptedChatModel(
        [{"reasoning": "The reply is courteous and answers the question.", "score": True}]
    )
    judge = LLMJudge(
        prompt="Question: {inputs}\nReply: {outputs}\nIs the reply polite?",
        feedback_key="politeness",
        model=judge_model,
    )
    with runtime_testkit(bound_to_support("politeness"), {"politeness": judge}) as runtime:
        agent = runtime.bind(
            chat_agent(ScriptedChatModel(["Happy to help: your refund is on its way."])),
            agent_id=AGENT,
        )
        reply = agent.invoke_detailed(ask("Where is my refund?"))
        record = only_record(runtime, reply.interaction_id)

    assert record.evaluator_id == "politeness"
    result = verdict_of(record)
    assert (result.key, result.score, result.passed) == ("politeness", True, True)
    assert result.comment == "The reply is courteous and answers the question."
    # The prompt names inputs and outputs only; the runtime's other variables stay out.
    [call] = judge_model.calls
    assert call.messages[-1].text == (
        "Question: Where is my refund?\n"
        "Reply: Happy to help: your refund is on its way.\n"
        "Is the reply polite?"
    )


def grade(messages: list[BaseMessage]) -> dict[str, Any]:
    """A judge model rating the answer: specific answers high, anything else low."""
    if "precise" in messages[-1].text:
        return {"reasoning": "Specific and correct.", "score": 0.85}
    return {"reasoning": "Vague.", "score": 0.4}


def rating_judge() -> LLMJudge:
    return LLMJudge(
        prompt="Rate the answer: {outputs}",
        continuous=True,
        model=ScriptedChatModel(responder=grade),
    )


def test_a_continuous_judge_passes_by_threshold_and_keeps_its_score() -> None:
    quality = Registration(rating_judge(), pass_threshold=0.7)
    config = bound_to_support("quality")
    with runtime_testkit(config, {"quality": quality}, ledger="sqlite") as runtime:
        agent = runtime.bind(echo_agent(), agent_id=AGENT)
        good = agent.invoke_detailed("a precise question")
        poor = agent.invoke_detailed("something else")
        good_record = only_record(runtime, good.interaction_id)
        poor_record = only_record(runtime, poor.interaction_id)

    assert (good_record.passed, good_record.result.score) == (True, 0.85)
    assert good_record.result.comment == "Specific and correct."
    assert (poor_record.passed, poor_record.result.score) == (False, 0.4)
    assert poor_record.result.comment == "Vague."
    assert good_record.pass_threshold == poor_record.pass_threshold == 0.7


def test_the_online_result_is_the_offline_result_on_the_same_request() -> None:
    """One evaluator model: the record holds what the judge returns offline when called with
    ``request_for`` the stored interaction, plus the verdict the threshold gives."""
    judge = rating_judge()
    config = bound_to_support("quality")
    registration = Registration(judge, pass_threshold=0.7)
    with runtime_testkit(config, {"quality": registration}) as runtime:
        agent = runtime.bind(echo_agent(), agent_id=AGENT)
        reply = agent.invoke_detailed("a precise question")
        record = only_record(runtime, reply.interaction_id)
        stored = runtime.ledger.get_interaction(reply.interaction_id)

    offline = judge.invoke(request_for(stored, judge, evaluation_id=record.evaluation_id))
    assert without(record.result, "passed", "latency_ms") == without(offline, "latency_ms")
    assert record.result.passed is True


@pytest.mark.parametrize(
    "numeric",
    [
        pytest.param(lambda: rating_judge(), id="continuous-judge"),
        pytest.param(
            lambda: LLMJudge(
                prompt="Rate {outputs}", choices=[0.0, 0.5, 1.0], model=ScriptedChatModel()
            ),
            id="judge-with-choices",
        ),
        pytest.param(LevenshteinDistance, id="levenshtein"),
        pytest.param(JsonMatch, id="json-match"),
    ],
)
def test_numeric_evaluators_bound_without_a_pass_threshold_fail_at_startup(numeric: Any) -> None:
    with pytest.raises(EvaluatorUsageError, match=r"evaluators\['rated'\].*pass_threshold"):
        EvaluationRuntime(
            bound_to_support("rated"),
            evaluators={"rated": numeric()},
            ledger=InMemoryLedger(),
            start=False,
        )


@pytest.mark.parametrize(
    "boolean",
    [
        pytest.param(
            lambda: LLMJudge(prompt="Polite? {outputs}", model=ScriptedChatModel()), id="judge"
        ),
        pytest.param(lambda: TrajectoryMatch(mode="superset"), id="trajectory-match"),
        pytest.param(lambda: reply_length, id="function"),
    ],
)
def test_evaluators_with_true_or_false_verdicts_need_no_threshold(boolean: Any) -> None:
    runtime = EvaluationRuntime(
        bound_to_support("judged"),
        evaluators={"judged": boolean()},
        ledger=InMemoryLedger(),
        start=False,
    )
    runtime.close()


# --- reference outputs through to_request ---------------------------------------------------

REFERENCES = {"hello": "You asked: hello", "bye": "Goodbye to you, friend!"}


def with_reference(interaction: InteractionRecord) -> dict[str, Any]:
    """The request of the reference-based evaluators: the reply and the expected one."""
    return {
        "outputs": interaction.final_response_text,
        "reference_outputs": REFERENCES[interaction.input_text],
    }


def test_levenshtein_with_a_threshold_and_a_reference_from_to_request() -> None:
    similar = Registration(LevenshteinDistance(), pass_threshold=0.9, to_request=with_reference)
    with runtime_testkit(bound_to_support("similar"), {"similar": similar}) as runtime:
        model = ScriptedChatModel(responder=lambda messages: f"You asked: {messages[-1].text}")
        agent = runtime.bind(chat_agent(model), agent_id=AGENT)
        exact = agent.invoke_detailed(ask("hello"))
        far = agent.invoke_detailed(ask("bye"))
        exact_record = only_record(runtime, exact.interaction_id)
        far_record = only_record(runtime, far.interaction_id)

    assert (exact_record.passed, exact_record.result.score) == (True, 1.0)
    assert far_record.passed is False
    # The score LevenshteinDistance gives offline for the same pair.
    offline = LevenshteinDistance().invoke(
        {"outputs": "You asked: bye", "reference_outputs": REFERENCES["bye"]}
    )
    assert without(far_record.result, "passed") == offline
    assert isinstance(offline.score, float)
    assert offline.score < 0.9


def test_to_request_builds_the_request_and_the_runtime_variables_are_kept() -> None:
    seen: dict[str, Any] = {}

    @evaluator
    def matches_reference(
        outputs: str,
        reference_outputs: str,
        tone: str,
        interaction: InteractionRecord,
        config: EvaluatorConfig,
        evaluation_id: str,
    ) -> bool:
        seen.update(tone=tone, interaction=interaction, config=config, ids=evaluation_id)
        return outputs == reference_outputs

    def request(interaction: InteractionRecord) -> dict[str, Any]:
        return {**with_reference(interaction), "tone": "friendly"}

    config = {
        "evaluation": {
            "evaluators": {"matches": {"agents": {AGENT: {"min_length": 3}}}},
        }
    }
    registration = Registration(matches_reference, to_request=request)
    with runtime_testkit(config, {"matches": registration}) as runtime:
        reply = runtime.bind(echo_agent(), agent_id=AGENT).invoke_detailed("hello")
        record = only_record(runtime, reply.interaction_id)

    assert record.passed is True
    assert seen["tone"] == "friendly"  # a variable of to_request's own
    assert seen["interaction"].interaction_id == reply.interaction_id
    assert seen["config"] == {"min_length": 3}
    assert seen["ids"] == record.evaluation_id


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


def always_looks_up_a_17() -> ScriptedChatModel:
    """The order agent's model: looks up A-17 whatever the question, then answers."""
    return ScriptedChatModel(
        responder=lambda messages: (
            ToolCallReply("lookup_order", {"order_id": "A-17"})
            if isinstance(messages[-1], HumanMessage)
            else "It shipped yesterday."
        )
    )


def reference_call(order_id: str) -> AIMessage:
    return AIMessage(
        "", tool_calls=[{"name": "lookup_order", "args": {"order_id": order_id}, "id": "ref"}]
    )


def expected_path(interaction: InteractionRecord) -> EvalRequest:
    """The transcript, and the lookup the question asked for as the reference."""
    order = re.search(r"[A-Z]-\d+", interaction.input_text)
    assert order is not None
    return EvalRequest(
        outputs=interaction.transcript_messages, reference_outputs=[reference_call(order.group())]
    )


def test_a_function_a_judge_and_a_trajectory_match_are_bound_side_by_side() -> None:
    """The issue's example: evaluators of every kind, each under its id, no wrapper class;
    each records one evaluation of the same interaction."""
    judge_model = ScriptedChatModel(responder=lambda m: {"reasoning": "Clear.", "score": True})
    evaluators = {
        "reply-length": reply_length,
        "helpfulness": LLMJudge(prompt="Helpful? {inputs} {outputs}", model=judge_model),
        "path": Registration(lambda: TrajectoryMatch(mode="superset"), to_request=expected_path),
    }
    config = bound_to_support(*evaluators)
    with runtime_testkit(config, evaluators, ledger="sqlite") as runtime:
        agent = runtime.bind(order_agent(always_looks_up_a_17()), agent_id=AGENT)
        right = agent.invoke_detailed(ask("Where is order A-17?"))
        wrong = agent.invoke_detailed(ask("Where is order B-2?"))
        records = {
            label: {r.evaluator_id: r for r in runtime.wait_for_evaluations(reply.interaction_id)}
            for label, reply in (("right", right), ("wrong", wrong))
        }

    for label in ("right", "wrong"):
        assert set(records[label]) == {"reply-length", "helpfulness", "path"}
        assert records[label]["reply-length"].result.key == "reply_length"
        assert records[label]["helpfulness"].result.comment == "Clear."
        assert all(record.is_verdict for record in records[label].values())
    assert records["right"]["path"].passed is True
    path = records["wrong"]["path"]
    assert path.passed is False
    assert path.result.key == "trajectory_superset_match"
    assert path.result.comment is not None
    assert "lookup_order" in path.result.comment
    assert "B-2" in path.result.comment


def test_a_trajectory_judge_gets_the_transcript_as_langchain_messages() -> None:
    """A trajectory evaluator needs no request builder: its outputs are the interaction's
    transcript, the tool call and its result included."""
    judge_model = ScriptedChatModel([{"reasoning": "Looked it up first.", "score": True}])
    trajectory_judge = TrajectoryLLMJudge(model=judge_model)
    seen: list[Any] = []

    class Transcripts(Evaluator):
        """Records what a messages evaluator receives as its outputs."""

        outputs_kind: ClassVar[OutputsKind] = "messages"
        feedback_key: str = "transcripts"

        def _score(self, request: EvalRequest, config: RunnableConfig) -> bool:
            seen.append(request.outputs)
            return True

    evaluators = {"trajectory": trajectory_judge, "transcripts": Transcripts()}
    with runtime_testkit(bound_to_support(*evaluators), evaluators) as runtime:
        agent = runtime.bind(order_agent(always_looks_up_a_17()), agent_id=AGENT)
        reply = agent.invoke_detailed(ask("Where is order A-17?"))
        records = runtime.wait_for_evaluations(reply.interaction_id, timeout=10)

    assert sorted(r.evaluator_id for r in records if r.passed) == ["trajectory", "transcripts"]
    [transcript] = seen
    assert all(isinstance(message, BaseMessage) for message in transcript)
    assert [message.type for message in transcript] == ["human", "ai", "tool", "ai"]
    assert transcript[1].tool_calls[0]["args"] == {"order_id": "A-17"}
    assert transcript[2].text == "Order A-17 shipped yesterday."
    assert transcript[3].text == "It shipped yesterday."
    # The judge read that trajectory: the call with its arguments and the tool's answer.
    prompt = judge_model.calls[0].messages[-1].text
    assert '"order_id": "A-17"' in prompt
    assert "Order A-17 shipped yesterday." in prompt


# --- JSON and multi-key evaluators ----------------------------------------------------------

EXPECTED_ORDER = {"order_id": "A-17", "status": "shipped", "eta_days": 2}


def json_reference(interaction: InteractionRecord) -> dict[str, Any]:
    return {
        "outputs": json.loads(interaction.final_response_text),
        "reference_outputs": EXPECTED_ORDER,
    }


def test_a_multi_key_evaluator_records_one_result_per_key_under_one_evaluation() -> None:
    json_match = Registration(JsonMatch(), pass_threshold=1.0, to_request=json_reference)
    replies = {
        "all right": json.dumps({"order_id": "A-17", "status": "shipped", "eta_days": 2.0}),
        "one wrong": json.dumps({"order_id": "A-17", "status": "pending", "eta_days": 2}),
    }
    config = bound_to_support("order-json")
    with runtime_testkit(config, {"order-json": json_match}, ledger="sqlite") as runtime:
        agent: BoundAgent[str, str] = runtime.bind(
            RunnableLambda(lambda q: replies[q]), agent_id=AGENT
        )
        good = agent.invoke_detailed("all right")
        bad = agent.invoke_detailed("one wrong")
        good_record = only_record(runtime, good.interaction_id)
        bad_record = only_record(runtime, bad.interaction_id)
        assert runtime.ledger.get_evaluation(bad_record.evaluation_id) == bad_record

    def scores(record: EvaluationRecord) -> dict[str, tuple[Any, Any]]:
        return {r.key: (r.score, r.passed) for r in record.results}

    assert good_record.passed is True
    assert scores(good_record) == {
        "json_match:eta_days": (1.0, True),
        "json_match:order_id": (1.0, True),
        "json_match:status": (1.0, True),
    }
    # One failing key fails the evaluation; the others keep their own verdicts.
    assert bad_record.is_verdict
    assert bad_record.passed is False
    assert scores(bad_record) == {
        "json_match:eta_days": (1.0, True),
        "json_match:order_id": (1.0, True),
        "json_match:status": (0.0, False),
    }
    with pytest.raises(ValueError, match=r"has 3 results; read \.results"):
        _ = bad_record.result


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
    replies = {
        "complete": '{"order_id": "A-17", "status": "shipped"}',
        "partial": '{"order_id": "A-17", "status": "lost"}',
    }
    with runtime_testkit(bound_to_support("order-fields"), {"order-fields": checker}) as runtime:
        agent = runtime.bind(
            chat_agent(ScriptedChatModel(responder=lambda m: replies[m[-1].text])), agent_id=AGENT
        )
        complete = agent.invoke_detailed(ask("complete"))
        partial = agent.invoke_detailed(ask("partial"))
        complete_record = only_record(runtime, complete.interaction_id)
        partial_record = only_record(runtime, partial.interaction_id)

    assert sorted(checker.received, key=str) == sorted(
        [json.loads(text) for text in replies.values()], key=str
    )
    assert complete_record.passed is True
    assert {r.key: r.score for r in complete_record.results} == {
        "has_order_id": True,
        "has_status": True,
    }
    assert partial_record.passed is False
    assert {r.key: r.score for r in partial_record.results} == {
        "has_order_id": True,
        "has_status": False,
    }


# --- judge failures ------------------------------------------------------------------------


def polite_judge(replies: Sequence[Any] = (), **options: Any) -> tuple[LLMJudge, ScriptedChatModel]:
    model = ScriptedChatModel(list(replies), responder=options.pop("responder", None))
    judge = LLMJudge(
        prompt="Is this polite? {outputs}",
        model=model,
        structured_output_mode="prompted",
        feedback_key="politeness",
        **options,
    )
    return judge, model


def judge_once(judge: LLMJudge, **options: Any) -> EvaluationRecord:
    """The record of ``judge``, bound as politeness, on one echo-agent interaction."""
    evaluators = {"politeness": judge}
    with runtime_testkit(bound_to_support("politeness"), evaluators, **options) as runtime:
        reply = runtime.bind(echo_agent(), agent_id=AGENT).invoke_detailed("hello")
        return only_record(runtime, reply.interaction_id)


def test_a_judge_rejecting_the_request_is_a_failed_outcome_not_retried() -> None:
    judge, model = polite_judge([ScriptedProviderError.bad_request("model not found")])
    record = judge_once(judge, retry_backoff=0.01)

    assert record.outcome == "failed"
    assert record.passed is None
    assert record.result.error_code == "provider_error"
    assert record.result.reason is not None
    assert "model not found" in record.result.reason
    assert record.attempts == 1
    assert len(model.calls) == 1


def test_a_rate_limited_judge_is_retried_until_it_answers() -> None:
    judge, model = polite_judge(
        [ScriptedProviderError.rate_limited(), {"reasoning": "Kind words.", "score": True}]
    )
    record = judge_once(judge, retry_backoff=0.01)

    result = verdict_of(record)
    assert (result.score, result.comment) == (True, "Kind words.")
    assert record.attempts == 1  # a transient error does not use up an attempt
    assert len(model.calls) == 2


def openai_timeout(messages: list[BaseMessage]) -> Exception:
    """What the OpenAI client raises when the judge does not answer in time."""
    return openai.APITimeoutError(request=httpx.Request("POST", "https://api.openai.com/v1"))


def test_a_judge_recording_its_timeouts_is_retried_as_transient_until_it_answers() -> None:
    judge, model = polite_judge(
        [openai_timeout([]), {"reasoning": "Kind words.", "score": True}], on_error="record"
    )
    record = judge_once(judge, retry_backoff=0.01)

    assert verdict_of(record).comment == "Kind words."
    assert record.attempts == 1
    assert len(model.calls) == 2


def test_a_judge_recording_timeouts_is_recorded_failed_with_its_code_past_the_max_age() -> None:
    judge, model = polite_judge(responder=openai_timeout, on_error="record")
    record = judge_once(judge, retry_backoff=0.01, retry_max_age=0.3)

    # Retried as transient (no attempt used up), then recorded as the judge recorded it.
    assert record.attempts == 1
    assert len(model.calls) >= 2
    assert record.outcome == "failed"
    assert record.result.key == "politeness"
    assert record.result.error_code == "timeout"
    assert record.result.reason is not None
    assert "APITimeoutError" in record.result.reason
