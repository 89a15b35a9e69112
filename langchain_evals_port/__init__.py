"""LangChain-native evaluators for LangChain and LangGraph applications.

Every evaluator is a LangChain Runnable (``invoke``/``ainvoke``/``batch``/``abatch`` return
``EvaluatorResult``) and also an OpenEvals-style callable (``ev(inputs=..., outputs=...,
reference_outputs=...)`` returns a dict), so it drops into ``langsmith.evaluate``.

Example:
    >>> from langchain_evals_port import ExactMatch
    >>> ExactMatch().invoke({"outputs": [1, 2], "reference_outputs": (1.0, 2)}).score
    True
"""

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
    RecordingTracer,
    Score,
    ScorerOutput,
    TraceEvent,
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
    FailureCode,
    MessageFormatError,
)
from .string import EmbeddingSimilarity, ExactMatch, LevenshteinDistance

__version__ = "0.1.0"

__all__ = [
    "CanonicalizationError",
    "EmbeddingSimilarity",
    "EvalInput",
    "EvalOutput",
    "EvalRequest",
    "EvalTracer",
    "EvalsError",
    "EvaluationFailure",
    "Evaluator",
    "EvaluatorInputError",
    "EvaluatorResult",
    "ExactMatch",
    "FailureCode",
    "FunctionEvaluator",
    "LevenshteinDistance",
    "MessageFormatError",
    "OnError",
    "Outcome",
    "RecordingTracer",
    "Score",
    "ScorerOutput",
    "TraceEvent",
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
]
