"""Deprecated: ``langchain_evals_port.storage.contract``; the names
here load from there, with a ``DeprecationWarning``."""

from langchain_evals_port._moved import forwarding

__getattr__ = forwarding(
    "langchain_evals_port.runtime.ledger.contract", "langchain_evals_port.storage.contract"
)
