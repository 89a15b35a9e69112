"""Deprecated: capture lives in ``langchain_evals_port.capture`` now (below both modes); the names
here load from there, with a ``DeprecationWarning``."""

from langchain_evals_port._moved import forwarding

__getattr__ = forwarding(
    "langchain_evals_port.runtime.capture",
    "langchain_evals_port.capture",
    ("BoundAgent", "DetailedReply", "InteractionCallbackHandler", "InteractionSink"),
)
