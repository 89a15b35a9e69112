"""Deprecated: calibration is ``langchain_evals_port.trust.calibration``; the names
here load from there, with a ``DeprecationWarning``."""

from langchain_evals_port._moved import forwarding

__getattr__ = forwarding(
    "langchain_evals_port.calibration", "langchain_evals_port.trust.calibration"
)
