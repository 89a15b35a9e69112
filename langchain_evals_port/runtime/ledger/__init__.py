"""Deprecated: the ledger lives in ``langchain_evals_port.storage`` now (below both modes);
the names here load from there, with a ``DeprecationWarning``."""

import importlib
import warnings
from typing import Any


def __getattr__(name: str) -> Any:
    storage = importlib.import_module("langchain_evals_port.storage")
    if name not in storage.__all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"langchain_evals_port.runtime.ledger is deprecated; import {name} from "
        "langchain_evals_port.storage",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(storage, name)
