"""``forwarding``: the module ``__getattr__`` of an import path that moved, loading each name
from its new home with a ``DeprecationWarning`` (kept for one release)."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Collection
from typing import Any

__all__ = ["forwarding"]


def forwarding(old: str, new: str, names: Collection[str] | None = None) -> Callable[[str], Any]:
    """A ``__getattr__`` for module ``old`` giving ``names`` (default: ``new.__all__``) from
    module ``new``, each with a warning naming where to import it from."""

    def __getattr__(name: str) -> Any:
        home = importlib.import_module(new)
        if name not in (home.__all__ if names is None else names):
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        warnings.warn(
            f"{old} is deprecated; import {name} from {new}", DeprecationWarning, stacklevel=2
        )
        return getattr(home, name)

    return __getattr__
