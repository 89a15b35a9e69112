import dataclasses
import datetime
import enum
import math
import uuid
from decimal import Decimal
from pathlib import PurePosixPath

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from pydantic import BaseModel

from langchain_evals_port.core import canonical_equal, canonical_json
from langchain_evals_port.core.errors import CanonicalizationError


class Color(enum.Enum):
    RED = "red"


class Level(str, enum.Enum):
    HIGH = "high"


class City(BaseModel):
    name: str
    founded: datetime.date


@dataclasses.dataclass
class Point:
    x: int
    y: float


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
        (1, 1.0),
        (0.0, -0.0),
        (math.nan, math.nan),
        (math.inf, math.inf),
        ([1, 2], (1, 2)),
        ({3, 1, 2}, [1, 2, 3]),
        (frozenset({"b", "a"}), {"a", "b"}),
        ({1: "x"}, {"1": "x"}),
        ({True: "x", None: "y"}, {"true": "x", "null": "y"}),
        (Decimal("2.50"), 2.5),
        (Decimal("3"), 3),
        (datetime.date(2024, 5, 1), "2024-05-01"),
        (datetime.datetime(2024, 5, 1, 12, 0), "2024-05-01T12:00:00"),
        (uuid.UUID(int=1), "00000000-0000-0000-0000-000000000001"),
        (Color.RED, "red"),
        (Level.HIGH, "high"),
        (PurePosixPath("/tmp/x"), "/tmp/x"),
        (
            City(name="Rome", founded=datetime.date(753, 4, 21)),
            {"name": "Rome", "founded": "0753-04-21"},
        ),
        (Point(1, 2.0), {"x": 1, "y": 2}),
        ({"nested": [{"b": 1, "a": {"z", "y"}}]}, {"nested": [{"a": ["y", "z"], "b": 1.0}]}),
        ("héllo ✓", "héllo ✓"),
    ],
)
def test_values_that_are_equal_under_the_rule(left, right):
    assert canonical_equal(left, right)
    assert canonical_json(left) == canonical_json(right)


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (True, 1),
        (False, 0),
        (None, "null"),
        ([1, 2], [2, 1]),
        (0.1 + 0.2, 0.3),
        ("Paris", "paris"),
        ("1", 1),
        ({"a": None}, {}),
        (math.nan, None),
    ],
)
def test_values_that_differ_under_the_rule(left, right):
    assert not canonical_equal(left, right)


def test_the_text_is_compact_sorted_and_keeps_non_ascii():
    assert canonical_json({"b": "é", "a": [1.0, None]}) == '{"a":[1,null],"b":"é"}'


def test_a_message_equals_its_openai_dict_and_ids_are_ignored():
    from langchain_evals_port.core import to_openai_messages

    message = AIMessage(
        content="", id="run-1", tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "c1"}]
    )
    as_dict = to_openai_messages([message])[0]
    assert canonical_equal(message, as_dict)
    assert canonical_equal([message], {"messages": None} and [as_dict])
    assert canonical_equal({"messages": [message]}, {"messages": [as_dict]})
    other_ids = AIMessage(
        content="", id="run-2", tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "c9"}]
    )
    assert canonical_equal(message, other_ids)
    assert not canonical_equal(
        message,
        AIMessage(content="", tool_calls=[{"name": "search", "args": {"q": "y"}, "id": "c1"}]),
    )


def test_dicts_that_only_look_like_messages_stay_dicts():
    assert not canonical_equal({"role": "admin", "name": "x"}, {"role": "admin"})
    assert canonical_json({"role": "admin", "level": 3}) == '{"level":3,"role":"admin"}'


def test_a_malformed_message_is_reported_where_it_sits():
    from langchain_evals_port.core.errors import MessageFormatError

    bad = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{oops"}}
        ],
    }
    with pytest.raises(MessageFormatError, match=r"outputs\[2\] is not a valid message"):
        canonical_json(
            [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}, bad],
            name="outputs",
        )


def test_keys_that_collide_in_json_are_an_error():
    with pytest.raises(CanonicalizationError, match="same key in JSON"):
        canonical_json({1: "a", "1": "b"})


def test_sets_inside_pydantic_models_are_unordered():
    class Tags(BaseModel):
        tags: set[str]

    assert canonical_equal(Tags(tags={"b", "a"}), {"tags": ["a", "b"]})


def test_messages_compare_without_their_ids_and_with_parsed_tool_arguments():
    left = AIMessage(
        content="",
        id="run-1",
        tool_calls=[{"name": "search", "args": {"q": "x", "k": 2}, "id": "c1"}],
    )
    right = AIMessage(
        content="",
        id="run-2",
        tool_calls=[{"name": "search", "args": {"k": 2, "q": "x"}, "id": "c1"}],
    )
    assert canonical_equal(left, right)
    assert not canonical_equal(HumanMessage("hi"), AIMessage("hi"))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (object(), r"outputs is a object, which has no JSON form"),
        (b"raw", r"decode bytes to str first"),
        ({"a": [1, {"b": object()}]}, r"outputs\['a'\]\[1\]\['b'\] is a object"),
        ({(1, 2): "x"}, r"outputs has a key of type tuple"),
    ],
)
def test_values_without_a_json_form_raise_naming_where_they_are(value, message):
    with pytest.raises(CanonicalizationError, match=message):
        canonical_json(value, name="outputs")


def test_circular_values_raise_instead_of_recursing_forever():
    loop: list = [1]
    loop.append(loop)
    with pytest.raises(CanonicalizationError, match="contains itself or is nested too deeply"):
        canonical_json(loop)


def test_the_same_object_twice_is_not_circular():
    shared = {"a": 1}
    assert canonical_json([shared, shared]) == '[{"a":1},{"a":1}]'


def test_canonicalization_error_is_both_a_type_error_and_an_input_error():
    from langchain_evals_port import EvaluatorInputError

    with pytest.raises(TypeError):
        canonical_json(object())
    with pytest.raises(EvaluatorInputError):
        canonical_json(object())
