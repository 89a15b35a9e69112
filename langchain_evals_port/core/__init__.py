"""The core model: requests, results, the ``Evaluator`` base, tracing, messages, equality.

This package knows nothing of judges, ledgers or pytest; every evaluator family builds on it.
"""

from ._canonical import canonical_equal, canonical_json, canonical_text, canonical_value
from ._evaluator import (
    EvalInput,
    EvalOutput,
    Evaluator,
    OnError,
    OutputsKind,
    ScorerOutput,
    results_of,
)
from ._function import FunctionEvaluator, evaluator
from ._messages import message_to_openai, to_langchain_messages, to_openai_messages
from ._paths import MISSING, get_path, without_paths
from ._request import EvalRequest
from ._result import EvaluatorResult, Outcome, Score
from ._run import arun_evaluator, run_evaluator
from ._tracing import EvalTracer, RecordingTracer, TraceEvent, current_tracer, eval_scope

__all__ = [
    "MISSING",
    "EvalInput",
    "EvalOutput",
    "EvalRequest",
    "EvalTracer",
    "Evaluator",
    "EvaluatorResult",
    "FunctionEvaluator",
    "OnError",
    "Outcome",
    "OutputsKind",
    "RecordingTracer",
    "Score",
    "ScorerOutput",
    "TraceEvent",
    "arun_evaluator",
    "canonical_equal",
    "canonical_json",
    "canonical_text",
    "canonical_value",
    "current_tracer",
    "eval_scope",
    "evaluator",
    "get_path",
    "message_to_openai",
    "results_of",
    "run_evaluator",
    "to_langchain_messages",
    "to_openai_messages",
    "without_paths",
]
