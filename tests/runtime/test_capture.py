"""Capture of interactions from real LangGraph agents driven by scripted chat models."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler, CallbackManager
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphInterrupt, ParentCommand
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, Interrupt, interrupt

from langchain_evals_port.capture import BoundAgent, DetailedReply, InteractionCallbackHandler
from langchain_evals_port.runtime import InteractionRecord, ToolCallRecord, evaluation_scope
from langchain_evals_port.testing import ScriptedChatModel, ScriptedProviderError, ToolCallReply

SYSTEM = "You answer weather questions."


class ListSink:
    """Keeps every record it is given, noting which path delivered it."""

    def __init__(self) -> None:
        self.records: list[InteractionRecord] = []
        self.paths: list[str] = []

    def record(self, record: InteractionRecord) -> None:
        self.records.append(record)
        self.paths.append("sync")

    async def arecord(self, record: InteractionRecord) -> None:
        self.records.append(record)
        self.paths.append("async")

    @property
    def only(self) -> InteractionRecord:
        assert len(self.records) == 1, self.records
        return self.records[0]


class WeatherServiceDown(Exception):
    pass


@tool
def get_weather(city: str) -> str:
    """Look up the weather in a city."""
    return f"Sunny in {city}"


@tool
def broken_weather(city: str) -> str:
    """Look up the weather in a city (the service is down)."""
    raise WeatherServiceDown(f"no forecast for {city}")


def weather_call(city: str = "Paris", *, call_id: str = "call-1") -> ToolCallReply:
    return ToolCallReply("get_weather", {"city": city}, id=call_id)


def build_agent(
    model: ScriptedChatModel,
    tools: Sequence[BaseTool] = (get_weather,),
    *,
    checkpointer: InMemorySaver | None = None,
    approval: bool = False,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """model -> tools -> model, optionally ending at a human-approval interrupt."""
    chat = model.bind_tools(list(tools))

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [chat.invoke([SystemMessage(SYSTEM), *state["messages"]])]}

    async def acall_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await chat.ainvoke([SystemMessage(SYSTEM), *state["messages"]])]}

    def approve(state: MessagesState) -> dict[str, Any]:
        answer = interrupt("Send this answer?")
        return {"messages": [HumanMessage(f"approved: {answer}")]}

    def route(state: MessagesState) -> str:
        last = state["messages"][-1]
        if isinstance(last, AIMessage) and last.tool_calls:
            return "tools"
        return "approve" if approval else END

    graph = StateGraph(MessagesState)
    graph.add_node("model", RunnableLambda(call_model, afunc=acall_model))
    graph.add_node("tools", ToolNode(list(tools)))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", route)
    graph.add_edge("tools", "model")
    if approval:
        graph.add_node("approve", approve)
        graph.add_edge("approve", END)
    return graph.compile(checkpointer=checkpointer)


def weather_agent(sink: ListSink, **kwargs: Any) -> BoundAgent[Any, Any]:
    model = ScriptedChatModel([weather_call(), "It is sunny in Paris."])
    return BoundAgent(
        build_agent(model, **kwargs), sink=sink, agent_id="weather", roles=["support"]
    )


QUESTION = {"messages": [("human", "What's the weather in Paris?")]}


def shape(messages: Sequence[BaseMessage]) -> list[tuple[Any, ...]]:
    return [
        (
            m.type,
            m.content,
            [(c["name"], c["args"], c["id"]) for c in getattr(m, "tool_calls", [])],
            getattr(m, "tool_call_id", None),
        )
        for m in messages
    ]


def assert_weather_record(record: InteractionRecord, final_messages: list[BaseMessage]) -> None:
    assert record.status == "completed"
    assert record.agent_id == "weather"
    assert record.roles == ("support",)
    assert record.system_message == SYSTEM
    assert record.input_text == "What's the weather in Paris?"
    assert [r.finish_reason for r in record.responses] == ["tool_calls", "stop"]
    assert [r.model_name for r in record.responses] == ["scripted", "scripted"]
    assert record.responses[0].message.tool_calls[0]["id"] == "call-1"
    assert record.responses[1].text == "It is sunny in Paris."
    for response in record.responses:
        assert response.usage is not None
        assert response.usage.input_tokens > 0
        assert response.usage.total_tokens == (
            response.usage.input_tokens + response.usage.output_tokens
        )
        assert response.started_at <= response.ended_at
    assert record.tool_calls == [
        ToolCallRecord(
            id="call-1",
            name="get_weather",
            args={"city": "Paris"},
            result="Sunny in Paris",
            status="success",
        )
    ]
    assert shape(record.transcript) == shape(final_messages)
    assert record.output_text == "It is sunny in Paris."
    assert record.final_response_text == "It is sunny in Paris."
    assert record.failure is None
    assert record.started_at.tzinfo is not None
    assert record.started_at <= record.ended_at
    assert record.run_id is not None
    assert record.evaluation_traffic is False
    assert record.metadata == {}


# --- the bound agent ----------------------------------------------------------------------


def test_invoke_records_every_model_response_tool_call_and_the_transcript() -> None:
    sink = ListSink()
    output = weather_agent(sink).invoke(QUESTION)

    assert_weather_record(sink.only, output["messages"])
    assert shape(sink.only.transcript)[0][:2] == ("human", "What's the weather in Paris?")
    assert sink.paths == ["sync"]


async def test_ainvoke_records_through_the_async_sink() -> None:
    sink = ListSink()
    output = await weather_agent(sink).ainvoke(QUESTION)

    assert_weather_record(sink.only, output["messages"])
    assert sink.paths == ["async"]


def test_stream_records_once_after_the_stream_ends() -> None:
    sink = ListSink()
    chunks = []
    for chunk in weather_agent(sink).stream(QUESTION, stream_mode="values"):
        assert sink.records == []
        chunks.append(chunk)

    assert_weather_record(sink.only, chunks[-1]["messages"])


async def test_astream_records_once_after_the_stream_ends() -> None:
    sink = ListSink()
    agent = weather_agent(sink)
    updates = []
    async for chunk in agent.astream(QUESTION):
        assert sink.records == []
        updates.append(chunk)

    assert [next(iter(u)) for u in updates] == ["model", "tools", "model"]
    record = sink.only
    assert sink.paths == ["async"]
    assert record.status == "completed"
    # "updates" chunks are not the agent's reply, so the text comes from the last response.
    assert record.output_text is None
    assert record.final_response_text == "It is sunny in Paris."
    assert len(record.tool_calls) == 1


def test_an_abandoned_stream_is_recorded_as_interrupted_with_what_it_produced() -> None:
    sink = ListSink()
    stream = weather_agent(sink).stream(QUESTION, stream_mode="values")
    next(stream)  # the input state
    next(stream)  # the first model reply
    stream.close()

    record = sink.only
    assert record.status == "interrupted"
    assert record.metadata == {"stream_abandoned": True}
    assert [r.finish_reason for r in record.responses] == ["tool_calls"]
    assert record.tool_calls[0].status == "not_run"


async def test_an_abandoned_astream_is_recorded_as_interrupted() -> None:
    sink = ListSink()
    stream = weather_agent(sink).astream(QUESTION)
    await anext(stream)
    await stream.aclose()

    assert sink.only.status == "interrupted"
    assert sink.only.metadata["stream_abandoned"] is True
    assert sink.paths == ["async"]


def test_a_raising_tool_fails_the_interaction_and_reaches_the_caller_unchanged() -> None:
    sink = ListSink()
    thinking = AIMessage(
        "Let me check the forecast.",
        tool_calls=[{"name": "broken_weather", "args": {"city": "Oslo"}, "id": "call-9"}],
    )
    agent = BoundAgent(
        build_agent(ScriptedChatModel([thinking]), [broken_weather]), sink=sink, agent_id="weather"
    )

    with pytest.raises(WeatherServiceDown) as raised:
        agent.invoke(QUESTION)

    record = sink.only
    assert record.status == "failed"
    assert record.failed
    assert record.failure is not None
    assert record.failure.reason == "WeatherServiceDown"
    assert record.failure_summary == "no forecast for Oslo"
    assert record.final_response_text == "Let me check the forecast."
    assert record.tool_calls == [
        ToolCallRecord(
            id="call-9",
            name="broken_weather",
            args={"city": "Oslo"},
            result="no forecast for Oslo",
            status="error",
        )
    ]
    assert str(raised.value) == "no forecast for Oslo"


def test_the_caller_gets_the_same_exception_object() -> None:
    sink = ListSink()
    error = WeatherServiceDown("gone")

    def explode(_: Any) -> str:
        raise error

    with pytest.raises(WeatherServiceDown) as raised:
        BoundAgent(RunnableLambda(explode), sink=sink, agent_id="a").invoke("hi")

    assert raised.value is error
    assert sink.only.status == "failed"


async def test_a_raising_model_fails_the_interaction_and_keeps_earlier_replies() -> None:
    sink = ListSink()
    error = ScriptedProviderError.server_error()
    agent = BoundAgent(
        build_agent(ScriptedChatModel([weather_call(), error])), sink=sink, agent_id="weather"
    )

    with pytest.raises(ScriptedProviderError) as raised:
        await agent.ainvoke(QUESTION)

    assert raised.value is error
    record = sink.only
    assert record.status == "failed"
    assert record.failure is not None
    assert record.failure.reason == "ScriptedProviderError"
    assert len(record.responses) == 1
    assert record.tool_calls[0].result == "Sunny in Paris"
    # The failed call's prompt is the conversation so far.
    assert [m.type for m in record.transcript] == ["human", "ai", "tool"]


def test_an_interrupt_is_recorded_and_resuming_is_a_second_interaction() -> None:
    sink = ListSink()
    agent = weather_agent(sink, checkpointer=InMemorySaver(), approval=True)
    config: Any = {"configurable": {"thread_id": "thread-7"}}

    paused = agent.invoke(QUESTION, config)
    assert "__interrupt__" in paused
    assert sink.only.status == "interrupted"
    assert sink.only.output_text == "It is sunny in Paris."

    resumed = agent.invoke(Command(resume="yes"), config)
    first, second = sink.records
    assert second.status == "completed"
    assert second.interaction_id != first.interaction_id
    assert second.thread_id == first.thread_id == "thread-7"
    assert second.input_messages == []
    assert resumed["messages"][-1].content == "approved: yes"
    # The state is the wrapped graph's, reached through the bound agent.
    assert agent.get_state(config).values["messages"][-1].content == "approved: yes"


def test_an_interrupt_raised_out_of_an_agent_inside_a_larger_graph_is_recorded() -> None:
    sink = ListSink()
    agent = weather_agent(sink, approval=True)  # checkpointed by the outer graph
    escaped: list[BaseException] = []

    def ask_agent(state: MessagesState) -> dict[str, Any]:
        try:
            return {"messages": agent.invoke(state)["messages"][-1:]}
        except BaseException as error:  # the interrupt, on its way to the outer graph
            escaped.append(error)
            raise

    outer_graph = StateGraph(MessagesState)
    outer_graph.add_node("ask_agent", ask_agent)
    outer_graph.add_edge(START, "ask_agent")
    outer = outer_graph.compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "outer"}}

    assert "__interrupt__" in outer.invoke(QUESTION, config)
    assert [type(e).__name__ for e in escaped] == ["GraphInterrupt"]
    assert sink.only.status == "interrupted"
    assert sink.only.failure is None

    final = outer.invoke(Command(resume="ok"), config)
    assert final["messages"][-1].content == "approved: ok"
    assert [r.status for r in sink.records] == ["interrupted", "completed"]


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (GraphInterrupt([Interrupt("approve?")]), "interrupted"),
        # A hand-off to the parent graph is control flow, not a failure.
        (ParentCommand(Command(graph=Command.PARENT, goto="other")), "completed"),
    ],
)
def test_langgraph_bubble_ups_are_not_failures(error: BaseException, status: str) -> None:
    sink = ListSink()

    def bubble(_: Any) -> str:
        raise error

    with pytest.raises(type(error)) as raised:
        BoundAgent(RunnableLambda(bubble), sink=sink, agent_id="a").invoke("hi")

    assert raised.value is error
    assert sink.only.status == status
    assert sink.only.failure is None


def test_an_interrupt_in_the_output_is_recorded_without_graph_callbacks() -> None:
    sink = ListSink()
    paused = RunnableLambda(lambda _: {"messages": [], "__interrupt__": [Interrupt("ok?")]})

    BoundAgent(paused, sink=sink, agent_id="a").invoke("hi")
    list(BoundAgent(paused, sink=sink, agent_id="a").stream("hi"))

    assert [r.status for r in sink.records] == ["interrupted", "interrupted"]


def test_an_interrupt_seen_while_streaming_is_recorded() -> None:
    sink = ListSink()
    agent = weather_agent(sink, checkpointer=InMemorySaver(), approval=True)
    config: Any = {"configurable": {"thread_id": "t"}}

    chunks = list(agent.stream(QUESTION, config, stream_mode=["updates", "messages"]))

    assert any(mode == "updates" and "__interrupt__" in data for mode, data in chunks)
    assert sink.only.status == "interrupted"
    assert "stream_abandoned" not in sink.only.metadata


def test_other_attributes_are_the_wrapped_graphs() -> None:
    sink = ListSink()
    graph = build_agent(ScriptedChatModel([]), checkpointer=InMemorySaver())
    agent = BoundAgent(graph, sink=sink, agent_id="weather")

    assert agent.get_name() == graph.get_name()
    assert agent.input_schema.model_json_schema() == graph.input_schema.model_json_schema()
    assert agent.output_schema.model_json_schema() == graph.output_schema.model_json_schema()
    assert set(agent.get_graph().nodes) == set(graph.get_graph().nodes)
    assert agent.get_state({"configurable": {"thread_id": "none"}}).values == {}
    assert agent.checkpointer is graph.checkpointer
    with pytest.raises(AttributeError):
        _ = agent.no_such_attribute


def test_batch_records_one_interaction_per_item() -> None:
    sink = ListSink()
    model = ScriptedChatModel(responder=lambda messages: f"echo {messages[-1].text}")
    agent = BoundAgent(build_agent(model), sink=sink, agent_id="echo")

    outputs = agent.batch([{"messages": [("human", f"q{i}")]} for i in range(3)])

    assert len(sink.records) == 3
    assert len({r.interaction_id for r in sink.records}) == 3
    assert len({r.run_id for r in sink.records}) == 3
    assert sorted(r.output_text or "" for r in sink.records) == sorted(
        o["messages"][-1].content for o in outputs
    )
    assert all(len(r.responses) == 1 for r in sink.records)


async def test_abatch_records_one_interaction_per_item() -> None:
    sink = ListSink()
    agent = BoundAgent(RunnableLambda(lambda text: text * 2), sink=sink, agent_id="double")

    assert await agent.abatch(["a", "b"]) == ["aa", "bb"]
    assert sorted(r.output_text or "" for r in sink.records) == ["aa", "bb"]
    assert sink.paths == ["async", "async"]


def test_invoke_detailed_returns_the_id_of_the_stored_record() -> None:
    sink = ListSink()
    reply = weather_agent(sink).invoke_detailed(QUESTION)

    assert isinstance(reply, DetailedReply)
    assert reply.interaction_id == sink.only.interaction_id
    assert reply.output["messages"][-1].content == "It is sunny in Paris."


async def test_ainvoke_detailed_returns_the_id_of_the_stored_record() -> None:
    sink = ListSink()
    reply = await weather_agent(sink).ainvoke_detailed(QUESTION)

    assert reply.interaction_id == sink.only.interaction_id


def test_thread_and_flow_ids_come_from_configurable() -> None:
    sink = ListSink()
    weather_agent(sink).invoke(
        QUESTION, {"configurable": {"thread_id": "session-1", "flow_id": "checkout-42"}}
    )

    assert (sink.only.thread_id, sink.only.flow_id) == ("session-1", "checkout-42")


def test_a_top_level_call_has_no_flow() -> None:
    sink = ListSink()
    weather_agent(sink).invoke(QUESTION)

    assert sink.only.flow_id is None
    assert sink.only.thread_id is None


class RunIds(BaseCallbackHandler):
    """Collects the run ids of every chain run it sees."""

    def __init__(self) -> None:
        self.run_ids: list[UUID] = []

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.run_ids.append(run_id)


def test_the_flow_is_the_parent_run_when_the_agent_runs_inside_a_larger_graph() -> None:
    sink = ListSink()
    agent = weather_agent(sink)

    def ask_agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": agent.invoke(state)["messages"][-1:]}

    outer_graph = StateGraph(MessagesState)
    outer_graph.add_node("ask_agent", ask_agent)
    outer_graph.add_edge(START, "ask_agent")
    outer = outer_graph.compile()
    runs = RunIds()
    output = outer.invoke(QUESTION, {"callbacks": [runs]})

    record = sink.only
    assert output["messages"][-1].content == "It is sunny in Paris."
    assert record.flow_id is not None
    assert UUID(record.flow_id) in runs.run_ids[:3]  # the outer graph's node run
    assert record.flow_id != str(runs.run_ids[0])  # not the outer root
    assert UUID(record.run_id or "") in runs.run_ids  # the agent's own run
    assert len(record.responses) == 2


def test_the_callers_run_id_and_callbacks_are_kept() -> None:
    sink = ListSink()
    runs = RunIds()
    run_id = UUID("0191f3b2-0000-7000-8000-000000000001")

    weather_agent(sink).invoke(QUESTION, {"callbacks": [runs], "run_id": run_id})

    assert sink.only.run_id == str(run_id)
    assert runs.run_ids[0] == run_id
    assert len(runs.run_ids) > 3  # the caller's handler still sees the whole run tree


def test_a_callback_manager_from_the_caller_is_kept() -> None:
    sink = ListSink()
    runs = RunIds()
    manager = CallbackManager(handlers=[runs], inheritable_handlers=[runs])

    weather_agent(sink).invoke(QUESTION, {"callbacks": manager})

    assert len(sink.only.responses) == 2
    assert UUID(sink.only.run_id or "") == runs.run_ids[0]
    assert manager.handlers == [runs]  # the caller's manager is not changed


def test_calls_inside_an_evaluation_are_evaluation_traffic() -> None:
    sink = ListSink()
    agent = weather_agent(sink)

    with evaluation_scope("ev-1"):
        agent.invoke(QUESTION)

    assert sink.only.evaluation_traffic is True
    assert sink.only.metadata == {"evaluation_id": "ev-1"}


def test_an_agent_without_a_model_records_its_text_output() -> None:
    sink = ListSink()
    agent = BoundAgent(
        RunnableLambda(lambda messages: f"you said {len(messages)} things"),
        sink=sink,
        agent_id="counter",
        roles=("a", "b"),
    )

    assert agent.invoke([("system", "Count."), ("human", "one"), ("human", "two")]) == (
        "you said 3 things"
    )

    record = sink.only
    assert record.output_text == "you said 3 things"
    assert record.system_message == "Count."
    assert shape(record.transcript) == shape([HumanMessage("one"), HumanMessage("two")])
    assert record.transcript == record.input_messages[1:]
    assert record.responses == []
    assert record.tool_calls == []
    assert record.roles == ("a", "b")


@pytest.mark.parametrize(
    ("agent_input", "expected"),
    [
        ("plain text", [("human", "plain text")]),
        (HumanMessage("a message"), [("human", "a message")]),
        ({"messages": [{"role": "user", "content": "a dict"}]}, [("human", "a dict")]),
        ({"question": "no messages"}, []),
        (42, []),
    ],
)
def test_input_messages_are_read_from_the_usual_input_shapes(
    agent_input: Any, expected: list[tuple[str, str]]
) -> None:
    sink = ListSink()
    BoundAgent(RunnableLambda(lambda _: 0), sink=sink, agent_id="a").invoke(agent_input)

    assert [(m.type, m.content) for m in sink.only.input_messages] == expected
    assert sink.only.output_text is None


def test_a_streamed_model_joins_its_chunks_into_the_output_text() -> None:
    sink = ListSink()
    agent = BoundAgent(ScriptedChatModel(["Hello there."]), sink=sink, agent_id="chat")

    chunks = list(agent.stream("Hi"))

    assert "".join(c.text for c in chunks) == "Hello there."
    record = sink.only
    assert record.output_text == "Hello there."
    assert type(record.responses[0].message) is AIMessage
    assert [m.type for m in record.transcript] == ["human", "ai"]


# --- the callback handler mode ------------------------------------------------------------


def test_the_handler_records_a_plain_chain_as_one_interaction() -> None:
    sink = ListSink()
    handler = InteractionCallbackHandler(sink, agent_id="chain", roles=["faq"])
    prompt = ChatPromptTemplate.from_messages([("system", SYSTEM), ("human", "{question}")])
    chain = prompt | ScriptedChatModel(["Rain."])
    runs = RunIds()

    chain.invoke({"question": "Weather?"}, {"callbacks": [handler, runs]})

    record = sink.only
    assert record.status == "completed"
    assert record.run_id == str(runs.run_ids[0])
    assert record.roles == ("faq",)
    assert record.system_message == SYSTEM
    assert record.output_text == "Rain."
    assert [r.text for r in record.responses] == ["Rain."]
    assert shape(record.transcript) == shape([HumanMessage("Weather?"), AIMessage("Rain.")])
    assert record.input_messages == []  # the chain's input is not messages


def test_the_handler_records_a_graph_like_the_bound_agent() -> None:
    sink = ListSink()
    model = ScriptedChatModel([weather_call(), "It is sunny in Paris."])
    handler = InteractionCallbackHandler(sink, agent_id="weather", roles=["support"])

    output = build_agent(model).invoke(
        QUESTION, {"callbacks": [handler], "configurable": {"thread_id": "th"}}
    )

    record = sink.only
    assert record.thread_id == "th"
    assert_weather_record(record.model_copy(update={"thread_id": None}), output["messages"])


def test_the_handler_keeps_concurrent_runs_apart() -> None:
    sink = ListSink()
    handler = InteractionCallbackHandler(sink, agent_id="weather")
    model = ScriptedChatModel(responder=lambda messages: f"answer to {messages[-1].text}")
    graph = build_agent(model)
    barrier = threading.Barrier(4)

    def ask(i: int) -> None:
        barrier.wait()
        graph.invoke({"messages": [("human", f"q{i}")]}, {"callbacks": [handler]})

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted((r.input_text, r.output_text) for r in sink.records) == [
        (f"q{i}", f"answer to q{i}") for i in range(4)
    ]
    assert all(len(r.responses) == 1 for r in sink.records)
    assert handler._roots == {}
    assert handler._root_of == {}


def test_the_handler_records_failures_and_interrupts() -> None:
    sink = ListSink()
    handler = InteractionCallbackHandler(sink, agent_id="weather")
    failing = build_agent(ScriptedChatModel([ScriptedProviderError.rate_limited()]))
    pausing = build_agent(
        ScriptedChatModel(["Sunny."]), checkpointer=InMemorySaver(), approval=True
    )

    with pytest.raises(ScriptedProviderError):
        failing.invoke(QUESTION, {"callbacks": [handler]})
    pausing.invoke(QUESTION, {"callbacks": [handler], "configurable": {"thread_id": "p"}})

    failed, interrupted = sink.records
    assert failed.status == "failed"
    assert failed.failure is not None
    assert failed.failure.reason == "ScriptedProviderError"
    assert interrupted.status == "interrupted"


def test_the_handler_records_an_abandoned_stream_as_interrupted() -> None:
    sink = ListSink()
    handler = InteractionCallbackHandler(sink, agent_id="weather")
    model = ScriptedChatModel([weather_call(), "It is sunny in Paris."])

    stream = build_agent(model).stream(QUESTION, {"callbacks": [handler]})
    next(stream)
    stream.close()

    assert sink.only.status == "interrupted"
    assert sink.only.metadata == {"stream_abandoned": True}
    assert len(sink.only.responses) == 1


async def test_the_handler_works_on_the_async_path_inside_an_evaluation() -> None:
    sink = ListSink()
    handler = InteractionCallbackHandler(sink, agent_id="weather")
    model = ScriptedChatModel([weather_call(), "It is sunny in Paris."])

    with evaluation_scope("ev-2"):
        output = await build_agent(model).ainvoke(QUESTION, {"callbacks": [handler]})

    record = sink.only
    assert record.evaluation_traffic is True
    assert shape(record.transcript) == shape(output["messages"])
    assert sink.paths == ["sync"]


async def test_concurrent_async_calls_of_one_bound_agent_are_separate_interactions() -> None:
    sink = ListSink()
    model = ScriptedChatModel(responder=lambda messages: f"answer to {messages[-1].text}")
    agent = BoundAgent(build_agent(model), sink=sink, agent_id="weather")

    await asyncio.gather(*(agent.ainvoke({"messages": [("human", f"q{i}")]}) for i in range(5)))

    assert sorted((r.input_text, r.output_text) for r in sink.records) == [
        (f"q{i}", f"answer to q{i}") for i in range(5)
    ]


class BrokenSink:
    """A sink whose storage is down."""

    def record(self, record: InteractionRecord) -> None:
        raise OSError("disk full")

    async def arecord(self, record: InteractionRecord) -> None:
        raise OSError("disk full")


def test_a_sink_failure_never_hides_the_agents_own_exception(
    caplog: pytest.LogCaptureFixture,
) -> None:
    error = WeatherServiceDown("no forecast")

    def fail(question: str) -> str:
        raise error

    agent = BoundAgent(RunnableLambda(fail), sink=BrokenSink(), agent_id="weather")
    with pytest.raises(WeatherServiceDown) as raised:
        agent.invoke("rain?")
    assert raised.value is error
    assert "could not record the failed interaction" in caplog.text
    with pytest.raises(WeatherServiceDown):
        asyncio.run(agent.ainvoke("rain?"))


def test_a_reply_that_cannot_be_recorded_is_not_acknowledged() -> None:
    """If the ledger cannot take the interaction, the caller learns it: no silent loss."""
    agent = BoundAgent(RunnableLambda(str.upper), sink=BrokenSink(), agent_id="echo")
    with pytest.raises(OSError, match="disk full"):
        agent.invoke("hello")


def test_the_old_capture_path_warns_and_gives_the_same_class() -> None:
    import langchain_evals_port.runtime.capture as old
    from langchain_evals_port.capture import BoundAgent

    with pytest.warns(
        DeprecationWarning, match="import BoundAgent from langchain_evals_port.capture"
    ):
        assert old.BoundAgent is BoundAgent
