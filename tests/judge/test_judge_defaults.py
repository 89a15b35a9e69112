"""``judge_defaults``: a cache and a rate limiter for every judge model called in a scope,
and for no other model call."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from langchain_core.caches import InMemoryCache
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.rate_limiters import InMemoryRateLimiter
from langchain_core.runnables import RunnableLambda

from langchain_evals_port import EvaluatorInputError
from langchain_evals_port.code import CodeExtractor, CodeLLMJudge
from langchain_evals_port.json_match import JsonMatch
from langchain_evals_port.judge import LLMJudge, SqliteCache, judge_defaults
from langchain_evals_port.testing import ScriptedChatModel
from langchain_evals_port.trajectory import TrajectoryLLMJudge

PROMPT = "Is this answer concise? {outputs}"
VERDICT = {"reasoning": "One word. Thus, the score should be: true.", "score": True}
TRAJECTORY = [
    {"role": "user", "content": "What is the capital of France?"},
    {"role": "assistant", "content": "Paris."},
]


class CountingRateLimiter(InMemoryRateLimiter):
    """A real rate limiter that counts how often a model asks it for a turn."""

    def __init__(self) -> None:
        super().__init__(requests_per_second=200, check_every_n_seconds=0.001, max_bucket_size=1)
        self.acquired = 0
        self._count_lock = threading.Lock()

    def acquire(self, *, blocking: bool = True) -> bool:
        with self._count_lock:
            self.acquired += 1
        return super().acquire(blocking=blocking)

    async def aacquire(self, *, blocking: bool = True) -> bool:
        with self._count_lock:
            self.acquired += 1
        return await super().aacquire(blocking=blocking)


@pytest.fixture
def cache(tmp_path: Path) -> SqliteCache:
    return SqliteCache(tmp_path / "judge-cache.db")


def judging() -> ScriptedChatModel:
    return ScriptedChatModel(responder=lambda messages: VERDICT)


def test_a_second_identical_evaluation_in_the_scope_makes_no_model_call(cache):
    model = judging()
    judge = LLMJudge(prompt=PROMPT, model=model)

    with judge_defaults(cache=cache):
        first = judge.invoke({"outputs": "Paris"})
        second = LLMJudge(prompt=PROMPT, model=model).invoke({"outputs": "Paris"})

    assert len(model.calls) == 1
    assert first.score is second.score is True
    assert model.cache is None, "the model passed in stays as it was"


def test_outside_the_scope_nothing_is_cached(cache):
    model = judging()
    judge = LLMJudge(prompt=PROMPT, model=model)

    with judge_defaults(cache=cache):
        judge.invoke({"outputs": "Paris"})
    judge.invoke({"outputs": "Paris"})
    judge.invoke({"outputs": "Paris"})

    assert len(model.calls) == 3


def test_judges_built_inside_other_evaluators_answer_from_the_scope_cache(cache):
    model = ScriptedChatModel(
        responder=lambda messages: (
            {"has_code": True, "code": "print(1)"}
            if "pull source code" in messages[0].text
            else VERDICT
        )
    )
    trajectory_judge = TrajectoryLLMJudge(model=model)
    code_judge = CodeLLMJudge(model=model, code_extraction="llm")

    with judge_defaults(cache=cache):
        for _ in range(3):
            assert trajectory_judge.invoke({"outputs": TRAJECTORY}).score is True
            assert (
                code_judge.invoke({"inputs": "Print 1.", "outputs": "Here: print(1)"}).score is True
            )

    assert len(model.calls) == 3, "trajectory judge, code extraction and code judge, once each"


def test_json_match_rubric_judges_answer_from_the_scope_cache(cache):
    same = {"city": {"reasoning": "Same city.", "score": True}}
    model = ScriptedChatModel(responder=lambda messages: same)
    match = JsonMatch(rubric={"city": "Same city?"}, model=model)

    with judge_defaults(cache=cache):
        for _ in range(2):
            [result] = match(outputs={"city": "london"}, reference_outputs={"city": "London"})
            assert result["score"] == 1.0

    assert len(model.calls) == 1


def test_the_applications_model_called_in_the_scope_is_not_cached(cache):
    model = judging()
    judge = LLMJudge(prompt=PROMPT, model=model)

    with judge_defaults(cache=cache, rate_limiter=CountingRateLimiter()):
        judge.invoke({"outputs": "Paris"})
        judge.invoke({"outputs": "Paris"})
        for _ in range(2):
            model.invoke([HumanMessage("What is the capital of France?")])

    assert len(model.calls) == 3, "one judge call, and both of the application's calls"


def test_a_judge_with_its_own_cache_keeps_it(cache):
    own = InMemoryCache()
    model = judging()

    with judge_defaults(cache=cache):
        LLMJudge(prompt=PROMPT, model=model, cache=own).invoke({"outputs": "Paris"})
        LLMJudge(prompt=PROMPT, model=model).invoke({"outputs": "Paris"})
    LLMJudge(prompt=PROMPT, model=model, cache=own).invoke({"outputs": "Paris"})

    assert len(model.calls) == 2, "the scope's cache did not get the own cache's entry"


def test_a_model_with_a_cache_or_rate_limiter_of_its_own_keeps_it(cache):
    own_limiter = CountingRateLimiter()
    scope_limiter = CountingRateLimiter()
    model = ScriptedChatModel(responder=lambda m: VERDICT, cache=False, rate_limiter=own_limiter)

    with judge_defaults(cache=cache, rate_limiter=scope_limiter):
        LLMJudge(prompt=PROMPT, model=model).invoke({"outputs": "Paris"})
        LLMJudge(prompt=PROMPT, model=model).invoke({"outputs": "Paris"})

    assert len(model.calls) == 2
    assert (own_limiter.acquired, scope_limiter.acquired) == (2, 0)


def test_the_rate_limiter_is_consulted_for_each_call_the_cache_does_not_answer(cache):
    limiter = CountingRateLimiter()
    model = judging()
    judge = LLMJudge(prompt=PROMPT, model=model)

    with judge_defaults(cache=cache, rate_limiter=limiter):
        for answer in ("Paris", "Lyon", "Paris"):
            judge.invoke({"outputs": answer})

    assert len(model.calls) == limiter.acquired == 2


def test_a_nested_scope_inherits_what_it_does_not_set(cache):
    limiter = CountingRateLimiter()
    model = judging()
    judge = LLMJudge(prompt=PROMPT, model=model)

    with judge_defaults(cache=cache), judge_defaults(rate_limiter=limiter):
        judge.invoke({"outputs": "Paris"})
        judge.invoke({"outputs": "Paris"})

    assert len(model.calls) == limiter.acquired == 1


async def test_concurrent_async_evaluations_see_the_scope():
    limiter = CountingRateLimiter()
    model = judging()
    judge = TrajectoryLLMJudge(model=model)
    answers = [[*TRAJECTORY[:1], {"role": "assistant", "content": f"Paris {n}."}] for n in range(4)]

    with judge_defaults(cache=InMemoryCache(), rate_limiter=limiter):
        for _ in range(2):
            results = await asyncio.gather(*(judge.ainvoke({"outputs": a}) for a in answers))
            assert [result.score for result in results] == [True] * 4

    assert len(model.calls) == limiter.acquired == 4


def test_sync_batch_in_worker_threads_sees_the_scope(cache):
    limiter = CountingRateLimiter()
    threads: set[int] = set()

    def respond(messages: list[Any]) -> dict[str, Any]:
        threads.add(threading.get_ident())
        return VERDICT

    model = ScriptedChatModel(responder=respond)
    judge = LLMJudge(prompt=PROMPT, model=model)
    requests = [{"outputs": f"Paris {n}"} for n in range(4)]

    with judge_defaults(cache=cache, rate_limiter=limiter):
        for _ in range(2):
            results = judge.batch(requests, config={"max_concurrency": 4})
            assert [result.score for result in results] == [True] * 4

    assert threading.get_ident() not in threads, "the judge ran in worker threads"
    assert len(model.calls) == limiter.acquired == 4


def test_a_conversation_the_judge_rejects_is_not_cached(cache):
    model = ScriptedChatModel(["no JSON here", "still no JSON", VERDICT])
    judge = LLMJudge(prompt=PROMPT, model=model, on_error="record")

    with judge_defaults(cache=cache):
        outcomes = [judge.invoke({"outputs": "Paris"}) for _ in range(3)]

    assert [(r.outcome, r.error_code) for r in outcomes] == [
        ("failed", "judge_parse_failure"),
        ("verdict", None),
        ("verdict", None),
    ]
    assert len(model.calls) == 3, "the rejected replies were asked again, the verdict cached"


def test_a_judge_model_that_is_not_a_chat_model_runs_without_the_defaults(cache):
    model = RunnableLambda(lambda messages: AIMessage('{"reasoning": "Fine.", "score": true}'))
    judge = LLMJudge(prompt=PROMPT, model=model, structured_output_mode="prompted")

    with judge_defaults(cache=cache), pytest.warns(RuntimeWarning, match="RunnableLambda"):
        assert judge.invoke({"outputs": "Paris"}).score is True


def test_the_code_extractor_answers_from_the_scope_cache(cache):
    model = ScriptedChatModel(responder=lambda m: {"has_code": True, "code": "x = 1"})
    extractor = CodeExtractor("llm", model=model)

    with judge_defaults(cache=cache):
        assert [extractor.extract("x = 1") for _ in range(2)] == ["x = 1", "x = 1"]

    assert len(model.calls) == 1


def test_what_is_not_a_cache_or_rate_limiter_is_refused():
    with pytest.raises(EvaluatorInputError, match="BaseCache"), judge_defaults(cache="x"):  # type: ignore[arg-type]
        pass
    with (
        pytest.raises(EvaluatorInputError, match="BaseRateLimiter"),
        judge_defaults(rate_limiter=1.0),  # type: ignore[arg-type]
    ):
        pass
