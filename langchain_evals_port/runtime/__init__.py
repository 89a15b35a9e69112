"""Online evaluation: evaluators bound by configuration to agents, run in the background.

``EvaluationRuntime`` is the entry point: it binds agents (``runtime.bind(graph, agent_id=...,
roles=[...])``), records every interaction in a ``Ledger`` (``SqliteLedger`` by default,
``PostgresLedger`` to scale out, ``InMemoryLedger`` for tests) and runs the
``OnlineEvaluator``s the configuration binds to each agent in the background, recording one
outcome per evaluation: a verdict (``Evaluation``, passing or failing), inconclusive, or Failed
(an error). ``testkit`` has the test helpers.
"""

from ._capture import BoundAgent, DetailedReply, InteractionCallbackHandler, InteractionSink
from ._config import (
    Binding,
    ConfigKeyError,
    ConfigTypeError,
    ConfigurationError,
    EvaluationConfig,
    EvaluatorConfig,
)
from ._durable import (
    DurableEffects,
    DurableEvaluator,
    EvaluationTimeoutError,
    Settings,
    StepTimeoutError,
    Transition,
    step,
)
from ._evaluation import (
    Complete,
    Effect,
    Effects,
    Evaluation,
    InconclusiveEffect,
    complete,
    inconclusive,
)
from ._evaluator import EvaluationContext, EvaluatorFactory, OnlineEvaluator
from ._ids import evaluation_id, sampled
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
from ._redact import redact_text
from ._runtime import EvaluationRuntime, WaitingEvaluation
from ._scope import current_evaluation_id, evaluation_scope
from .ledger import (
    CheckpointerUnavailableError,
    InMemoryLedger,
    InteractionNotFoundError,
    Ledger,
    LedgerSchemaError,
    PostgresLedger,
    SqliteLedger,
    SupportsCheckpoints,
    export_jsonl,
    open_ledger,
)

__all__ = [
    "Binding",
    "BoundAgent",
    "CheckpointerUnavailableError",
    "Claim",
    "Complete",
    "ConfigKeyError",
    "ConfigTypeError",
    "ConfigurationError",
    "DetailedReply",
    "DurableEffects",
    "DurableEvaluator",
    "Effect",
    "Effects",
    "Evaluation",
    "EvaluationConfig",
    "EvaluationContext",
    "EvaluationError",
    "EvaluationRecord",
    "EvaluationRuntime",
    "EvaluationTimeoutError",
    "EvaluatorConfig",
    "EvaluatorFactory",
    "Failed",
    "Failure",
    "InMemoryLedger",
    "Inconclusive",
    "InconclusiveEffect",
    "InteractionCallbackHandler",
    "InteractionNotFoundError",
    "InteractionRecord",
    "InteractionSink",
    "InteractionStatus",
    "Ledger",
    "LedgerSchemaError",
    "ModelResponse",
    "OnlineEvaluator",
    "Outcome",
    "Page",
    "PostgresLedger",
    "Settings",
    "SqliteLedger",
    "StepTimeoutError",
    "Subject",
    "SupportsCheckpoints",
    "TokenUsage",
    "ToolCallRecord",
    "Transition",
    "Trigger",
    "Verdict",
    "WaitingEvaluation",
    "WorkUnit",
    "complete",
    "current_evaluation_id",
    "evaluation_id",
    "evaluation_scope",
    "export_jsonl",
    "inconclusive",
    "open_ledger",
    "redact_text",
    "sampled",
    "step",
]
