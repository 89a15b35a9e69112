"""OpenEvals' simulator functions (``openevals.simulators``), with OpenEvals' signatures.

``run_multiturn_simulation``/``run_multiturn_simulation_async`` run a ``MultiturnSimulation``
and return OpenEvals' result shape: ``{"trajectory": [OpenAI message dicts],
"evaluator_results": [result dicts]}``. The app, user, stop condition and evaluators are
called as OpenEvals calls them (OpenAI message dicts, ``thread_id=``/``turn_counter=``
keywords). ``create_llm_simulated_user``/``create_async_llm_simulated_user`` return users
callable the OpenEvals way, which these functions run natively. PARITY.md lists every
difference.
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig

from langchain_evals_port.compat._shared import EvaluatorResult, MultiturnSimulationResult
from langchain_evals_port.core import message_to_openai, to_langchain_messages, to_openai_messages
from langchain_evals_port.simulation import (
    MultiturnSimulation,
    SimulatedUser,
    SimulationResult,
    TrajectoryEvaluator,
)

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from langchain_evals_port.simulation import App, StopCondition

__all__ = [
    "AsyncLLMSimulatedUser",
    "LLMSimulatedUser",
    "MultiturnSimulationResult",
    "create_async_llm_simulated_user",
    "create_llm_simulated_user",
    "run_multiturn_simulation",
    "run_multiturn_simulation_async",
]

# OpenEvals traces its simulator under this name.
_RUN_NAME = "multiturn_simulator"


class _OpenEvalsUser:
    # What the simulation runs; the OpenEvals-style call is only for callers who call it.
    def __init__(self, simulated_user: SimulatedUser) -> None:
        self.simulated_user = simulated_user


class LLMSimulatedUser(_OpenEvalsUser):
    """An LLM-played user callable as OpenEvals calls one:
    ``user(trajectory, turn_counter=...)`` returns the next user message as an OpenAI dict.

    Args:
        simulated_user: The ``SimulatedUser`` behind it (what the simulation runs).
    """

    def __call__(
        self, trajectory: Sequence[Any], *, turn_counter: int, **kwargs: Any
    ) -> dict[str, Any] | None:
        """The next user message after ``turn_counter`` turns of ``trajectory``."""
        message = self.simulated_user.respond(to_langchain_messages(list(trajectory)), turn_counter)
        return None if message is None else message_to_openai(message)


class AsyncLLMSimulatedUser(_OpenEvalsUser):
    """``LLMSimulatedUser`` whose call is a coroutine, as OpenEvals' async user's is.

    Args:
        simulated_user: The ``SimulatedUser`` behind it (what the simulation runs).
    """

    async def __call__(
        self, trajectory: Sequence[Any], *, turn_counter: int, **kwargs: Any
    ) -> dict[str, Any] | None:
        """The next user message after ``turn_counter`` turns of ``trajectory``."""
        messages = to_langchain_messages(list(trajectory))
        message = await self.simulated_user.arespond(messages, turn_counter)
        return None if message is None else message_to_openai(message)


def create_llm_simulated_user(
    *,
    system: str,
    model: str | None = None,
    client: BaseChatModel | None = None,
    fixed_responses: list[str | dict[str, Any]] | None = None,
) -> LLMSimulatedUser:
    """OpenEvals' ``create_llm_simulated_user``: a user played by ``client`` (a chat model)
    or ``model`` (a ``"provider:model"`` string), saying ``fixed_responses`` first."""
    return LLMSimulatedUser(_llm_user(system, model, client, fixed_responses))


def create_async_llm_simulated_user(
    *,
    system: str,
    model: str | None = None,
    client: BaseChatModel | None = None,
    fixed_responses: list[str | dict[str, Any]] | None = None,
) -> AsyncLLMSimulatedUser:
    """OpenEvals' ``create_async_llm_simulated_user``: as ``create_llm_simulated_user``, for
    ``run_multiturn_simulation_async`` (the model is called on its async path)."""
    return AsyncLLMSimulatedUser(_llm_user(system, model, client, fixed_responses))


def run_multiturn_simulation(
    *,
    app: Callable[..., Any] | Runnable[Any, Any],
    user: Callable[..., Any] | list[str | dict[str, Any]],
    max_turns: int | None = None,
    trajectory_evaluators: list[TrajectoryEvaluator] | None = None,
    stopping_condition: Callable[..., Any] | None = None,
    reference_outputs: Any = None,
    thread_id: str | None = None,
) -> MultiturnSimulationResult:
    """OpenEvals' ``run_multiturn_simulation``: ``app(message, thread_id=...)`` answers each
    user message; ``user`` is a list of turns or ``user(trajectory, thread_id=...,
    turn_counter=...)``; ``stopping_condition(trajectory, turn_counter=...)`` may end the run
    early. A Runnable or LangGraph ``app`` is run as ``MultiturnSimulation`` runs it."""
    simulation, config = _simulation(
        app,
        user,
        max_turns,
        trajectory_evaluators,
        stopping_condition,
        reference_outputs,
        thread_id,
    )
    return _openevals_result(simulation.run(config))


async def run_multiturn_simulation_async(
    *,
    app: Callable[..., Any] | Runnable[Any, Any],
    user: Callable[..., Any] | list[str | dict[str, Any]],
    max_turns: int | None = None,
    trajectory_evaluators: list[TrajectoryEvaluator] | None = None,
    stopping_condition: Callable[..., Any] | None = None,
    reference_outputs: Any = None,
    thread_id: str | None = None,
) -> MultiturnSimulationResult:
    """OpenEvals' ``run_multiturn_simulation_async``: as ``run_multiturn_simulation``, with
    async (or sync) app, user, stop condition and evaluators; evaluators run concurrently."""
    simulation, config = _simulation(
        app,
        user,
        max_turns,
        trajectory_evaluators,
        stopping_condition,
        reference_outputs,
        thread_id,
    )
    return _openevals_result(await simulation.arun(config))


# --- translating OpenEvals' conventions --------------------------------------------------


def _llm_user(
    system: str,
    model: str | None,
    client: BaseChatModel | None,
    fixed_responses: list[str | dict[str, Any]] | None,
) -> SimulatedUser:
    if (model is None) == (client is None):
        raise ValueError("pass exactly one of model= (a 'provider:model' string) or client=")
    chosen: BaseChatModel | str = client if client is not None else str(model)
    return SimulatedUser.llm(system, chosen, fixed_responses or ())


def _simulation(
    app: Callable[..., Any] | Runnable[Any, Any],
    user: Callable[..., Any] | list[str | dict[str, Any]],
    max_turns: int | None,
    evaluators: list[TrajectoryEvaluator] | None,
    stopping_condition: Callable[..., Any] | None,
    reference_outputs: Any,
    thread_id: str | None,
) -> tuple[MultiturnSimulation, RunnableConfig]:
    if max_turns is None and stopping_condition is None:
        raise ValueError("pass max_turns, stopping_condition or both")
    # Fixed here rather than per run, because the user callable is told it too.
    thread_id = thread_id or str(uuid.uuid4())
    simulation = MultiturnSimulation(
        app=_app(app),
        user=_user(user, thread_id),
        max_turns=max_turns,
        stop_when=None if stopping_condition is None else _stop_when(stopping_condition),
        trajectory_evaluators=evaluators or (),
        reference_outputs=reference_outputs,
        thread_id=thread_id,
    )
    return simulation, {"run_name": _RUN_NAME}


def _app(app: Callable[..., Any] | Runnable[Any, Any]) -> App:
    if isinstance(app, Runnable):
        return app
    # A coroutine function stays one, so the async run awaits it instead of using a thread.
    if inspect.iscoroutinefunction(app):

        async def call_async_app(message: BaseMessage, thread_id: str) -> Any:
            return await app(message_to_openai(message), thread_id=thread_id)

        return call_async_app

    def call_app(message: BaseMessage, thread_id: str) -> Any:
        return app(message_to_openai(message), thread_id=thread_id)

    return call_app


def _user(user: Callable[..., Any] | list[str | dict[str, Any]], thread_id: str) -> SimulatedUser:
    if isinstance(user, _OpenEvalsUser):
        return user.simulated_user
    if isinstance(user, list):
        return SimulatedUser.scripted(user)

    def next_turn(trajectory: list[BaseMessage], turn: int) -> Any:
        return user(to_openai_messages(trajectory), thread_id=thread_id, turn_counter=turn)

    return SimulatedUser.from_function(next_turn)


def _stop_when(condition: Callable[..., Any]) -> StopCondition:
    def stop_when(trajectory: list[BaseMessage], turn: int) -> Any:
        return condition(to_openai_messages(trajectory), turn_counter=turn)

    return stop_when


def _openevals_result(result: SimulationResult) -> MultiturnSimulationResult:
    return {
        "trajectory": to_openai_messages(result.trajectory),
        "evaluator_results": [
            cast("EvaluatorResult", r.to_dict()) for r in result.evaluator_results
        ],
    }
