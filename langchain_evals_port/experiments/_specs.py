"""``"module:attr"`` names of what an experiment runs, as the command line and workers take
them."""

from __future__ import annotations

import difflib
import importlib
from typing import Any

from langchain_evals_port.core.errors import EvaluatorUsageError

__all__ = ["import_spec"]


def import_spec(spec: str, what: str) -> Any:
    """The object ``"module:attr"`` names (``attr`` may be dotted); ``what`` names it in the
    error raised when the module or the attribute is missing."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise EvaluatorUsageError(f"{what}: expected 'module:attr', got {spec!r}")
    try:
        value: Any = importlib.import_module(module_name)
    except ImportError as error:
        raise EvaluatorUsageError(f"{what}: cannot import {module_name!r}: {error}") from error
    for part in attribute.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            names = [name for name in dir(value) if not name.startswith("_")]
            close = difflib.get_close_matches(part, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise EvaluatorUsageError(
                f"{what}: module {module_name!r} has no attribute {attribute!r}{hint}"
            ) from None
    return value
