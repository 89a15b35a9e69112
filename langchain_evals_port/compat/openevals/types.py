"""The public names of ``openevals.types``: ``from openevals.types import X`` becomes
``from langchain_evals_port.compat.openevals.types import X``."""

from __future__ import annotations

from langchain_evals_port.compat._shared import (
    ChatCompletion,
    ChatCompletionMessage,
    ChatCompletionsClient,
    EvaluatorResult,
    FewShotExample,
    Messages,
    ModelClient,
    MultiturnSimulationResult,
    RunnableLike,
    ScoreType,
    SimpleAsyncEvaluator,
    SimpleEvaluator,
    ToolArgsMatchMode,
    ToolArgsMatchOverrides,
)

__all__ = [
    "ChatCompletion",
    "ChatCompletionMessage",
    "ChatCompletionsClient",
    "EvaluatorResult",
    "FewShotExample",
    "Messages",
    "ModelClient",
    "MultiturnSimulationResult",
    "RunnableLike",
    "ScoreType",
    "SimpleAsyncEvaluator",
    "SimpleEvaluator",
    "ToolArgsMatchMode",
    "ToolArgsMatchOverrides",
]
