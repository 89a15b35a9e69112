"""Agent trajectories: tool-call matching, LangGraph threads, and LLM judges of both.

``TrajectoryMatch`` compares an agent's tool calls with a reference trajectory (strict,
unordered, subset, superset or in order), pairing calls by maximum matching and explaining
every mismatch. ``TrajectoryLLMJudge`` asks a judge model whether the trajectory is
accurate, against the reference when one is given.

``extract_graph_trajectory`` reads a LangGraph thread's node steps per turn from its
checkpointer; ``GraphTrajectoryMatch`` and ``GraphTrajectoryLLMJudge`` evaluate them.
"""

import importlib
from typing import TYPE_CHECKING, Any

from ._args import ToolArgsMatcher, ToolArgsMatchMode, ToolArgsOverride
from ._graph import GraphTrajectoryMatch, GraphTrajectoryMatchMode
from ._graph_extract import aextract_graph_trajectory, extract_graph_trajectory
from ._graph_trajectory import GraphTrajectory, GraphTurn
from ._match import TrajectoryMatch, TrajectoryMatchMode

if TYPE_CHECKING:
    from ._graph_judge import GRAPH_TRAJECTORY_PROMPT, GraphTrajectoryLLMJudge
    from ._judge import TrajectoryLLMJudge

# The judges load LangChain's prompt templates (about 0.1 s), so they load on first use and
# matching stays cheap to import.
_JUDGES = {
    "TrajectoryLLMJudge": "._judge",
    "GraphTrajectoryLLMJudge": "._graph_judge",
    "GRAPH_TRAJECTORY_PROMPT": "._graph_judge",
}


def __getattr__(name: str) -> Any:
    if name in _JUDGES:
        return getattr(importlib.import_module(_JUDGES[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "GRAPH_TRAJECTORY_PROMPT",
    "GraphTrajectory",
    "GraphTrajectoryLLMJudge",
    "GraphTrajectoryMatch",
    "GraphTrajectoryMatchMode",
    "GraphTurn",
    "ToolArgsMatchMode",
    "ToolArgsMatcher",
    "ToolArgsOverride",
    "TrajectoryLLMJudge",
    "TrajectoryMatch",
    "TrajectoryMatchMode",
    "aextract_graph_trajectory",
    "extract_graph_trajectory",
]
