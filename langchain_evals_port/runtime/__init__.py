"""Online evaluation: evaluators bound by configuration to agents, run in the background.

See ``EvaluationRuntime`` for the entry point and RUNTIME.md-style docs in the README.
"""

from ._evaluation import (
    Complete,
    Effect,
    Effects,
    Evaluation,
    InconclusiveEffect,
    complete,
    inconclusive,
)
from ._ids import evaluation_id, sampled
from ._ledger import InteractionNotFoundError, Ledger, export_jsonl
from ._records import (
    Claim,
    EvaluationError,
    EvaluationRecord,
    Failed,
    Failure,
    Inconclusive,
    InteractionRecord,
    InteractionStatus,
    ModelResponse,
    Outcome,
    Page,
    Subject,
    TokenUsage,
    ToolCallRecord,
    Trigger,
    Verdict,
    WorkUnit,
)
from ._scope import current_evaluation_id, evaluation_scope

__all__ = [
    "Claim",
    "Complete",
    "Effect",
    "Effects",
    "Evaluation",
    "EvaluationError",
    "EvaluationRecord",
    "Failed",
    "Failure",
    "Inconclusive",
    "InconclusiveEffect",
    "InteractionNotFoundError",
    "InteractionRecord",
    "InteractionStatus",
    "Ledger",
    "ModelResponse",
    "Outcome",
    "Page",
    "Subject",
    "TokenUsage",
    "ToolCallRecord",
    "Trigger",
    "Verdict",
    "WorkUnit",
    "complete",
    "current_evaluation_id",
    "evaluation_id",
    "evaluation_scope",
    "export_jsonl",
    "inconclusive",
    "sampled",
]
