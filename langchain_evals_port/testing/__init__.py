"""Offline models and helpers for tests, benchmarks and examples.

``ScriptedChatModel`` is a real LangChain chat model that answers from a script instead of
calling a provider, so a judge or an agent can be exercised without network access or API keys.
It records every call it receives, reports token usage, honours ``with_structured_output`` and
``bind_tools``, and can replay provider failures through ``ScriptedProviderError``.

``HashingEmbeddings`` is a real LangChain ``Embeddings`` that needs no model: texts sharing
words get similar vectors. ``RecordingTracer`` keeps every evaluation event it sees.

``assert_passed``, ``assert_failed`` and ``assert_score_at_least`` check evaluator results in
a test and, when they fail, say why: the key, the score and the judge's reasoning.
"""

from langchain_evals_port.core import RecordingTracer, TraceEvent

from ._assertions import assert_failed, assert_passed, assert_score_at_least
from ._embeddings import HashingEmbeddings
from ._replies import ScriptedProviderError, ScriptedReply, ToolCallReply
from ._scripted import ScriptedCall, ScriptedChatModel, ScriptExhaustedError

__all__ = [
    "HashingEmbeddings",
    "RecordingTracer",
    "ScriptExhaustedError",
    "ScriptedCall",
    "ScriptedChatModel",
    "ScriptedProviderError",
    "ScriptedReply",
    "ToolCallReply",
    "TraceEvent",
    "assert_failed",
    "assert_passed",
    "assert_score_at_least",
]

# These classes were defined in this module before it became a package, and their module
# and name are recorded: an experiment's fingerprint names a judge's model class, a pickle
# names what it holds. They keep the public module, so neither changes with the layout.
for _public in (
    HashingEmbeddings,
    ScriptExhaustedError,
    ScriptedCall,
    ScriptedChatModel,
    ScriptedProviderError,
    ToolCallReply,
):
    _public.__module__ = __name__
del _public
