"""The public names of ``agentevals.types``: ``from agentevals.types import X`` becomes
``from langchain_evals_port.compat.agentevals.types import X``."""

from __future__ import annotations

from typing import Any

from typing_extensions import TypedDict

from langchain_evals_port.compat._shared import (
    ChatCompletionMessage,
    EvaluatorResult,
    FewShotExample,
    SimpleAsyncEvaluator,
    SimpleEvaluator,
    ToolArgsMatchMode,
    ToolArgsMatchOverrides,
)

__all__ = [
    "ChatCompletionMessage",
    "EvaluatorResult",
    "ExtractedLangGraphThreadTrajectory",
    "FewShotExample",
    "GraphTrajectory",
    "SimpleAsyncEvaluator",
    "SimpleEvaluator",
    "ToolArgsMatchMode",
    "ToolArgsMatchOverrides",
]


class GraphTrajectory(TypedDict):
    """agentevals' ``GraphTrajectory``: each turn's inputs, results and node steps."""

    inputs: list[Any] | None
    results: list[Any]
    steps: list[list[str]]


class ExtractedLangGraphThreadTrajectory(TypedDict):
    """What ``extract_langgraph_trajectory_from_thread`` returns."""

    inputs: list[Any]
    outputs: GraphTrajectory
