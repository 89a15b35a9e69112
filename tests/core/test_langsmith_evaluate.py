"""Evaluators handed as-is to ``langsmith.evaluate``, against a LangSmith stand-in on 127.0.0.1."""

import uuid

from langchain_core.tracers.langchain import wait_for_all_tracers
from langsmith import aevaluate, evaluate
from langsmith.run_helpers import tracing_context
from langsmith.schemas import Example

from langchain_evals_port import ExactMatch, LevenshteinDistance, LLMJudge, evaluator
from langchain_evals_port.testing import ScriptedChatModel


def _examples():
    dataset = uuid.uuid4()
    return [
        Example(id=uuid.uuid4(), dataset_id=dataset, inputs={"question": q}, outputs={"answer": a})
        for q, a in [("capital of France", "Paris"), ("capital of Peru", "Lima")]
    ]


def _target(inputs):
    return {"answer": "Paris" if "France" in inputs["question"] else "Cusco"}


def test_evaluators_are_accepted_as_is_by_langsmith_evaluate(langsmith_endpoint):
    exact = ExactMatch()
    custom = evaluator(
        lambda *, outputs: (len(outputs["answer"]), "chars"),
        run_name="answer_length",
        feedback_key="answer_length",
    )
    results = evaluate(
        _target,
        data=_examples(),
        evaluators=[exact, LevenshteinDistance(), custom],
        upload_results=False,
    )
    rows = list(results)
    assert len(rows) == 2
    scores = [{r.key: r.score for r in row["evaluation_results"]["results"]} for row in rows]
    by_answer = {row["run"].outputs["answer"]: s for row, s in zip(rows, scores, strict=True)}
    assert by_answer["Paris"]["exact_match"] is True
    assert by_answer["Cusco"]["exact_match"] is False
    assert by_answer["Paris"]["levenshtein_distance"] == 1.0
    assert by_answer["Cusco"]["answer_length"] == 5
    assert langsmith_endpoint.requests, "langsmith talked to the stand-in"


async def test_async_keyword_call_works_with_aevaluate(langsmith_endpoint):
    async def target(inputs):
        return _target(inputs)

    results = await aevaluate(
        target, data=_examples(), evaluators=[ExactMatch().acall], upload_results=False
    )
    keys = [r.key async for row in results for r in row["evaluation_results"]["results"]]
    assert keys == ["exact_match", "exact_match"]


def test_recorded_failures_reach_langsmith_as_metadata(langsmith_endpoint):
    def broken(*, outputs):
        raise TimeoutError("judge timed out")

    ev = evaluator(broken, run_name="judge", feedback_key="quality", on_error="record")
    rows = list(evaluate(_target, data=_examples()[:1], evaluators=[ev], upload_results=False))
    (result,) = rows[0]["evaluation_results"]["results"]
    assert result.score is None
    assert result.comment == "[failed: timeout] TimeoutError: judge timed out"
    assert result.metadata == {
        "outcome": "failed",
        "reason": "TimeoutError: judge timed out",
        "error_code": "timeout",
    }


def test_results_point_at_the_evaluator_trace_when_traced_to_langsmith(langsmith_endpoint):
    from langchain_core.tracers.langchain import LangChainTracer
    from langsmith import Client

    client = Client(api_url=f"http://127.0.0.1:{langsmith_endpoint.port}", api_key="x")
    tracer = LangChainTracer(client=client, project_name="evals")
    run_id = uuid.uuid4()
    result = ExactMatch().invoke(
        {"outputs": 1, "reference_outputs": 1}, config={"callbacks": [tracer], "run_id": run_id}
    )
    assert result.source_run_id == str(run_id)
    assert ExactMatch().invoke({"outputs": 1, "reference_outputs": 1}).source_run_id is None
    # Its runs reach the stand-in now, not during a later test that counts them.
    tracer.wait_for_futures()
    client.flush()


def _runs_posted(stand_in, since):
    return [path for method, path in stand_in.requests[since:] if "/runs" in path]


def test_nothing_is_uploaded_when_langsmith_evaluate_is_told_not_to(langsmith_endpoint):
    # LangSmith keeps evaluator runs "local" here; LangChain's tracer would post them anyway.
    # (It does so whatever LANGSMITH_TRACING says; the installed-wheel check tries both.)
    wait_for_all_tracers()
    since = len(langsmith_endpoint.requests)
    judge = LLMJudge(
        prompt="Is {outputs} the capital asked for in {inputs}?",
        feedback_key="capital",
        model=ScriptedChatModel(responder=lambda _: {"reasoning": "ok", "score": True}),
    )
    rows = list(
        evaluate(_target, data=_examples(), evaluators=[ExactMatch(), judge], upload_results=False)
    )
    wait_for_all_tracers()
    scores = sorted(r.key for row in rows for r in row["evaluation_results"]["results"])
    assert scores == ["capital", "capital", "exact_match", "exact_match"]
    assert _runs_posted(langsmith_endpoint, since) == []


async def test_nothing_is_uploaded_by_aevaluate_when_told_not_to(langsmith_endpoint):
    wait_for_all_tracers()
    since = len(langsmith_endpoint.requests)

    async def target(inputs):
        return _target(inputs)

    results = await aevaluate(
        target, data=_examples(), evaluators=[ExactMatch().acall], upload_results=False
    )
    assert len([row async for row in results]) == 2
    wait_for_all_tracers()
    assert _runs_posted(langsmith_endpoint, since) == []


def test_evaluator_runs_are_still_traced_outside_langsmith_evaluate(langsmith_endpoint):
    # The counterpart: with tracing on and no "keep it local" request, runs are posted.
    wait_for_all_tracers()
    since = len(langsmith_endpoint.requests)
    with tracing_context(enabled=True):
        ExactMatch().invoke({"outputs": "Paris", "reference_outputs": "Paris"})
    wait_for_all_tracers()
    assert _runs_posted(langsmith_endpoint, since)
