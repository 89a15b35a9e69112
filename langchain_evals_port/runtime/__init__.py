"""Online evaluation: evaluators bound by configuration to agents, run in the background.

``EvaluationRuntime`` is the entry point: it binds agents (``runtime.bind(graph, agent_id=...,
roles=[...])``), records every interaction in a ``Ledger`` (``SqliteLedger`` by default,
``PostgresLedger`` to scale out, ``InMemoryLedger`` for tests) and runs the evaluators the
configuration binds to each agent in the background — any evaluator of the package, given
by configuration id (``evaluators={"helpfulness": LLMJudge(...)}``), a factory of one, a
``DurableEvaluator`` or a ``Registration`` — recording one ``EvaluationRecord`` per
evaluation with the core ``EvaluatorResult`` of each key: a verdict (passing or failing),
inconclusive, or failed (an error). ``testkit`` has the test helpers.
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
from ._context import EvaluationContext, request_for
from ._ids import evaluation_id, sampled
from ._ledger import InteractionNotFoundError, Ledger, export_jsonl, open_ledger
from ._memory import InMemoryLedger

# Exported directly: the module imports psycopg (the ``postgres`` extra) only when a
# ``PostgresLedger`` is created, so this package imports without it.
from ._postgres import PostgresLedger
from ._records import (
    Claim,
    EvaluationRecord,
    InteractionFailure,
    InteractionRecord,
    InteractionStatus,
    ModelResponse,
    Page,
    Subject,
    TokenUsage,
    ToolCallRecord,
    Trigger,
    WorkUnit,
)
from ._redact import redact_text
from ._registry import Registration, RegistrationTarget
from ._runtime import EvaluationRuntime, WaitingEvaluation
from ._scope import current_evaluation_id, evaluation_scope
from ._sqlite import SqliteLedger
from .durable import DurableEvaluator

__all__ = [
    "Binding",
    "BoundAgent",
    "Claim",
    "ConfigKeyError",
    "ConfigTypeError",
    "ConfigurationError",
    "DetailedReply",
    "DurableEvaluator",
    "EvaluationConfig",
    "EvaluationContext",
    "EvaluationRecord",
    "EvaluationRuntime",
    "EvaluatorConfig",
    "InMemoryLedger",
    "InteractionCallbackHandler",
    "InteractionFailure",
    "InteractionNotFoundError",
    "InteractionRecord",
    "InteractionSink",
    "InteractionStatus",
    "Ledger",
    "ModelResponse",
    "Page",
    "PostgresLedger",
    "Registration",
    "RegistrationTarget",
    "SqliteLedger",
    "Subject",
    "TokenUsage",
    "ToolCallRecord",
    "Trigger",
    "WaitingEvaluation",
    "WorkUnit",
    "current_evaluation_id",
    "evaluation_id",
    "evaluation_scope",
    "export_jsonl",
    "open_ledger",
    "redact_text",
    "request_for",
    "sampled",
]
