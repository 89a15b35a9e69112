"""Judges in experiments: a persistent cache by default (an unchanged re-run asks no judge
anything, the target's own model is never cached), a rate limiter for judge calls, and the
upload to LangSmith from ``run_experiment``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.rate_limiters import InMemoryRateLimiter

from langchain_evals_port import LLMJudge
from langchain_evals_port.experiments import Dataset, rescore, run_experiment
from langchain_evals_port.judge import SqliteCache
from langchain_evals_port.testing import ScriptedChatModel

CASES = Dataset.from_records(
    [
        {"id": f"c{n}", "inputs": {"q": f"question {n}"}, "reference_outputs": "yes"}
        for n in range(6)
    ]
)

PROMPT = "Is {outputs} right for {inputs}? Reference: {reference_outputs}"


def verdict(messages: list[Any]) -> dict[str, Any]:
    return {"score": True, "reasoning": "It is right."}


def fixtures() -> tuple[ScriptedChatModel, ScriptedChatModel, Any]:
    """A judge, the app's own model, and the app calling it."""
    judge = ScriptedChatModel(responder=verdict)
    app_model = ScriptedChatModel(responder=lambda messages: "yes")

    def app(inputs: dict[str, str]) -> str:
        return str(app_model.invoke(inputs["q"]).content)

    return judge, app_model, app


def test_an_unchanged_re_run_asks_the_judge_nothing_and_the_app_everything() -> None:
    judge, app_model, app = fixtures()
    evaluators = [LLMJudge(prompt=PROMPT, model=judge, feedback_key="right")]
    first = run_experiment(app, CASES, evaluators, progress=False)
    assert (len(judge.calls), len(app_model.calls)) == (6, 6)
    second = run_experiment(app, CASES, evaluators, progress=False)
    assert (first.name, second.name) == ("app-1", "app-2")
    assert len(judge.calls) == 6  # every judge call answered from the cache
    assert first.judge_cache is not None
    assert second.judge_cache is not None
    assert (first.judge_cache.misses, first.judge_cache.hits) == (6, 0)
    assert (second.judge_cache.misses, second.judge_cache.hits) == (0, 6)
    assert len(app_model.calls) == 12  # the app's own model is never cached
    assert second.statistics() == first.statistics()
    assert Path(".langchain-evals/judge-cache.db").is_file()


def test_no_cache_asks_the_judge_again(tmp_path: Path) -> None:
    judge, _, app = fixtures()
    evaluators = [LLMJudge(prompt=PROMPT, model=judge, feedback_key="right")]
    run_experiment(app, CASES, evaluators, cache=False, progress=False)
    again = run_experiment(app, CASES, evaluators, cache=False, progress=False)
    assert len(judge.calls) == 12
    assert again.judge_cache is None


def test_a_cache_given_is_the_one_used_and_rescore_uses_it_too(tmp_path: Path) -> None:
    judge, _, app = fixtures()
    evaluators = [LLMJudge(prompt=PROMPT, model=judge, feedback_key="right")]
    cache = SqliteCache(tmp_path / "mine.db")
    run_experiment(app, CASES, evaluators, name="base", cache=cache, progress=False)
    rescore("base", evaluators, cache=cache, progress=False)
    assert len(judge.calls) == 6
    assert not Path(".langchain-evals/judge-cache.db").exists()


def test_judge_calls_wait_for_the_rate_limiter() -> None:
    class Counting(InMemoryRateLimiter):
        acquired = 0

        async def aacquire(self, *, blocking: bool = True) -> bool:
            type(self).acquired += 1
            return await super().aacquire(blocking=blocking)

        def acquire(self, *, blocking: bool = True) -> bool:
            type(self).acquired += 1
            return super().acquire(blocking=blocking)

    judge, _, app = fixtures()
    evaluators = [LLMJudge(prompt=PROMPT, model=judge, feedback_key="right")]
    limiter = Counting(requests_per_second=1000, check_every_n_seconds=0.001, max_bucket_size=100)
    run_experiment(app, CASES, evaluators, cache=False, rate_limiter=limiter, progress=False)
    assert Counting.acquired == 6


def test_a_bad_cache_is_a_clear_error() -> None:
    judge, _, app = fixtures()
    evaluators = [LLMJudge(prompt=PROMPT, model=judge, feedback_key="right")]
    with pytest.raises(TypeError, match="cache must be a LangChain BaseCache"):
        run_experiment(app, CASES, evaluators, cache="yes", progress=False)  # type: ignore[arg-type]


def test_upload_to_langsmith_sends_the_experiment(langsmith_endpoint: Any) -> None:
    judge, _, app = fixtures()
    evaluators = [LLMJudge(prompt=PROMPT, model=judge, feedback_key="right")]
    result = run_experiment(
        app, CASES, evaluators, name="uploaded-run", upload_to_langsmith=True, progress=False
    )
    assert result.langsmith_url
    project = langsmith_endpoint.session_named("uploaded-run")
    runs = langsmith_endpoint.runs(project["id"])
    assert len(runs) == 6
    scores = [f["score"] for f in langsmith_endpoint.feedback() if f["key"] == "right"]
    assert scores.count(1) + scores.count(True) >= 6


def test_refresh_asks_the_judges_again_and_later_runs_answer_with_the_new_verdicts() -> None:
    verdicts = {"score": True}
    # The provider changed the model behind the same name: same key, another verdict.
    judge = ScriptedChatModel(responder=lambda messages: {**verdicts, "reasoning": "seen"})
    _, _, app = fixtures()
    evaluators = [LLMJudge(prompt=PROMPT, model=judge, feedback_key="right")]

    def pass_rate(**options: Any) -> float | None:
        result = run_experiment(app, CASES, evaluators, progress=False, **options)
        return result.statistics()["right"].mean

    assert pass_rate() == 1.0
    verdicts["score"] = False
    assert pass_rate(cache="off") == 0.0  # asked again, but nothing written
    assert len(judge.calls) == 12
    assert pass_rate() == 1.0  # so the cache still answers with the old verdicts
    assert len(judge.calls) == 12
    refreshed = run_experiment(app, CASES, evaluators, progress=False, cache="refresh")
    assert refreshed.statistics()["right"].mean == 0.0
    assert refreshed.judge_cache is not None
    assert (refreshed.judge_cache.misses, refreshed.judge_cache.hits) == (6, 0)
    assert len(judge.calls) == 18
    assert pass_rate() == 0.0  # the new verdicts, from the cache
    assert len(judge.calls) == 18
    with pytest.raises(TypeError, match="got 'refrsh'; did you mean 'refresh'"):
        run_experiment(app, CASES, evaluators, cache="refrsh", progress=False)  # type: ignore[arg-type]
