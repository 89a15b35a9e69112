"""``judge_defaults``: a cache and a rate limiter for judge models, for a scope.

Judges are built inside other evaluators (trajectory, graph, code and JSON rubric judges),
so a setting on one judge object does not reach them all. ``judge_defaults`` sets them for a
block instead, in a context variable: it follows asyncio tasks and LangChain's thread pools
(which copy the context), and it reaches only the models the package calls as judges — the
application's own model calls in the same block are left as they are.

``judge_model`` is where every judge model is worked out before it is called: by
``LLMJudge`` (and so every judge built on it) and by the code extractor's ``"llm"``
strategy.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from langchain_core.caches import BaseCache
from langchain_core.language_models import BaseChatModel
from langchain_core.rate_limiters import BaseRateLimiter
from langchain_core.runnables import Runnable
from langchain_core.runnables.base import RunnableBindingBase

from langchain_evals_port.core.errors import EvaluatorInputError

from ._cache_layers import AcceptedRepliesCache
from ._model import JudgeModel, checked_cache, resolve_judge, with_cache

# A long scope that sees a new judge model per evaluation must not keep them all.
_MAX_DERIVED = 64


@dataclass(eq=False)
class JudgeDefaults:
    """What ``judge_defaults`` set, and the judge models derived under it so far.

    Derived models are kept per (model, judge's own cache), so a model is copied once per
    scope rather than once per call (the oldest go beyond ``_MAX_DERIVED``); the original
    model and cache are held with the copy, so a reused ``id`` is never mistaken for them.
    """

    cache: BaseCache | None
    rate_limiter: BaseRateLimiter | None
    _derived: dict[tuple[int, int], tuple[Any, Any, Runnable[Any, Any]]] = field(
        default_factory=dict
    )
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def derive(self, model: Runnable[Any, Any], own_cache: BaseCache | None) -> Runnable[Any, Any]:
        """``model`` with the judge's own cache or this scope's, and this scope's limiter."""
        key = (id(model), id(own_cache))
        with self._lock:
            found = self._derived.get(key)
        if found is not None and found[0] is model and found[1] is own_cache:
            return found[2]
        derived = self._apply(model, own_cache)
        with self._lock:
            if len(self._derived) >= _MAX_DERIVED:
                self._derived.pop(next(iter(self._derived)))
            self._derived[key] = (model, own_cache, derived)
        return derived

    def _apply(self, model: Runnable[Any, Any], own_cache: BaseCache | None) -> Runnable[Any, Any]:
        if isinstance(model, RunnableBindingBase):
            return model.model_copy(update={"bound": self._apply(model.bound, own_cache)})
        if not isinstance(model, BaseChatModel):
            warnings.warn(
                f"judge_defaults cannot reach the judge model {type(model).__name__}: it is "
                "not a LangChain chat model (a BaseChatModel, possibly wrapped by .bind, "
                ".with_retry or .with_config), so it runs without the scope's cache and rate "
                "limiter",
                RuntimeWarning,
                stacklevel=4,
            )
            return model if own_cache is None else with_cache(model, own_cache)
        update: dict[str, Any] = {}
        # A judge's own cache wins; a model with a cache of its own (or cache=False) keeps it.
        if own_cache is not None:
            update["cache"] = AcceptedRepliesCache(own_cache)
        elif self.cache is not None and model.cache is None:
            update["cache"] = AcceptedRepliesCache(self.cache)
        if self.rate_limiter is not None and model.rate_limiter is None:
            update["rate_limiter"] = self.rate_limiter
        return model.model_copy(update=update) if update else model


_defaults: ContextVar[JudgeDefaults | None] = ContextVar("judge_defaults", default=None)


@contextmanager
def judge_defaults(
    *, cache: BaseCache | None = None, rate_limiter: BaseRateLimiter | None = None
) -> Iterator[None]:
    """Give every judge model called in the block a cache and a rate limiter.

    Every model the package calls as a judge — by ``LLMJudge`` and the judges built on it
    (``TrajectoryLLMJudge``, ``GraphTrajectoryLLMJudge``, ``CodeLLMJudge``, the rubric
    judges of ``JsonMatch``) and by the code extractor's ``"llm"`` strategy — answers from
    ``cache`` and waits for ``rate_limiter``, by way of a copy of the chat model with
    LangChain's ``cache`` and ``rate_limiter`` fields set (the model passed in stays as it
    is). Other model calls in the block, such as the application's, are not touched.

    A judge given its own ``cache=`` keeps it, and a chat model with a ``cache`` or a
    ``rate_limiter`` of its own (also ``cache=False``) keeps that. Only replies the judge
    accepts are stored, so a re-run does not get an unusable reply from the cache again.
    A nested block inherits what it does not set. The setting is a context variable: it
    holds in asyncio tasks started in the block and in the worker threads of LangChain's
    ``batch`` (which copy the context), not in threads started by hand. A judge model that
    is not a chat model (e.g. a ``RunnableLambda``) cannot be copied with a cache and runs
    without them, with a ``RuntimeWarning``.

    Args:
        cache: A LangChain ``BaseCache``, e.g. ``SqliteCache(path)``; None: no default cache
            (or the enclosing block's).
        rate_limiter: A LangChain ``BaseRateLimiter``, e.g. ``InMemoryRateLimiter(...)``,
            consulted before each judge call that the cache does not answer; None: none (or
            the enclosing block's).

    Example:
        >>> from langchain_core.caches import InMemoryCache
        >>> from langchain_evals_port.judge import LLMJudge
        >>> from langchain_evals_port.testing import ScriptedChatModel
        >>> model = ScriptedChatModel([{"reasoning": "One word.", "score": True}])
        >>> judge = LLMJudge(prompt="Is this concise? {outputs}", model=model)
        >>> with judge_defaults(cache=InMemoryCache()):
        ...     scores = [judge(outputs="Paris")["score"] for _ in range(3)]
        >>> scores, len(model.calls)
        ([True, True, True], 1)
    """
    enclosing = _defaults.get()
    if cache is not None:
        checked_cache(cache)
    elif enclosing is not None:
        cache = enclosing.cache
    if rate_limiter is not None:
        checked_rate_limiter(rate_limiter)
    elif enclosing is not None:
        rate_limiter = enclosing.rate_limiter
    token = _defaults.set(JudgeDefaults(cache, rate_limiter))
    try:
        yield
    finally:
        _defaults.reset(token)


def current_defaults() -> JudgeDefaults | None:
    """The ``judge_defaults`` in force here, or None."""
    return _defaults.get()


def judge_model(
    model: JudgeModel | None,
    *,
    cache: BaseCache | None = None,
    defaults: JudgeDefaults | None = None,
) -> Runnable[Any, Any]:
    """The runnable a judge calls: ``model`` (or the default judge), answering from the
    judge's own ``cache`` or else ``defaults``' cache, and waiting for ``defaults``' rate
    limiter (``defaults``: those in force here when not given)."""
    resolved = resolve_judge(model)
    if defaults is None:
        defaults = current_defaults()
    if defaults is None:
        return resolved if cache is None else with_cache(resolved, AcceptedRepliesCache(cache))
    return defaults.derive(resolved, cache)


def checked_rate_limiter(rate_limiter: Any) -> BaseRateLimiter:
    """``rate_limiter`` if it is a LangChain rate limiter, else a clear error."""
    if isinstance(rate_limiter, BaseRateLimiter):
        return rate_limiter
    raise EvaluatorInputError(
        "rate_limiter must be a LangChain rate limiter (a "
        "langchain_core.rate_limiters.BaseRateLimiter such as InMemoryRateLimiter), got "
        f"{type(rate_limiter).__name__}"
    )
