"""LangChain-native evaluators for LangChain and LangGraph applications.

Every evaluator is a LangChain Runnable (``invoke``/``ainvoke``/``batch``/``abatch`` return
``EvaluatorResult``) and also an OpenEvals-style callable (``ev(inputs=..., outputs=...,
reference_outputs=...)`` returns a dict), so it drops into ``langsmith.evaluate``.

Example:
    >>> from langchain_evals_port import ExactMatch
    >>> ExactMatch().invoke({"outputs": [1, 2], "reference_outputs": (1.0, 2)}).score
    True
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import code, experiments, prompts, runtime
    from .core import (
        EvalInput,
        EvalOutput,
        EvalRequest,
        EvalTracer,
        Evaluator,
        EvaluatorResult,
        FunctionEvaluator,
        OnError,
        Outcome,
        Score,
        ScorerOutput,
        canonical_equal,
        canonical_json,
        canonical_text,
        canonical_value,
        current_tracer,
        eval_scope,
        evaluator,
        message_to_openai,
        to_langchain_messages,
        to_openai_messages,
    )
    from .core.errors import (
        CanonicalizationError,
        EvalsError,
        EvaluationFailure,
        EvaluatorInputError,
        EvaluatorUsageError,
        FailureCode,
        JudgeOutputError,
        MessageFormatError,
    )
    from .experiments import Case, Dataset, DatasetError
    from .json_match import JsonMatch
    from .judge import (
        Attachment,
        FewShotExample,
        JudgeEnsemble,
        LLMJudge,
        PairwiseLLMJudge,
        set_default_judge,
    )
    from .runtime import DurableEvaluator, EvaluationRuntime
    from .simulation import MultiturnSimulation, SimulatedUser
    from .string import EmbeddingSimilarity, ExactMatch, LevenshteinDistance
    from .trajectory import (
        GraphTrajectoryLLMJudge,
        GraphTrajectoryMatch,
        TrajectoryLLMJudge,
        TrajectoryMatch,
        extract_graph_trajectory,
    )

# Every name loads on first use, the core included: importing any submodule (the pytest
# plugin, which every pytest start in the environment imports) runs this file first, and
# the core brings in langchain-core and pydantic.
_LAZY = {
    **dict.fromkeys(
        (
            "EvalInput",
            "EvalOutput",
            "EvalRequest",
            "EvalTracer",
            "Evaluator",
            "EvaluatorResult",
            "FunctionEvaluator",
            "OnError",
            "Outcome",
            "Score",
            "ScorerOutput",
            "canonical_equal",
            "canonical_json",
            "canonical_text",
            "canonical_value",
            "current_tracer",
            "eval_scope",
            "evaluator",
            "message_to_openai",
            "to_langchain_messages",
            "to_openai_messages",
        ),
        "core",
    ),
    **dict.fromkeys(
        (
            "CanonicalizationError",
            "EvalsError",
            "EvaluationFailure",
            "EvaluatorInputError",
            "EvaluatorUsageError",
            "FailureCode",
            "JudgeOutputError",
            "MessageFormatError",
        ),
        "core.errors",
    ),
    **dict.fromkeys(("EmbeddingSimilarity", "ExactMatch", "LevenshteinDistance"), "string"),
    **dict.fromkeys(
        (
            "Attachment",
            "FewShotExample",
            "JudgeEnsemble",
            "LLMJudge",
            "PairwiseLLMJudge",
            "set_default_judge",
        ),
        "judge",
    ),
    "JsonMatch": "json_match",
    **dict.fromkeys(("MultiturnSimulation", "SimulatedUser"), "simulation"),
    **dict.fromkeys(
        (
            "TrajectoryMatch",
            "TrajectoryLLMJudge",
            "GraphTrajectoryMatch",
            "GraphTrajectoryLLMJudge",
            "extract_graph_trajectory",
        ),
        "trajectory",
    ),
    **dict.fromkeys(("DurableEvaluator", "EvaluationRuntime"), "runtime"),
    **dict.fromkeys(("Case", "Dataset", "DatasetError"), "experiments"),
    **dict.fromkeys(("code", "experiments", "prompts", "runtime"), None),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    family = _LAZY[name]
    if family is None:
        return importlib.import_module(f"{__name__}.{name}")
    return getattr(importlib.import_module(f"{__name__}.{family}"), name)


def __dir__() -> list[str]:
    return sorted(__all__)


__version__ = "0.1.0"

__all__ = [
    "Attachment",
    "CanonicalizationError",
    "Case",
    "Dataset",
    "DatasetError",
    "DurableEvaluator",
    "EmbeddingSimilarity",
    "EvalInput",
    "EvalOutput",
    "EvalRequest",
    "EvalTracer",
    "EvalsError",
    "EvaluationFailure",
    "EvaluationRuntime",
    "Evaluator",
    "EvaluatorInputError",
    "EvaluatorResult",
    "EvaluatorUsageError",
    "ExactMatch",
    "FailureCode",
    "FewShotExample",
    "FunctionEvaluator",
    "GraphTrajectoryLLMJudge",
    "GraphTrajectoryMatch",
    "JsonMatch",
    "JudgeEnsemble",
    "JudgeOutputError",
    "LLMJudge",
    "LevenshteinDistance",
    "MessageFormatError",
    "MultiturnSimulation",
    "OnError",
    "Outcome",
    "PairwiseLLMJudge",
    "Score",
    "ScorerOutput",
    "SimulatedUser",
    "TrajectoryLLMJudge",
    "TrajectoryMatch",
    "canonical_equal",
    "canonical_json",
    "canonical_text",
    "canonical_value",
    "code",
    "current_tracer",
    "eval_scope",
    "evaluator",
    "experiments",
    "extract_graph_trajectory",
    "message_to_openai",
    "prompts",
    "runtime",
    "set_default_judge",
    "to_langchain_messages",
    "to_openai_messages",
]
