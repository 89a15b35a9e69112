"""``open_ledger``: the SQL ledger a location names."""

from __future__ import annotations

from pathlib import Path

from ._postgres import PostgresLedger
from ._protocol import Ledger
from ._sqlite import SqliteLedger

__all__ = ["open_ledger"]


def open_ledger(location: str | Path) -> Ledger:
    """The ledger at ``location``: a ``postgresql://`` (or ``postgres://``) DSN opens a
    ``PostgresLedger``, anything else is the path of a ``SqliteLedger`` file."""
    if isinstance(location, str) and location.startswith(("postgresql://", "postgres://")):
        return PostgresLedger(location)
    return SqliteLedger(location)
