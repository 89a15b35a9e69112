"""Capture: turn one invocation of an agent into an ``InteractionRecord`` for the ledger.

``BoundAgent`` wraps a runnable (typically a compiled LangGraph graph). Each call adds a
small callback handler to the call's config that records every chat model call and tool
call of that run tree; when the call ends — returned, raised, interrupted or a stream
abandoned — the record is built once and handed to the ``InteractionSink`` before the
call returns or raises. ``InteractionCallbackHandler`` does the same for code that
cannot wrap its runnable: each root run it sees is one interaction.
"""

from ._bound import BoundAgent
from ._handler import InteractionCallbackHandler
from ._record import DetailedReply, InteractionSink

__all__ = ["BoundAgent", "DetailedReply", "InteractionCallbackHandler", "InteractionSink"]
