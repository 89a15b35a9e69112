"""Opening SQLite files that several processes share (the judge cache, the SQLite ledger)."""

from __future__ import annotations

import sqlite3
import time

__all__ = ["switch_to_wal"]


def switch_to_wal(db: sqlite3.Connection, timeout: float) -> None:
    """Put the file of ``db`` in WAL mode, waiting up to ``timeout`` seconds for other
    connections.

    When several processes open the same new file at once, SQLite can answer "database is
    locked" to the mode switch at once, without waiting for the busy timeout (measured: one
    of four processes failed now and then), so the switch is retried until ``timeout``.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)
