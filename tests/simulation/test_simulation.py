"""MultiturnSimulation against real LangGraph apps with real checkpointers."""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from simulation_apps import chat_app, tool_app

from langchain_evals_port import LLMJudge, evaluator, prompts
from langchain_evals_port.simulation import OPENING_REQUEST, MultiturnSimulation, SimulatedUser
from langchain_evals_port.testing import ScriptedChatModel, ToolCallReply


class AppInputs(BaseCallbackHandler):
    """Records what the app graph named ``name`` is invoked with."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.inputs: list[Any] = []

    def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        if kwargs.get("name") == self.name:
            self.inputs.append(inputs)


def transcript(messages: list[BaseMessage]) -> list[tuple[str, str]]:
    return [(m.type, m.text) for m in messages]


@pytest.fixture(params=["memory", "sqlite"])
def checkpointer(request, tmp_path):
    if request.param == "memory":
        yield InMemorySaver()
        return
    connection = sqlite3.connect(tmp_path / "app.db", check_same_thread=False)
    yield SqliteSaver(connection)
    connection.close()


def test_graph_app_gets_only_the_newest_message_and_remembers_through_its_thread(checkpointer):
    model = ScriptedChatModel(["What is your order number?", "Refunded.", "Bye!"])
    app = chat_app(model, checkpointer)
    spy = AppInputs("support_agent")
    simulation = MultiturnSimulation(
        app, ["My parcel is lost.", "Order 4411.", "Thanks."], max_turns=3
    )

    result = simulation.run(config={"callbacks": [spy]})

    assert [len(call.messages) for call in model.calls] == [1, 3, 5]
    assert transcript(model.calls[2].messages) == transcript(result.trajectory[:5])
    user_turns = [m for m in result.trajectory if m.type == "human"]
    assert [inputs["messages"] for inputs in spy.inputs] == [[m] for m in user_turns]
    assert result.turns == 3
    assert result.stop_reason == "max_turns"
    assert transcript(result.trajectory)[-2:] == [("human", "Thanks."), ("ai", "Bye!")]
    remembered = app.get_state({"configurable": {"thread_id": result.thread_id}})
    assert [m.id for m in remembered.values["messages"]] == [m.id for m in result.trajectory]
    assert result.final_state["messages"][-1].text == "Bye!"


def test_thread_id_is_fixed_when_given_and_fresh_per_run_otherwise():
    app = chat_app(ScriptedChatModel(responder=lambda m: f"{len(m)} messages"), InMemorySaver())
    fixed = MultiturnSimulation(app, ["a"], max_turns=1, thread_id="t-1")
    assert fixed.run().thread_id == "t-1"
    again = fixed.run()  # the same thread: the app remembers the first run
    assert again.trajectory[-1].text == "3 messages"
    fresh = MultiturnSimulation(app, ["a"], max_turns=1)
    assert fresh.run().thread_id != fresh.run().thread_id


def test_one_app_turn_can_add_tool_call_tool_result_and_answer_each_once():
    model = ScriptedChatModel(
        [
            ToolCallReply("weather", {"city": "Paris"}, id="call_1"),
            "It is sunny in Paris.",
            "You are welcome.",
        ]
    )
    result = MultiturnSimulation(
        tool_app(model, InMemorySaver()), ["Weather in Paris?", "Thanks!"], max_turns=5
    ).run()

    assert [m.type for m in result.trajectory] == ["human", "ai", "tool", "ai", "human", "ai"]
    assert result.trajectory[1].tool_calls[0]["id"] == "call_1"
    assert result.trajectory[2].text == "sunny in Paris"
    ids = [m.id for m in result.trajectory]
    assert None not in ids
    assert len(set(ids)) == len(ids)
    assert result.stop_reason == "script_exhausted"
    assert result.turns == 2


def test_llm_user_sees_the_conversation_role_flipped_without_tool_traffic():
    user_model = ScriptedChatModel(["Weather in Paris?", "Great, thanks."])
    app_model = ScriptedChatModel(
        [ToolCallReply("weather", {"city": "Paris"}), "It is sunny in Paris.", "Bye."]
    )
    user = SimulatedUser.llm("You plan a trip to Paris.", model=user_model)
    result = MultiturnSimulation(tool_app(app_model, InMemorySaver()), user, max_turns=2).run()

    opening, second = (call.messages for call in user_model.calls)
    assert opening == [
        SystemMessage("You plan a trip to Paris."),
        HumanMessage(OPENING_REQUEST),
    ]
    assert [(type(m), m.text) for m in second] == [
        (SystemMessage, "You plan a trip to Paris."),
        (AIMessage, "Weather in Paris?"),
        (HumanMessage, "It is sunny in Paris."),
    ]
    assert transcript(result.trajectory)[0] == ("human", "Weather in Paris?")
    assert transcript(result.trajectory)[4] == ("human", "Great, thanks.")


def test_llm_user_says_its_fixed_responses_first():
    user_model = ScriptedChatModel(["from the model"])
    user = SimulatedUser.llm("persona", user_model, fixed_responses=["fixed one", "fixed two"])
    result = MultiturnSimulation(lambda m, t: "ok", user, max_turns=3).run()
    assert [m.text for m in result.trajectory if m.type == "human"] == [
        "fixed one",
        "fixed two",
        "from the model",
    ]
    assert len(user_model.calls) == 1
    assert [m.type for m in user_model.calls[0].messages] == [
        "system",
        "ai",
        "human",
        "ai",
        "human",
    ]


def test_scripted_user_running_out_ends_the_run():
    result = MultiturnSimulation(
        lambda m, t: "ok", SimulatedUser.scripted(["one"]), max_turns=9
    ).run()
    assert (result.turns, result.stop_reason) == (1, "script_exhausted")
    empty = MultiturnSimulation(lambda m, t: "ok", [], stop_when=lambda t, n: False).run()
    assert (empty.turns, empty.stop_reason, empty.trajectory) == (0, "script_exhausted", [])


def test_max_turns_zero_runs_no_turn():
    result = MultiturnSimulation(lambda m, t: "ok", ["hi"], max_turns=0).run()
    assert (result.turns, result.stop_reason, result.trajectory) == (0, "max_turns", [])


def test_sync_stop_condition_sees_trajectory_and_turn():
    seen: list[tuple[int, int]] = []

    def stop(trajectory: list[BaseMessage], turn: int) -> bool:
        seen.append((len(trajectory), turn))
        return "refund" in trajectory[-1].text

    app = chat_app(ScriptedChatModel(["Order number?", "I issued a refund.", "x"]), InMemorySaver())
    result = MultiturnSimulation(app, ["Lost parcel", "4411", "?"], stop_when=stop).run()
    assert (result.turns, result.stop_reason) == (2, "stop_when")
    assert seen == [(2, 1), (4, 2)]


async def test_async_stop_condition_reads_the_app_graph_state():
    states: list[Any] = []

    async def stop(trajectory: list[BaseMessage], turn: int, state: Any) -> bool:
        await asyncio.sleep(0)
        states.append(state)
        return len(state["messages"]) >= 4

    app = chat_app(ScriptedChatModel(["a", "b", "c"]), InMemorySaver())
    result = await MultiturnSimulation(app, ["1", "2", "3"], max_turns=3, stop_when=stop).arun()
    assert (result.turns, result.stop_reason) == (2, "stop_when")
    assert [len(s["messages"]) for s in states] == [2, 4]


def test_stop_condition_state_is_none_for_non_graph_apps_and_wins_on_the_last_turn():
    states: list[Any] = []

    def stop(trajectory: list[BaseMessage], turn: int, state: Any) -> bool:
        states.append(state)
        return turn == 2

    result = MultiturnSimulation(lambda m, t: "ok", ["1", "2"], max_turns=2, stop_when=stop).run()
    assert states == [None, None]
    assert result.stop_reason == "stop_when"


def test_async_stop_condition_and_async_app_work_in_the_sync_run():
    async def app(message: BaseMessage, thread_id: str) -> dict[str, Any]:
        return {"messages": [{"role": "assistant", "content": f"re: {message.text}"}]}

    async def stop(trajectory: list[BaseMessage], turn: int) -> bool:
        return turn >= 2

    result = MultiturnSimulation(app, ["a", "b", "c"], stop_when=stop).run()
    assert transcript(result.trajectory) == [
        ("human", "a"),
        ("ai", "re: a"),
        ("human", "b"),
        ("ai", "re: b"),
    ]


def test_plain_runnable_app_is_sent_the_newest_user_message():
    model = ScriptedChatModel(["one", "two"])
    result = MultiturnSimulation(model, ["hi", "again"], max_turns=2).run()
    assert [transcript(call.messages) for call in model.calls] == [
        [("human", "hi")],
        [("human", "again")],
    ]
    assert result.final_state is None
    assert transcript(result.trajectory)[-1] == ("ai", "two")


def test_function_user_may_be_async():
    async def user(trajectory: list[BaseMessage], turn: int) -> str | None:
        return f"turn {turn}" if turn < 2 else None

    result = MultiturnSimulation(
        lambda m, t: [AIMessage("a"), AIMessage("b")],
        SimulatedUser.from_function(user),
        max_turns=5,
    ).run()
    assert transcript(result.trajectory) == [
        ("human", "turn 0"),
        ("ai", "a"),
        ("ai", "b"),
        ("human", "turn 1"),
        ("ai", "a"),
        ("ai", "b"),
    ]


def make_run(kind: str) -> MultiturnSimulation:
    app_model = ScriptedChatModel(
        [ToolCallReply("weather", {"city": "Oslo"}, id="c1"), "Rain.", "Ok."]
    )
    user_model = ScriptedChatModel(["Weather in Oslo?", "Umbrella then."])
    return MultiturnSimulation(
        tool_app(app_model, InMemorySaver()),
        SimulatedUser.llm(f"{kind} persona", user_model),
        max_turns=2,
    )


async def test_run_and_arun_give_the_same_transcript():
    sync_result = make_run("same").run()
    async_result = await make_run("same").arun()
    assert transcript(sync_result.trajectory) == transcript(async_result.trajectory)
    assert (sync_result.turns, sync_result.stop_reason) == (async_result.turns, "max_turns")


def test_evaluators_that_raise_become_failed_results_and_print_nothing(capsys):
    def broken(*, outputs: Any, reference_outputs: Any) -> dict[str, Any]:
        raise RuntimeError("boom")

    def slow(*, outputs: Any, reference_outputs: Any) -> dict[str, Any]:
        raise TimeoutError("judge took too long")

    def counts(*, outputs: Any, reference_outputs: Any) -> list[dict[str, Any]]:
        assert all(isinstance(m, dict) for m in outputs)  # OpenEvals-style: OpenAI dicts
        return [
            {"key": "messages", "score": len(outputs) == reference_outputs, "comment": None},
            {"key": "undecided", "score": None, "comment": "no idea"},
        ]

    @evaluator(feedback_key="last_is_ai")
    def last_is_ai(*, outputs: list[BaseMessage]) -> bool:
        return outputs[-1].type == "ai"

    judge = LLMJudge(
        prompt=prompts.TASK_COMPLETION_PROMPT,
        feedback_key="task_completion",
        model=ScriptedChatModel([{"reasoning": "The user got an answer.", "score": True}]),
    )
    result = MultiturnSimulation(
        lambda m, t: "ok",
        ["hi"],
        max_turns=1,
        trajectory_evaluators=[broken, counts, slow, last_is_ai, judge],
        reference_outputs=2,
    ).run()

    assert capsys.readouterr() == ("", "")
    outcomes = [(r.key, r.outcome, r.score, r.error_code) for r in result.evaluator_results]
    assert outcomes == [
        ("broken", "failed", None, "evaluator_error"),
        ("messages", "verdict", True, None),
        ("undecided", "inconclusive", None, None),
        ("slow", "failed", None, "timeout"),
        ("last_is_ai", "verdict", True, None),
        ("task_completion", "verdict", True, None),
    ]
    assert result.evaluator_results[0].reason == "RuntimeError: boom"
    assert result.evaluator_results[3].reason == "TimeoutError: judge took too long"


async def test_arun_runs_evaluators_concurrently():
    both_started = asyncio.Event()
    started: list[str] = []

    def waiter(name: str) -> Any:
        async def ev(*, outputs: Any, reference_outputs: Any) -> dict[str, Any]:
            started.append(name)
            if len(started) == 2:
                both_started.set()
            await asyncio.wait_for(both_started.wait(), timeout=1)
            return {"key": name, "score": True, "comment": None}

        return ev

    result = await MultiturnSimulation(
        lambda m, t: "ok", ["hi"], max_turns=1, trajectory_evaluators=[waiter("a"), waiter("b")]
    ).arun()
    assert [(r.key, r.score) for r in result.evaluator_results] == [("a", True), ("b", True)]


def test_the_loop_is_an_inspectable_checkpointed_graph():
    simulation = MultiturnSimulation(
        lambda m, t: "ok", ["a", "b"], max_turns=2, thread_id="t", checkpointer=InMemorySaver()
    )
    assert {"simulated_user", "app", "stop_check", "evaluate"} <= set(
        simulation.graph.get_graph().nodes
    )
    result = simulation.run()
    saved = simulation.graph.get_state({"configurable": {"thread_id": "t:simulation"}})
    assert saved.values["turn"] == result.turns == 2
    assert saved.values["stop_reason"] == "max_turns"
    assert [m.id for m in saved.values["trajectory"]] == [m.id for m in result.trajectory]


def test_construction_errors():
    with pytest.raises(ValueError, match="max_turns or stop_when"):
        MultiturnSimulation(lambda m, t: "ok", ["hi"])
    with pytest.raises(ValueError, match="0 or more"):
        MultiturnSimulation(lambda m, t: "ok", ["hi"], max_turns=-1)
    with pytest.raises(TypeError, match="user must be"):
        MultiturnSimulation(lambda m, t: "ok", "hi", max_turns=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="app must be"):
        MultiturnSimulation(42, ["hi"], max_turns=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="model must be"):
        SimulatedUser.llm("persona", model=42)  # type: ignore[arg-type]


def test_sync_run_inside_a_running_loop_with_an_async_app_says_to_use_arun():
    async def app(message: BaseMessage, thread_id: str) -> str:
        return "ok"

    async def main() -> None:
        MultiturnSimulation(app, ["hi"], max_turns=1).run()

    with pytest.raises(Exception, match="arun"):
        asyncio.run(main())


async def test_runnable_app_gets_the_callers_configurable_keys_but_not_langgraphs():
    from langchain_core.runnables import RunnableLambda
    from langchain_core.runnables.config import ensure_config

    seen: list[dict[str, Any]] = []

    def app(messages: list[BaseMessage]) -> str:
        seen.append(dict(ensure_config()["configurable"]))
        return "ok"

    simulation = MultiturnSimulation(RunnableLambda(app), ["a"], max_turns=1, thread_id="t")
    simulation.run(config={"configurable": {"user_id": "u1"}})
    await simulation.arun(config={"configurable": {"user_id": "u2"}})
    assert seen == [{"user_id": "u1", "thread_id": "t"}, {"user_id": "u2", "thread_id": "t"}]


def test_an_app_graph_gets_its_own_recursion_limit():
    # Six tool rounds need more graph steps than a one-turn simulation takes for itself.
    replies = [ToolCallReply("weather", {"city": f"c{i}"}, id=f"call{i}") for i in range(6)]
    model = ScriptedChatModel([*replies, "done"])
    result = MultiturnSimulation(
        app=tool_app(model, InMemorySaver()),
        user=SimulatedUser.scripted(["weather everywhere?"]),
        max_turns=1,
    ).run()
    assert result.trajectory[-1].text == "done"


def test_provider_tool_blocks_stay_out_of_the_users_view():
    from langchain_evals_port.simulation import persona_view

    tool_use = AIMessage(content=[{"type": "tool_use", "id": "t", "name": "weather", "input": {}}])
    view = persona_view("You are a customer.", [HumanMessage("hi"), tool_use, AIMessage("Sunny.")])
    assert [(m.type, m.text) for m in view] == [
        ("system", "You are a customer."),
        ("ai", "hi"),
        ("human", "Sunny."),
    ]


def test_a_repeated_user_message_enters_the_trajectory_twice_with_distinct_ids():
    message = HumanMessage("again", id="fixed")
    result = MultiturnSimulation(
        app=lambda message, thread_id: "ok",
        user=SimulatedUser.scripted([message, message]),
        max_turns=2,
    ).run()
    users = [m for m in result.trajectory if m.type == "human"]
    assert [m.text for m in users] == ["again", "again"]
    assert len({m.id for m in users}) == 2


def test_a_stop_condition_that_never_fires_ends_at_the_turn_budget(monkeypatch):
    from langchain_evals_port.simulation import _simulation

    monkeypatch.setattr(_simulation, "_DEFAULT_TURN_BUDGET", 3)
    result = MultiturnSimulation(
        app=lambda message, thread_id: "ok",
        user=SimulatedUser.from_function(lambda trajectory, turn: "more"),
        stop_when=lambda trajectory, turn: False,
    ).run()
    assert (result.turns, result.stop_reason) == (3, "max_turns")


async def test_sync_evaluators_overlap_in_arun():
    import threading

    # Each evaluator waits for the other two: run one after another, the barrier breaks.
    barrier = threading.Barrier(3, timeout=5)

    def blocking(*, outputs, reference_outputs=None):
        barrier.wait()
        return {"key": "blocking", "score": True}

    result = await MultiturnSimulation(
        app=lambda message, thread_id: "ok",
        user=SimulatedUser.scripted(["hi"]),
        max_turns=1,
        trajectory_evaluators=[blocking, blocking, blocking],
    ).arun()
    assert [(r.outcome, r.score) for r in result.evaluator_results] == [("verdict", True)] * 3
