"""Tests of ``langchain_evals_port.testing.ScriptedChatModel``."""

from __future__ import annotations

import asyncio
import copy
import time
from typing import Any, cast

import pytest
from langchain_core.callbacks import get_usage_metadata_callback
from langchain_core.exceptions import OutputParserException
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.tools import tool
from pydantic import BaseModel, ValidationError
from typing_extensions import TypedDict

from langchain_evals_port.core._fingerprint import _described
from langchain_evals_port.core.errors import failure_code
from langchain_evals_port.testing import (
    HashingEmbeddings,
    ScriptedCall,
    ScriptedChatModel,
    ScriptedProviderError,
    ScriptExhaustedError,
    ToolCallReply,
)


class Verdict(BaseModel):
    score: bool
    reasoning: str


class VerdictDict(TypedDict):
    score: bool
    reasoning: str


VERDICT_SCHEMA: dict[str, Any] = {
    "title": "verdict",
    "type": "object",
    "properties": {"score": {"type": "boolean"}, "reasoning": {"type": "string"}},
    "required": ["score", "reasoning"],
    "additionalProperties": False,
}


def test_text_reply_is_an_ai_message_with_metadata() -> None:
    model = ScriptedChatModel(replies=["Paris"], model_name="judge-1")

    reply = model.invoke("What is the capital of France?")

    assert isinstance(reply, AIMessage)
    assert reply.content == "Paris"
    assert reply.response_metadata["model_name"] == "judge-1"
    assert reply.response_metadata["finish_reason"] == "stop"
    usage = reply.usage_metadata
    assert usage is not None
    assert usage["input_tokens"] > 0
    assert usage["output_tokens"] > 0
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]


def test_usage_grows_with_the_prompt_and_can_be_fixed() -> None:
    estimated = ScriptedChatModel(replies=["ok", "ok"])
    short = estimated.invoke("hi").usage_metadata
    long = estimated.invoke("hi " * 100).usage_metadata
    assert short is not None
    assert long is not None
    assert long["input_tokens"] > short["input_tokens"]

    # A cast, because mypy checking for Python 3.10 cannot see the optional keys of
    # langchain-core's UsageMetadata (they are typing.NotRequired, new in 3.11).
    fixed_usage = cast("UsageMetadata", {"input_tokens": 7, "output_tokens": 3, "total_tokens": 10})
    fixed = ScriptedChatModel(replies=["ok"], usage=fixed_usage)
    assert fixed.invoke("hi").usage_metadata == fixed_usage


def test_usage_reaches_langchain_usage_callbacks() -> None:
    model = ScriptedChatModel(replies=["a", "b"], model_name="judge-1")

    with get_usage_metadata_callback() as callback:
        model.invoke("one")
        model.invoke("two")

    assert callback.usage_metadata["judge-1"]["total_tokens"] > 0


def test_ai_message_reply_is_copied() -> None:
    scripted = AIMessage(
        content="done",
        usage_metadata={"input_tokens": 1, "output_tokens": 1, "total_tokens": 2},
    )
    model = ScriptedChatModel(replies=[scripted])

    reply = model.invoke("go")

    assert reply.content == "done"
    assert reply.usage_metadata == scripted.usage_metadata
    assert reply is not scripted
    assert scripted.id is None
    assert scripted.response_metadata == {}


def test_tool_call_replies() -> None:
    model = ScriptedChatModel(
        replies=[
            ToolCallReply("search", {"query": "weather"}),
            [ToolCallReply("a", {}, id="id-a"), {"name": "b", "args": {"x": 1}, "id": "id-b"}],
            {"name": "lookup", "args": {"key": "k"}, "id": "id-c", "type": "tool_call"},
        ]
    )

    first = model.invoke("weather?")
    second = model.invoke("both")
    third = model.invoke("lookup")

    assert first.content == ""
    assert first.response_metadata["finish_reason"] == "tool_calls"
    assert [(c["name"], c["args"]) for c in first.tool_calls] == [("search", {"query": "weather"})]
    assert first.tool_calls[0]["id"]
    assert [(c["name"], c["args"], c["id"]) for c in second.tool_calls] == [
        ("a", {}, "id-a"),
        ("b", {"x": 1}, "id-b"),
    ]
    assert [(c["name"], c["id"]) for c in third.tool_calls] == [("lookup", "id-c")]


def test_generated_tool_call_ids_are_unique() -> None:
    model = ScriptedChatModel(responder=lambda _: [ToolCallReply("t"), ToolCallReply("t")])

    ids = [call["id"] for _ in range(3) for call in model.invoke("go").tool_calls]

    assert len(set(ids)) == 6


def test_structured_object_on_plain_invoke_is_json_text() -> None:
    model = ScriptedChatModel(
        replies=[{"score": True, "reasoning": "ok"}, Verdict(score=False, reasoning="no")]
    )

    assert model.invoke("a").content == '{"score": true, "reasoning": "ok"}'
    assert model.invoke("b").content == '{"score":false,"reasoning":"no"}'


def test_structured_output_with_pydantic_schema() -> None:
    model = ScriptedChatModel(
        replies=[{"score": True, "reasoning": "matches"}, Verdict(score=False, reasoning="off")]
    )
    judge = model.with_structured_output(Verdict, method="json_schema", strict=True)

    first = judge.invoke("grade this")
    second = judge.invoke("grade that")

    assert first == Verdict(score=True, reasoning="matches")
    assert second == Verdict(score=False, reasoning="off")
    call = model.calls[0]
    assert call.kind == "structured"
    assert call.schema is Verdict
    assert call.method == "json_schema"
    assert call.kwargs == {"strict": True}
    assert call.messages == [HumanMessage(content="grade this")]


def test_structured_output_with_json_schema_dict_records_it_untouched() -> None:
    schema = copy.deepcopy(VERDICT_SCHEMA)
    model = ScriptedChatModel(
        replies=[{"score": True, "reasoning": "a"}, Verdict(score=False, reasoning="b")]
    )
    judge = model.with_structured_output(schema, method="function_calling")

    assert judge.invoke("x") == {"score": True, "reasoning": "a"}
    assert judge.invoke("y") == {"score": False, "reasoning": "b"}
    assert [call.schema for call in model.calls] == [schema, schema]
    assert all(call.schema is schema for call in model.calls)
    assert schema == VERDICT_SCHEMA
    assert [call.method for call in model.calls] == ["function_calling", "function_calling"]


def test_structured_output_with_typed_dict_returns_a_dict() -> None:
    model = ScriptedChatModel(replies=[{"score": True, "reasoning": "a"}])

    result = model.with_structured_output(VerdictDict).invoke("x")

    assert result == {"score": True, "reasoning": "a"}
    assert model.calls[0].schema is VerdictDict
    assert model.calls[0].method is None


def test_structured_output_parses_a_json_string_reply() -> None:
    model = ScriptedChatModel(replies=['{"score": true, "reasoning": "from text"}'])

    assert model.with_structured_output(Verdict).invoke("x") == Verdict(
        score=True, reasoning="from text"
    )


@pytest.mark.parametrize(
    ("reply", "schema"),
    [
        ("I think the answer is correct.", Verdict),
        ("I think the answer is correct.", VERDICT_SCHEMA),
        ('{"score": "maybe"}', Verdict),
        ("[1, 2]", VERDICT_SCHEMA),
        ({"score": "maybe"}, Verdict),
        (ToolCallReply("verdict", {"score": True}), VERDICT_SCHEMA),
    ],
)
def test_structured_output_rejects_unparsable_replies(reply: Any, schema: Any) -> None:
    model = ScriptedChatModel(replies=[reply])

    with pytest.raises(OutputParserException):
        model.with_structured_output(schema).invoke("x")


def test_include_raw() -> None:
    model = ScriptedChatModel(replies=[{"score": True, "reasoning": "r"}, "not json"])
    judge = model.with_structured_output(Verdict, include_raw=True)

    ok = judge.invoke("x")
    bad = judge.invoke("y")

    assert isinstance(ok, dict)
    assert isinstance(ok["raw"], AIMessage)
    assert ok["raw"].usage_metadata is not None
    assert ok["parsed"] == Verdict(score=True, reasoning="r")
    assert ok["parsing_error"] is None
    assert isinstance(bad, dict)
    assert bad["raw"].content == "not json"
    assert bad["parsed"] is None
    assert isinstance(bad["parsing_error"], OutputParserException)


def test_scripted_provider_errors() -> None:
    model = ScriptedChatModel(
        replies=[
            ScriptedProviderError.bad_request("unsupported schema"),
            ScriptedProviderError.rate_limited(),
            ScriptedProviderError.server_error(),
            "recovered",
        ]
    )

    with pytest.raises(ScriptedProviderError, match="unsupported schema") as bad_request:
        model.with_structured_output(VERDICT_SCHEMA, include_raw=True).invoke("x")
    with pytest.raises(ScriptedProviderError) as rate_limited:
        model.invoke("y")
    with pytest.raises(ScriptedProviderError) as server_error:
        model.invoke("z")

    assert bad_request.value.status_code == 400
    assert bad_request.value.message == "unsupported schema"
    assert rate_limited.value.status_code == 429
    assert server_error.value.status_code == 500
    assert failure_code(rate_limited.value) == "rate_limited"
    assert failure_code(bad_request.value) == "provider_error"
    assert model.invoke("again").content == "recovered"
    assert len(model.calls) == 4


def test_exhaustion_error_says_how_many_replies_were_scripted_and_consumed() -> None:
    model = ScriptedChatModel(replies=["one", "two"])
    model.invoke("1")
    model.invoke("2")

    with pytest.raises(ScriptExhaustedError, match="2 replies were scripted and 2 consumed"):
        model.invoke("3")

    assert len(model.calls) == 3


def test_responder_answers_per_input_after_the_replies() -> None:
    def responder(messages: list[Any]) -> str:
        return f"echo: {messages[-1].content}"

    model = ScriptedChatModel(replies=["scripted"], responder=responder)

    answers = [model.invoke(f"q{i}").content for i in range(200)]

    assert answers[0] == "scripted"
    assert answers[1:] == [f"echo: q{i}" for i in range(1, 200)]


def test_responder_can_answer_structured_calls_and_raise() -> None:
    model = ScriptedChatModel(
        responder=lambda messages: (
            ScriptedProviderError.rate_limited()
            if "busy" in messages[-1].text
            else {"score": True, "reasoning": messages[-1].text}
        )
    )
    judge = model.with_structured_output(Verdict)

    assert judge.invoke("fine") == Verdict(score=True, reasoning="fine")
    with pytest.raises(ScriptedProviderError):
        judge.invoke("busy")


def test_latency_sync() -> None:
    model = ScriptedChatModel(replies=["a"], latency=0.05)

    start = time.perf_counter()
    model.invoke("x")

    assert time.perf_counter() - start >= 0.05


async def test_latency_async_uses_asyncio_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    real_sleep = asyncio.sleep

    async def spy_sleep(delay: float) -> None:
        slept.append(delay)
        await real_sleep(delay)

    def forbidden_sleep(_: float) -> None:
        raise AssertionError("time.sleep on the async path")

    monkeypatch.setattr(asyncio, "sleep", spy_sleep)
    monkeypatch.setattr(time, "sleep", forbidden_sleep)
    model = ScriptedChatModel(replies=["a", {"score": True, "reasoning": "r"}], latency=0.05)

    start = time.perf_counter()
    assert (await model.ainvoke("x")).content == "a"
    assert await model.with_structured_output(Verdict).ainvoke("y") == Verdict(
        score=True, reasoning="r"
    )

    assert time.perf_counter() - start >= 0.1
    assert slept == [0.05, 0.05]


def test_batch_consumes_each_reply_exactly_once() -> None:
    replies = [f"r{i}" for i in range(200)]
    prompts = [f"q{i}" for i in range(200)]
    model = ScriptedChatModel(replies=replies, latency=0.001)

    outputs = model.batch([*prompts], config={"max_concurrency": 8})

    assert sorted(str(output.content) for output in outputs) == sorted(replies)
    assert sorted(str(call.messages[0].content) for call in model.calls) == sorted(prompts)


async def test_abatch_and_gather_consume_each_reply_exactly_once() -> None:
    replies = [f"r{i}" for i in range(40)]
    model = ScriptedChatModel(replies=replies, latency=0.01)

    batched = await model.abatch([f"q{i}" for i in range(20)], config={"max_concurrency": 5})
    gathered = await asyncio.gather(*(model.ainvoke(f"g{i}") for i in range(20)))

    contents = [str(output.content) for output in [*batched, *gathered]]
    assert sorted(contents) == sorted(replies)
    assert len(model.calls) == 40


def test_a_copy_shares_the_script_and_the_record_of_calls() -> None:
    model = ScriptedChatModel(replies=["a", "b", "c"])
    twin = model.model_copy(update={"model_name": "twin"})

    replies = [twin.invoke("1").content, model.invoke("2").content, twin.invoke("3").content]

    assert replies == ["a", "b", "c"]
    assert [call.messages[0].content for call in model.calls] == ["1", "2", "3"]
    assert twin.calls == model.calls
    with pytest.raises(ScriptExhaustedError, match="3 replies were scripted and 3 consumed"):
        model.invoke("4")


def test_calls_record_the_messages_sent_and_stop() -> None:
    model = ScriptedChatModel(replies=["a"])
    messages = [SystemMessage(content="Be strict."), HumanMessage(content="Grade it.")]

    model.invoke(messages, stop=["END"])

    (call,) = model.calls
    assert call.kind == "chat"
    assert call.messages == messages
    assert call.schema is None
    assert call.kwargs == {"stop": ["END"]}


def test_bind_tools_is_recorded() -> None:
    @tool
    def search(query: str) -> str:
        """Search the web."""
        return query

    class Calculator(BaseModel):
        """Evaluate an arithmetic expression."""

        expression: str

    model = ScriptedChatModel(replies=[ToolCallReply("search", {"query": "x"}), "done"])
    agent_model = model.bind_tools([search, Calculator], tool_choice="auto")

    first = agent_model.invoke("find x")
    agent_model.invoke([HumanMessage(content="find x"), first])

    tools = model.calls[0].kwargs["tools"]
    assert [t["function"]["name"] for t in tools] == ["search", "Calculator"]
    assert model.calls[0].kwargs["tool_choice"] == "auto"
    echoed = model.calls[1].messages[1]
    assert isinstance(echoed, AIMessage)
    assert echoed.tool_calls == first.tool_calls


def test_stream_yields_the_reply_in_one_chunk() -> None:
    model = ScriptedChatModel(replies=["hello there", ToolCallReply("t", {"a": 1}, id="c1")])

    text_chunks = list(model.stream("x"))
    tool_chunks = list(model.stream("y"))

    assert [chunk.content for chunk in text_chunks] == ["hello there"]
    assert text_chunks[0].usage_metadata is not None
    assert [(c["name"], c["args"], c["id"]) for c in tool_chunks[0].tool_calls] == [
        ("t", {"a": 1}, "c1")
    ]
    assert len(model.calls) == 2


async def test_astream_and_stream_events_consume_one_reply_each() -> None:
    model = ScriptedChatModel(replies=["streamed", {"score": True, "reasoning": "r"}])

    chunks = [chunk async for chunk in model.astream("x")]
    events = [
        event
        async for event in model.with_structured_output(Verdict).astream_events("y", version="v2")
    ]

    assert [chunk.content for chunk in chunks] == ["streamed"]
    assert events[-1]["data"]["output"] == Verdict(score=True, reasoning="r")
    assert len(model.calls) == 2


def test_unsupported_replies_and_settings_fail_at_construction() -> None:
    with pytest.raises(TypeError, match=r"replies\[1\]"):
        ScriptedChatModel(replies=["ok", 42])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"replies\[0\]"):
        ScriptedChatModel(replies=[[]])
    with pytest.raises(TypeError, match="AIMessage"):
        ScriptedChatModel(replies=[HumanMessage(content="not a model reply")])
    with pytest.raises(ValidationError):
        ScriptedChatModel(replies=["ok"], latncy=1.0)
    with pytest.raises(ValidationError):
        ScriptedChatModel(replies=["ok"], latency=-1.0)


def test_responder_reply_is_checked() -> None:
    model = ScriptedChatModel(responder=lambda _: 42)  # type: ignore[arg-type,return-value]

    with pytest.raises(TypeError, match="responder"):
        model.invoke("x")


def test_the_classes_are_named_by_the_public_module_as_stored_fingerprints_name_them():
    # An experiment keeps a judge's model as its class's module and name (and a pickle names
    # a class so): the package's layout must not change them.
    for kind in (
        HashingEmbeddings,
        ScriptExhaustedError,
        ScriptedCall,
        ScriptedChatModel,
        ScriptedProviderError,
        ToolCallReply,
    ):
        assert kind.__module__ == "langchain_evals_port.testing"
    assert (
        _described(ScriptedChatModel())["type"] == "langchain_evals_port.testing.ScriptedChatModel"
    )
