"""One evaluation path for both modes: the same evaluators run by ``run_experiment`` and by
the runtime get the same request variables (``config`` included) and give the same results,
field by field; a variable no run gives is a usage error that ``run_experiment`` raises."""

from __future__ import annotations

import json
from typing import Any, ClassVar

import pytest
from langchain_core.runnables import RunnableLambda

from langchain_evals_port import EvaluatorResult, Score, evaluator
from langchain_evals_port.core import EvalRequest, Evaluator, OutputsKind
from langchain_evals_port.core.errors import MissingVariableError
from langchain_evals_port.experiments import Dataset, run_experiment
from langchain_evals_port.judge import LLMJudge
from langchain_evals_port.runtime import EvaluatorConfig, InteractionRecord
from langchain_evals_port.runtime.testkit import runtime_testkit
from langchain_evals_port.testing import ScriptedChatModel

AGENT = "support-agent"
QUESTIONS = ("Where is my parcel?", "Can I return a lamp?")


def answer(question: str) -> str:
    """The app: a JSON reply, so the JSON evaluator has something to parse."""
    return json.dumps({"answer": f"About {question!r}: it is on its way.", "order": "A-17"})


@evaluator
def long_enough(outputs: str, config: EvaluatorConfig) -> Score:
    minimum = config.get_int("min_length")
    return Score(len(outputs) >= minimum, comment=f"{len(outputs)} characters, {minimum} needed")


@evaluator
def asked_in_words(interaction: InteractionRecord, evaluation_id: str) -> Score:
    return Score(
        interaction.input_text.endswith("?"),
        metadata={"status": interaction.status, "has_id": bool(evaluation_id)},
    )


@evaluator(on_error="record")
def flaky_tool(outputs: str) -> bool:
    raise ConnectionRefusedError("the order service is down")


class HasOrder(Evaluator):
    """Judges the reply parsed as JSON."""

    outputs_kind: ClassVar[OutputsKind] = "json"

    def _score(self, request: EvalRequest, config: Any) -> Any:
        return EvaluatorResult(key="has_order", score=request.outputs.get("order") == "A-17")


class OneTurn(Evaluator):
    """Judges the transcript as LangChain messages."""

    outputs_kind: ClassVar[OutputsKind] = "messages"

    def _score(self, request: EvalRequest, config: Any) -> Any:
        kinds = [message.type for message in request.outputs]
        return EvaluatorResult(key="one_turn", score=kinds[:1] == ["human"], comment=str(kinds))


def evaluators() -> list[Evaluator]:
    judge = LLMJudge(
        prompt="Question: {inputs}\nReply: {outputs}\nIs the reply polite?",
        feedback_key="politeness",
        model=ScriptedChatModel(responder=lambda messages: {"reasoning": "Kind.", "score": True}),
    )
    return [
        long_enough,
        asked_in_words,
        flaky_tool,
        HasOrder(feedback_key="has_order"),
        OneTurn(feedback_key="one_turn"),
        judge,
    ]


def comparable(result: EvaluatorResult) -> dict[str, Any]:
    """Every field of ``result``; of its metadata all but the judge's own timing."""
    fields = result.model_dump()
    fields["metadata"] = {k: v for k, v in fields["metadata"].items() if k != "latency_ms"}
    return fields


def test_the_same_evaluators_give_the_same_results_offline_and_online() -> None:
    properties = {"min_length": 20}
    offline = run_experiment(
        RunnableLambda(answer, name="support"),
        Dataset.from_records([{"id": f"q{n}", "inputs": q} for n, q in enumerate(QUESTIONS)]),
        evaluators(),
        evaluator_config={"long_enough": properties},
        store=False,
        progress=False,
    )
    online_evaluators = {ev.feedback_key: ev for ev in evaluators()}
    config = {
        "evaluation": {
            "evaluators": {
                key: {"agents": {AGENT: properties if key == "long_enough" else {}}}
                for key in online_evaluators
            }
        }
    }
    online: dict[str, list[EvaluatorResult]] = {}
    with runtime_testkit(config, online_evaluators) as runtime:
        agent = runtime.bind(RunnableLambda(answer, name="support"), agent_id=AGENT)
        for question in QUESTIONS:
            reply = agent.invoke_detailed(question)
            records = runtime.wait_for_evaluations(reply.interaction_id, timeout=60)
            online[question] = [result for record in records for result in record.results]

    for run in offline.runs:
        by_key = {r.key: comparable(r) for r in online[run.case.inputs]}
        assert {r.key: comparable(r) for r in run.results} == by_key
    # Not a comparison of nothing: verdicts, a comment that read config, and a failure.
    [first] = [run for run in offline.runs if run.case.id == "q0"]
    results = {r.key: r for r in first.results}
    assert results["long_enough"].comment == f"{len(answer(QUESTIONS[0]))} characters, 20 needed"
    assert (results["has_order"].score, results["one_turn"].score) == (True, True)
    assert results["one_turn"].comment == "['human']"  # a plain Runnable: no model message
    assert results["politeness"].passed is True
    failed = results["flaky_tool"]
    assert (failed.outcome, failed.error_code) == ("failed", "provider_error")


def test_an_evaluator_asking_for_a_variable_no_run_gives_is_raised_by_run_experiment() -> None:
    @evaluator
    def needs_a_ticket(outputs: str, ticket: str) -> bool:
        return ticket in outputs

    with pytest.raises(MissingVariableError, match="needs variable 'ticket'"):
        run_experiment(
            lambda inputs: "fine",
            Dataset.from_records([{"inputs": "hi"}]),
            [needs_a_ticket],
            store=False,
            progress=False,
        )


def test_evaluator_config_names_only_the_experiment_s_evaluators() -> None:
    with pytest.raises(TypeError, match="did you mean 'long_enough'"):
        run_experiment(
            lambda inputs: "fine",
            Dataset.from_records([{"inputs": "hi"}]),
            [long_enough],
            evaluator_config={"long_enuogh": {"min_length": 1}},
            store=False,
            progress=False,
        )
