"""``open_storage``: the SQL ledger a location names (``open_ledger``, its old name, warns)."""

from __future__ import annotations

import os
import re
import warnings
from typing import overload

from ._postgres import PostgresLedger
from ._sql import SqlLedger
from ._sqlite import SqliteLedger

__all__ = ["is_dsn", "open_ledger", "open_storage"]

_DSN = ("postgresql://", "postgres://")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def is_dsn(location: str | os.PathLike[str]) -> bool:
    """Whether ``location`` is a PostgreSQL DSN (``postgresql://`` or ``postgres://``), not
    the path of a SQLite file."""
    return isinstance(location, str) and location.startswith(_DSN)


@overload
def open_storage(location: os.PathLike[str]) -> SqliteLedger: ...


@overload
def open_storage(location: str) -> SqlLedger: ...


def open_storage(location: str | os.PathLike[str]) -> SqlLedger:
    """The ledger at ``location``, its schema set up: a ``postgresql://`` (or
    ``postgres://``) DSN opens a ``PostgresLedger`` (the ``postgres`` extra), a path a
    ``SqliteLedger`` file (created when missing; its folder must exist).

    Raises:
        ValueError: ``location`` is a URL of another kind (``sqlite:///x.db``: give the
            file's path, ``x.db``), or a path whose folder does not exist.
        LedgerSchemaError: The storage was set up by a newer release.

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     ledger = open_storage(Path(folder) / "evals.db")
        ...     print(type(ledger).__name__, ledger.dialect)
        ...     ledger.close()
        SqliteLedger sqlite
    """
    if isinstance(location, str):
        if is_dsn(location):
            return PostgresLedger(location)
        if _URL.match(location):
            scheme = location.split("://", 1)[0]
            raise ValueError(
                f"storage location {scheme}://...: expected a postgresql:// DSN or the path "
                "of a SQLite file (for SQLite give the file's path, not a sqlite:// URL)"
            )
    return SqliteLedger(location)


def open_ledger(location: str | os.PathLike[str]) -> SqlLedger:
    """Deprecated: ``open_storage(location)``, under its name of before (kept for one
    release, with a ``DeprecationWarning``)."""
    warnings.warn(
        "open_ledger is deprecated; use langchain_evals_port.storage.open_storage",
        DeprecationWarning,
        stacklevel=2,
    )
    return open_storage(location)
