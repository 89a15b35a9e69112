"""LangGraph graph trajectories: extracted from a thread's checkpoints, matched node by node.

``extract_graph_trajectory(graph, config)`` reads the thread's checkpoint history through
``graph.get_state_history`` (recursing into subgraphs) and returns a ``GraphTrajectory``:
one ``GraphTurn`` per run of the graph on the thread — an ``invoke``/``stream`` with input,
or a ``Command(resume=...)`` — with the turn's input, the nodes that ran and the result.
``GraphTrajectoryMatch`` compares the node steps turn by turn with reference steps.

``GraphTrajectory.to_dict()`` has the shape of agentevals'
``extract_langgraph_trajectory_from_thread`` and the same data wherever agentevals reads the
history correctly. The conventions:

* **Steps** are the nodes a run executed, in order; ``"__start__"`` is the run writing its
  input into the state. Nodes of one superstep (parallel branches) are listed as agentevals
  lists them, the reverse of ``StateSnapshot.tasks``; that order carries no meaning, so
  compare parallel graphs with ``mode="unordered"``, ``"subset"`` or ``"superset"``.
* **Subgraphs**: a node inside a subgraph is named by its path of node names joined by
  ``":"`` — ``"research:search"``, and ``"outer:inner:node"`` when nested — and listed after
  the nodes of the parent's superstep, starting with the subgraph's own ``"research:__start__"``.
* **Interrupts**: a run stopped by ``interrupt()`` ends its turn. ``"__interrupt__"`` follows
  the node that raised it, the turn's ``result`` is ``None`` (``{}`` in the dict form, as in
  agentevals) and ``interrupts`` holds the payloads. The run that resumes is the next turn:
  its input is ``{"__resume__": answer}`` and its steps start with the node that resumed,
  because LangGraph runs an interrupted node again from its first line.
* **Inputs**: a run started with input has ``{"__start__": input}``, as in agentevals.
* **Results**: the state after the run; when the state has a ``messages`` list, only its
  last message (as an OpenAI-style dict), as in agentevals.
* Only the thread's current branch counts: checkpoints left behind by time travel (a run
  from an earlier checkpoint) are not part of the trajectory.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeAlias

from langchain_core.messages import BaseMessage, convert_to_openai_messages
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, ConfigDict

from langchain_evals_port.core import EvalRequest, Evaluator, OutputsKind, Score
from langchain_evals_port.core.errors import EvaluatorInputError

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
    from langgraph.pregel import Pregel
    from langgraph.types import PregelTask, StateSnapshot

__all__ = [
    "INTERRUPT_STEP",
    "RESUME_KEY",
    "START_STEP",
    "GraphTrajectory",
    "GraphTrajectoryMatch",
    "GraphTrajectoryMatchMode",
    "GraphTurn",
    "aextract_graph_trajectory",
    "extract_graph_trajectory",
]

START_STEP = "__start__"
"""The step of a run writing its input into the graph's state (LangGraph's ``START``)."""
INTERRUPT_STEP = "__interrupt__"
"""The step that follows a node which stopped the run with ``interrupt()``."""
RESUME_KEY = "__resume__"
"""The key of a resumed turn's input: ``{"__resume__": answer}``."""
_SUBGRAPH_SEPARATOR = ":"
# LangGraph's checkpoint format: the write holding the answers given to a task's interrupts,
# and the configurable key through which a parent lends its checkpointer.
_RESUME_CHANNEL = "__resume__"
_LENT_CHECKPOINTER = "__pregel_checkpointer"

GraphTrajectoryMatchMode = Literal["strict", "unordered", "subset", "superset", "in_order"]
"""How ``GraphTrajectoryMatch`` compares the steps of a turn with the reference's:

* ``strict``: the same steps in the same order;
* ``unordered``: the same steps, each as many times, in any order;
* ``subset``: the graph ran no step the reference lacks (it may skip some);
* ``superset``: the graph ran every reference step (it may run more);
* ``in_order``: the reference steps appear in the same order, other steps may come between.
"""


class GraphTurn(BaseModel):
    """One run of a graph on a thread.

    Args:
        input: What started the run: ``{"__start__": input}``, ``{"__resume__": answer}``
            for a run that resumed an interrupt, or None when unknown.
        steps: The nodes that ran, in order (see the module docstring for the names).
        result: The state after the run (only the last message of a ``messages`` list);
            None when the run was interrupted or did not finish.
        interrupts: The payloads of the interrupts that stopped the run. LangGraph keeps
            only the latest interrupt of each node, so a node that interrupted several times
            in a row has its payload on the last of those turns only.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True, extra="forbid")

    input: Any = None
    steps: tuple[str, ...] = ()
    result: Any = None
    interrupts: tuple[Any, ...] = ()

    @property
    def interrupted(self) -> bool:
        """True when the run stopped at an ``interrupt()``."""
        return INTERRUPT_STEP in self.steps


class GraphTrajectory(BaseModel):
    """The turns of a LangGraph thread, oldest first (see ``extract_graph_trajectory``).

    Example:
        >>> trajectory = GraphTrajectory.coerce([["__start__", "agent"], ["__start__"]])
        >>> len(trajectory.turns), trajectory.steps[0]
        (2, ['__start__', 'agent'])
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    turns: tuple[GraphTurn, ...] = ()

    @property
    def inputs(self) -> list[Any]:
        """Each turn's input."""
        return [turn.input for turn in self.turns]

    @property
    def results(self) -> list[Any]:
        """Each turn's result (None for an interrupted turn)."""
        return [turn.result for turn in self.turns]

    @property
    def steps(self) -> list[list[str]]:
        """Each turn's steps."""
        return [list(turn.steps) for turn in self.turns]

    def to_dict(self) -> dict[str, Any]:
        """The dict agentevals' ``extract_langgraph_trajectory_from_thread`` returns:
        ``{"inputs": [...], "outputs": {"inputs": [...], "results": [...], "steps": [...]}}``.

        A turn without a result (interrupted) has ``{}``, as in agentevals; ``outputs.inputs``
        repeats the turn inputs, where agentevals leaves it empty.
        """
        inputs = self.inputs
        return {
            "inputs": inputs,
            "outputs": {
                "inputs": list(inputs),
                "results": [{} if turn.result is None else turn.result for turn in self.turns],
                "steps": self.steps,
            },
        }

    @classmethod
    def coerce(cls, value: Any, *, name: str = "outputs") -> GraphTrajectory:
        """A trajectory from any form evaluators accept, or an ``EvaluatorInputError``.

        Accepted: a ``GraphTrajectory``; agentevals' extraction dict (``{"inputs": [...],
        "outputs": {...}}``); agentevals' ``GraphTrajectory`` dict (``{"steps": [...],
        "results": [...], "inputs": [...]}``, results and inputs optional or empty); a list
        of each turn's steps.

        Args:
            value: The trajectory in one of those forms.
            name: How to call it in an error message (``"outputs"``, ``"reference_outputs"``).
        """
        if isinstance(value, GraphTrajectory):
            return value
        steps, outputs, inputs, where = _parts(value, name)
        if outputs is None:
            return cls(turns=tuple(GraphTurn(steps=turn) for turn in steps))
        results = _optional_per_turn(outputs.get("results"), len(steps), "results", where)
        turn_inputs = _optional_per_turn(inputs, len(steps), "inputs", where)
        return cls(
            turns=tuple(
                GraphTurn(input=i, steps=s, result=r)
                for i, s, r in zip(turn_inputs, steps, results, strict=True)
            )
        )


def _graph_steps(value: Any, *, name: str = "outputs") -> list[list[str]]:
    """Each turn's steps, from any form ``GraphTrajectory.coerce`` accepts; unlike it, the
    inputs and results (which matching does not read) are not checked."""
    if isinstance(value, GraphTrajectory):
        return value.steps
    return [list(turn) for turn in _parts(value, name)[0]]


def _parts(
    value: Any, name: str
) -> tuple[list[tuple[str, ...]], Mapping[str, Any] | None, Any, str]:
    """The checked steps, the agentevals dict holding them (None for a bare list), the
    turn inputs, and the name of the dict for error messages."""
    if isinstance(value, Mapping):
        if "steps" in value:
            return (
                _checked_steps(value["steps"], f"{name}['steps']"),
                value,
                value.get("inputs"),
                name,
            )
        outputs = value.get("outputs")
        if isinstance(outputs, Mapping) and "steps" in outputs:
            where = f"{name}['outputs']"
            steps = _checked_steps(outputs["steps"], f"{where}['steps']")
            # agentevals puts the turn inputs beside "outputs" and leaves outputs.inputs empty.
            return steps, outputs, value.get("inputs") or outputs.get("inputs"), where
    elif _is_list(value):
        return _checked_steps(value, name), None, None, name
    raise EvaluatorInputError(
        f"{name} must be a graph trajectory: a GraphTrajectory, the dict "
        "extract_langgraph_trajectory_from_thread returns, a dict with 'steps' (a list of "
        f"each turn's node names), or such a list; got {_describe(value)}"
    )


def _optional_per_turn(values: Any, turns: int, what: str, name: str) -> list[Any]:
    # agentevals' references often carry "results": [] and "inputs": [] next to the steps.
    if values is None or (_is_list(values) and not values):
        return [None] * turns
    if not _is_list(values):
        raise EvaluatorInputError(f"{name}['{what}'] must be a list, got {_describe(values)}")
    if len(values) != turns:
        raise EvaluatorInputError(
            f"{name} has {len(values)} {what} but {turns} turns of steps; give one per turn "
            "(or none)"
        )
    return list(values)


def _checked_steps(value: Any, name: str) -> list[tuple[str, ...]]:
    if not _is_list(value):
        raise EvaluatorInputError(
            f"{name} must be a list of each turn's node names, got {_describe(value)}"
        )
    turns = []
    for index, turn in enumerate(value):
        if not _is_list(turn) or not all(isinstance(step, str) for step in turn):
            raise EvaluatorInputError(
                f"{name}[{index}] must be a list of node names (strings), got {_describe(turn)}"
            )
        turns.append(tuple(turn))
    return turns


def _is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes))


def _describe(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:80]}{'...' if len(text) > 80 else ''}"


# --- extraction ---------------------------------------------------------------------------


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


# --- matching -----------------------------------------------------------------------------


class GraphTrajectoryMatch(Evaluator):
    """Compares the node steps of each turn of a graph trajectory with reference steps.

    ``outputs`` is a trajectory in any form ``GraphTrajectory.coerce`` accepts (usually
    ``extract_graph_trajectory(graph, config)``); ``reference_outputs`` too, usually a list
    of each turn's node names. Only the steps are read. Each turn is compared by ``mode`` (see
    ``GraphTrajectoryMatchMode``); the score is ``True`` when every turn matches. A different
    number of turns scores ``False`` — it is the graph's behaviour (a run that interrupted
    or did not), not a malformed input. A failing result says which turns differ and how
    in its comment, and lists them in ``metadata["mismatches"]`` (``turn`` counts from 1).

    Args:
        mode: ``"strict"`` (default), ``"unordered"``, ``"subset"``, ``"superset"`` or
            ``"in_order"``.
        feedback_key: Defaults to ``graph_trajectory_<mode>_match`` (agentevals' key for
            strict).

    Example:
        >>> steps = [["__start__", "agent", "tools"], ["__start__", "agent"]]
        >>> GraphTrajectoryMatch(mode="superset")(
        ...     outputs=steps, reference_outputs=[["agent", "tools"], ["agent"]])["score"]
        True
        >>> result = GraphTrajectoryMatch().invoke(
        ...     {"outputs": steps, "reference_outputs": [["__start__", "agent"]] * 2})
        >>> result.key, result.score
        ('graph_trajectory_strict_match', False)
        >>> result.metadata["mismatches"][0]["unexpected"]
        ['tools']
        >>> print(result.comment)  # doctest: +NORMALIZE_WHITESPACE
        turn 1: expected ['__start__', 'agent'], got ['__start__', 'agent', 'tools']:
        unexpected 'tools'
    """

    outputs_kind: ClassVar[OutputsKind] = "other"
    mode: GraphTrajectoryMatchMode = "strict"
    feedback_key: str = ""

    def model_post_init(self, context: Any, /) -> None:
        """Name the key after the mode unless one was given."""
        if "feedback_key" not in self.model_fields_set:
            self.feedback_key = f"graph_trajectory_{self.mode}_match"

    def _score(self, request: EvalRequest, config: RunnableConfig) -> Score:
        outputs, reference = request.require(
            "outputs", "reference_outputs", evaluator=self.get_name()
        )
        actual = _graph_steps(outputs, name="outputs")
        expected = _graph_steps(reference, name="reference_outputs")
        return _match_steps(actual, expected, self.mode)

    async def _ascore(self, request: EvalRequest, config: RunnableConfig) -> Score:
        # A list comparison: a thread hop would cost more than the work.
        return self._score(request, config)


def _match_steps(
    actual: Sequence[Sequence[str]],
    expected: Sequence[Sequence[str]],
    mode: GraphTrajectoryMatchMode,
) -> Score:
    """Compare each turn's steps by ``mode``; a failing score explains every differing turn.

    Example:
        >>> _match_steps([["a", "b"]], [["b", "a"]], "unordered").value
        True
    """
    if len(actual) != len(expected):
        return Score(
            False,
            f"the graph ran {len(actual)} turn(s) but the reference has {len(expected)}",
            {"mode": mode, "turns": len(actual), "expected_turns": len(expected)},
        )
    check = _CHECKS[mode]
    mismatches = []
    for number, (got, want) in enumerate(zip(actual, expected, strict=True), start=1):
        reason = check(list(got), list(want))
        if reason is not None:
            mismatches.append(
                {
                    "turn": number,
                    "expected": list(want),
                    "actual": list(got),
                    "missing": _minus(want, got),
                    "unexpected": _minus(got, want),
                    "reason": reason,
                }
            )
    if not mismatches:
        return Score(True)
    comment = "; ".join(
        f"turn {m['turn']}: expected {m['expected']}, got {m['actual']}: {m['reason']}"
        for m in mismatches
    )
    return Score(False, comment, {"mode": mode, "mismatches": mismatches})


def _minus(left: Sequence[str], right: Sequence[str]) -> list[str]:
    """The steps of ``left`` that ``right`` lacks, counting repeats."""
    return list((Counter(left) - Counter(right)).elements())


def _names(steps: list[str]) -> str:
    return ", ".join(repr(step) for step in steps)


def _strict(got: list[str], want: list[str]) -> str | None:
    if got == want:
        return None
    difference = _unordered(got, want)
    if difference is not None:
        return difference
    position = next(i for i, (g, w) in enumerate(zip(got, want, strict=True)) if g != w)
    return f"same steps in another order: step {position + 1} is {got[position]!r}"


def _unordered(got: list[str], want: list[str]) -> str | None:
    missing, unexpected = _minus(want, got), _minus(got, want)
    parts = []
    if missing:
        parts.append(f"missing {_names(missing)}")
    if unexpected:
        parts.append(f"unexpected {_names(unexpected)}")
    return "; ".join(parts) or None


def _subset(got: list[str], want: list[str]) -> str | None:
    unexpected = _minus(got, want)
    return f"ran steps the reference lacks: {_names(unexpected)}" if unexpected else None


def _superset(got: list[str], want: list[str]) -> str | None:
    missing = _minus(want, got)
    return f"did not run reference steps: {_names(missing)}" if missing else None


def _in_order(got: list[str], want: list[str]) -> str | None:
    remaining = iter(got)
    for position, step in enumerate(want):
        # ``in`` on an iterator consumes it up to the match: a subsequence test.
        if step not in remaining:
            return f"reference step {position + 1} ({step!r}) does not follow in order"
    return None


_CHECKS = {
    "strict": _strict,
    "unordered": _unordered,
    "subset": _subset,
    "superset": _superset,
    "in_order": _in_order,
}
