"""Online evaluation: the package's evaluators bound by configuration to agents, run in the
background.

``EvaluationRuntime(config, evaluators={"helpfulness": LLMJudge(...), ...})`` is the entry
point: it binds agents (``runtime.bind(graph, agent_id=..., roles=[...])``), records every
interaction in a ``Ledger`` (``SqliteLedger`` by default, ``PostgresLedger`` to scale out,
``InMemoryLedger`` for tests) and runs the evaluators the configuration binds to each agent in
the background, recording the core ``EvaluatorResult`` of each evaluation: a verdict,
inconclusive, or failed (an error). ``DurableEvaluator`` registers a LangGraph graph that
survives restarts. ``testkit`` has the test helpers.

The ledgers and the records they keep are ``langchain_evals_port.storage``'s, the captured
interaction ``langchain_evals_port.capture``'s (both re-exported here); people's labels and
how well evaluators agree with them are ``langchain_evals_port.trust``'s.
"""

import warnings
from typing import Any

from langchain_evals_port import trust
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
    "case_subject",
    "current_evaluation_id",
    "evaluation_id",
    "evaluation_scope",
    "export_jsonl",
    "open_ledger",
    "redact_text",
    "request_for",
    "sampled",
]

_TRUST = (
    "AnnotationImportError",
    "JudgedPair",
    "agreement_by_key",
    "import_annotations",
    "ledger_agreement",
    "pair_annotations",
)


def __getattr__(name: str) -> Any:
    if name not in _TRUST:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"importing {name} from langchain_evals_port.runtime is deprecated; import it from "
        "langchain_evals_port.trust",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(trust, name)
