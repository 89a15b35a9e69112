"""``extract_graph_trajectory``: a LangGraph thread's trajectory, read from its checkpoint
history (recursing into subgraphs)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from langchain_core.messages import BaseMessage, convert_to_openai_messages
from langchain_core.runnables import RunnableConfig

from langchain_evals_port.core.errors import EvaluatorInputError

from ._graph_trajectory import INTERRUPT_STEP, RESUME_KEY, GraphTrajectory, GraphTurn

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
    from langgraph.pregel import Pregel
    from langgraph.types import PregelTask, StateSnapshot

__all__ = ["aextract_graph_trajectory", "extract_graph_trajectory"]

_SUBGRAPH_SEPARATOR = ":"
# LangGraph's checkpoint format: the write holding the answers given to a task's interrupts,
# and the configurable key through which a parent lends its checkpointer.
_RESUME_CHANNEL = "__resume__"
_LENT_CHECKPOINTER = "__pregel_checkpointer"


def extract_graph_trajectory(
    graph: Pregel[Any, Any, Any, Any], config: RunnableConfig
) -> GraphTrajectory:
    """The trajectory of a thread, read from the graph's checkpointer.

    Args:
        graph: A compiled LangGraph graph with a checkpointer.
        config: The thread's config, ``{"configurable": {"thread_id": ...}}``. With a
            ``checkpoint_id`` too, the trajectory as of that checkpoint.

    Raises:
        EvaluatorInputError: The config names no thread, or the graph has no checkpointer.

    Example:
        >>> from typing import TypedDict
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> from langgraph.graph import START, StateGraph
        >>> class State(TypedDict):
        ...     text: str
        >>> graph = (
        ...     StateGraph(State)
        ...     .add_node("shout", lambda state: {"text": state["text"].upper()})
        ...     .add_edge(START, "shout")
        ...     .compile(checkpointer=InMemorySaver())
        ... )
        >>> config = {"configurable": {"thread_id": "1"}}
        >>> graph.invoke({"text": "hi"}, config)
        {'text': 'HI'}
        >>> turn = extract_graph_trajectory(graph, config).turns[0]
        >>> turn.input, turn.steps, turn.result
        ({'__start__': {'text': 'hi'}}, ('__start__', 'shout'), {'text': 'HI'})
    """
    saver = _checkpointer(graph, config)
    history_config, head = _thread_config(config)
    return _trajectory(_load(graph, history_config, saver, None, head))


async def aextract_graph_trajectory(
    graph: Pregel[Any, Any, Any, Any], config: RunnableConfig
) -> GraphTrajectory:
    """The async twin of ``extract_graph_trajectory`` (``aget_state_history``)."""
    saver = _checkpointer(graph, config)
    history_config, head = _thread_config(config)
    return _trajectory(await _aload(graph, history_config, saver, None, head))


def _checkpointer(
    graph: Pregel[Any, Any, Any, Any], config: RunnableConfig
) -> BaseCheckpointSaver[Any]:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    configurable = config.get("configurable") or {}
    if configurable.get("thread_id") is None:
        raise EvaluatorInputError(
            "config must name the thread to read: {'configurable': {'thread_id': ...}}"
        )
    # A checkpointer lent through the config wins over the graph's own, as in LangGraph.
    saver = configurable.get(_LENT_CHECKPOINTER, getattr(graph, "checkpointer", None))
    if not isinstance(saver, BaseCheckpointSaver):
        raise EvaluatorInputError(
            "the graph has no checkpointer, so its runs left no history to read; compile it "
            "with one, e.g. builder.compile(checkpointer=InMemorySaver())"
        )
    return saver


def _thread_config(config: RunnableConfig) -> tuple[RunnableConfig, str | None]:
    """The config that lists the whole thread, and the checkpoint to read back from."""
    configurable = dict(config.get("configurable") or {})
    # A checkpoint id would make the checkpointer list that one checkpoint alone.
    head = configurable.pop("checkpoint_id", None)
    return {**config, "configurable": configurable}, None if head is None else str(head)


@dataclass
class _Namespace:
    """The checkpoints of one graph or subgraph run, loaded before any interpretation."""

    snapshots: list[StateSnapshot]
    """The current branch, oldest first."""
    children: dict[tuple[str, str], _Namespace] = field(default_factory=dict)
    """(checkpoint id, task id) → the run of the subgraph that task executed."""
    answers: dict[tuple[str, str], list[Any]] = field(default_factory=dict)
    """(checkpoint id, task id) → the answers given to that task's interrupts, in order."""

    def add_answers(self, snapshot: StateSnapshot, saved: CheckpointTuple | None) -> None:
        # Snapshots do not show resume values; the checkpoint's pending writes do.
        for task_id, channel, value in (saved.pending_writes or []) if saved else []:
            if channel == _RESUME_CHANNEL:
                answers = value if isinstance(value, list) else [value]
                self.answers[_checkpoint_id(snapshot), task_id] = answers


def _load(
    graph: Pregel[Any, Any, Any, Any],
    config: RunnableConfig,
    saver: BaseCheckpointSaver[Any],
    parent_id: str | None,
    head: str | None = None,
) -> _Namespace:
    namespace = _Namespace(_current_branch(graph.get_state_history(config), parent_id, head))
    for snapshot in namespace.snapshots:
        checkpoint_id = _checkpoint_id(snapshot)
        for task in snapshot.tasks:
            child = _subgraph_config(task)
            if child is not None:
                namespace.children[checkpoint_id, task.id] = _load(
                    graph, child, saver, checkpoint_id
                )
        if any(task.interrupts for task in snapshot.tasks):
            namespace.add_answers(snapshot, saver.get_tuple(snapshot.config))
    return namespace


async def _aload(
    graph: Pregel[Any, Any, Any, Any],
    config: RunnableConfig,
    saver: BaseCheckpointSaver[Any],
    parent_id: str | None,
    head: str | None = None,
) -> _Namespace:
    history = [snapshot async for snapshot in graph.aget_state_history(config)]
    namespace = _Namespace(_current_branch(history, parent_id, head))
    for snapshot in namespace.snapshots:
        checkpoint_id = _checkpoint_id(snapshot)
        for task in snapshot.tasks:
            child = _subgraph_config(task)
            if child is not None:
                namespace.children[checkpoint_id, task.id] = await _aload(
                    graph, child, saver, checkpoint_id
                )
        if any(task.interrupts for task in snapshot.tasks):
            namespace.add_answers(snapshot, await saver.aget_tuple(snapshot.config))
    return namespace


def _checkpoint_id(snapshot: StateSnapshot) -> str:
    return str(snapshot.config["configurable"]["checkpoint_id"])


def _subgraph_config(task: PregelTask) -> RunnableConfig | None:
    # In a history snapshot, a task that ran a subgraph carries the config of its namespace.
    state = task.state
    if isinstance(state, Mapping) and (state.get("configurable") or {}).get("checkpoint_ns"):
        return state
    return None


def _current_branch(
    history: Iterable[StateSnapshot], parent_id: str | None, head: str | None
) -> list[StateSnapshot]:
    """The chain of checkpoints leading to ``head`` (default: the newest), oldest first.

    A subgraph's namespace can hold the runs of other parent steps (a subgraph compiled with
    ``checkpointer=True`` keeps one history per thread), so only the checkpoints whose
    parent is ``parent_id`` belong to this run.
    """
    snapshots = [s for s in history if parent_id is None or _child_of(s, parent_id)]
    by_id = {_checkpoint_id(snapshot): snapshot for snapshot in snapshots}
    branch = []
    if head is not None and head not in by_id:
        raise EvaluatorInputError(
            f"checkpoint_id {head!r} is not in the thread's history; pass a checkpoint of "
            "this thread, or no checkpoint_id for the whole thread"
        )
    # The history lists the newest checkpoint first.
    current = by_id.get(head) if head is not None else next(iter(snapshots), None)
    while current is not None:
        branch.append(current)
        parent = current.parent_config
        parent_checkpoint = (parent or {}).get("configurable", {}).get("checkpoint_id")
        current = by_id.pop(str(parent_checkpoint), None)
    branch.reverse()
    return branch


def _child_of(snapshot: StateSnapshot, parent_id: str) -> bool:
    parents = (snapshot.metadata or {}).get("parents")
    return not parents or parent_id in parents.values()


@dataclass(frozen=True)
class _Start:
    input: Any


@dataclass(frozen=True)
class _End:
    values: Any


@dataclass(frozen=True)
class _Stop:
    resumed: bool
    answer: Any
    interrupts: tuple[Any, ...]


_Event: TypeAlias = "str | _Start | _End | _Stop"


@dataclass(frozen=True)
class _Round:
    """What one task did between two stops of the graph: its own step(s), then its
    subgraph's events, then the stop it caused (if any)."""

    head: list[str]
    body: list[_Event]
    stop: _Stop | None


def _events(namespace: _Namespace, path: tuple[str, ...], *, root: bool) -> list[_Event]:
    """The namespace's history as a stream: steps, and at the root, run starts and ends;
    a ``_Stop`` wherever the run stopped at an interrupt (also inside subgraphs)."""
    events: list[_Event] = []
    snapshots = namespace.snapshots
    for index, snapshot in enumerate(snapshots):
        following = snapshots[index + 1] if index + 1 < len(snapshots) else None
        if root and (snapshot.metadata or {}).get("source") == "input":
            events.append(_Start({task.name: task.result for task in snapshot.tasks}))
        if root and not snapshot.next:
            events.append(_End(snapshot.values))
            continue
        rounds = [
            _rounds(namespace, snapshot, task, following, path)
            for task in reversed(snapshot.tasks)
            if _ran(task, following)
        ]
        for number in range(max((len(r) for r in rounds), default=0)):
            active = [task_rounds[number] for task_rounds in rounds if number < len(task_rounds)]
            # agentevals' order: the superstep's nodes, then what their subgraphs ran.
            for round_ in active:
                events.extend(round_.head)
            for round_ in active:
                events.extend(round_.body)
            stops = [round_.stop for round_ in active if round_.stop is not None]
            if stops:
                events.append(_merged(stops))
    return events


def _ran(task: PregelTask, following: StateSnapshot | None) -> bool:
    if task.interrupts or task.error is not None:
        return True
    if following is not None:
        # A "loop" checkpoint is written by executing the previous one's tasks; after an
        # "update" or "fork" they were superseded instead.
        return (following.metadata or {}).get("source") == "loop"
    # The newest checkpoint: only tasks that already wrote (beside an interrupted sibling).
    return task.result is not None


def _rounds(
    namespace: _Namespace,
    snapshot: StateSnapshot,
    task: PregelTask,
    following: StateSnapshot | None,
    path: tuple[str, ...],
) -> list[_Round]:
    name = _SUBGRAPH_SEPARATOR.join((*path, task.name))
    key = (_checkpoint_id(snapshot), task.id)
    child = namespace.children.get(key)
    if child is not None:
        child_events = _events(child, (*path, task.name), root=False)
        if child_events:
            return _split_at_stops(name, child_events)
    return _node_rounds(name, task, namespace.answers.get(key, []), following)


def _split_at_stops(name: str, events: list[_Event]) -> list[_Round]:
    rounds = []
    body: list[_Event] = []
    for event in events:
        if isinstance(event, _Stop):
            rounds.append(_Round([name], body, event))
            body = []
            if not event.resumed:
                return rounds
        else:
            body.append(event)
    rounds.append(_Round([name], body, None))
    return rounds


def _node_rounds(
    name: str, task: PregelTask, answers: list[Any], following: StateSnapshot | None
) -> list[_Round]:
    if not task.interrupts:
        return [_Round([name], [], None)]
    finished = (
        following is not None and (following.metadata or {}).get("source") == "loop"
    ) or task.result is not None
    # Each answer resumed the node once; an unfinished node still waits on one more.
    stops = max(len(answers), 1) if finished else len(answers) + 1
    payloads = tuple(interrupt.value for interrupt in task.interrupts)
    rounds = [
        _Round(
            [name, INTERRUPT_STEP],
            [],
            _Stop(
                resumed=finished or number < stops - 1,
                answer=answers[number] if number < len(answers) else None,
                # LangGraph keeps only the latest interrupt a task raised.
                interrupts=payloads if number == stops - 1 else (),
            ),
        )
        for number in range(stops)
    ]
    if finished:
        rounds.append(_Round([name], [], None))
    return rounds


def _merged(stops: list[_Stop]) -> _Stop:
    if len(stops) == 1:
        return stops[0]
    answers = [stop.answer for stop in stops if stop.resumed]
    return _Stop(
        resumed=bool(answers),
        answer=answers[0] if len(answers) == 1 else answers,
        interrupts=tuple(payload for stop in stops for payload in stop.interrupts),
    )


def _trajectory(root: _Namespace) -> GraphTrajectory:
    turns: list[GraphTurn] = []
    turn_input: Any = None
    steps: list[str] | None = None

    def close(result: Any = None, interrupts: tuple[Any, ...] = ()) -> None:
        if steps is not None:
            turns.append(
                GraphTurn(input=turn_input, steps=steps, result=result, interrupts=interrupts)
            )

    for event in _events(root, (), root=True):
        if isinstance(event, _Start):
            close()
            turn_input, steps = event.input, []
        elif isinstance(event, _End):
            close(_turn_result(event.values))
            steps = None
        elif isinstance(event, _Stop):
            close(None, event.interrupts)
            turn_input = {RESUME_KEY: event.answer} if event.resumed else None
            steps = [] if event.resumed else None
        else:
            if steps is None:
                # History that starts mid-run (a resumed or truncated thread).
                turn_input, steps = None, []
            steps.append(event)
    close()
    return GraphTrajectory(turns=tuple(turns))


def _turn_result(values: Any) -> Any:
    # agentevals keeps only the last message, to keep the judge's context small.
    if isinstance(values, dict) and isinstance(values.get("messages"), list):
        messages = values["messages"]
        if not messages:
            return {"messages": []}
        last = messages[-1]
        if isinstance(last, BaseMessage):
            return {"messages": convert_to_openai_messages([last])}
        return {"messages": [last]}
    return values
