"""``MultiturnSimulation``: a simulated user talks to an app, then evaluators judge the talk.

The loop is itself a compiled LangGraph graph::

    START → simulated_user → app → stop_check → simulated_user (again) … → evaluate → END

so it is traced like any graph, can run under a checkpointer, and its state can be
inspected. The run's state is ``SimulationState``; the transcript is a list of LangChain
messages de-duplicated by id. Each node has a sync and an async body that differ only in
how they call out; what they do with the answer is shared.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, TypedDict

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.runnables.config import merge_configs
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from langchain_evals_port.core import EvaluatorResult

from ._app import App, AppAdapter, AppTurn, new_messages
from ._calls import RUN_ASYNC, call_async, call_sync, positional_arity
from ._evaluate import TrajectoryEvaluator, aevaluate, evaluate
from ._user import SimulatedUser, UserTurn

StopReason = Literal["max_turns", "stop_when", "script_exhausted"]
"""Why a run ended: the turn limit, the stop condition, or a user with nothing left to say."""

StopCondition: TypeAlias = Callable[..., Any]
"""``(trajectory, turn)`` or ``(trajectory, turn, state) -> bool``, sync or async."""

# Without max_turns a run that the stop condition never ends stops after this many turns,
# with stop_reason "max_turns".
_DEFAULT_TURN_BUDGET = 1000
# Graph steps per turn: simulated_user, app, stop_check.
_STEPS_PER_TURN = 3


class SimulationState(TypedDict):
    """The simulation graph's state (what ``graph.get_state(...)`` shows)."""

    thread_id: str
    trajectory: list[BaseMessage]
    turn: int
    app_state: Any
    stop_reason: StopReason | None
    evaluator_results: list[dict[str, Any]]


@dataclass(frozen=True)
class SimulationResult:
    """What a simulation produced.

    Args:
        trajectory: The whole conversation as LangChain messages, each once (tool calls and
            tool results included).
        evaluator_results: One or more results per trajectory evaluator, in their order;
            an evaluator that raised has a ``failed`` result.
        final_state: The app graph's state after the last turn; None when the app is not a
            LangGraph graph.
        turns: How many app turns completed.
        stop_reason: Why the run ended.
        thread_id: The thread the app was run under.
    """

    trajectory: list[BaseMessage]
    evaluator_results: list[EvaluatorResult]
    final_state: Any
    turns: int
    stop_reason: StopReason
    thread_id: str


class MultiturnSimulation:
    """A conversation between an app and a simulated user, run as a LangGraph graph.

    Each turn the user speaks, the app answers (possibly with several messages: tool calls,
    tool results, a final answer), and the stop condition is checked. When the run ends,
    the trajectory evaluators judge the whole transcript.

    Args:
        app: A compiled LangGraph graph (sent only the newest user message under
            ``{"configurable": {"thread_id": ...}}``, so it answers from its own memory),
            any other Runnable (sent ``[newest user message]`` with the same config), or a
            callable ``(message, thread_id)`` returning a message, a string, a list of
            messages or ``{"messages": [...]}`` (sync or async).
        user: A ``SimulatedUser``, or a list of user turns (``SimulatedUser.scripted``).
        max_turns: Stop after this many app turns.
        stop_when: Stop when this returns true after an app turn; called with
            ``(trajectory, turn)`` or, if it takes a third argument, ``(trajectory, turn,
            state)`` where ``state`` is the app graph's state (None for other apps). Sync or
            async.
        trajectory_evaluators: ``Evaluator``s (sent ``outputs=trajectory`` as LangChain
            messages) or OpenEvals-style callables (sent ``outputs=`` OpenAI message dicts).
        reference_outputs: Passed to every evaluator as ``reference_outputs``.
        thread_id: The app's thread; a fresh random one for each run by default.
        checkpointer: Checkpoints the simulation graph itself, under thread
            ``"<thread_id>:simulation"``.

    Raises:
        ValueError: Neither ``max_turns`` nor ``stop_when`` is given, or ``max_turns`` < 0.

    Example:
        >>> def echo(message, thread_id):
        ...     return f"You said: {message.text}"
        >>> simulation = MultiturnSimulation(echo, ["Hi", "Bye"], max_turns=5)
        >>> result = simulation.run()
        >>> [(m.type, m.text) for m in result.trajectory]
        [('human', 'Hi'), ('ai', 'You said: Hi'), ('human', 'Bye'), ('ai', 'You said: Bye')]
        >>> result.turns, result.stop_reason
        (2, 'script_exhausted')
    """

    def __init__(
        self,
        app: App,
        user: SimulatedUser | Sequence[UserTurn],
        max_turns: int | None = None,
        stop_when: StopCondition | None = None,
        trajectory_evaluators: Sequence[TrajectoryEvaluator] = (),
        reference_outputs: Any = None,
        thread_id: str | None = None,
        *,
        checkpointer: BaseCheckpointSaver[Any] | None = None,
    ) -> None:
        if max_turns is None and stop_when is None:
            raise ValueError(
                "MultiturnSimulation needs max_turns or stop_when (or both); "
                "without either the conversation would never end"
            )
        if max_turns is not None and max_turns < 0:
            raise ValueError(f"max_turns must be 0 or more, got {max_turns}")
        if isinstance(user, str) or not isinstance(user, (SimulatedUser, Sequence)):
            raise TypeError(
                f"user must be a SimulatedUser or a list of user turns, got {type(user).__name__}"
            )
        self.app = AppAdapter(app)
        self.user = user if isinstance(user, SimulatedUser) else SimulatedUser.scripted(user)
        self.max_turns = max_turns
        self.stop_when = stop_when
        self.trajectory_evaluators = list(trajectory_evaluators)
        self.reference_outputs = reference_outputs
        self.thread_id = thread_id
        arity = positional_arity(stop_when) if stop_when is not None else 2
        self._stop_takes_state = arity is None or arity >= 3
        self.graph: CompiledStateGraph[Any, Any, Any, Any] = self._build(checkpointer)
        """The compiled simulation graph."""

    # --- running ---------------------------------------------------------------------------

    def run(self, config: RunnableConfig | None = None) -> SimulationResult:
        """Run the conversation and the evaluators; ``config`` adds callbacks, tags, limits."""
        state, run_config = self._start(config)
        return _result(self.graph.invoke(state, run_config))

    async def arun(self, config: RunnableConfig | None = None) -> SimulationResult:
        """Run asynchronously; the evaluators run concurrently."""
        state, run_config = self._start(config)
        return _result(await self.graph.ainvoke(state, run_config))

    def _start(self, config: RunnableConfig | None) -> tuple[SimulationState, RunnableConfig]:
        thread_id = self.thread_id or str(uuid.uuid4())
        turns = self._turn_limit
        state: SimulationState = {
            "thread_id": thread_id,
            "trajectory": [],
            "turn": 0,
            "app_state": None,
            "stop_reason": "max_turns" if self.max_turns == 0 else None,
            "evaluator_results": [],
        }
        defaults: RunnableConfig = {
            "run_name": "multiturn_simulation",
            "recursion_limit": _STEPS_PER_TURN * turns + 5,
            "configurable": {"thread_id": f"{thread_id}:simulation"},
        }
        return state, merge_configs(defaults, config)

    # --- the graph -------------------------------------------------------------------------

    def _build(
        self, checkpointer: BaseCheckpointSaver[Any] | None
    ) -> CompiledStateGraph[Any, Any, Any, Any]:
        graph = StateGraph(SimulationState)
        graph.add_node("simulated_user", _node(self._user, self._auser))
        graph.add_node("app", _node(self._app, self._aapp))
        graph.add_node("stop_check", _node(self._check, self._acheck))
        graph.add_node("evaluate", _node(self._evaluate, self._aevaluate))
        graph.add_conditional_edges(START, _unless_stopped("simulated_user"))
        graph.add_conditional_edges("simulated_user", _unless_stopped("app"))
        graph.add_edge("app", "stop_check")
        graph.add_conditional_edges("stop_check", _unless_stopped("simulated_user"))
        graph.add_edge("evaluate", END)
        return graph.compile(checkpointer=checkpointer, name="multiturn_simulation")

    def _user(self, state: SimulationState) -> dict[str, Any]:
        return _after_user(state, self.user.respond(state["trajectory"], state["turn"]))

    async def _auser(self, state: SimulationState) -> dict[str, Any]:
        return _after_user(state, await self.user.arespond(state["trajectory"], state["turn"]))

    def _app(self, state: SimulationState) -> dict[str, Any]:
        trajectory = state["trajectory"]
        return _after_app(state, self.app.invoke(trajectory[-1], state["thread_id"], trajectory))

    async def _aapp(self, state: SimulationState) -> dict[str, Any]:
        trajectory = state["trajectory"]
        turn = await self.app.ainvoke(trajectory[-1], state["thread_id"], trajectory)
        return _after_app(state, turn)

    def _check(self, state: SimulationState) -> dict[str, Any]:
        fired = self.stop_when is not None and call_sync(
            self.stop_when, *self._stop_args(state), hint=RUN_ASYNC
        )
        return {"stop_reason": self._stop_reason(state, bool(fired))}

    async def _acheck(self, state: SimulationState) -> dict[str, Any]:
        fired = self.stop_when is not None and await call_async(
            self.stop_when, *self._stop_args(state)
        )
        return {"stop_reason": self._stop_reason(state, bool(fired))}

    def _stop_args(self, state: SimulationState) -> tuple[Any, ...]:
        args = (list(state["trajectory"]), state["turn"])
        return (*args, state["app_state"]) if self._stop_takes_state else args

    @property
    def _turn_limit(self) -> int:
        return self.max_turns if self.max_turns is not None else _DEFAULT_TURN_BUDGET

    def _stop_reason(self, state: SimulationState, fired: bool) -> StopReason | None:
        # The condition is asked even on the last allowed turn, and wins, as in OpenEvals.
        if fired:
            return "stop_when"
        if state["turn"] >= self._turn_limit:
            return "max_turns"
        return None

    def _evaluate(self, state: SimulationState) -> dict[str, Any]:
        results = evaluate(self.trajectory_evaluators, state["trajectory"], self.reference_outputs)
        return _stored(results)

    async def _aevaluate(self, state: SimulationState) -> dict[str, Any]:
        results = await aevaluate(
            self.trajectory_evaluators, state["trajectory"], self.reference_outputs
        )
        return _stored(results)


def _node(
    sync: Callable[[SimulationState], dict[str, Any]],
    asynchronous: Callable[[SimulationState], Any],
) -> RunnableLambda[SimulationState, dict[str, Any]]:
    # One node, two bodies: LangGraph's invoke calls the first, ainvoke the second.
    return RunnableLambda(sync, afunc=asynchronous)


def _unless_stopped(next_node: str) -> Callable[[SimulationState], str]:
    def route(state: SimulationState) -> str:
        return "evaluate" if state["stop_reason"] is not None else next_node

    return route


def _after_user(state: SimulationState, message: BaseMessage | None) -> dict[str, Any]:
    if message is None:
        return {"stop_reason": "script_exhausted"}
    # A message the trajectory already holds (same id) comes again as a new message.
    if message.id is not None and any(m.id == message.id for m in state["trajectory"]):
        message = message.model_copy(update={"id": None})
    return {"trajectory": [*state["trajectory"], *new_messages([message], state["trajectory"])]}


def _after_app(state: SimulationState, turn: AppTurn) -> dict[str, Any]:
    return {
        "trajectory": [*state["trajectory"], *turn.messages],
        "turn": state["turn"] + 1,
        "app_state": turn.state,
    }


def _stored(results: list[EvaluatorResult]) -> dict[str, Any]:
    # Plain dicts checkpoint with any serializer; SimulationResult rebuilds the models.
    return {"evaluator_results": [result.model_dump() for result in results]}


def _result(state: dict[str, Any]) -> SimulationResult:
    return SimulationResult(
        trajectory=state["trajectory"],
        evaluator_results=[EvaluatorResult.model_validate(r) for r in state["evaluator_results"]],
        final_state=state["app_state"],
        turns=state["turn"],
        stop_reason=state["stop_reason"],
        thread_id=state["thread_id"],
    )
