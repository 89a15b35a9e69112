"""``retried``: the SQL ledgers' calls that run again when the server connection was lost.

A call marked ``@retried`` is one statement or one transaction, safe to run again from the
start: its writes are idempotent (``ON CONFLICT DO NOTHING``) or fenced on a claim's token,
so a repeat of a write that did commit changes nothing (it reports the claim as lost, and
the record stands). The backend decides, in its ``_retry``, which failures mean a lost
connection and how long to wait for the server (``PostgresLedger``: a restart); a SQLite
file never loses one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Concatenate, ParamSpec, Protocol, TypeVar

__all__ = ["Reconnects", "retried"]

P = ParamSpec("P")
T = TypeVar("T")


class Reconnects(Protocol):
    """A ledger that can run a call again after losing its connection."""

    def _retry(self, call: Callable[[], T]) -> T:
        """``call()``, run again while it fails for a lost connection (as the backend sees
        fit); its result."""
        ...


R = TypeVar("R", bound=Reconnects)


def retried(method: Callable[Concatenate[R, P], T]) -> Callable[Concatenate[R, P], T]:
    """``method`` run through its ledger's ``_retry``: once more from the start after the
    connection was lost (a server restart), until the backend gives up."""

    @functools.wraps(method)
    def retrying(self: R, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._retry(functools.partial(method, self, *args, **kwargs))

    return retrying
