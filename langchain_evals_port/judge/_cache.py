"""``SqliteCache``: LangChain's model cache in one SQLite file that processes share.

It is a ``langchain_core.caches.BaseCache``, so it works wherever LangChain takes a cache:
``LLMJudge(cache=...)``, ``with_cache(model, cache)``, a chat model's own ``cache=`` or
``set_llm_cache``. LangChain looks a call up before it reaches the provider and stores the
reply after a successful one, keyed by the call's messages (``prompt``) and the model with
its parameters and bound tools or output format (``llm_string``). An entry is kept under a
SHA-256 of the two, so a long prompt costs 32 bytes of key. A judge adds what LangChain's
key misses: the JSON schema of an output schema class (``OutputSchemaKeyedCache``) and the
number of a repeated sample (``SampleKeyedCache``).

Each entry is labelled with the judge that stored it (its feedback key) and its prompt
template (``labelled``, which ``LLMJudge`` sets around its model calls), so ``remove`` can
clear one judge's or one prompt's entries; ``RefreshingCache`` asks the model every time and
writes the new replies over the old ones.

Replies are stored with langchain-core's own serialization (``dumpd``) and read back with
``load`` restricted to generation and AI-message classes, so an entry can never build
anything else. A reply that would not read back the same, and an empty one (no content and
no tool calls), is not stored.

The file is in WAL mode, so readers never wait for a writer, and each thread (of each
process) has its own connection; a writer waits up to ``busy_timeout`` seconds for another
process's write. On the event loop (``alookup``, ``aupdate``) a lookup reads the file in
place, as a key read never waits, and a write is handed to a thread of the cache that stores
what gathered while it wrote in one transaction: measured, a hop to a worker thread and a
commit per call cost more CPU than the judge call around them (``benchmarks/bench_experiments.py``).
Entries still being written answer lookups in this process; a process writes them before it
exits (``flush``). Entries live in a table whose name carries the format version
(``llm_cache_v1``): a release that stores replies differently uses a new table, so releases
sharing a file never read each other's entries.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import sqlite3
import threading
import warnings
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.caches import BaseCache
from langchain_core.globals import get_llm_cache
from langchain_core.load import dumpd, load
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import (
    ChatGeneration,
    ChatGenerationChunk,
    Generation,
    GenerationChunk,
)
from langchain_core.utils.function_calling import convert_to_json_schema

from langchain_evals_port.core._langchain_internals import suppress_langchain_beta_warning
from langchain_evals_port.core._sqlite import switch_to_wal

__all__ = ["CacheLabels", "RefreshingCache", "SqliteCache", "labelled"]

_TABLE = "llm_cache_v1"

_RESTORABLE = (
    Generation,
    GenerationChunk,
    ChatGeneration,
    ChatGenerationChunk,
    AIMessage,
    AIMessageChunk,
)
"""The only classes an entry may hold: what chat models and LLMs reply with."""


class _Connection:
    """One thread's connection; closed when its thread or its cache lets go of it, but never
    from a forked child, which must not touch its parent's connection."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.pid = os.getpid()

    def __del__(self) -> None:
        if self.pid == os.getpid():
            self.db.close()


class SqliteCache(BaseCache):
    """A LangChain cache of model replies in a SQLite file, shared by threads and processes.

    LangChain consults it before each model call and stores each successful reply, so a
    re-run with the same messages, model and parameters makes no model calls. Give it to a
    judge (``LLMJudge(cache=SqliteCache(path))``), to any chat model (``with_cache(model,
    cache)``, ``ChatOpenAI(..., cache=cache)``) or to all (``set_llm_cache``). ``alookup``
    reads in place (a read never waits for a writer); ``aupdate`` hands the write to the
    cache's writer thread and returns, so a busy file never blocks the event loop, and
    ``flush`` waits for those writes (the process does at exit).

    Args:
        path: The database file (relative to the current directory when the cache is
            made); created with its table when missing. Its directory must exist.
        busy_timeout: Seconds a write waits for another process's write before giving up
            (the reply is then used but not stored, with a ``RuntimeWarning``).

    Attributes:
        path: The database file, as an absolute path.

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from langchain_core.outputs import Generation
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     cache = SqliteCache(Path(folder) / "judge-cache.db")
        ...     cache.update("prompt", "model", [Generation(text="Paris")])
        ...     print(cache.lookup("prompt", "model"), cache.lookup("prompt", "other model"))
        [Generation(text='Paris')] None
    """

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout: float = 30.0) -> None:
        # Absolute, so a thread that connects after a change of directory finds the file.
        self.path = Path(path).absolute()
        if str(path) == ":memory:":
            raise ValueError(
                "SqliteCache needs a file that its connections share; for a cache in memory "
                "use langchain_core.caches.InMemoryCache"
            )
        if not self.path.parent.is_dir():
            raise ValueError(
                f"cache path {str(self.path)!r}: directory {str(self.path.parent)!r} does not exist"
            )
        self._busy_timeout = busy_timeout
        self._local = threading.local()
        with _files_lock:
            shared = _files.get(self.path)
            if shared is None:
                shared = _files[self.path] = _File()
        self._file = shared
        _open_caches.add(self)
        try:
            db = self._db()
            switch_to_wal(db, busy_timeout)
            db.execute(
                f"CREATE TABLE IF NOT EXISTS {_TABLE} "
                "(key BLOB PRIMARY KEY, generations TEXT NOT NULL, judge TEXT, prompt TEXT) "
                "WITHOUT ROWID"
            )
            columns = {row[1] for row in db.execute(f"PRAGMA table_info({_TABLE})")}
        except sqlite3.DatabaseError as error:  # SQLite's message names no file
            raise type(error)(
                f"cache {str(self.path)!r}: {error}; if the file is damaged, delete it (the "
                "judges are then asked again)"
            ) from error
        for column in ("judge", "prompt"):
            if column not in columns:  # a file of an earlier release: its entries unlabelled
                try:
                    db.execute(f"ALTER TABLE {_TABLE} ADD COLUMN {column} TEXT")
                except sqlite3.OperationalError as error:
                    if "duplicate column" not in str(error):  # another process added it
                        raise

    def __repr__(self) -> str:
        return f"SqliteCache({str(self.path)!r})"

    def _db(self) -> sqlite3.Connection:
        """This thread's connection, opened on first use (and anew in a forked child)."""
        held: _Connection | None = getattr(self._local, "held", None)
        if held is None or held.pid != os.getpid():
            db = sqlite3.connect(
                self.path,
                timeout=self._busy_timeout,
                isolation_level=None,
                # Its thread uses it; the cache's garbage collection may close it elsewhere.
                check_same_thread=False,
            )
            # Safe in WAL mode: a crash loses nothing committed; a power loss may lose the
            # last replies, which a cache can afford.
            db.execute("PRAGMA synchronous = NORMAL")
            held = self._local.held = _Connection(db)
        return held.db

    def lookup(self, prompt: str, llm_string: str) -> list[Generation] | None:
        """The replies stored for ``prompt`` and ``llm_string``, or None.

        An entry that cannot be read back (written by another version of langchain-core,
        or altered) counts as a miss, with a ``RuntimeWarning``; the reply then replaces it.
        """
        key = _key(prompt, llm_string)
        with self._file.changed:
            entry = self._file.pending.get(key)
        text = None if entry is None else entry[0]
        if text is None:
            row = (
                self._db()
                .execute(f"SELECT generations FROM {_TABLE} WHERE key = ?", (key,))
                .fetchone()
            )
            if row is None:
                return None
            text = row[0]
        try:
            return _restore(text)
        except (ValueError, NotImplementedError) as error:
            warnings.warn(
                f"cache {str(self.path)!r}: an entry cannot be read back ({error}); "
                "calling the model instead",
                RuntimeWarning,
                stacklevel=2,
            )
            return None

    def update(self, prompt: str, llm_string: str, return_val: Sequence[Generation]) -> None:
        """Store ``return_val`` for ``prompt`` and ``llm_string``.

        Nothing is stored for an empty reply (no generations, or one with neither content
        nor tool calls) or one that would not read back as it is (it holds objects
        langchain-core cannot serialize; a ``RuntimeWarning`` says so). When another
        process holds the file past ``busy_timeout``, the reply is not stored either, with
        a ``RuntimeWarning``: a cache must not fail a model call that succeeded.
        """
        text = self._storable(return_val)
        if text is not None:
            self._store({_key(prompt, llm_string): _entry(text)})

    async def alookup(self, prompt: str, llm_string: str) -> list[Generation] | None:
        """``lookup``, in place: a read of one key never waits for a writer."""
        return self.lookup(prompt, llm_string)

    async def aupdate(self, prompt: str, llm_string: str, return_val: Sequence[Generation]) -> None:
        """``update``, written by the cache's writer thread: this returns at once, and the
        entry answers lookups in this process from then on."""
        text = self._storable(return_val)
        if text is None:
            return
        with self._file.changed:
            self._file.pending[_key(prompt, llm_string)] = _entry(text)
            if self._file.writer is None or not self._file.writer.is_alive():
                self._file.writer = threading.Thread(
                    target=self._write_pending, name="SqliteCache writer", daemon=True
                )
                self._file.writer.start()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until the writes ``aupdate`` handed over are stored (at most ``timeout``
        seconds); whether they are."""
        with self._file.changed:
            return self._file.changed.wait_for(lambda: not self._file.pending, timeout)

    def _write_pending(self) -> None:
        """The writer thread: store what is pending, a batch per transaction, until nothing
        is left."""
        while True:
            with self._file.changed:
                # Kept a moment for the next burst: a new thread opens a new connection.
                self._file.changed.wait_for(lambda: bool(self._file.pending), _WRITER_IDLE)
                batch = dict(self._file.pending)
                if not batch:
                    self._file.writer = None
                    return
            self._store(batch)
            with self._file.changed:
                for key, entry in batch.items():
                    if self._file.pending.get(key) is entry:
                        del self._file.pending[key]
                self._file.changed.notify_all()

    def _storable(self, return_val: Sequence[Generation]) -> str | None:
        """``return_val`` as stored, or None when it is not to be stored (with a warning
        when it would not read back)."""
        if not return_val or not all(_has_reply(generation) for generation in return_val):
            return None
        text = json.dumps([dumpd(generation) for generation in return_val])
        problem = _unrestorable(json.loads(text))
        if problem is not None:
            warnings.warn(
                f"cache {str(self.path)!r}: a reply is not stored because it would not read "
                f"back ({problem})",
                RuntimeWarning,
                stacklevel=3,
            )
            return None
        return text

    def _store(self, entries: dict[bytes, _Entry]) -> None:
        """Write ``entries`` in one transaction; a file busy past ``busy_timeout`` is a
        warning (a cache must not fail a model call that succeeded)."""
        db = self._db()
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany(
                    f"INSERT OR REPLACE INTO {_TABLE} (key, generations, judge, prompt) "
                    "VALUES (?, ?, ?, ?)",
                    [(key, *entry) for key, entry in entries.items()],
                )
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        except sqlite3.OperationalError as error:
            warnings.warn(
                f"cache {str(self.path)!r}: {len(entries)} "
                f"{'reply' if len(entries) == 1 else 'replies'} not stored ({error}); the next "
                "run calls the model again",
                RuntimeWarning,
                stacklevel=3,
            )

    def clear(self, **kwargs: Any) -> None:
        """Remove every entry (of every process using the file), or with ``judge=`` and/or
        ``prompt=`` those ``remove`` removes."""
        unknown = sorted(kwargs.keys() - {"judge", "prompt"})
        if unknown:
            raise TypeError(
                f"SqliteCache.clear() takes judge= and prompt= (or nothing, to remove every "
                f"entry), got {unknown}"
            )
        if kwargs:
            self.remove(**kwargs)
            return
        self.flush()
        self._db().execute(f"DELETE FROM {_TABLE}")

    def remove(self, *, judge: str | None = None, prompt: str | None = None) -> int:
        """Remove the entries stored by the judge with feedback key ``judge`` and/or whose
        prompt template contains ``prompt`` (both: the entries of both); how many.

        Entries of an earlier release, and of models called outside a judge, carry no
        labels: only ``clear()`` removes them.
        """
        if judge is None and prompt is None:
            raise TypeError("SqliteCache.remove() needs judge= or prompt= (clear() removes all)")
        conditions, values = [], []
        if judge is not None:
            conditions.append("judge = ?")
            values.append(judge)
        if prompt is not None:
            conditions.append("instr(prompt, ?) > 0")
            values.append(prompt)
        self.flush()
        cursor = self._db().execute(
            f"DELETE FROM {_TABLE} WHERE {' AND '.join(conditions)}", values
        )
        return cursor.rowcount

    def judges(self) -> dict[str, int]:
        """The judges (feedback keys) with entries in the file, with how many each."""
        self.flush()
        rows = self._db().execute(
            f"SELECT judge, count(*) FROM {_TABLE} WHERE judge IS NOT NULL GROUP BY judge "
            "ORDER BY judge"
        )
        return dict(rows)


class RefreshingCache(BaseCache):
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

    def __init__(self, cache: BaseCache) -> None:
        self.cache = cache

    def __repr__(self) -> str:
        return f"RefreshingCache({self.cache!r})"

    def lookup(self, prompt: str, llm_string: str) -> Sequence[Generation] | None:
        """Nothing: the model is asked again."""
        return None

    def update(self, prompt: str, llm_string: str, return_val: Sequence[Generation]) -> None:
        """Write the new reply over the old one in the wrapped cache."""
        self.cache.update(prompt, llm_string, return_val)

    def clear(self, **kwargs: Any) -> None:
        """Clear the wrapped cache."""
        self.cache.clear(**kwargs)

    async def alookup(self, prompt: str, llm_string: str) -> Sequence[Generation] | None:
        """Nothing: the model is asked again."""
        return None

    async def aupdate(self, prompt: str, llm_string: str, return_val: Sequence[Generation]) -> None:
        """The wrapped cache's ``aupdate``."""
        await self.cache.aupdate(prompt, llm_string, return_val)

    async def aclear(self, **kwargs: Any) -> None:
        """The wrapped cache's ``aclear``."""
        await self.cache.aclear(**kwargs)


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


_Entry = tuple[str, str | None, str | None]
"""An entry as stored: the replies' text, the judge's key and the prompt (labels)."""


def _entry(text: str) -> _Entry:
    labels = _labels.get()
    return (text, None, None) if labels is None else (text, labels.judge, labels.prompt)


class _KeySuffixCache(BaseCache):
    """A cache around another, keying every entry also by a suffix of ``llm_string``.

    ``cache`` None stands for LangChain's global cache (``set_llm_cache``) at call time, so
    a model that would have answered from the global cache still does, under the suffix.
    """

    def __init__(self, cache: BaseCache | None, suffix: str) -> None:
        self.cache = cache
        self._suffix = suffix

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.cache!r}, {self._suffix!r})"

    def _target(self) -> BaseCache | None:
        return self.cache if self.cache is not None else get_llm_cache()

    def lookup(self, prompt: str, llm_string: str) -> Sequence[Generation] | None:
        """The wrapped cache's entry for ``llm_string`` with the suffix."""
        cache = self._target()
        return None if cache is None else cache.lookup(prompt, llm_string + self._suffix)

    def update(self, prompt: str, llm_string: str, return_val: Sequence[Generation]) -> None:
        """Store in the wrapped cache under ``llm_string`` with the suffix."""
        cache = self._target()
        if cache is not None:
            cache.update(prompt, llm_string + self._suffix, return_val)

    def clear(self, **kwargs: Any) -> None:
        """Clear the wrapped cache."""
        cache = self._target()
        if cache is not None:
            cache.clear(**kwargs)

    async def alookup(self, prompt: str, llm_string: str) -> Sequence[Generation] | None:
        """The wrapped cache's ``alookup`` for ``llm_string`` with the suffix."""
        cache = self._target()
        return None if cache is None else await cache.alookup(prompt, llm_string + self._suffix)

    async def aupdate(self, prompt: str, llm_string: str, return_val: Sequence[Generation]) -> None:
        """The wrapped cache's ``aupdate`` under ``llm_string`` with the suffix."""
        cache = self._target()
        if cache is not None:
            await cache.aupdate(prompt, llm_string + self._suffix, return_val)

    async def aclear(self, **kwargs: Any) -> None:
        """The wrapped cache's ``aclear``."""
        cache = self._target()
        if cache is not None:
            await cache.aclear(**kwargs)


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


def _key(prompt: str, llm_string: str) -> bytes:
    # The prompt is JSON text (LangChain's ``dumps`` of the messages), which never holds a
    # raw NUL, so the separator keeps every pair of strings apart.
    return hashlib.sha256(f"{prompt}\0{llm_string}".encode()).digest()


def _has_reply(generation: Generation) -> bool:
    """Whether a generation says something: content or tool calls (for a chat model), text
    (for an LLM)."""
    if isinstance(generation, ChatGeneration):
        message = generation.message
        return bool(message.content) or bool(getattr(message, "tool_calls", None))
    return bool(generation.text)


_RESTORABLE_IDS = {tuple(kind.lc_id()) for kind in _RESTORABLE}

_WRITER_IDLE = 1.0
"""Seconds the writer thread waits for more writes before it ends."""


def _unrestorable(value: Any) -> str | None:
    """Why serialized generations would not read back (an object langchain-core could not
    serialize, or one ``_restore`` does not build), or None: a walk of the JSON, which costs
    a fraction of reading it back."""
    if isinstance(value, list):
        return next(filter(None, map(_unrestorable, value)), None)
    if not isinstance(value, dict):
        return None
    if value.get("lc") == 1 and "type" in value:
        ident = tuple(value.get("id") or ())
        if value["type"] == "not_implemented":
            return f"{'.'.join(ident)} cannot be serialized"
        if value["type"] == "constructor" and ident not in _RESTORABLE_IDS:
            return f"{'.'.join(ident)} is not a generation or an AI message"
        return _unrestorable(value.get("kwargs", {}))
    return next(filter(None, map(_unrestorable, value.values())), None)


class _File:
    """What every ``SqliteCache`` on one file in this process shares: the writes ``aupdate``
    handed over, by key, until the writer thread stored them (so a second cache on the file
    sees them too), and that thread."""

    def __init__(self) -> None:
        self.pending: dict[bytes, _Entry] = {}
        self.changed = threading.Condition()
        self.writer: threading.Thread | None = None


_files: weakref.WeakValueDictionary[Path, _File] = weakref.WeakValueDictionary()
_files_lock = threading.Lock()


def _flush_open_caches() -> None:
    """At exit: store what ``aupdate`` handed over, waiting each cache's busy timeout."""
    for cache in list(_open_caches):
        cache.flush(cache._busy_timeout)


_open_caches: weakref.WeakSet[SqliteCache] = weakref.WeakSet()
atexit.register(_flush_open_caches)


def _restore(text: str) -> list[Generation]:
    """The generations stored as ``text``; ``ValueError`` when it is not a list of them."""
    with suppress_langchain_beta_warning():
        generations = load(json.loads(text), allowed_objects=_RESTORABLE)
    if not isinstance(generations, list) or not all(
        isinstance(generation, Generation) for generation in generations
    ):
        raise ValueError(f"expected a list of generations, got {type(generations).__name__}")
    return generations


class AcceptedRepliesCache(BaseCache):
    """``cache``, storing a judge's replies only once the judge has accepted its answer.

    LangChain stores every successful reply, also one the judge then rejects (no JSON, no
    score): were the repair rejected too, a re-run would get the same replies from the
    cache and fail the same way, forever. While a judge's conversation with its model runs
    (``held_writes``), this cache holds back what LangChain stores; the judge stores it all
    (``store``) when the conversation ends with a reply it accepts, so a re-run replays the
    conversation whole, repairs included, and drops it when the conversation fails. Outside
    a judge's conversation, writes go straight through.
    """

    def __init__(self, cache: BaseCache) -> None:
        self.cache = cache

    def __repr__(self) -> str:
        return f"AcceptedRepliesCache({self.cache!r})"

    def lookup(self, prompt: str, llm_string: str) -> Sequence[Generation] | None:
        """The wrapped cache's entry."""
        return self.cache.lookup(prompt, llm_string)

    def update(self, prompt: str, llm_string: str, return_val: Sequence[Generation]) -> None:
        """Hold the write back during a judge's call, else write to the wrapped cache."""
        held = _held.get()
        if held is None:
            self.cache.update(prompt, llm_string, return_val)
        else:
            held.append(HeldWrite(self.cache, prompt, llm_string, return_val))

    def clear(self, **kwargs: Any) -> None:
        """Clear the wrapped cache."""
        self.cache.clear(**kwargs)

    async def alookup(self, prompt: str, llm_string: str) -> Sequence[Generation] | None:
        """The wrapped cache's ``alookup``."""
        return await self.cache.alookup(prompt, llm_string)

    async def aupdate(self, prompt: str, llm_string: str, return_val: Sequence[Generation]) -> None:
        """Hold the write back during a judge's call, else the wrapped cache's ``aupdate``."""
        held = _held.get()
        if held is None:
            await self.cache.aupdate(prompt, llm_string, return_val)
        else:
            held.append(HeldWrite(self.cache, prompt, llm_string, return_val))

    async def aclear(self, **kwargs: Any) -> None:
        """The wrapped cache's ``aclear``."""
        await self.cache.aclear(**kwargs)


class CountingCache(BaseCache):
    """A cache that counts its lookups answered (``hits``) and not (``misses``: calls the
    model then made), around another; an experiment reports them after a run."""

    def __init__(self, cache: BaseCache) -> None:
        self.cache = cache
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"CountingCache({self.cache!r})"

    def _count(self, found: Sequence[Generation] | None) -> Sequence[Generation] | None:
        with self._lock:
            if found is None:
                self.misses += 1
            else:
                self.hits += 1
        return found

    def lookup(self, prompt: str, llm_string: str) -> Sequence[Generation] | None:
        """The wrapped cache's entry, counted."""
        return self._count(self.cache.lookup(prompt, llm_string))

    def update(self, prompt: str, llm_string: str, return_val: Sequence[Generation]) -> None:
        """The wrapped cache's ``update``."""
        self.cache.update(prompt, llm_string, return_val)

    def clear(self, **kwargs: Any) -> None:
        """Clear the wrapped cache."""
        self.cache.clear(**kwargs)

    async def alookup(self, prompt: str, llm_string: str) -> Sequence[Generation] | None:
        """The wrapped cache's ``alookup``, counted."""
        return self._count(await self.cache.alookup(prompt, llm_string))

    async def aupdate(self, prompt: str, llm_string: str, return_val: Sequence[Generation]) -> None:
        """The wrapped cache's ``aupdate``."""
        await self.cache.aupdate(prompt, llm_string, return_val)

    async def aclear(self, **kwargs: Any) -> None:
        """The wrapped cache's ``aclear``."""
        await self.cache.aclear(**kwargs)


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


def store(held: Sequence[HeldWrite]) -> None:
    """Make the writes held back during a conversation that ended with an accepted reply."""
    for write in held:
        write.cache.update(write.prompt, write.llm_string, write.generations)


async def astore(held: Sequence[HeldWrite]) -> None:
    """The async twin of ``store``."""
    for write in held:
        await write.cache.aupdate(write.prompt, write.llm_string, write.generations)
