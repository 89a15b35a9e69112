"""The trajectory of a LangGraph thread: its turns, each with its input, the nodes that
ran and the result, and the forms of it evaluators accept."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from langchain_evals_port.core.errors import EvaluatorInputError

__all__ = [
    "INTERRUPT_STEP",
    "RESUME_KEY",
    "START_STEP",
    "GraphTrajectory",
    "GraphTurn",
    "graph_steps",
]

START_STEP = "__start__"
"""The step of a run writing its input into the graph's state (LangGraph's ``START``)."""
INTERRUPT_STEP = "__interrupt__"
"""The step that follows a node which stopped the run with ``interrupt()``."""
RESUME_KEY = "__resume__"
"""The key of a resumed turn's input: ``{"__resume__": answer}``."""


class GraphTurn(BaseModel):
    """One run of a graph on a thread.

    Args:
        input: What started the run: ``{"__start__": input}``, ``{"__resume__": answer}``
            for a run that resumed an interrupt, or None when unknown.
        steps: The nodes that ran, in order (see ``GraphTrajectory`` for the names).
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

    ``to_dict()`` has the shape of agentevals' ``extract_langgraph_trajectory_from_thread``
    and the same data wherever agentevals reads the history correctly. The conventions:

    * **Steps** are the nodes a run executed, in order; ``"__start__"`` is the run writing
      its input into the state. Nodes of one superstep (parallel branches) are listed as
      agentevals lists them, the reverse of ``StateSnapshot.tasks``; that order carries no
      meaning, so compare parallel graphs with ``mode="unordered"``, ``"subset"`` or
      ``"superset"``.
    * **Subgraphs**: a node inside a subgraph is named by its path of node names joined by
      ``":"`` — ``"research:search"``, and ``"outer:inner:node"`` when nested — and listed
      after the nodes of the parent's superstep, starting with the subgraph's own
      ``"research:__start__"``.
    * **Interrupts**: a run stopped by ``interrupt()`` ends its turn. ``"__interrupt__"``
      follows the node that raised it, the turn's ``result`` is ``None`` (``{}`` in the dict
      form, as in agentevals) and ``interrupts`` holds the payloads. The run that resumes is
      the next turn: its input is ``{"__resume__": answer}`` and its steps start with the
      node that resumed, because LangGraph runs an interrupted node again from its first
      line.
    * **Inputs**: a run started with input has ``{"__start__": input}``, as in agentevals.
    * **Results**: the state after the run; when the state has a ``messages`` list, only its
      last message (as an OpenAI-style dict), as in agentevals.
    * Only the thread's current branch counts: checkpoints left behind by time travel (a run
      from an earlier checkpoint) are not part of the trajectory.

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


def graph_steps(value: Any, *, name: str = "outputs") -> list[list[str]]:
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
