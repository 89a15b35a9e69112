"""``configuration_fingerprint``: what an evaluator is configured with, field by field, in a
form that compares across processes and releases of Python.

An experiment keeps the fingerprint of each of its evaluators, so resuming it under its
name with an evaluator configured otherwise (another judge prompt, model, output schema,
threshold) is refused rather than mixed with the stored results. Every field of the
evaluator counts but those that do not decide a verdict (``name``, ``tracer``, ``cache``,
``on_error``). A value is described by what it is, never by where it sits in memory:

* JSON values as they are; classes (output schemas) by their JSON schema;
* LangChain objects that serialize (prompt templates) by langchain-core's serialization;
* chat models by LangChain's own cache key for them (the model, its parameters), with what
  ``.bind`` adds; other Runnables by their type;
* functions by their qualified name and the digest of their source;
* evaluators inside an evaluator (an ensemble's judges) by their own fingerprint;
* anything else by its type, and its ``repr`` when the class defines one.

A field's description longer than ``_SHORT`` characters is kept as its digest.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import inspect
import json
import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.load import Serializable, dumpd
from langchain_core.runnables import Runnable
from langchain_core.runnables.base import RunnableBindingBase
from langchain_core.utils.function_calling import convert_to_json_schema
from pydantic import BaseModel

if TYPE_CHECKING:
    from ._evaluator import Evaluator

__all__ = ["changed_fields", "configuration_fingerprint"]

_IGNORED = frozenset({"name", "tracer", "cache", "on_error"})
"""Fields that do not decide a verdict: the run name, reporting, caching, error handling."""

_SHORT = 80
"""Descriptions up to this many characters are kept as they are; longer ones as a digest."""

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def configuration_fingerprint(evaluator: Evaluator) -> dict[str, str]:
    """Each configuration field of ``evaluator`` (and ``type``, its class), described as
    text (its digest, ``sha256:…``, when long): equal texts, equal configurations.

    Example:
        >>> from langchain_evals_port import ExactMatch
        >>> print(configuration_fingerprint(ExactMatch())["type"])
        "langchain_evals_port.string._exact.ExactMatch"
    """
    return {name: _short(_text(value)) for name, value in _configuration(evaluator).items()}


def changed_fields(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """The fields two fingerprints differ in, each as ``name (old → new)``, or as its bare
    name when a value is too long to show (kept as a digest)."""
    changed = []
    for name in sorted(before.keys() | after.keys()):
        old, new = before.get(name, "(none)"), after.get(name, "(none)")
        if old == new:
            continue
        digest = old.startswith("sha256:") or new.startswith("sha256:")
        changed.append(name if digest else f"{name} ({old} → {new})")
    return changed


def _configuration(evaluator: Evaluator) -> dict[str, Any]:
    fields: dict[str, Any] = {"type": _qualified(type(evaluator))}
    for name in type(evaluator).model_fields:
        if name not in _IGNORED:
            fields[name] = _described(getattr(evaluator, name))
    return fields


def _described(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON values that name what it is (see the module docstring)."""
    from ._evaluator import Evaluator

    if depth > 20:
        return _qualified(type(value))
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, enum.Enum):
        return _described(value.value, depth + 1)
    if isinstance(value, Evaluator):
        return _configuration(value)
    if isinstance(value, Mapping):
        return {str(key): _described(item, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_described(item, depth + 1) for item in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_described(item, depth + 1) for item in value), key=_text)
    if isinstance(value, type):
        return _class(value)
    if isinstance(value, Runnable):
        return _runnable(value, depth)
    if isinstance(value, Serializable) and value.is_lc_serializable():
        return dumpd(value)
    if isinstance(value, BaseModel):
        return {"type": _qualified(type(value)), **_described(value.model_dump(), depth + 1)}
    if dataclasses.is_dataclass(value):
        return {
            "type": _qualified(type(value)),
            **{
                f.name: _described(getattr(value, f.name), depth + 1)
                for f in dataclasses.fields(value)
            },
        }
    if callable(value):
        return _function(value)
    if getattr(type(value), "__repr__", None) is object.__repr__:
        return _qualified(type(value))
    return f"{_qualified(type(value))}: {_ADDRESS.sub('', repr(value))}"


def _runnable(value: Runnable[Any, Any], depth: int) -> Any:
    if isinstance(value, RunnableBindingBase):
        return {
            "bound": _described(value.bound, depth + 1),
            "kwargs": _described(value.kwargs, depth + 1),
        }
    if isinstance(value, BaseChatModel):
        # What LangChain keys its cache by: the model and its parameters.
        return {"type": _qualified(type(value)), "llm_string": value._get_llm_string()}
    if isinstance(value, Serializable) and value.is_lc_serializable():
        return dumpd(value)
    return _qualified(type(value))


def _class(kind: type) -> Any:
    try:
        return {"class": _qualified(kind), "schema": convert_to_json_schema(kind)}
    except Exception:
        return _qualified(kind)


def _function(function: Any) -> Any:
    described: dict[str, Any] = {"function": _qualified(function)}
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        return described
    described["source"] = "sha256:" + hashlib.sha256(source.encode()).hexdigest()[:16]
    return described


def _qualified(thing: Any) -> str:
    module = getattr(thing, "__module__", None) or "?"
    name = getattr(thing, "__qualname__", None) or type(thing).__qualname__
    return f"{module}.{name}"


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)


def _short(text: str) -> str:
    if len(text) <= _SHORT:
        return text
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]
