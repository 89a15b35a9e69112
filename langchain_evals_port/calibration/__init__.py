"""Deprecated: calibration is ``langchain_evals_port.trust.calibration``; the names here load
from there, with a ``DeprecationWarning``."""

import importlib
import warnings
from typing import Any


def __getattr__(name: str) -> Any:
    calibration = importlib.import_module("langchain_evals_port.trust.calibration")
    if name not in calibration.__all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"langchain_evals_port.calibration is deprecated; import {name} from "
        "langchain_evals_port.trust.calibration",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(calibration, name)
