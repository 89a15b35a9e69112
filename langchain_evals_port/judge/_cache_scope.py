"""What a judge's model call tells the caches below it: the labels ``SqliteCache`` stores
entries with, and the writes held back until the judge accepts a reply."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from langchain_core.caches import BaseCache
from langchain_core.outputs import Generation

__all__ = [
    "CacheLabels",
    "HeldWrite",
    "astore",
    "current_labels",
    "held_writes",
    "holding",
    "labelled",
    "store",
]


@dataclass(frozen=True)
class CacheLabels:
    """What an entry is labelled with: the feedback key of the judge that stored it and its
    prompt template (a catalog prompt's text, a template string, a chat prompt's
    ``pretty_repr``, or a prompt function's qualified name)."""

    judge: str | None
    prompt: str | None


# The labels of the judge whose model calls run here (None outside a judge's call).
_labels: ContextVar[CacheLabels | None] = ContextVar("judge_cache_labels", default=None)


@contextmanager
def labelled(labels: CacheLabels | None) -> Iterator[None]:
    """Label what a ``SqliteCache`` stores during the block with ``labels``."""
    token = _labels.set(labels)
    try:
        yield
    finally:
        _labels.reset(token)


def current_labels() -> CacheLabels | None:
    """The labels of the judge whose model call runs here, or None outside one."""
    return _labels.get()


@dataclass(frozen=True)
class HeldWrite:
    """A write to ``cache`` held back until the judge accepts a reply."""

    cache: BaseCache
    prompt: str
    llm_string: str
    generations: Sequence[Generation]


# The writes held back during the current judge model call (None outside one). A context
# variable, so concurrent calls (threads, asyncio tasks) each hold their own.
_held: ContextVar[list[HeldWrite] | None] = ContextVar("judge_cache_held_writes", default=None)


@contextmanager
def held_writes() -> Iterator[list[HeldWrite]]:
    """Hold back what ``AcceptedRepliesCache`` is asked to store during the block; the list
    of held writes is given to ``store`` once the judge accepts a reply."""
    held: list[HeldWrite] = []
    token = _held.set(held)
    try:
        yield held
    finally:
        _held.reset(token)


def holding() -> list[HeldWrite] | None:
    """The writes held back by the ``held_writes`` block around this call, or None outside
    one (writes then go straight through)."""
    return _held.get()


def store(held: Sequence[HeldWrite]) -> None:
    """Make the writes held back during a conversation that ended with an accepted reply."""
    for write in held:
        write.cache.update(write.prompt, write.llm_string, write.generations)


async def astore(held: Sequence[HeldWrite]) -> None:
    """The async twin of ``store``."""
    for write in held:
        await write.cache.aupdate(write.prompt, write.llm_string, write.generations)
