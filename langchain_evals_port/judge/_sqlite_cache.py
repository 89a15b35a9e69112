"""``SqliteCache``: LangChain's model cache in one SQLite file that threads and processes
share, writing on the event loop's behalf from a thread of its own."""

from __future__ import annotations

import atexit
import json
import os
import sqlite3
import threading
import warnings
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.caches import BaseCache
from langchain_core.load import dumpd
from langchain_core.outputs import Generation

from langchain_evals_port.core._sqlite import switch_to_wal

from ._cache_entries import entry_key, has_reply, restore, unrestorable
from ._cache_scope import current_labels

__all__ = ["SqliteCache"]

# How the file is used: in WAL mode, so readers never wait for a writer, with a connection
# per thread (of each process); a writer waits up to ``busy_timeout`` seconds for another
# process's write. On the event loop (``alookup``, ``aupdate``) a lookup reads the file in
# place, as a key read never waits, and a write is handed to a thread of the cache that
# stores what gathered while it wrote in one transaction: measured, a hop to a worker thread
# and a commit per call cost more CPU than the judge call around them
# (``benchmarks/bench_experiments.py``). Entries still being written answer lookups in this
# process; a process writes them before it exits (``flush``). Entries live in a table whose
# name carries the format version: a release that stores replies differently uses a new
# table, so releases sharing a file never read each other's entries.
_TABLE = "llm_cache_v1"


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

    An entry is kept under a SHA-256 of the call's messages (``prompt``) and the model with
    its parameters (``llm_string``), and labelled with the judge that stored it (its feedback
    key) and its prompt template, so ``remove`` can clear one judge's or one prompt's
    entries. Replies are stored with langchain-core's own serialization and read back as
    generations and AI messages only, so an entry can never build anything else; a reply
    that would not read back the same, and an empty one, is not stored.

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
        key = entry_key(prompt, llm_string)
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
            return restore(text)
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
            self._store({entry_key(prompt, llm_string): _entry(text)})

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
            self._file.pending[entry_key(prompt, llm_string)] = _entry(text)
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
        if not return_val or not all(has_reply(generation) for generation in return_val):
            return None
        text = json.dumps([dumpd(generation) for generation in return_val])
        problem = unrestorable(json.loads(text))
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


_Entry = tuple[str, str | None, str | None]
"""An entry as stored: the replies' text, the judge's key and the prompt (labels)."""


def _entry(text: str) -> _Entry:
    labels = current_labels()
    return (text, None, None) if labels is None else (text, labels.judge, labels.prompt)


_WRITER_IDLE = 1.0
"""Seconds the writer thread waits for more writes before it ends."""


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
