"""``"module:attr"`` names of objects — an experiment's target and evaluators, a worker's
evaluators, a judge to calibrate — as the command line, workers and configuration take them:
the one importer of such names."""

from __future__ import annotations

import difflib
import importlib
import sys
import traceback
from typing import Any

from .errors import EvaluatorUsageError

__all__ = ["import_spec"]

_INSTALLED = tuple({sys.prefix, sys.base_prefix, sys.exec_prefix})
"""Where the standard library and installed packages live: not the user's code."""


def import_spec(spec: str, what: str) -> Any:
    """The object ``"module:attr"`` names (``attr`` may be dotted); ``what`` names it in the
    error raised when the module or the attribute is missing, or when importing the module
    raised (a ``SyntaxError``, an exception at import: shown at its file and line)."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise EvaluatorUsageError(f"{what}: expected 'module:attr', got {spec!r}")
    try:
        value: Any = importlib.import_module(module_name)
    except ImportError as error:
        raise EvaluatorUsageError(f"{what}: cannot import {module_name!r}: {error}") from error
    except Exception as error:  # the module's own code failed: where, not a traceback
        raise EvaluatorUsageError(
            f"{what}: cannot import {module_name!r}: {_where(error)}"
        ) from error
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


def _where(error: Exception) -> str:
    """``file, line N: Type: message`` for an exception raised while importing a module: the
    line of a ``SyntaxError``, otherwise the innermost frame of the user's code (outside the
    standard library and installed packages, when there is one)."""
    if isinstance(error, SyntaxError) and error.filename:
        code = (error.text or "").strip()
        shown = f"\n    {code}" if code else ""
        return f"{error.filename}, line {error.lineno}: SyntaxError: {error.msg}{shown}"
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if not frame.filename.startswith("<")  # importlib's frozen frames
    ]
    kind = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    own = [frame for frame in frames if not frame.filename.startswith(_INSTALLED)]
    if not own and not frames:
        return kind
    frame = (own or frames)[-1]
    return f"{frame.filename}, line {frame.lineno}: {kind}"
