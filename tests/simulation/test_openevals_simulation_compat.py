"""The OpenEvals-signature simulator functions, side by side with OpenEvals' own."""

from __future__ import annotations

import inspect
from typing import Any

import openevals.simulators as upstream
import pytest
from langgraph.checkpoint.memory import InMemorySaver
from simulation_apps import chat_app

from langchain_evals_port.compat import _openevals_simulation as ours
from langchain_evals_port.testing import ScriptedChatModel


@pytest.fixture(autouse=True)
def no_tracing(monkeypatch):
    monkeypatch.setenv("LANGSMITH_TRACING", "false")


def roles_and_contents(trajectory: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(m["role"], m["content"]) for m in trajectory]


def echo_app(message: dict[str, Any], *, thread_id: str) -> dict[str, Any]:
    return {"role": "assistant", "content": f"echo: {message['content']}"}


def customer(messages: list[Any]) -> str:
    return f"customer line {len(messages)}"


def test_signatures_match_openevals():
    for name in (
        "run_multiturn_simulation",
        "run_multiturn_simulation_async",
        "create_llm_simulated_user",
        "create_async_llm_simulated_user",
    ):
        theirs = inspect.signature(getattr(upstream, name)).parameters
        mine = inspect.signature(getattr(ours, name)).parameters
        # langsmith's @traceable adds a ``config`` keyword to OpenEvals' runners.
        assert [(p.name, p.kind, p.default) for p in mine.values()] == [
            (p.name, p.kind, p.default) for p in theirs.values() if p.name != "config"
        ], name


def test_static_user_same_trajectory_as_openevals():
    kwargs: dict[str, Any] = {"app": echo_app, "user": ["Hello", "How are you?"], "max_turns": 2}
    theirs = upstream.run_multiturn_simulation(**kwargs)
    mine = ours.run_multiturn_simulation(**kwargs)
    assert roles_and_contents(mine["trajectory"]) == roles_and_contents(theirs["trajectory"])
    # Ours are normalised to the full result shape, so compare what OpenEvals returns.
    assert (
        [{k: r[k] for k in theirs["evaluator_results"][0]} for r in mine["evaluator_results"]]
        == (theirs["evaluator_results"])
        == []
    )
    assert all(m.get("id") for m in mine["trajectory"])


def test_llm_user_with_stopping_condition_same_trajectory_as_openevals():
    def stop(trajectory: list[dict[str, Any]], turn_counter: int) -> bool:
        return turn_counter >= 2 and "line" in trajectory[-1]["content"]

    def score(*, outputs: Any, reference_outputs: Any) -> dict[str, Any]:
        return {"key": "length", "score": len(outputs) == reference_outputs, "comment": None}

    def run(module: Any) -> Any:
        user = module.create_llm_simulated_user(
            system="You are a customer.",
            client=ScriptedChatModel(responder=customer),
            fixed_responses=["My parcel is lost."],
        )
        return module.run_multiturn_simulation(
            app=echo_app,
            user=user,
            max_turns=5,
            stopping_condition=stop,
            trajectory_evaluators=[score],
            reference_outputs=4,
        )

    theirs, mine = run(upstream), run(ours)
    assert roles_and_contents(mine["trajectory"]) == roles_and_contents(theirs["trajectory"])
    assert len(mine["trajectory"]) == 4
    # Ours are normalised to the full result shape, so compare what OpenEvals returns.
    assert [
        {k: r[k] for k in theirs["evaluator_results"][0]} for r in mine["evaluator_results"]
    ] == (theirs["evaluator_results"])


async def test_async_variants_same_trajectory_as_openevals():
    async def app(message: dict[str, Any], *, thread_id: str) -> dict[str, Any]:
        return {"role": "assistant", "content": f"async echo: {message['content']}"}

    async def stop(trajectory: list[dict[str, Any]], turn_counter: int) -> bool:
        return turn_counter >= 3

    async def run(module: Any) -> Any:
        user = module.create_async_llm_simulated_user(
            system="You are a customer.", client=ScriptedChatModel(responder=customer)
        )
        return await module.run_multiturn_simulation_async(
            app=app, user=user, stopping_condition=stop, thread_id="t"
        )

    theirs, mine = await run(upstream), await run(ours)
    assert roles_and_contents(mine["trajectory"]) == roles_and_contents(theirs["trajectory"])
    assert len(mine["trajectory"]) == 6


def test_our_llm_user_is_callable_the_openevals_way():
    user = ours.create_llm_simulated_user(
        system="persona", client=ScriptedChatModel(["Hi there"]), fixed_responses=["first"]
    )
    assert user([], turn_counter=0)["content"] == "first"
    reply = user([{"role": "user", "content": "first"}], turn_counter=1)
    assert (reply["role"], reply["content"]) == ("user", "Hi there")


def test_user_callable_is_given_thread_id_and_turn_counter():
    calls: list[tuple[int, str, int]] = []

    def user(trajectory: list[dict[str, Any]], *, thread_id: str, turn_counter: int) -> dict:
        calls.append((len(trajectory), thread_id, turn_counter))
        return {"role": "user", "content": f"u{turn_counter}"}

    ours.run_multiturn_simulation(app=echo_app, user=user, max_turns=2, thread_id="t-9")
    assert calls == [(0, "t-9", 0), (2, "t-9", 1)]


def test_a_langgraph_app_is_run_with_its_own_memory():
    model = ScriptedChatModel(["a", "b"])
    result = ours.run_multiturn_simulation(
        app=chat_app(model, InMemorySaver()), user=["1", "2"], max_turns=2
    )
    assert [len(call.messages) for call in model.calls] == [1, 3]
    assert roles_and_contents(result["trajectory"]) == [
        ("user", "1"),
        ("assistant", "a"),
        ("user", "2"),
        ("assistant", "b"),
    ]


def test_failing_evaluator_is_reported_not_printed(capsys):
    def broken(*, outputs: Any, reference_outputs: Any) -> dict[str, Any]:
        raise ValueError("bad")

    result = ours.run_multiturn_simulation(
        app=echo_app, user=["hi"], max_turns=1, trajectory_evaluators=[broken]
    )
    assert capsys.readouterr() == ("", "")
    assert result["evaluator_results"] == [
        {
            "key": "broken",
            "score": None,
            "comment": "[failed: evaluator_error] ValueError: bad",
            "metadata": {
                "outcome": "failed",
                "reason": "ValueError: bad",
                "error_code": "evaluator_error",
            },
        }
    ]


def test_argument_errors():
    with pytest.raises(ValueError, match="max_turns"):
        ours.run_multiturn_simulation(app=echo_app, user=["hi"])
    with pytest.raises(ValueError, match="exactly one"):
        ours.create_llm_simulated_user(system="s")
    with pytest.raises(ValueError, match="exactly one"):
        ours.create_async_llm_simulated_user(
            system="s", model="openai:gpt-4o-mini", client=ScriptedChatModel([])
        )
