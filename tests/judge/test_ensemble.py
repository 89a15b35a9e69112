"""``JudgeEnsemble`` and ``LLMJudge(samples=k)``: several verdicts, asked concurrently, one
decision, with every member's (or sample's) verdict and their agreement kept."""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from typing import Any

import pytest
from langchain_core.caches import InMemoryCache
from langchain_core.globals import get_llm_cache, set_llm_cache
from langchain_core.messages import BaseMessage

from langchain_evals_port import (
    EvaluationFailure,
    EvaluatorInputError,
    EvaluatorUsageError,
    JudgeEnsemble,
    LLMJudge,
    Score,
    evaluator,
)
from langchain_evals_port.judge import SqliteCache, judge_defaults
from langchain_evals_port.testing import ScriptedChatModel, ScriptedProviderError

PROMPT = "Is this answer correct? {outputs}"


def judge(*replies: Any, key: str = "correct", **fields: Any) -> LLMJudge:
    """An LLM judge whose model answers with ``replies`` (a bool or number is a verdict)."""
    script = [
        {"reasoning": f"I find it {reply}.", "score": reply}
        if isinstance(reply, (bool, int, float))
        else reply
        for reply in replies
    ]
    return LLMJudge(prompt=PROMPT, feedback_key=key, model=ScriptedChatModel(script), **fields)


def failing_judge() -> LLMJudge:
    return judge(ScriptedProviderError.server_error("the judge is down"))


@evaluator(feedback_key="correct")
def non_empty(*, outputs: Any) -> Any:
    return bool(outputs), "The answer is not empty."


async def evaluate(ev: Any, mode: str, **request: Any) -> Any:
    request.setdefault("outputs", "Paris")
    if mode == "sync":
        return ev.invoke(request)
    return await ev.ainvoke(request)


MODES = pytest.mark.parametrize("mode", ["sync", "async"])


# --- strategies ---------------------------------------------------------------------------


@MODES
async def test_majority_of_llm_judges_and_a_function_reports_every_member(mode):
    ensemble = JudgeEnsemble([judge(True), judge(False), non_empty])

    result = await evaluate(ensemble, mode)

    assert (result.key, result.outcome, result.score) == ("correct", "verdict", True)
    members = result.metadata["members"]
    assert [(m["name"], m["outcome"], m["score"]) for m in members] == [
        ("llm_as_correct_judge #1", "verdict", True),
        ("llm_as_correct_judge #2", "verdict", False),
        ("non_empty", "verdict", True),
    ]
    assert [m["reasoning"] for m in members] == [
        "I find it True.",
        "I find it False.",
        "The answer is not empty.",
    ]
    assert members[0]["metadata"]["judge_model"] == "scripted"
    assert result.metadata["votes"] == {"true": 2, "false": 1}
    assert result.metadata["agreement"] == pytest.approx(2 / 3)
    assert result.metadata["disagreement"] == pytest.approx(1 / 3)
    assert result.comment.splitlines() == [
        "majority says true: 3 of 3 members gave a verdict (2 true, 1 false)",
        "- llm_as_correct_judge #1: true — I find it True.",
        "- llm_as_correct_judge #2: false — I find it False.",
        "- non_empty: true — The answer is not empty.",
    ]


@MODES
async def test_a_majority_tie_is_inconclusive(mode):
    result = await evaluate(JudgeEnsemble([judge(True), judge(False)]), mode)

    assert result.outcome == "inconclusive"
    assert result.reason == "no majority decision: a tie"
    assert result.metadata["votes"] == {"true": 1, "false": 1}


@MODES
async def test_mean_averages_numbers_and_counts_true_as_one(mode):
    members = [judge(0.2, continuous=True), judge(0.4, continuous=True), non_empty]
    ensemble = JudgeEnsemble(members, strategy="mean")

    result = await evaluate(ensemble, mode)

    assert result.score == pytest.approx((0.2 + 0.4 + 1.0) / 3)
    assert result.metadata["spread"] == pytest.approx(0.8)
    assert result.metadata["disagreement"] == pytest.approx(0.8)
    assert ensemble.numeric_scores
    assert result.comment.startswith("mean 0.53: 3 of 3 members gave a verdict (spread 0.80)")


@MODES
@pytest.mark.parametrize(
    ("members", "outcome", "score"),
    [
        (lambda: [judge(True), judge(True), non_empty], "verdict", True),
        (lambda: [judge(True), judge(False), non_empty], "verdict", False),
        # One false is decisive, whatever the failed member would have said.
        (lambda: [failing_judge(), judge(False), non_empty], "verdict", False),
        # Without the failed member's verdict, unanimity cannot be known.
        (lambda: [failing_judge(), judge(True), non_empty], "inconclusive", None),
    ],
    ids=["all-pass", "one-fails", "failure-and-a-fail", "failure-and-passes"],
)
async def test_unanimous_passes_only_when_every_member_passes(mode, members, outcome, score):
    result = await evaluate(JudgeEnsemble(members(), strategy="unanimous"), mode)

    assert (result.outcome, result.score) == (outcome, score)
    if outcome == "inconclusive":
        assert result.reason == (
            "no unanimous decision: unanimity needs every member's verdict (1 failed)"
        )


# --- failing members ------------------------------------------------------------------------


@MODES
async def test_a_failing_member_is_reported_and_the_others_still_decide(mode):
    ensemble = JudgeEnsemble([judge(True), failing_judge(), non_empty])

    result = await evaluate(ensemble, mode)

    assert (result.outcome, result.score) == ("verdict", True)
    failed = result.metadata["members"][1]
    assert failed["outcome"] == "failed"
    assert failed["error_code"] == "provider_error"
    assert "the judge is down" in failed["reason"]
    assert result.metadata["verdicts"] == 2
    lines = result.comment.splitlines()
    assert (
        lines[0] == "majority says true: 2 of 3 members gave a verdict (2 true, 0 false); 1 failed"
    )
    assert lines[2].startswith("- llm_as_correct_judge #2: [failed: provider_error] ")
    assert "the judge is down" in lines[2]


@MODES
async def test_a_member_recording_its_failure_abstains_like_one_that_raises(mode):
    recording = judge(ScriptedProviderError.rate_limited(), on_error="record")
    result = await evaluate(JudgeEnsemble([recording, judge(False), judge(False)]), mode)

    assert (result.outcome, result.score) == ("verdict", False)
    assert result.metadata["members"][0]["error_code"] == "rate_limited"


@MODES
async def test_an_inconclusive_member_abstains(mode):
    @evaluator(feedback_key="correct")
    def unsure() -> Any:
        return Score.unscored("nothing to compare")

    result = await evaluate(JudgeEnsemble([unsure, judge(True)], strategy="mean"), mode)

    assert (result.score, result.metadata["verdicts"]) == (1.0, 1)
    assert result.metadata["members"][0]["reason"] == "nothing to compare"
    assert "; 1 inconclusive" in result.comment.splitlines()[0]


@MODES
async def test_when_every_member_fails_the_ensemble_fails(mode):
    with pytest.raises(EvaluationFailure, match="every member of the ensemble failed") as raised:
        await evaluate(JudgeEnsemble([failing_judge(), failing_judge()]), mode)
    assert raised.value.code == "provider_error"

    recorded = JudgeEnsemble([failing_judge(), failing_judge()], on_error="record")
    result = await evaluate(recorded, mode)
    assert (result.outcome, result.error_code) == ("failed", "provider_error")


@MODES
async def test_when_no_member_reaches_a_verdict_but_not_all_failed_it_is_inconclusive(mode):
    @evaluator(feedback_key="correct")
    def unsure() -> Any:
        return Score.unscored("nothing to compare")

    result = await evaluate(JudgeEnsemble([unsure, failing_judge()]), mode)

    assert result.outcome == "inconclusive"
    assert result.reason == "no member reached a verdict (1 failed, 1 inconclusive)"


@MODES
async def test_bad_input_from_the_caller_still_raises(mode):
    @evaluator(feedback_key="correct")
    def grounded(*, outputs: Any, context: Any) -> bool:
        return outputs in context

    with pytest.raises(EvaluatorInputError, match="context"):
        await evaluate(JudgeEnsemble([grounded, non_empty]), mode)


# --- disagreement ---------------------------------------------------------------------------


@MODES
async def test_verdicts_disagreeing_beyond_the_threshold_are_inconclusive(mode):
    split = JudgeEnsemble([judge(True), judge(True), judge(False)], max_disagreement=0.25)
    result = await evaluate(split, mode)
    assert result.outcome == "inconclusive"
    assert result.reason == (
        "the members disagree: disagreement 0.33 exceeds max_disagreement 0.25"
    )
    assert result.metadata["members"][2]["score"] is False

    members = [judge(True), judge(True), judge(True), judge(True), judge(False)]
    four_of_five = JudgeEnsemble(members, max_disagreement=0.25)
    assert (await evaluate(four_of_five, mode)).score is True


@MODES
async def test_scores_spread_beyond_the_threshold_are_inconclusive(mode):
    def spread(low: float, high: float) -> JudgeEnsemble:
        members = [judge(low, continuous=True), judge(high, continuous=True)]
        return JudgeEnsemble(members, strategy="mean", max_disagreement=0.3)

    wide = await evaluate(spread(0.1, 0.9), mode)
    assert wide.outcome == "inconclusive"
    assert "disagreement 0.80 exceeds max_disagreement 0.3" in wide.reason
    assert (await evaluate(spread(0.6, 0.8), mode)).score == pytest.approx(0.7)


# --- configuration --------------------------------------------------------------------------


def test_the_feedback_key_is_the_members_own_or_given():
    assert JudgeEnsemble([judge(True), non_empty]).feedback_key == "correct"
    with pytest.raises(ValueError, match=r"different feedback keys \(correct, helpful\)"):
        JudgeEnsemble([judge(True), judge(True, key="helpful")])
    named = JudgeEnsemble([judge(True), judge(True, key="helpful")], feedback_key="quality")
    result = named.invoke({"outputs": "Paris"})
    assert result.key == "quality"
    assert [m["key"] for m in result.metadata["members"]] == ["correct", "helpful"]


def test_members_are_given_first_or_by_keyword_and_must_be_evaluators():
    assert len(JudgeEnsemble(members=[non_empty]).members) == 1
    with pytest.raises(ValueError, match="non-empty list"):
        JudgeEnsemble([])
    with pytest.raises(ValueError, match=r"members\[1\] is a function"):
        JudgeEnsemble([non_empty, lambda outputs: True])
    with pytest.raises(EvaluatorUsageError, match="members twice"):
        JudgeEnsemble([non_empty], members=[non_empty])


def test_a_numeric_member_needs_the_mean_strategy():
    with pytest.raises(ValueError, match=r"scores numbers.*use strategy='mean'"):
        JudgeEnsemble([judge(0.5, continuous=True), non_empty], strategy="unanimous")

    @evaluator(feedback_key="correct")
    def half() -> float:
        return 0.5

    # A function annotated to return a number is known to score numbers ...
    with pytest.raises(ValueError, match=r"scores numbers.*use strategy='mean'"):
        JudgeEnsemble([half, non_empty], strategy="unanimous")

    @evaluator(feedback_key="correct")
    def unannotated():  # type: ignore[no-untyped-def]
        return 0.5

    # ... one without an annotation only once it ran.
    with pytest.raises(
        EvaluatorUsageError, match=r"needs true/false verdicts.*unannotated scored 0\.5"
    ):
        JudgeEnsemble([unannotated, non_empty]).invoke({"outputs": "Paris"})


def test_a_member_with_several_results_is_refused():
    @evaluator
    def two(*, outputs: Any) -> Any:
        return {"correct": True, "helpful": True}

    with pytest.raises(EvaluatorUsageError, match="returned 2 results"):
        JudgeEnsemble([two, non_empty], feedback_key="correct").invoke({"outputs": "Paris"})


# --- concurrency ----------------------------------------------------------------------------


def test_invoke_runs_the_members_at_the_same_time():
    # Each judge's model waits until all three are asking: run one after the other, the
    # first would wait in vain and fail.
    everyone = threading.Barrier(3, timeout=10)

    def answer(messages: list[BaseMessage]) -> Any:
        everyone.wait()
        return {"reasoning": "Fine.", "score": True}

    members = [
        LLMJudge(prompt=PROMPT, feedback_key="correct", model=ScriptedChatModel(responder=answer))
        for _ in range(3)
    ]
    result = JudgeEnsemble(members).invoke({"outputs": "Paris"})

    assert (result.score, result.metadata["verdicts"]) == (True, 3)


async def test_ainvoke_gathers_the_members():
    in_flight = peak = 0

    @evaluator(feedback_key="correct")
    async def slow() -> bool:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.05)
        in_flight -= 1
        return True

    assert (await JudgeEnsemble([slow, slow, slow]).ainvoke({"outputs": "Paris"})).score is True
    assert peak == 3

    # Three judges that each take 0.3 s finish together, well before 0.9 s.
    slow_judges = [
        LLMJudge(
            prompt=PROMPT,
            feedback_key="correct",
            model=ScriptedChatModel([{"reasoning": "Fine.", "score": True}], latency=0.3),
        )
        for _ in range(3)
    ]
    started = time.perf_counter()
    await JudgeEnsemble(slow_judges).ainvoke({"outputs": "Paris"})
    assert time.perf_counter() - started < 0.75


async def test_max_concurrency_limits_the_members_in_flight():
    in_flight = peak = 0

    @evaluator(feedback_key="correct")
    async def slow() -> bool:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.02)
        in_flight -= 1
        return True

    ensemble = JudgeEnsemble([slow, slow, slow, slow])
    await ensemble.ainvoke({"outputs": "Paris"}, {"max_concurrency": 2})
    assert peak == 2


# --- LLMJudge(samples=k) --------------------------------------------------------------------


@MODES
async def test_samples_ask_the_model_k_times_and_take_the_majority(mode):
    sampled = judge(True, False, True, samples=3)

    result = await evaluate(sampled, mode)

    assert len(sampled.model.calls) == 3
    assert (result.outcome, result.score) == ("verdict", True)
    samples = result.metadata["samples"]
    assert sorted(s["score"] for s in samples) == [False, True, True]
    assert {s["reasoning"] for s in samples} == {"I find it True.", "I find it False."}
    assert [s["name"] for s in samples] == ["sample 1", "sample 2", "sample 3"]
    assert result.metadata["agreement"] == pytest.approx(2 / 3)
    assert result.metadata["judge_model"] == "scripted"
    assert result.metadata["token_usage"]["total_tokens"] == sum(
        s["metadata"]["token_usage"]["total_tokens"] for s in samples
    )
    summary, _, reasoning = result.comment.partition("\n\n")
    assert summary == "majority says true: 3 of 3 samples gave a verdict (2 true, 1 false)"
    assert reasoning == "I find it True."


@MODES
async def test_numeric_samples_are_averaged(mode):
    result = await evaluate(judge(0.5, 0.7, 0.9, continuous=True, samples=3), mode)

    assert result.score == pytest.approx(0.7)
    assert result.metadata["strategy"] == "mean"
    assert result.metadata["spread"] == pytest.approx(0.4)
    assert result.comment.endswith("I find it 0.7.")


@MODES
async def test_samples_disagreeing_beyond_the_threshold_are_inconclusive(mode):
    result = await evaluate(judge(True, False, True, samples=3, max_disagreement=0.2), mode)

    assert result.outcome == "inconclusive"
    assert "the samples disagree" in result.reason
    assert len(result.metadata["samples"]) == 3


@MODES
async def test_a_failed_sample_abstains_and_only_all_failing_fails(mode):
    down = ScriptedProviderError.server_error("the judge is down")
    result = await evaluate(judge(True, down, True, samples=3), mode)
    assert (result.score, result.metadata["verdicts"]) == (True, 2)
    assert [s["outcome"] for s in result.metadata["samples"]].count("failed") == 1

    with pytest.raises(EvaluationFailure) as raised:
        await evaluate(judge(down, down, samples=2), mode)
    assert raised.value.code == "provider_error"
    recorded = await evaluate(judge(down, down, samples=2, on_error="record"), mode)
    assert (recorded.outcome, recorded.error_code) == ("failed", "provider_error")


@MODES
async def test_one_sample_is_the_judge_as_before(mode):
    result = await evaluate(judge(True), mode)

    assert set(result.metadata) == {"judge_model", "structured_output", "repairs", "latency_ms"} | {
        "token_usage"
    }
    assert result.comment == "I find it True."


async def test_samples_are_asked_concurrently():
    model = ScriptedChatModel(
        responder=lambda messages: {"reasoning": "Fine.", "score": True}, latency=0.3
    )
    sampled = LLMJudge(prompt=PROMPT, model=model, samples=3)

    started = time.perf_counter()
    await sampled.ainvoke({"outputs": "Paris"})
    assert time.perf_counter() - started < 0.75
    assert len(model.calls) == 3


def test_samples_need_a_positive_count_and_the_threshold_needs_samples():
    with pytest.raises(ValueError, match="greater than or equal to 1"):
        judge(True, samples=0)
    with pytest.raises(ValueError, match="set samples to 2 or more"):
        judge(True, max_disagreement=0.2)


# --- samples and the judge cache ------------------------------------------------------------


def numbered() -> ScriptedChatModel:
    """A model whose every reply is different, to tell cached samples apart."""
    counter = itertools.count(1)
    lock = threading.Lock()

    def answer(messages: list[BaseMessage]) -> Any:
        with lock:
            number = next(counter)
        return {"reasoning": f"Reply {number}.", "score": True}

    return ScriptedChatModel(responder=answer)


def reasonings(result: Any) -> list[str]:
    return sorted(s["reasoning"] for s in result.metadata["samples"])


@MODES
async def test_with_a_scope_cache_samples_still_sample_and_a_rerun_is_cached(mode, tmp_path):
    model = numbered()
    sampled = LLMJudge(prompt=PROMPT, model=model, samples=3)

    with judge_defaults(cache=SqliteCache(tmp_path / "judge-cache.db")):
        first = await evaluate(sampled, mode)
        assert len(model.calls) == 3
        assert reasonings(first) == ["Reply 1.", "Reply 2.", "Reply 3."]

        again = await evaluate(sampled, mode)
        assert len(model.calls) == 3
        assert reasonings(again) == reasonings(first)

        # A judge asking once shares the first sample's entry.
        once = await evaluate(LLMJudge(prompt=PROMPT, model=model), mode)
        assert len(model.calls) == 3
        assert once.comment in reasonings(first)

        # More samples: only the new ones are asked.
        await evaluate(LLMJudge(prompt=PROMPT, model=model, samples=4), mode)
        assert len(model.calls) == 4


@MODES
async def test_samples_keep_apart_in_a_judge_cache_and_the_global_cache(mode):
    model = numbered()
    own = LLMJudge(prompt=PROMPT, model=model, samples=2, cache=InMemoryCache())
    await evaluate(own, mode)
    await evaluate(own, mode)
    assert len(model.calls) == 2

    model = numbered()
    previous = get_llm_cache()
    set_llm_cache(InMemoryCache())
    try:
        global_cached = LLMJudge(prompt=PROMPT, model=model, samples=2)
        first = await evaluate(global_cached, mode)
        again = await evaluate(global_cached, mode)
    finally:
        set_llm_cache(previous)
    assert len(model.calls) == 2
    assert reasonings(first) == reasonings(again) == ["Reply 1.", "Reply 2."]


def test_a_model_that_does_not_cache_is_asked_every_time():
    model = numbered().model_copy(update={"cache": False})
    sampled = LLMJudge(prompt=PROMPT, model=model, samples=2)
    with judge_defaults(cache=InMemoryCache()):
        sampled.invoke({"outputs": "Paris"})
        sampled.invoke({"outputs": "Paris"})
    assert len(model.calls) == 4
