"""Caches that wrap another ``BaseCache`` and change one thing about it: refresh, count,
store only accepted replies, or key by an output schema or a sample number."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from typing import Any

from langchain_core.caches import BaseCache
from langchain_core.globals import get_llm_cache
from langchain_core.outputs import Generation
from langchain_core.utils.function_calling import convert_to_json_schema

from ._cache_scope import HeldWrite, holding

__all__ = [
    "AcceptedRepliesCache",
    "CountingCache",
    "ForwardingCache",
    "OutputSchemaKeyedCache",
    "RefreshingCache",
    "SampleKeyedCache",
]


class ForwardingCache(BaseCache):
    """A cache that passes every call on to ``cache``; a layer overrides what it changes.

    ``cache`` None stands for LangChain's global cache (``set_llm_cache``) at call time;
    without one, a lookup misses and a write is dropped.
    """

    cache: BaseCache | None

    def __init__(self, cache: BaseCache | None) -> None:
        self.cache = cache

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.cache!r})"

    def _wrapped(self) -> BaseCache | None:
        return self.cache if self.cache is not None else get_llm_cache()

    def lookup(self, prompt: str, llm_string: str) -> Sequence[Generation] | None:
        """The wrapped cache's entry."""
        cache = self._wrapped()
        return None if cache is None else cache.lookup(prompt, llm_string)

    def update(self, prompt: str, llm_string: str, return_val: Sequence[Generation]) -> None:
        """The wrapped cache's ``update``."""
        cache = self._wrapped()
        if cache is not None:
            cache.update(prompt, llm_string, return_val)

    def clear(self, **kwargs: Any) -> None:
        """Clear the wrapped cache."""
        cache = self._wrapped()
        if cache is not None:
            cache.clear(**kwargs)

    async def alookup(self, prompt: str, llm_string: str) -> Sequence[Generation] | None:
        """The wrapped cache's ``alookup``."""
        cache = self._wrapped()
        return None if cache is None else await cache.alookup(prompt, llm_string)

    async def aupdate(self, prompt: str, llm_string: str, return_val: Sequence[Generation]) -> None:
        """The wrapped cache's ``aupdate``."""
        cache = self._wrapped()
        if cache is not None:
            await cache.aupdate(prompt, llm_string, return_val)

    async def aclear(self, **kwargs: Any) -> None:
        """The wrapped cache's ``aclear``."""
        cache = self._wrapped()
        if cache is not None:
            await cache.aclear(**kwargs)


class RefreshingCache(ForwardingCache):
    """``cache`` in refresh mode: every lookup misses, so each call goes to the model, and
    its reply is written over the entry it replaces (``--judge-cache=refresh``; a normal run
    afterwards answers with the new replies).

    Example:
        >>> from langchain_core.caches import InMemoryCache
        >>> from langchain_core.outputs import Generation
        >>> kept = InMemoryCache()
        >>> kept.update("prompt", "model", [Generation(text="old")])
        >>> refreshing = RefreshingCache(kept)
        >>> refreshing.lookup("prompt", "model") is None
        True
        >>> refreshing.update("prompt", "model", [Generation(text="new")])
        >>> kept.lookup("prompt", "model")
        [Generation(text='new')]
    """

    cache: BaseCache

    def __init__(self, cache: BaseCache) -> None:
        super().__init__(cache)

    def lookup(self, prompt: str, llm_string: str) -> Sequence[Generation] | None:
        """Nothing: the model is asked again."""
        return None

    async def alookup(self, prompt: str, llm_string: str) -> Sequence[Generation] | None:
        """Nothing: the model is asked again."""
        return None


class CountingCache(ForwardingCache):
    """A cache that counts its lookups answered (``hits``) and not (``misses``: calls the
    model then made), around another; an experiment reports them after a run."""

    cache: BaseCache

    def __init__(self, cache: BaseCache) -> None:
        super().__init__(cache)
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()

    def _count(self, found: Sequence[Generation] | None) -> Sequence[Generation] | None:
        with self._lock:
            if found is None:
                self.misses += 1
            else:
                self.hits += 1
        return found

    def lookup(self, prompt: str, llm_string: str) -> Sequence[Generation] | None:
        """The wrapped cache's entry, counted."""
        return self._count(super().lookup(prompt, llm_string))

    async def alookup(self, prompt: str, llm_string: str) -> Sequence[Generation] | None:
        """The wrapped cache's ``alookup``, counted."""
        return self._count(await super().alookup(prompt, llm_string))


class AcceptedRepliesCache(ForwardingCache):
    """``cache``, storing a judge's replies only once the judge has accepted its answer.

    LangChain stores every successful reply, also one the judge then rejects (no JSON, no
    score): were the repair rejected too, a re-run would get the same replies from the
    cache and fail the same way, forever. While a judge's conversation with its model runs
    (``held_writes``), this cache holds back what LangChain stores; the judge stores it all
    (``store``) when the conversation ends with a reply it accepts, so a re-run replays the
    conversation whole, repairs included, and drops it when the conversation fails. Outside
    a judge's conversation, writes go straight through.
    """

    cache: BaseCache

    def __init__(self, cache: BaseCache) -> None:
        super().__init__(cache)

    def update(self, prompt: str, llm_string: str, return_val: Sequence[Generation]) -> None:
        """Hold the write back during a judge's call, else write to the wrapped cache."""
        held = holding()
        if held is None:
            super().update(prompt, llm_string, return_val)
        else:
            held.append(HeldWrite(self.cache, prompt, llm_string, return_val))

    async def aupdate(self, prompt: str, llm_string: str, return_val: Sequence[Generation]) -> None:
        """Hold the write back during a judge's call, else the wrapped cache's ``aupdate``."""
        held = holding()
        if held is None:
            await super().aupdate(prompt, llm_string, return_val)
        else:
            held.append(HeldWrite(self.cache, prompt, llm_string, return_val))


class _KeySuffixCache(ForwardingCache):
    """A cache around another, keying every entry also by a suffix of ``llm_string``; with
    ``cache`` None, a model that would have answered from the global cache still does, under
    the suffix."""

    def __init__(self, cache: BaseCache | None, suffix: str) -> None:
        super().__init__(cache)
        self._suffix = suffix

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.cache!r}, {self._suffix!r})"

    def lookup(self, prompt: str, llm_string: str) -> Sequence[Generation] | None:
        """The wrapped cache's entry for ``llm_string`` with the suffix."""
        return super().lookup(prompt, llm_string + self._suffix)

    def update(self, prompt: str, llm_string: str, return_val: Sequence[Generation]) -> None:
        """Store in the wrapped cache under ``llm_string`` with the suffix."""
        super().update(prompt, llm_string + self._suffix, return_val)

    async def alookup(self, prompt: str, llm_string: str) -> Sequence[Generation] | None:
        """The wrapped cache's ``alookup`` for ``llm_string`` with the suffix."""
        return await super().alookup(prompt, llm_string + self._suffix)

    async def aupdate(self, prompt: str, llm_string: str, return_val: Sequence[Generation]) -> None:
        """The wrapped cache's ``aupdate`` under ``llm_string`` with the suffix."""
        await super().aupdate(prompt, llm_string + self._suffix, return_val)


class OutputSchemaKeyedCache(_KeySuffixCache):
    """``cache``, keyed also by an output schema class's JSON schema.

    LangChain's ``llm_string`` holds the keyword arguments bound to a model as their
    ``repr``; for a pydantic or ``TypedDict`` class given to ``with_structured_output``
    (``ChatOpenAI``'s ``response_format`` on the native path) that is its bare name,
    ``<class 'app.Verdict'>``, so a changed class would get replies made for the old one.
    The schema's digest, appended to ``llm_string``, tells them apart.
    """

    def __init__(self, cache: BaseCache, schema: type) -> None:
        schema_json = json.dumps(convert_to_json_schema(schema), sort_keys=True)
        super().__init__(
            cache, "---output_schema:" + hashlib.sha256(schema_json.encode()).hexdigest()
        )


class SampleKeyedCache(_KeySuffixCache):
    """``cache`` (None: LangChain's global cache), keyed also by a judge's sample number.

    ``LLMJudge(samples=k)`` asks its model the same messages k times. LangChain's cache key
    is the messages and the model's parameters (``llm_string``), the same for every sample,
    so a cache would answer all k with one reply. Samples after the first append their
    number to ``llm_string`` instead: each sample is a call of its own on the first run and
    its own reply on a re-run. The first sample keeps the plain key, which a judge asking
    once uses too.
    """

    def __init__(self, cache: BaseCache | None, sample: int) -> None:
        super().__init__(cache, f"---judge_sample:{sample}")
