"""Evaluators handed as-is to ``langsmith.evaluate``, against a LangSmith stand-in on 127.0.0.1."""

import uuid

from langsmith import aevaluate, evaluate
from langsmith.schemas import Example

from langchain_evals_port import Evaluator, ExactMatch, LevenshteinDistance


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
    custom = Evaluator.from_function(
        "answer_length", "answer_length", lambda *, outputs: (len(outputs["answer"]), "chars")
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

    ev = Evaluator.from_function("judge", "quality", broken, on_error="record")
    rows = list(evaluate(_target, data=_examples()[:1], evaluators=[ev], upload_results=False))
    (result,) = rows[0]["evaluation_results"]["results"]
    assert result.score is None
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
