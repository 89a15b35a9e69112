"""Capture (floor 1, beside ``core``): turn one invocation of an application into an
``InteractionRecord``, and an interaction into the request an evaluator takes.

``BoundAgent`` wraps a runnable (typically a compiled LangGraph graph). Each call adds a
small callback handler to the call's config that records every chat model call and tool
call of that run tree; when the call ends — returned, raised, interrupted or a stream
abandoned — the record is built once and handed to the ``InteractionSink`` before the
call returns or raises. ``InteractionCallbackHandler`` does the same for code that
cannot wrap its runnable: each root run it sees is one interaction.

``build_request`` is the one request builder, for the online runtime and for experiments
alike; ``EvaluatorConfig`` is the ``config`` variable it gives. Both modes build on this
package; neither imports the other.
"""

from ._bound import BoundAgent
from ._config import ConfigKeyError, ConfigTypeError, EvaluatorConfig
from ._handler import InteractionCallbackHandler
from ._record import DetailedReply, InteractionSink
from ._records import (
    InteractionFailure,
    InteractionRecord,
    InteractionStatus,
    ModelResponse,
    Subject,
    TokenUsage,
    ToolCallRecord,
    utc_now,
)
from ._request import RequestBuilder, build_request
from ._scope import current_evaluation_id, evaluation_scope

__all__ = [
    "BoundAgent",
    "ConfigKeyError",
    "ConfigTypeError",
    "DetailedReply",
    "EvaluatorConfig",
    "InteractionCallbackHandler",
    "InteractionFailure",
    "InteractionRecord",
    "InteractionSink",
    "InteractionStatus",
    "ModelResponse",
    "RequestBuilder",
    "Subject",
    "TokenUsage",
    "ToolCallRecord",
    "build_request",
    "current_evaluation_id",
    "evaluation_scope",
    "utc_now",
]
