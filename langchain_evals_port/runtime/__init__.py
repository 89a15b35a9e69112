"""Online evaluation: the package's evaluators bound by configuration to agents, run in the
background.

``EvaluationRuntime(config, evaluators={"helpfulness": LLMJudge(...), ...})`` is the entry
point: it binds agents (``runtime.bind(graph, agent_id=..., roles=[...])``), records every
interaction in a ``Ledger`` (``SqliteLedger`` by default, ``PostgresLedger`` to scale out,
``InMemoryLedger`` for tests) and runs the evaluators the configuration binds to each agent in
the background, recording the core ``EvaluatorResult`` of each evaluation: a verdict,
inconclusive, or failed (an error). ``DurableEvaluator`` registers a LangGraph graph that
survives restarts. ``testkit`` has the test helpers.

People's labels are ``Annotation`` records beside the evaluations (``ledger.annotate(...)``,
``import_annotations`` from CSV or JSONL), and ``ledger_agreement`` measures, per feedback
key, how well the evaluators agree with them.
"""

from langchain_evals_port.capture import (
    BoundAgent,
    DetailedReply,
    InteractionCallbackHandler,
    InteractionSink,
)
from langchain_evals_port.capture._config import ConfigKeyError, ConfigTypeError, EvaluatorConfig
from langchain_evals_port.capture._records import (
    InteractionFailure,
    InteractionRecord,
    InteractionStatus,
    ModelResponse,
    Subject,
    TokenUsage,
    ToolCallRecord,
)
from langchain_evals_port.capture._scope import current_evaluation_id, evaluation_scope
from langchain_evals_port.storage import (
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
from langchain_evals_port.storage._annotation import (
    Annotation,
    AnnotationConflictError,
    AnnotationSubject,
    case_subject,
)
from langchain_evals_port.storage._ids import evaluation_id
from langchain_evals_port.storage._records import Claim, EvaluationRecord, Page, Trigger, WorkUnit

from ._agreement import JudgedPair, agreement_by_key, ledger_agreement, pair_annotations
from ._annotation_files import AnnotationImportError, import_annotations
from ._config import Binding, ConfigurationError, EvaluationConfig
from ._context import EvaluationContext, request_for
from ._ids import sampled
from ._redact import redact_text
from ._registry import Registration, RegistrationTarget
from ._runtime import EvaluationRuntime, WaitingEvaluation
from .durable import DurableEvaluator

__all__ = [
    "Annotation",
    "AnnotationConflictError",
    "AnnotationImportError",
    "AnnotationSubject",
    "Binding",
    "BoundAgent",
    "CheckpointerUnavailableError",
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
    "JudgedPair",
    "Ledger",
    "LedgerSchemaError",
    "ModelResponse",
    "Page",
    "PostgresLedger",
    "Registration",
    "RegistrationTarget",
    "SqliteLedger",
    "Subject",
    "SupportsCheckpoints",
    "TokenUsage",
    "ToolCallRecord",
    "Trigger",
    "WaitingEvaluation",
    "WorkUnit",
    "agreement_by_key",
    "case_subject",
    "current_evaluation_id",
    "evaluation_id",
    "evaluation_scope",
    "export_jsonl",
    "import_annotations",
    "ledger_agreement",
    "open_ledger",
    "pair_annotations",
    "redact_text",
    "request_for",
    "sampled",
]
