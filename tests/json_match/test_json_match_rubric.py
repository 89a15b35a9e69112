"""JsonMatch's rubric keys, graded by a scripted judge."""

from __future__ import annotations

import time

import pytest
from openevals.json import create_json_match_evaluator as oe_create_json_match_evaluator

from langchain_evals_port import set_default_judge
from langchain_evals_port.core import results_of
from langchain_evals_port.core.errors import EvaluationFailure
from langchain_evals_port.json_match import JsonMatch
from langchain_evals_port.testing import ScriptedChatModel, ScriptedProviderError


def block(text: str, tag: str) -> dict[str, str]:
    inner = text.split(f"<{tag}>\n")[1].split(f"\n</{tag}>")[0]
    return dict(line.split(": ", 1) for line in inner.splitlines())


def grade(messages, *, reasoning: bool = True):
    """A judge whose criterion is "equal, ignoring case", so its verdicts differ from
    equality's."""
    text = messages[-1].text
    outputs, expected = block(text, "output"), block(text, "reference")
    verdicts = {raw: outputs[raw].lower() == expected[raw].lower() for raw in outputs}
    if not reasoning:
        return verdicts
    return {raw: {"reasoning": f"{raw} read", "score": ok} for raw, ok in verdicts.items()}


def judge(**kwargs) -> ScriptedChatModel:
    return ScriptedChatModel(responder=grade, **kwargs)


RUBRIC = {"city": "Same city, ignoring case.", "name": "Same name, ignoring case."}
OUTPUTS = [{"name": "ADA", "city": "london", "year": 1815}, {"name": "Alan", "city": "Paris"}]
REFERENCE = [{"name": "Ada", "city": "London", "year": 1815}, {"name": "alan", "city": "Rome"}]


def test_with_an_aggregator_one_call_grades_every_rubric_key():
    model = judge()
    ev = JsonMatch(rubric=RUBRIC, model=model, aggregator="average", list_aggregator="average")
    [result] = ev(outputs=OUTPUTS, reference_outputs=REFERENCE)
    # Row 0: name, city, year all match; row 1: name matches, city does not.
    assert result["key"] == "json_match:average"
    assert result["score"] == pytest.approx((1 + 0.5) / 2)
    assert len(model.calls) == 1
    schema = model.calls[0].schema
    assert sorted(schema["properties"]) == ["city_0", "city_1", "name_0", "name_1"]
    assert schema["required"] == list(schema["properties"])
    assert result["metadata"]["reasoning"]["city_1"] == "city_1 read"


def test_without_an_aggregator_each_rubric_key_gets_its_own_call_and_schema():
    model = judge()
    ev = JsonMatch(rubric=RUBRIC, model=model, list_match_mode="ordered")
    results = {r["key"]: r for r in ev(outputs=OUTPUTS, reference_outputs=REFERENCE)}
    assert {key: r["score"] for key, r in results.items()} == {
        "json_match:city": 0.0,
        "json_match:name": 1.0,
        "json_match:year": 1.0,
    }
    assert [sorted(call.schema["properties"]) for call in model.calls] == [
        ["city_0", "city_1"],
        ["name_0", "name_1"],
    ]
    prompt = model.calls[0].messages[-1].text
    assert "- city: Same city, ignoring case." in prompt
    assert "name" not in prompt


def test_a_key_graded_once_keeps_the_verdict_and_its_reasoning():
    ev = JsonMatch(rubric={"name": "Same name, ignoring case."}, model=judge())
    [result] = ev(outputs={"name": "ADA"}, reference_outputs={"name": "ada"})
    assert result == {
        "key": "json_match:name",
        "score": True,
        "comment": "name read",
        "metadata": None,
    }


def test_without_reasoning_the_schema_asks_for_booleans():
    model = ScriptedChatModel(responder=lambda messages: grade(messages, reasoning=False))
    ev = JsonMatch(rubric={"name": "Same name."}, model=model, use_reasoning=False)
    [result] = ev(outputs={"name": "x"}, reference_outputs={"name": "X"})
    assert result["score"] is True
    assert result["comment"] is None
    assert model.calls[0].schema["properties"]["name"]["type"] == "boolean"


def test_rubric_keys_missing_on_one_side_score_zero_without_asking():
    model = judge()
    ev = JsonMatch(rubric={"name": "Same name."}, model=model)
    assert ev(outputs={"name": "x"}, reference_outputs={})[0]["score"] == 0.0
    assert model.calls == []


def test_a_dotted_rubric_path_is_graded_apart_from_the_rest_of_its_object():
    model = judge()
    ev = JsonMatch(rubric={"time.zone": "Same zone, ignoring case."}, model=model)
    results = ev(
        outputs={"time": {"zone": "utc", "start": 9}},
        reference_outputs={"time": {"zone": "UTC", "start": 10}},
    )
    assert [(r["key"], r["score"]) for r in results] == [
        ("json_match:time", 0.0),
        ("json_match:time.zone", True),
    ]
    assert list(model.calls[0].schema["properties"]) == ["time.zone"]


async def test_async_calls_for_separate_keys_run_concurrently():
    rubric = dict.fromkeys("abc", "Same, ignoring case.")
    outputs = dict.fromkeys("abc", "x")
    ev = JsonMatch(rubric=rubric, model=judge(latency=0.2))
    started = time.perf_counter()
    results = await ev.acall(outputs=outputs, reference_outputs=outputs)
    assert time.perf_counter() - started < 0.45
    assert [r["score"] for r in results] == [True, True, True]

    started = time.perf_counter()
    await ev.ainvoke({"outputs": outputs, "reference_outputs": outputs}, {"max_concurrency": 1})
    assert time.perf_counter() - started >= 0.6


async def test_sync_and_async_agree_with_a_judge():
    ev = JsonMatch(rubric=RUBRIC, model=judge(), list_aggregator="average")
    assert await ev.acall(outputs=OUTPUTS, reference_outputs=REFERENCE) == ev(
        outputs=OUTPUTS, reference_outputs=REFERENCE
    )


# --- failures -----------------------------------------------------------------------------


def test_a_failed_judge_call_fails_only_its_key_when_recorded():
    good = {"name": {"reasoning": "same", "score": True}}
    model = ScriptedChatModel([ScriptedProviderError.rate_limited(), good])
    ev = JsonMatch(rubric=RUBRIC, model=model, on_error="record")
    results = {
        r["key"]: r
        for r in ev(
            outputs={"name": "Ada", "city": "x", "year": 1},
            reference_outputs={"name": "ada", "city": "y", "year": 1},
        )
    }
    assert results["json_match:city"]["score"] is None
    assert results["json_match:city"]["metadata"]["outcome"] == "failed"
    assert results["json_match:city"]["metadata"]["error_code"] == "rate_limited"
    assert results["json_match:name"]["score"] is True
    assert results["json_match:year"]["score"] == 1.0


async def test_a_failed_judge_call_fails_the_aggregate_when_recorded():
    model = ScriptedChatModel(["not json", "still not json"])
    ev = JsonMatch(rubric=RUBRIC, model=model, aggregator="all", on_error="record")
    [result] = results_of(await ev.ainvoke({"outputs": OUTPUTS, "reference_outputs": REFERENCE}))
    assert result.key == "json_match:all"
    assert result.outcome == "failed"
    assert result.error_code == "judge_parse_failure"


def test_a_failed_judge_call_raises_by_default_and_stops_asking():
    model = ScriptedChatModel([ScriptedProviderError.server_error()], responder=grade)
    ev = JsonMatch(rubric=RUBRIC, model=model)
    with pytest.raises(EvaluationFailure) as raised:
        ev(outputs={"name": "a", "city": "b"}, reference_outputs={"name": "a", "city": "b"})
    assert raised.value.code == "provider_error"
    assert len(model.calls) == 1


# --- construction -------------------------------------------------------------------------


def test_a_model_without_a_rubric_is_an_error():
    with pytest.raises(ValueError, match="only used for rubric keys"):
        JsonMatch(model=judge())


def test_a_rubric_without_a_model_needs_a_default_judge(monkeypatch):
    monkeypatch.delenv("LANGCHAIN_EVALS_JUDGE", raising=False)
    with pytest.raises(ValueError, match="default judge"):
        JsonMatch(rubric=RUBRIC)
    monkeypatch.setenv("LANGCHAIN_EVALS_JUDGE", "openai:gpt-4o-mini")
    JsonMatch(rubric=RUBRIC)


def test_a_rubric_without_a_model_uses_the_default_judge(monkeypatch):
    monkeypatch.delenv("LANGCHAIN_EVALS_JUDGE", raising=False)
    model = judge()
    set_default_judge(model)
    try:
        ev = JsonMatch(rubric={"name": "Same name."})
        assert ev(outputs={"name": "A"}, reference_outputs={"name": "a"})[0]["score"] is True
    finally:
        set_default_judge(None)
    assert len(model.calls) == 1


def test_the_model_must_be_a_chat_model_or_a_string():
    with pytest.raises(ValueError, match="LangChain chat model"):
        JsonMatch(rubric=RUBRIC, model=42)


# --- side by side with OpenEvals ------------------------------------------------------------

README_OUTPUTS = [
    {"a": "Mango, Bananas", "b": 2},
    {"a": "Apples", "b": 2, "c": [1, 2, 3]},
]
README_REFERENCE = [
    {"a": "Bananas, Mango", "b": 2, "d": "Not in outputs"},
    {"a": "Apples, Strawberries", "b": 2},
]
FRUIT_REPLY = {
    "a_0": {"reasoning": "Both fruits are there.", "score": True},
    "a_1": {"reasoning": "Strawberries are missing.", "score": False},
}


@pytest.mark.parametrize(
    "options",
    [
        {"aggregator": "average", "list_aggregator": "all"},
        {"aggregator": "average", "list_aggregator": "average"},
        {"aggregator": "all", "list_aggregator": "average"},
        {"list_aggregator": "average"},
        {},
    ],
    ids=str,
)
def test_same_keys_and_scores_as_openevals_with_a_rubric(options):
    rubric = {"a": "Does the answer mention all the fruits in the reference answer?"}
    ours_model, theirs_model = ScriptedChatModel([FRUIT_REPLY]), ScriptedChatModel([FRUIT_REPLY])
    ours = JsonMatch(rubric=rubric, model=ours_model, **options)(
        outputs=README_OUTPUTS, reference_outputs=README_REFERENCE
    )
    theirs = oe_create_json_match_evaluator(rubric=rubric, judge=theirs_model, **options)(
        outputs=README_OUTPUTS, reference_outputs=README_REFERENCE
    )
    assert [(r["key"], r["score"]) for r in ours] == [(r["key"], r["score"]) for r in theirs]
    assert len(ours_model.calls) == len(theirs_model.calls) == 1
    # The prompts are our own wording (OpenEvals' are not copied), with a system message too.
    ours_system, theirs_system = ours_model.calls[0].messages[0], theirs_model.calls[0].messages[0]
    assert ours_system.type == theirs_system.type == "system"


def test_a_rejected_schema_is_learnt_once_across_evaluations():
    reply = '{"city": {"reasoning": "same city", "score": true}}'
    model = ScriptedChatModel(
        [ScriptedProviderError.bad_request("unsupported schema"), reply, reply, reply]
    )
    matcher = JsonMatch(rubric={"city": "Same city, ignoring case."}, model=model)
    for _ in range(3):
        assert (
            matcher(outputs={"city": "Rome"}, reference_outputs={"city": "rome"})[0]["score"] == 1.0
        )
    assert [c.kind for c in model.calls] == ["structured", "chat", "chat", "chat"]
