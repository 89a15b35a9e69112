"""Which chat model judges, and how to ask it for structured output.

A judge model is any LangChain ``BaseChatModel``, also wrapped by ``.bind(...)``,
``.with_retry(...)`` or ``.with_config(...)``, or a ``"provider:model"`` string resolved
with ``init_chat_model`` (the ``langchain`` extra). Evaluators built without a model use the
default judge: ``set_default_judge(model)`` or, failing that, the ``LANGCHAIN_EVALS_JUDGE``
environment variable (a ``"provider:model"`` string), read when the judge first runs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_core.caches import BaseCache
from langchain_core.globals import get_llm_cache
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable
from langchain_core.runnables.base import RunnableBindingBase

from langchain_evals_port.core.errors import EvaluatorInputError

from ._cache_layers import OutputSchemaKeyedCache, SampleKeyedCache

JudgeModel = BaseChatModel | Runnable[Any, Any] | str
"""A chat model, a wrapped chat model, or a ``"provider:model"`` string."""

ENV_VAR = "LANGCHAIN_EVALS_JUDGE"

# The one process-wide setting besides the ambient tracer scope: a suite or an application
# picks its judge once.
_default_judge: list[JudgeModel] = []

# "provider:model" strings resolved so far, so a default or environment judge is built once
# per process rather than once per evaluation.
_from_strings: dict[str, BaseChatModel] = {}

# Providers whose native structured output is a JSON schema in ``response_format``; the
# others get their own default method (usually tool calling).
_JSON_SCHEMA_PROVIDERS = frozenset({"openai", "azure", "azure_openai"})


def set_default_judge(model: JudgeModel | None) -> None:
    """Use ``model`` for every judge built without one (``None`` clears the default).

    Example:
        >>> from langchain_evals_port.testing import ScriptedChatModel
        >>> set_default_judge(ScriptedChatModel(responder=lambda m: {"score": True}))
        >>> set_default_judge(None)
    """
    _default_judge.clear()
    if model is not None:
        _default_judge.append(checked_model(model))


@dataclass
class ResolvedJudge:
    """A judge model with what is fixed about it, worked out once: its name for result
    metadata, the structured-output method to ask for, whether ``auto`` mode learnt that it
    rejects native structured output, and its structured-output runnable per schema."""

    model: Runnable[Any, Any]
    name: str
    method: str | None
    prompted: bool = False
    _structured: dict[int, Runnable[Any, Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, model: Runnable[Any, Any], method: str | None = None) -> ResolvedJudge:
        """Work out ``model``'s facts; ``method`` overrides the provider's native method."""
        return cls(model=model, name=model_name(model), method=method or native_method(model))

    def structured(self, schema: Any) -> Runnable[Any, Any]:
        """``with_structured_output(schema, include_raw=True)`` for this model, built once."""
        key = id(schema)
        if key not in self._structured:
            self._structured[key] = with_structured_output(self.model, schema, self.method)
        return self._structured[key]


def default_judge_configured() -> bool:
    """Whether evaluators built without a model have a judge to use (``set_default_judge``
    or the ``LANGCHAIN_EVALS_JUDGE`` environment variable)."""
    return bool(_default_judge) or bool(os.environ.get(ENV_VAR))


def resolve_judge(model: JudgeModel | None) -> Runnable[Any, Any]:
    """The runnable chat model to judge with: ``model``, the default judge, or the
    environment's; a clear error when there is none."""
    chosen: JudgeModel | None = model
    if chosen is None and _default_judge:
        chosen = _default_judge[0]
    if chosen is None:
        chosen = os.environ.get(ENV_VAR) or None
    if chosen is None:
        raise EvaluatorInputError(
            "no judge model: pass model=... to the evaluator, call "
            "langchain_evals_port.set_default_judge(model), or set "
            f"{ENV_VAR}='provider:model' (e.g. 'openai:gpt-4o-mini')"
        )
    checked = checked_model(chosen)
    if isinstance(checked, str):
        if checked not in _from_strings:
            _from_strings[checked] = _init_chat_model(checked)
        return _from_strings[checked]
    return checked


def chat_model_of(model: Runnable[Any, Any]) -> BaseChatModel | None:
    """The ``BaseChatModel`` inside ``.bind``/``.with_retry``/``.with_config`` wrappers."""
    while isinstance(model, RunnableBindingBase):
        model = model.bound
    return model if isinstance(model, BaseChatModel) else None


def model_name(model: Runnable[Any, Any]) -> str:
    """A name for the judge model, for result metadata."""
    chat = chat_model_of(model)
    if chat is None:
        return type(model).__name__
    params = chat._get_ls_params()
    return str(params.get("ls_model_name") or getattr(chat, "model_name", None) or chat._llm_type)


def native_method(model: Runnable[Any, Any]) -> str | None:
    """The ``with_structured_output`` method to ask for, or None for the provider's default."""
    chat = chat_model_of(model)
    if chat is not None and chat._get_ls_params().get("ls_provider") in _JSON_SCHEMA_PROVIDERS:
        return "json_schema"
    return None


def with_structured_output(
    model: Runnable[Any, Any], schema: Any, method: str | None
) -> Runnable[Any, Any]:
    """``model.with_structured_output(schema, include_raw=True)``, keeping what wrappers add.

    A ``RunnableBinding`` forwards ``with_structured_output`` to the bare model, which would
    silently drop ``.bind(...)`` arguments, and ``with_retry`` does not forward it at all. So
    wrappers are peeled off, bound arguments become the model's own settings, and the
    wrapper (its config, its retry policy) is put back around the structured runnable.
    Bound arguments that are not settings of the model cannot be kept, which is reported
    as ``NotImplementedError`` (so ``auto`` mode falls back to a prompted schema).
    """
    if isinstance(model, RunnableBindingBase):
        inner = model.bound
        if model.kwargs:
            inner = _with_settings(inner, model.kwargs)
        structured = with_structured_output(inner, schema, method)
        return model.model_copy(update={"bound": structured, "kwargs": {}})
    if not isinstance(model, BaseChatModel):
        raise NotImplementedError(f"{type(model).__name__} has no with_structured_output")
    kwargs: dict[str, Any] = {"include_raw": True}
    if method is not None:
        kwargs["method"] = method
    return _keyed_by_schema(model, schema).with_structured_output(schema, **kwargs)


def _keyed_by_schema(model: BaseChatModel, schema: Any) -> BaseChatModel:
    """``model``, or, when it answers from a cache and ``schema`` is a class, a copy whose
    cache also keys on the class's JSON schema (see ``OutputSchemaKeyedCache``). A schema
    given as a dict is in LangChain's key already, as are tools and every other parameter."""
    if isinstance(schema, dict) or model.cache is False:
        return model
    cache = model.cache if isinstance(model.cache, BaseCache) else get_llm_cache()
    if cache is None:
        return model
    return model.model_copy(update={"cache": OutputSchemaKeyedCache(cache, schema)})


def with_cache(model: JudgeModel, cache: BaseCache) -> Runnable[Any, Any]:
    """A copy of ``model`` whose chat model answers from ``cache``; ``model`` stays as it is.

    The copy keeps what wraps the chat model (``.bind``, ``.with_retry``, ``.with_config``)
    and shares its client; a ``"provider:model"`` string is resolved first. ``cache``
    replaces any cache the model had. LangChain consults it before every call and stores
    every successful reply, keyed by the messages, the model, its parameters and what is
    bound to it (tools, output format).

    Args:
        model: A chat model, possibly wrapped, or a ``"provider:model"`` string.
        cache: Any LangChain ``BaseCache``, e.g. ``SqliteCache(path)``.

    Raises:
        EvaluatorInputError: ``cache`` is not a ``BaseCache``, or there is no chat model
            inside ``model``.

    Example:
        >>> from langchain_core.caches import InMemoryCache
        >>> from langchain_evals_port.testing import ScriptedChatModel
        >>> model = ScriptedChatModel(responder=lambda messages: "Paris")
        >>> cached = with_cache(model, InMemoryCache())
        >>> [cached.invoke("Capital of France?").content for _ in range(3)]
        ['Paris', 'Paris', 'Paris']
        >>> len(model.calls), model.cache is None
        (1, True)
    """
    checked = checked_cache(cache)
    if isinstance(model, str):
        return with_cache(resolve_judge(model), checked)
    if isinstance(model, RunnableBindingBase):
        return model.model_copy(update={"bound": with_cache(model.bound, checked)})
    if isinstance(model, BaseChatModel):
        return model.model_copy(update={"cache": checked})
    raise EvaluatorInputError(
        "with_cache needs a LangChain chat model (a BaseChatModel, possibly wrapped by "
        f".bind, .with_retry or .with_config) or a 'provider:model' string, got "
        f"{type(model).__name__}"
    )


def keyed_by_sample(model: Runnable[Any, Any], sample: int) -> Runnable[Any, Any]:
    """A copy of ``model`` whose cache keys its replies also by ``sample`` (see
    ``SampleKeyedCache``), keeping what wraps the chat model; ``model`` stays as it is.

    The copy answers from the cache ``model`` would use — its own, or else LangChain's
    global one at call time — so repeated samples are cached like single calls. A model
    with ``cache=False``, and a runnable with no chat model inside (which LangChain does
    not cache), is returned as it is.
    """
    if isinstance(model, RunnableBindingBase):
        return model.model_copy(update={"bound": keyed_by_sample(model.bound, sample)})
    if not isinstance(model, BaseChatModel) or model.cache is False:
        return model
    own = model.cache if isinstance(model.cache, BaseCache) else None
    return model.model_copy(update={"cache": SampleKeyedCache(own, sample)})


def _with_settings(model: Runnable[Any, Any], settings: Mapping[str, Any]) -> Runnable[Any, Any]:
    if isinstance(model, RunnableBindingBase):
        return model.model_copy(update={"kwargs": {**model.kwargs, **settings}})
    if isinstance(model, BaseChatModel) and settings.keys() <= type(model).model_fields.keys():
        return model.model_copy(update=settings)
    raise NotImplementedError(
        f"bound arguments {sorted(settings)} are not settings of {type(model).__name__}, so "
        "they cannot be kept with native structured output"
    )


def checked_model(model: Any) -> str | Runnable[Any, Any]:
    """``model`` if it can judge (a Runnable chat model or a model string), else a clear error."""
    if isinstance(model, (str, Runnable)):
        return model
    raise EvaluatorInputError(
        "model must be a LangChain chat model (a BaseChatModel, possibly wrapped by .bind, "
        f".with_retry or .with_config) or a 'provider:model' string, got {type(model).__name__}"
    )


def checked_cache(cache: Any) -> BaseCache:
    """``cache`` if it is a LangChain cache, else a clear error."""
    if isinstance(cache, BaseCache):
        return cache
    raise EvaluatorInputError(
        "cache must be a LangChain cache (a langchain_core.caches.BaseCache such as "
        f"SqliteCache(path)), got {type(cache).__name__}"
    )


def _init_chat_model(spec: str) -> BaseChatModel:
    try:
        from langchain.chat_models import init_chat_model
    except ImportError as error:
        raise ImportError(
            f"resolving the judge model {spec!r} from a string needs the 'langchain' package: "
            "pip install 'langchain-evals-port[langchain]' (or pass a chat model instance)"
        ) from error
    try:
        return init_chat_model(spec)
    except ValueError as error:
        raise EvaluatorInputError(f"cannot resolve the judge model {spec!r}: {error}") from error
