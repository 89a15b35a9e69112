"""Deprecated: capture lives in ``langchain_evals_port.capture`` now (below both modes); the
names here load from there, with a ``DeprecationWarning``."""

import importlib
import warnings
from typing import Any

_MOVED = ("BoundAgent", "DetailedReply", "InteractionCallbackHandler", "InteractionSink")


def __getattr__(name: str) -> Any:
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"langchain_evals_port.runtime.capture is deprecated; import {name} from "
        "langchain_evals_port.capture",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(importlib.import_module("langchain_evals_port.capture"), name)
