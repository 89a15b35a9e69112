"""The OpenEvals-compatible JSON match factories."""

from __future__ import annotations

import inspect

import pytest
from openevals.json import (
    create_async_json_match_evaluator as oe_create_async_json_match_evaluator,
)
from openevals.json import create_json_match_evaluator as oe_create_json_match_evaluator

from langchain_evals_port.compat._openevals_json import (
    create_async_json_match_evaluator,
    create_json_match_evaluator,
)
from langchain_evals_port.json_match import JsonMatch
from langchain_evals_port.testing import ScriptedChatModel


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (create_json_match_evaluator, oe_create_json_match_evaluator),
        (create_async_json_match_evaluator, oe_create_async_json_match_evaluator),
    ],
)
def test_signatures_match_openevals(ours, theirs):
    ours_params = inspect.signature(ours).parameters
    theirs_params = inspect.signature(theirs).parameters
    assert list(ours_params) == list(theirs_params)
    assert [p.kind for p in ours_params.values()] == [p.kind for p in theirs_params.values()]
    for name, parameter in theirs_params.items():
        default = ours_params[name].default
        assert (list(default) if name == "exclude_keys" else default) == parameter.default


README_OUTPUTS = [
    {"a": "Mango, Bananas", "b": 2},
    {"a": "Apples", "b": 2, "c": [1, 2, 3]},
]
README_REFERENCE = [
    {"a": "Mango, Bananas", "b": 2},
    {"a": "Apples", "b": 2, "c": [1, 2, 4]},
]


def test_the_readme_exact_match_example_gives_openevals_result():
    options = {"aggregator": "all", "list_aggregator": "average", "exclude_keys": ["a"]}
    ours = create_json_match_evaluator(**options)(
        outputs=README_OUTPUTS, reference_outputs=README_REFERENCE
    )
    theirs = oe_create_json_match_evaluator(**options)(
        outputs=README_OUTPUTS, reference_outputs=README_REFERENCE
    )
    assert [(r["key"], r["score"]) for r in ours] == [(r["key"], r["score"]) for r in theirs]
    assert ours[0]["score"] == 0.5


async def test_the_async_factory_is_named_like_the_evaluator():
    evaluator = create_async_json_match_evaluator(aggregator="average")
    assert evaluator.__name__ == "json_match_evaluator"
    results = await evaluator(outputs={"a": 1, "b": 2}, reference_outputs={"a": 1, "b": 3})
    assert [(r["key"], r["score"]) for r in results] == [("json_match:average", 0.5)]


def test_the_sync_factory_returns_a_json_match():
    evaluator = create_json_match_evaluator(exclude_keys=["id"], list_match_mode="ordered")
    assert isinstance(evaluator, JsonMatch)
    assert evaluator.exclude_keys == ["id"]
    assert evaluator.list_match_mode == "ordered"


def test_the_judge_wins_over_a_model_string():
    judge = ScriptedChatModel([{"a": {"reasoning": "same", "score": True}}])
    evaluator = create_json_match_evaluator(rubric={"a": "Same?"}, judge=judge, model="x:y")
    assert evaluator(outputs={"a": "A"}, reference_outputs={"a": "a"})[0]["score"] is True
    assert len(judge.calls) == 1


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"judge": ScriptedChatModel()}, "only used for rubric keys"),
        ({"model": "openai:gpt-4o-mini"}, "only used for rubric keys"),
        ({"rubric": {"a": "Same?"}, "judge": object()}, "LangChain chat model"),
    ],
)
def test_misconfigurations_raise_value_error_like_openevals(options, message):
    with pytest.raises(ValueError, match=message):
        create_json_match_evaluator(**options)


def test_a_rubric_without_judge_or_model_raises_without_a_default_judge(monkeypatch):
    monkeypatch.delenv("LANGCHAIN_EVALS_JUDGE", raising=False)
    with pytest.raises(ValueError, match="either judge or model"):
        oe_create_json_match_evaluator(rubric={"a": "Same?"})
    with pytest.raises(ValueError, match="default judge"):
        create_json_match_evaluator(rubric={"a": "Same?"})


@pytest.mark.parametrize(
    ("outputs", "expected"), [({"foo": [{"bar": 1}]}, 1), ({"foo": [{"bar": 2}]}, 0)]
)
def test_the_readme_nested_objects_example_gives_openevals_result(outputs, expected):
    reference = {"foo": [{"bar": 1}]}
    ours = create_json_match_evaluator(aggregator="all")(
        outputs=outputs, reference_outputs=reference
    )
    theirs = oe_create_json_match_evaluator(aggregator="all")(
        outputs=outputs, reference_outputs=reference
    )
    assert ours[0]["score"] == theirs[0]["score"] == expected
