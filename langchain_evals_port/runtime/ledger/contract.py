"""Deprecated: ``langchain_evals_port.storage.contract``; its names load from there, with a
``DeprecationWarning``."""

import importlib
import warnings
from typing import Any


def __getattr__(name: str) -> Any:
    contract = importlib.import_module("langchain_evals_port.storage.contract")
    if name not in contract.__all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"langchain_evals_port.runtime.ledger.contract is deprecated; import {name} from "
        "langchain_evals_port.storage.contract",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(contract, name)
