"""Tests of the message normalisation between LangChain objects and OpenAI-style dicts."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from langchain_evals_port.core._messages import (
    message_to_openai,
    to_langchain_messages,
    to_openai_messages,
)
from langchain_evals_port.core.errors import EvaluatorInputError, MessageFormatError

THINKING: dict[str, Any] = {
    "type": "thinking",
    "thinking": "The user wants weather.",
    "signature": "sig==",
}
REASONING: dict[str, Any] = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [{"type": "summary_text", "text": "s"}],
}
TEXT: dict[str, Any] = {"type": "text", "text": "Let me check.", "annotations": []}


def oai_call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def assistant_with_call(arguments: Any, name: str = "search") -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [oai_call("c1", name, arguments)]}


# --- accepted shapes -------------------------------------------------------------------


def test_single_base_message() -> None:
    assert to_openai_messages(HumanMessage("hi")) == [{"role": "user", "content": "hi"}]
    message = HumanMessage("hi")
    assert to_langchain_messages(message)[0] is message


def test_single_openai_dict() -> None:
    result = to_langchain_messages({"role": "user", "content": "hi"})
    assert len(result) == 1
    assert isinstance(result[0], HumanMessage)
    assert result[0].content == "hi"
    assert to_openai_messages({"role": "user", "content": "hi"}) == [
        {"role": "user", "content": "hi"}
    ]


def test_single_langchain_dict() -> None:
    assert to_openai_messages({"type": "ai", "content": "hello"}) == [
        {"role": "assistant", "content": "hello"}
    ]


def test_tuple_of_messages() -> None:
    messages = (SystemMessage("be brief"), HumanMessage("hi"))
    assert [m["role"] for m in to_openai_messages(messages)] == ["system", "user"]


def test_empty_list() -> None:
    assert to_openai_messages([]) == []
    assert to_langchain_messages([]) == []


@pytest.mark.parametrize(
    ("type_", "role"),
    [
        ("human", "user"),
        ("ai", "assistant"),
        ("system", "system"),
    ],
)
def test_langchain_type_names(type_: str, role: str) -> None:
    assert to_openai_messages([{"type": type_, "content": "x"}])[0]["role"] == role


def test_model_dump_round_trips() -> None:
    original = AIMessage(
        "", id="m1", tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "c1"}]
    )
    rebuilt = to_langchain_messages([original.model_dump()])[0]
    assert isinstance(rebuilt, AIMessage)
    assert rebuilt.tool_calls == original.tool_calls
    assert rebuilt.id == "m1"


def test_mixed_list() -> None:
    messages = [
        SystemMessage("be brief"),
        {"role": "user", "content": "weather?"},
        {"type": "ai", "content": "", "tool_calls": [{"name": "w", "args": {}, "id": "c1"}]},
        {"role": "tool", "content": "sunny", "tool_call_id": "c1"},
        AIMessage("It is sunny."),
    ]
    assert to_openai_messages(messages) == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": "", "tool_calls": [oai_call("c1", "w", "{}")]},
        {"role": "tool", "content": "sunny", "tool_call_id": "c1"},
        {"role": "assistant", "content": "It is sunny."},
    ]
    lc = to_langchain_messages(messages)
    assert [type(m) for m in lc] == [
        SystemMessage,
        HumanMessage,
        AIMessage,
        ToolMessage,
        AIMessage,
    ]
    assert lc[0] is messages[0]
    assert lc[4] is messages[4]


def test_state_mapping() -> None:
    state = {"messages": [HumanMessage("hi"), {"role": "assistant", "content": "hello"}], "n": 1}
    assert to_openai_messages(state) == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]
    assert [type(m) for m in to_langchain_messages(state)] == [HumanMessage, AIMessage]


def test_state_mapping_with_type_key_is_still_a_state() -> None:
    state = {"type": "agent_state", "messages": [HumanMessage("hi")]}
    assert to_openai_messages(state) == [{"role": "user", "content": "hi"}]


def test_state_messages_must_be_a_list() -> None:
    with pytest.raises(MessageFormatError, match=r'state\["messages"\] must be a list'):
        to_openai_messages({"messages": "hi"})


def test_ai_message_chunk_accepted() -> None:
    chunk = AIMessageChunk(
        content="partial",
        id="m1",
        tool_call_chunks=[{"name": "search", "args": '{"q": "x"}', "id": "c1", "index": 0}],
    )
    assert to_openai_messages([chunk]) == [
        {
            "role": "assistant",
            "content": "partial",
            "tool_calls": [oai_call("c1", "search", '{"q": "x"}')],
            "id": "m1",
        }
    ]
    assert to_langchain_messages([chunk])[0] is chunk


def test_ai_message_chunk_built_from_tool_calls() -> None:
    chunk = AIMessageChunk(
        content="", tool_calls=[{"name": "search", "args": {"q": "é"}, "id": "c1"}]
    )
    assert to_openai_messages([chunk])[0]["tool_calls"] == [oai_call("c1", "search", '{"q": "é"}')]


def test_ai_message_chunk_with_json_list_arguments_raises() -> None:
    chunk = AIMessageChunk(
        content="",
        tool_call_chunks=[{"name": "search", "args": "[1]", "id": "c1", "index": 0}],
    )
    with pytest.raises(MessageFormatError, match=r"tool_calls\[0\] \(tool 'search'\).*JSON object"):
        to_langchain_messages([chunk])


def test_ai_message_chunk_with_truncated_arguments_raises() -> None:
    # LangChain's partial-JSON parser would make this a call with arguments {"q": "wea"}.
    chunk = AIMessageChunk(
        content="",
        tool_call_chunks=[{"name": "search", "args": '{"q": "wea', "id": "c1", "index": 0}],
    )
    assert chunk.tool_calls  # LangChain accepted it silently
    with pytest.raises(MessageFormatError, match=r"messages\[0\].*tool_calls\[0\].*'search'"):
        to_openai_messages([chunk])


def test_developer_role_kept() -> None:
    message = {"role": "developer", "content": "rules"}
    assert to_openai_messages([message]) == [message]
    lc = to_langchain_messages([message])[0]
    assert isinstance(lc, SystemMessage)
    assert to_openai_messages([lc]) == [message]
    assert to_openai_messages([lc.model_dump()]) == [message]


def test_system_message_is_system() -> None:
    assert to_openai_messages([SystemMessage("rules")])[0]["role"] == "system"


@pytest.mark.parametrize(
    "message",
    [ChatMessage(content="x", role="assistant"), FunctionMessage(content="x", name="f")],
)
def test_other_message_classes_raise(message: BaseMessage) -> None:
    name = type(message).__name__
    for convert in (to_openai_messages, to_langchain_messages):
        with pytest.raises(
            MessageFormatError, match=rf"messages\[0\]: unsupported message class {name}"
        ):
            convert([message])


def test_chunk_type_names_in_dicts_are_unknown() -> None:
    with pytest.raises(MessageFormatError, match=r"unknown type 'AIMessageChunk'"):
        to_openai_messages([{"type": "AIMessageChunk", "content": "x"}])


def test_missing_content_becomes_empty_string() -> None:
    message = {"role": "assistant", "content": None, "tool_calls": [oai_call("c1", "f", "{}")]}
    assert to_openai_messages([message])[0]["content"] == ""
    assert to_langchain_messages([message])[0].content == ""


def test_other_keys_are_not_carried_over() -> None:
    message = {"role": "assistant", "content": "x", "refusal": None, "audio": None}
    assert to_openai_messages([message]) == [{"role": "assistant", "content": "x"}]


def test_name_and_id_preserved() -> None:
    message = {"role": "user", "content": "hi", "name": "alice", "id": "m1"}
    assert to_openai_messages([message]) == [message]
    lc = to_langchain_messages([message])[0]
    assert (lc.name, lc.id) == ("alice", "m1")
    assert to_openai_messages([lc]) == [message]


def test_message_to_openai_single() -> None:
    assert message_to_openai(ToolMessage("ok", tool_call_id="c1", name="search")) == {
        "role": "tool",
        "content": "ok",
        "tool_call_id": "c1",
        "name": "search",
    }
    assert message_to_openai({"type": "human", "content": "hi"}) == {
        "role": "user",
        "content": "hi",
    }


def test_message_to_openai_uses_index_in_errors() -> None:
    with pytest.raises(MessageFormatError, match=r"messages\[7\]"):
        message_to_openai({"role": "bot", "content": "x"}, 7)


# --- content is never transformed ------------------------------------------------------


def test_thinking_blocks_preserved_to_openai() -> None:
    content: list[str | dict[str, Any]] = [THINKING, TEXT]
    result = to_openai_messages([AIMessage(content=content)])
    assert result == [{"role": "assistant", "content": [THINKING, TEXT]}]


def test_thinking_blocks_preserved_to_langchain() -> None:
    content = [THINKING, TEXT]
    lc = to_langchain_messages([{"role": "assistant", "content": content}])[0]
    assert lc.content == [THINKING, TEXT]
    assert to_openai_messages([lc])[0]["content"] == [THINKING, TEXT]


def test_reasoning_blocks_preserved_both_directions() -> None:
    content = [REASONING, TEXT]
    lc = to_langchain_messages([{"role": "assistant", "content": content}])[0]
    assert lc.content == [REASONING, TEXT]
    assert to_openai_messages([lc]) == [{"role": "assistant", "content": [REASONING, TEXT]}]


def test_text_only_blocks_not_joined() -> None:
    # langchain-core's convert_to_openai_messages would join these into "a\nb".
    content: list[str | dict[str, Any]] = [
        {"type": "text", "text": "a"},
        {"type": "text", "text": "b", "id": "t2"},
    ]
    assert to_openai_messages([AIMessage(content=content)])[0]["content"] == content


def test_tool_use_blocks_kept_in_content() -> None:
    # Anthropic puts the call in content as well as tool_calls; both stay as given.
    tool_use = {"type": "tool_use", "id": "c1", "name": "search", "input": {"q": "x"}}
    message = AIMessage(
        content=[TEXT, tool_use], tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "c1"}]
    )
    result = to_openai_messages([message])[0]
    assert result["content"] == [TEXT, tool_use]
    assert result["tool_calls"] == [oai_call("c1", "search", '{"q": "x"}')]


def test_long_string_content_passes_through_unchanged() -> None:
    long_text = "x" * 1_000_000
    assert to_openai_messages([{"role": "user", "content": long_text}])[0]["content"] is long_text
    assert to_openai_messages([HumanMessage(long_text)])[0]["content"] is long_text
    assert to_langchain_messages([{"role": "user", "content": long_text}])[0].content is long_text


def test_content_list_object_kept_for_dicts() -> None:
    content = [THINKING, TEXT]
    assert to_openai_messages([{"role": "assistant", "content": content}])[0]["content"] is content


def test_content_of_wrong_type_raises() -> None:
    with pytest.raises(MessageFormatError, match=r"messages\[0\]: content must be a string"):
        to_openai_messages([{"role": "user", "content": 42}])
    with pytest.raises(MessageFormatError, match=r"messages\[0\]: content\[1\]"):
        to_langchain_messages([{"role": "user", "content": ["a", 1]}])


# --- tool calls ------------------------------------------------------------------------


def test_tool_calls_to_openai_keep_id_name_args_and_key_order() -> None:
    args = {"z": 1, "a": "é", "m": [1, {"k": None}]}
    message = AIMessage("", tool_calls=[{"name": "search", "args": args, "id": "c1"}])
    result = to_openai_messages([message])[0]
    assert result["tool_calls"] == [
        oai_call("c1", "search", json.dumps(args, ensure_ascii=False)),
    ]
    assert result["tool_calls"][0]["function"]["arguments"] == (
        '{"z": 1, "a": "é", "m": [1, {"k": null}]}'
    )


def test_tool_calls_to_langchain_from_openai_shape() -> None:
    message = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            oai_call("c1", "search", '{"q": "x", "n": 2}'),
            oai_call("c2", "fetch", {"url": "u"}),  # arguments already a dict
        ],
    }
    lc = to_langchain_messages([message])[0]
    assert isinstance(lc, AIMessage)
    assert [(c["id"], c["name"], c["args"]) for c in lc.tool_calls] == [
        ("c1", "search", {"q": "x", "n": 2}),
        ("c2", "fetch", {"url": "u"}),
    ]
    assert list(lc.tool_calls[0]["args"]) == ["q", "n"]
    assert lc.invalid_tool_calls == []


def test_tool_calls_to_langchain_from_langchain_shape() -> None:
    message = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"name": "search", "args": {"q": "x"}, "id": "c1", "type": "tool_call"}],
    }
    lc = to_langchain_messages([message])[0]
    assert isinstance(lc, AIMessage)
    assert lc.tool_calls == [
        {"name": "search", "args": {"q": "x"}, "id": "c1", "type": "tool_call"}
    ]


def test_empty_arguments_mean_no_arguments() -> None:
    for arguments in ("", None):
        lc = to_langchain_messages([assistant_with_call(arguments)])[0]
        assert isinstance(lc, AIMessage)
        assert lc.tool_calls[0]["args"] == {}


def test_openai_arguments_text_is_normalised() -> None:
    result = to_openai_messages([assistant_with_call('{ "q" :"x",\n"n":2 }')])[0]
    assert result["tool_calls"][0]["function"]["arguments"] == '{"q": "x", "n": 2}'


def test_round_trip_langchain_openai_langchain() -> None:
    original = [
        SystemMessage("rules", id="s1"),
        HumanMessage("weather?", name="alice", id="h1"),
        AIMessage(
            content=[THINKING, TEXT],
            id="a1",
            tool_calls=[
                {"name": "weather", "args": {"city": "Paris", "days": 2}, "id": "c1"},
                {"name": "time", "args": {}, "id": "c2"},
            ],
        ),
        ToolMessage("sunny", tool_call_id="c1", name="weather", id="t1"),
        ToolMessage("noon", tool_call_id="c2"),
    ]
    rebuilt = to_langchain_messages(to_openai_messages(original))
    assert [type(m) for m in rebuilt] == [type(m) for m in original]
    for before, after in zip(original, rebuilt, strict=True):
        assert after.content == before.content
        assert (after.name, after.id) == (before.name, before.id)
    ai_before, ai_after = original[2], rebuilt[2]
    assert isinstance(ai_before, AIMessage)
    assert isinstance(ai_after, AIMessage)
    assert ai_after.tool_calls == ai_before.tool_calls
    tool_after = rebuilt[3]
    assert isinstance(tool_after, ToolMessage)
    assert tool_after.tool_call_id == "c1"


def test_round_trip_openai_langchain_openai() -> None:
    original: list[dict[str, Any]] = [
        {"role": "developer", "content": "rules"},
        {"role": "user", "content": "weather?", "name": "alice", "id": "h1"},
        {
            "role": "assistant",
            "content": [THINKING, TEXT],
            "tool_calls": [oai_call("c1", "weather", '{"city": "Paris", "days": 2}')],
            "id": "a1",
        },
        {"role": "tool", "content": "sunny", "tool_call_id": "c1", "name": "weather"},
        {"role": "assistant", "content": "Sunny."},
    ]
    assert to_openai_messages(to_langchain_messages(original)) == original
    assert to_openai_messages(original) == original


def test_tool_call_id_may_be_none() -> None:
    message = AIMessage("", tool_calls=[{"name": "search", "args": {}, "id": None}])
    oai = to_openai_messages([message])
    assert oai[0]["tool_calls"][0]["id"] is None
    rebuilt = to_langchain_messages(oai)[0]
    assert isinstance(rebuilt, AIMessage)
    assert rebuilt.tool_calls[0]["id"] is None


# --- malformed tool calls --------------------------------------------------------------


def test_malformed_arguments_string_raises_with_index_and_tool() -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [oai_call("c1", "ok", "{}"), oai_call("c2", "search", '{"q": oops}')],
        },
    ]
    for convert in (to_openai_messages, to_langchain_messages):
        with pytest.raises(MessageFormatError) as info:
            convert(messages)
        text = str(info.value)
        assert "messages[1]" in text
        assert "tool_calls[1]" in text
        assert "'search'" in text
        assert "not valid JSON" in text
        assert '{"q": oops}' in text


def test_malformed_arguments_are_quoted_truncated() -> None:
    bad = '{"q": "' + "x" * 5000
    with pytest.raises(MessageFormatError) as info:
        to_langchain_messages([assistant_with_call(bad)])
    text = str(info.value)
    assert "5007 chars" in text
    assert len(text) < 500


def test_arguments_json_list_raises() -> None:
    with pytest.raises(MessageFormatError) as info:
        to_langchain_messages([assistant_with_call("[1, 2]", name="lookup")])
    text = str(info.value)
    assert "messages[0]" in text
    assert "tool_calls[0]" in text
    assert "'lookup'" in text
    assert "must be a JSON object, got '[1, 2]'" in text


def test_arguments_of_wrong_type_raise() -> None:
    with pytest.raises(MessageFormatError, match="must be a JSON object string or a dict"):
        to_openai_messages([assistant_with_call(["q"])])


def test_tool_call_without_name_raises() -> None:
    message = {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "args": {}}]}
    with pytest.raises(MessageFormatError, match=r"tool_calls\[0\].*'name'.*\['id', 'args'\]"):
        to_langchain_messages([message])


def test_tool_calls_on_user_message_raise() -> None:
    message = {"role": "user", "content": "x", "tool_calls": [oai_call("c1", "f", "{}")]}
    with pytest.raises(MessageFormatError, match="only assistant messages can have tool_calls"):
        to_openai_messages([message])


def test_ai_message_with_invalid_tool_calls_raises() -> None:
    message = AIMessage(
        content="",
        invalid_tool_calls=[
            {"name": "search", "args": '{"q": oops', "id": "c1", "error": "bad JSON"}
        ],
    )
    for convert in (to_openai_messages, to_langchain_messages):
        with pytest.raises(MessageFormatError) as info:
            convert([HumanMessage("hi"), message])
        text = str(info.value)
        assert "messages[1]: invalid_tool_calls[0] (tool 'search')" in text
        assert "not valid JSON" in text
        assert '{"q": oops' in text


def test_invalid_tool_call_with_parseable_arguments_still_raises() -> None:
    message = AIMessage(
        content="",
        invalid_tool_calls=[{"name": "search", "args": '{"q": 1}', "id": "c1", "error": "?"}],
    )
    with pytest.raises(
        MessageFormatError,
        match=r"messages\[0\]: invalid_tool_calls\[0\] \(tool .search.\).*\(\?\)",
    ):
        to_openai_messages([message])


def test_invalid_tool_calls_in_dumped_dict_raise() -> None:
    dumped = {
        "type": "ai",
        "content": "",
        "tool_calls": [],
        "invalid_tool_calls": [{"name": "search", "args": "{", "id": "c1", "error": None}],
    }
    with pytest.raises(MessageFormatError, match=r"messages\[0\].*'search'"):
        to_openai_messages([dumped])


def test_unserialisable_arguments_raise() -> None:
    message = AIMessage("", tool_calls=[{"name": "search", "args": {"x": object()}, "id": "c1"}])
    with pytest.raises(MessageFormatError, match=r"messages\[0\].*'search'.*JSON-serialisable"):
        to_openai_messages([message])


# --- other malformed input -------------------------------------------------------------


def test_tool_message_without_tool_call_id_raises() -> None:
    with pytest.raises(MessageFormatError, match=r"messages\[1\].*tool_call_id"):
        to_langchain_messages([{"role": "user", "content": "x"}, {"role": "tool", "content": "y"}])
    with pytest.raises(MessageFormatError, match=r"messages\[0\].*tool_call_id"):
        to_openai_messages([{"type": "tool", "content": "y", "tool_call_id": ""}])


def test_unknown_role_raises_listing_known_roles() -> None:
    with pytest.raises(MessageFormatError) as info:
        to_langchain_messages([{"role": "bot", "content": "x"}])
    text = str(info.value)
    assert "messages[0]" in text
    assert "'bot'" in text
    for role in ("'user'", "'assistant'", "'system'", "'developer'", "'tool'", "'human'", "'ai'"):
        assert role in text


def test_bare_string_raises_with_hint() -> None:
    for convert in (to_openai_messages, to_langchain_messages):
        with pytest.raises(MessageFormatError, match=r'wrap it as \{"role": "user"'):
            convert("hello")


def test_string_inside_list_raises_with_hint() -> None:
    with pytest.raises(MessageFormatError, match=r'messages\[1\].*wrap it as \{"role": "user"'):
        to_openai_messages([HumanMessage("hi"), "hello"])


def test_none_raises() -> None:
    for convert in (to_openai_messages, to_langchain_messages):
        with pytest.raises(MessageFormatError, match=r"expected a message list.*got None"):
            convert(None)


def test_dict_without_role_raises_naming_keys() -> None:
    with pytest.raises(MessageFormatError, match=r"keys \['speaker', 'content'\]"):
        to_openai_messages({"speaker": "me", "content": "x"})
    with pytest.raises(MessageFormatError, match=r"messages\[0\].*got keys \['text'\]"):
        to_langchain_messages([{"text": "x"}])


def test_other_types_raise() -> None:
    with pytest.raises(MessageFormatError, match="got int"):
        to_openai_messages(3)
    with pytest.raises(MessageFormatError, match=r"messages\[0\].*got int"):
        to_openai_messages([3])


def test_wrong_name_type_raises() -> None:
    with pytest.raises(MessageFormatError, match=r"messages\[0\]: 'name' must be a string"):
        to_langchain_messages([{"role": "user", "content": "x", "name": 5}])


def test_error_is_an_input_error() -> None:
    with pytest.raises(EvaluatorInputError):
        to_openai_messages(None)
    with pytest.raises(ValueError, match="expected a message list"):
        to_openai_messages(None)


def test_results_are_base_messages() -> None:
    result = to_langchain_messages([{"role": "user", "content": "x"}])
    assert all(isinstance(m, BaseMessage) for m in result)
