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
import warnings
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import code, experiments, prompts, runtime
    from .core import (
        EvalRequest,
        Evaluator,
        EvaluatorResult,
        Score,
        evaluator,
    )
    from .core.errors import (
        EvalsError,
        EvaluationFailure,
        EvaluatorInputError,
        EvaluatorUsageError,
    )
    from .experiments import Case, Dataset, DatasetError, arun_experiment, run_experiment
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
    )

# Every name loads on first use, the core included: importing any submodule (the pytest
# plugin, which every pytest start in the environment imports) runs this file first, and
# the core brings in langchain-core and pydantic.
_LAZY = {
    **dict.fromkeys(
        ("EvalRequest", "Evaluator", "EvaluatorResult", "Score", "evaluator"),
        "core",
    ),
    **dict.fromkeys(
        ("EvalsError", "EvaluationFailure", "EvaluatorInputError", "EvaluatorUsageError"),
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
        ),
        "trajectory",
    ),
    **dict.fromkeys(("DurableEvaluator", "EvaluationRuntime"), "runtime"),
    **dict.fromkeys(
        ("Case", "Dataset", "DatasetError", "arun_experiment", "run_experiment"), "experiments"
    ),
    **dict.fromkeys(("code", "experiments", "prompts", "runtime"), None),
}

# Helpers that were importable from here and now live only in their packages: they still
# load, with a DeprecationWarning naming where to import them from.
_MOVED = {
    **dict.fromkeys(
        (
            "EvalInput",
            "EvalOutput",
            "EvalTracer",
            "FunctionEvaluator",
            "OnError",
            "Outcome",
            "ScorerOutput",
            "canonical_equal",
            "canonical_json",
            "canonical_text",
            "canonical_value",
            "current_tracer",
            "eval_scope",
            "message_to_openai",
            "to_langchain_messages",
            "to_openai_messages",
        ),
        "core",
    ),
    **dict.fromkeys(
        ("CanonicalizationError", "FailureCode", "JudgeOutputError", "MessageFormatError"),
        "core.errors",
    ),
    "extract_graph_trajectory": "trajectory",
}


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        warnings.warn(
            f"importing {name} from {__name__} is deprecated; import it from "
            f"{__name__}.{_MOVED[name]}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(f"{__name__}.{_MOVED[name]}"), name)
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
    "Case",
    "Dataset",
    "DatasetError",
    "DurableEvaluator",
    "EmbeddingSimilarity",
    "EvalRequest",
    "EvalsError",
    "EvaluationFailure",
    "EvaluationRuntime",
    "Evaluator",
    "EvaluatorInputError",
    "EvaluatorResult",
    "EvaluatorUsageError",
    "ExactMatch",
    "FewShotExample",
    "GraphTrajectoryLLMJudge",
    "GraphTrajectoryMatch",
    "JsonMatch",
    "JudgeEnsemble",
    "LLMJudge",
    "LevenshteinDistance",
    "MultiturnSimulation",
    "PairwiseLLMJudge",
    "Score",
    "SimulatedUser",
    "TrajectoryLLMJudge",
    "TrajectoryMatch",
    "arun_experiment",
    "code",
    "evaluator",
    "experiments",
    "prompts",
    "run_experiment",
    "runtime",
    "set_default_judge",
]
