"""A pytest plugin that makes ``import openevals...`` and ``import agentevals...`` resolve to
``langchain_evals_port.compat``, so the peers' own test files run against compat unchanged.

The alias is the import change a user makes: ``openevals.X.Y`` is
``langchain_evals_port.compat.openevals.X.Y`` when compat has that submodule (``types``),
``langchain_evals_port.prompts`` for ``openevals.prompts...`` (the catalog), and the flat
``langchain_evals_port.compat.openevals`` otherwise; ``agentevals`` likewise.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from importlib.machinery import ModuleSpec
from types import ModuleType

_COMPAT = {
    "openevals": "langchain_evals_port.compat.openevals",
    "agentevals": "langchain_evals_port.compat.agentevals",
}


def _target(name: str) -> str:
    peer, _, rest = name.partition(".")
    compat = _COMPAT[peer]
    if not rest:
        return compat
    if peer == "openevals" and rest.split(".")[0] == "prompts":
        return "langchain_evals_port.prompts"
    try:
        if importlib.util.find_spec(f"{compat}.{rest}") is not None:
            return f"{compat}.{rest}"
    except ModuleNotFoundError:
        pass
    return compat


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name: str, path: object = None, target: object = None) -> ModuleSpec | None:
        if name.partition(".")[0] not in _COMPAT:
            return None
        return ModuleSpec(name, self, is_package=True)

    def create_module(self, spec: ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        # The import system returns what sys.modules holds after exec_module: the target,
        # with its own __spec__ (a resource reader needs it).
        sys.modules[module.__name__] = importlib.import_module(_target(module.__name__))


for _name in [name for name in sys.modules if name.partition(".")[0] in _COMPAT]:
    del sys.modules[_name]
sys.meta_path.insert(0, _Alias())
