"""PairwiseLLMJudge with scripted judges: both orders asked, position bias caught, failures
kept apart from scores, and LangSmith's comparative convention."""

import asyncio
import datetime
import re
import uuid

import pytest
from langchain_core.caches import InMemoryCache
from langsmith import schemas
from langsmith.evaluation.evaluator import comparison_evaluator

from langchain_evals_port import (
    EvaluationFailure,
    EvaluatorInputError,
    PairwiseLLMJudge,
)
from langchain_evals_port.judge import judge_defaults
from langchain_evals_port.testing import ScriptedChatModel, ScriptedProviderError

ANSWER = re.compile(r"<answer_(a|b)>\n(.*?)\n</answer_\1>", re.DOTALL)


def shown(call):
    """The outputs a judge call showed, as (answer A, answer B)."""
    found = dict(ANSWER.findall("\n".join(m.text for m in call.messages)))
    return found["a"], found["b"]


def prefers(right):
    """A judge that prefers the answer containing ``right``, wherever it is shown."""

    def respond(messages):
        a, b = dict(ANSWER.findall("\n".join(m.text for m in messages))).values()
        if right in a and right in b:
            return {"reasoning": "Both say it.", "preferred": "tie"}
        side = "A" if right in a else "B"
        return {"reasoning": f"Answer {side} says {right}.", "preferred": side}

    return ScriptedChatModel(responder=respond)


def first_shown():
    """A judge swayed by position: it always prefers whatever is shown first."""
    return ScriptedChatModel(
        responder=lambda messages: {"reasoning": "The first one reads well.", "preferred": "A"}
    )


# --- verdicts ------------------------------------------------------------------------------


def test_a_consistent_judge_picks_the_right_output_in_either_order():
    judge = PairwiseLLMJudge(model=prefers("Paris"))
    first = judge.invoke({"inputs": "Capital of France?", "outputs": ["Paris", "Lyon"]})
    assert (first.score, first.metadata["preferred"], first.metadata["scores"]) == (
        1.0,
        "A",
        [1.0, 0.0],
    )
    second = judge.invoke({"inputs": "Capital of France?", "outputs": ["Lyon", "Paris"]})
    assert (second.score, second.metadata["preferred"], second.metadata["scores"]) == (
        0.0,
        "B",
        [0.0, 1.0],
    )
    assert [o["answered"] for o in second.metadata["orders"]] == ["B", "A"]
    assert [o["preferred"] for o in second.metadata["orders"]] == ["B", "B"]
    assert second.key == "preference"
    assert second.is_verdict


def test_the_second_ask_really_shows_the_outputs_swapped():
    model = prefers("Paris")
    PairwiseLLMJudge(model=model).invoke({"inputs": "Capital?", "outputs": ["Paris", "Lyon"]})
    assert [shown(call) for call in model.calls] == [("Paris", "Lyon"), ("Lyon", "Paris")]


def test_a_tie_in_both_orders_scores_a_half_each():
    result = PairwiseLLMJudge(model=prefers("Paris")).invoke(
        {"inputs": "Capital?", "outputs": ["Paris.", "Paris!"]}
    )
    assert (result.score, result.metadata["preferred"], result.metadata["scores"]) == (
        0.5,
        "tie",
        [0.5, 0.5],
    )


def test_both_reasonings_are_in_the_comment_and_metadata():
    result = PairwiseLLMJudge(model=prefers("Paris")).invoke(
        {"inputs": "Capital?", "outputs": ["Lyon", "Paris"]}
    )
    assert "Answer B says Paris." in result.comment
    assert "Answer A says Paris." in result.comment
    assert [o["reasoning"] for o in result.metadata["orders"]] == [
        "Answer B says Paris.",
        "Answer A says Paris.",
    ]


# --- position bias -------------------------------------------------------------------------


def test_a_position_flipping_judge_is_inconclusive_naming_both_answers():
    result = PairwiseLLMJudge(model=first_shown()).invoke(
        {"inputs": "Capital?", "outputs": ["Paris", "Lyon"]}
    )
    assert result.outcome == "inconclusive"
    assert result.score is None
    assert result.reason.startswith("position-inconsistent")
    assert "A (outputs[0])" in result.reason
    assert "B (outputs[1])" in result.reason
    assert "preferred" not in result.metadata
    assert result.to_dict()["comment"].startswith("[inconclusive] position-inconsistent")


def test_a_preference_in_one_order_and_a_tie_in_the_other_is_inconclusive():
    model = ScriptedChatModel(
        [{"reasoning": "A.", "preferred": "A"}, {"reasoning": "Same.", "preferred": "tie"}]
    )
    result = PairwiseLLMJudge(model=model).invoke({"inputs": "q", "outputs": ["x", "y"]})
    assert result.outcome == "inconclusive"
    assert "A (outputs[0])" in result.reason
    assert "a tie" in result.reason


def test_the_async_path_asks_both_orders_at_once():
    model = prefers("Paris")
    model_latency = model.model_copy(update={"latency": 1.0})
    judge = PairwiseLLMJudge(model=model_latency)

    async def both_started():
        task = asyncio.create_task(judge.ainvoke({"inputs": "q", "outputs": ["Lyon", "Paris"]}))
        await asyncio.sleep(0.5)
        started = len(model.calls)
        return started, await task

    started, result = asyncio.run(both_started())
    assert started == 2
    assert result.score == 0.0
    assert result.metadata["preferred"] == "B"
    assert {shown(call) for call in model.calls} == {("Lyon", "Paris"), ("Paris", "Lyon")}


def test_the_async_path_marks_a_position_flipping_judge_inconclusive_too():
    result = asyncio.run(
        PairwiseLLMJudge(model=first_shown()).ainvoke({"inputs": "q", "outputs": ["Paris", "Lyon"]})
    )
    assert result.outcome == "inconclusive"


# --- failures ------------------------------------------------------------------------------


def test_a_failing_model_gives_a_failed_result_not_a_score():
    model = ScriptedChatModel([ScriptedProviderError.server_error()])
    result = PairwiseLLMJudge(model=model, on_error="record").invoke(
        {"inputs": "q", "outputs": ["x", "y"]}
    )
    assert result.outcome == "failed"
    assert result.score is None
    assert result.error_code == "provider_error"


def test_a_failing_model_raises_by_default():
    model = ScriptedChatModel([ScriptedProviderError.server_error()])
    with pytest.raises(EvaluationFailure):
        PairwiseLLMJudge(model=model).invoke({"inputs": "q", "outputs": ["x", "y"]})


def test_a_failing_model_on_the_async_path_gives_a_failed_result():
    model = ScriptedChatModel(
        [ScriptedProviderError.server_error(), {"reasoning": "A.", "preferred": "A"}]
    )
    judge = PairwiseLLMJudge(model=model, on_error="record")
    result = asyncio.run(judge.ainvoke({"inputs": "q", "outputs": ["x", "y"]}))
    assert result.outcome == "failed"
    assert result.error_code == "provider_error"


def test_an_invalid_preference_is_repaired_once_then_fails_as_a_parse_failure():
    model = ScriptedChatModel(
        [
            {"reasoning": "Hmm.", "preferred": "both"},
            {"reasoning": "A is right.", "preferred": "A"},
            {"reasoning": "B is right.", "preferred": "B"},
        ]
    )
    repaired = PairwiseLLMJudge(model=model).invoke({"inputs": "q", "outputs": ["x", "y"]})
    assert repaired.score == 1.0
    assert repaired.metadata["repairs"] == 1
    assert "'both' is not one of" in model.calls[1].messages[-1].text

    broken = ScriptedChatModel(responder=lambda messages: {"reasoning": "?", "preferred": "C"})
    failed = PairwiseLLMJudge(model=broken, on_error="record").invoke(
        {"inputs": "q", "outputs": ["x", "y"]}
    )
    assert failed.outcome == "failed"
    assert failed.error_code == "judge_parse_failure"


def test_prompted_mode_reads_the_preference_from_the_reply_text():
    model = ScriptedChatModel(
        [
            'Sure: {"reasoning": "A is right.", "preferred": "A"}',
            '```json\n{"reasoning": "B is right.", "preferred": "B"}\n```',
        ]
    )
    judge = PairwiseLLMJudge(model=model, structured_output_mode="prompted")
    result = judge.invoke({"inputs": "q", "outputs": ["x", "y"]})
    assert result.score == 1.0
    assert result.metadata["structured_output"] == "prompted"
    assert '"preferred"' in model.calls[0].messages[-1].text


# --- inputs and prompts --------------------------------------------------------------------


@pytest.mark.parametrize("outputs", ["one", ["one"], ["a", "b", "c"], None])
def test_anything_but_two_outputs_is_refused(outputs):
    with pytest.raises(EvaluatorInputError, match="compares two outputs"):
        PairwiseLLMJudge(model=prefers("x")).invoke({"inputs": "q", "outputs": outputs})


def test_the_default_prompt_shows_the_reference_only_when_given():
    model = prefers("Paris")
    judge = PairwiseLLMJudge(model=model)
    judge.invoke({"inputs": "Capital?", "outputs": ["Paris", "Lyon"], "reference_outputs": "Paris"})
    judge.invoke({"inputs": "Capital?", "outputs": ["Paris", "Lyon"]})
    with_reference, _, without, _ = ["\n".join(m.text for m in c.messages) for c in model.calls]
    assert "<reference>\nParis\n</reference>" in with_reference
    assert "<reference>" not in without
    assert "{reference_outputs}" not in without


def test_a_custom_prompt_takes_the_same_placeholders():
    model = ScriptedChatModel(responder=lambda messages: {"reasoning": "r", "preferred": "tie"})
    judge = PairwiseLLMJudge(
        model=model,
        prompt="Q {inputs} | 1: {output_a} | 2: {output_b} | ref {reference_outputs} | {tone}",
        system="Be fair.",
        feedback_key="better_answer",
    )
    result = judge.invoke(
        {"inputs": "q", "outputs": ["x", "y"], "reference_outputs": "r", "tone": "calm"}
    )
    assert result.key == "better_answer"
    assert [m.text for m in model.calls[0].messages[:2]] == [
        "Be fair.",
        "Q q | 1: x | 2: y | ref r | calm",
    ]
    assert model.calls[1].messages[1].text == "Q q | 1: y | 2: x | ref r | calm"


def test_a_prompt_that_does_not_show_both_outputs_is_refused():
    with pytest.raises(ValueError, match=r"no \{output_b\}"):
        PairwiseLLMJudge(model=prefers("x"), prompt="Which is better? {output_a} {outputs}")


def test_judge_defaults_reach_the_pairwise_judge():
    model = prefers("Paris")
    judge = PairwiseLLMJudge(model=model)
    with judge_defaults(cache=InMemoryCache()):
        scores = [
            judge.invoke({"inputs": "q", "outputs": ["Paris", "Lyon"]}).score for _ in range(3)
        ]
    assert scores == [1.0, 1.0, 1.0]
    assert len(model.calls) == 2


# --- LangSmith's comparative convention ----------------------------------------------------


def _run(outputs, example_id):
    return schemas.Run(
        id=uuid.uuid4(),
        name="target",
        start_time=datetime.datetime.now(datetime.timezone.utc),
        run_type="chain",
        inputs={"question": "Capital of France?"},
        outputs=outputs,
        trace_id=uuid.uuid4(),
        reference_example_id=example_id,
    )


def _example():
    return schemas.Example(
        id=uuid.uuid4(),
        dataset_id=uuid.uuid4(),
        inputs={"question": "Capital of France?"},
        outputs={"answer": "Paris"},
        created_at=datetime.datetime.now(datetime.timezone.utc),
    )


def test_langsmith_comparative_evaluators_take_the_judge_as_it_is(langsmith_endpoint):
    example = _example()
    runs = [_run({"answer": "Lyon"}, example.id), _run({"answer": "Paris"}, example.id)]
    model = prefers("Paris")
    comparator = comparison_evaluator(PairwiseLLMJudge(model=model))
    result = comparator.compare_runs(runs, example)
    assert result.key == "preference"
    assert result.scores == {runs[0].id: 0.0, runs[1].id: 1.0}
    assert "Answer B says Paris." in result.comment
    # LangSmith hands over the example's inputs and reference and each run's outputs.
    sent = "\n".join(m.text for m in model.calls[0].messages)
    assert '"question": "Capital of France?"' in sent
    assert "<reference>" in sent


def test_langsmith_gets_no_scores_for_a_position_inconsistent_pair(langsmith_endpoint):
    example = _example()
    runs = [_run({"answer": "Lyon"}, example.id), _run({"answer": "Paris"}, example.id)]
    result = comparison_evaluator(PairwiseLLMJudge(model=first_shown())).compare_runs(runs, example)
    assert result.scores == {runs[0].id: None, runs[1].id: None}
    assert result.comment.startswith("[inconclusive] position-inconsistent")


def test_the_keyword_call_returns_one_openevals_dict_or_the_comparative_shape():
    judge = PairwiseLLMJudge(model=prefers("Paris"))
    plain = judge(inputs="Capital?", outputs=["Paris", "Lyon"])
    assert (plain["key"], plain["score"]) == ("preference", 1.0)

    class Run:
        def __init__(self, id):
            self.id = id

    comparative = asyncio.run(
        judge.acall(inputs="q", outputs=["Lyon", "Paris"], runs=[Run("a"), Run("b")])
    )
    assert comparative["scores"] == {"a": 0.0, "b": 1.0}
