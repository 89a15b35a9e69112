"""``LeasedQueue``: the one leased, fenced queue of the SQL ledgers, which both modes take
their work from.

The online runtime's work units (``ledger_work``: ``SqlLedger.claim``, ``heartbeat``,
``complete``, ``release``, ``reclaim_expired``) and the runs of offline experiments
(``ledger_experiment_runs``: ``claim_runs``, ``renew_runs``, ``write_runs``,
``release_runs``, ``release_runs_of``, ``run_holders``) are two ``LeasedQueue`` values over
one implementation. A value describes its table: the key columns that name a row (the
leading ``scope`` columns name a queue within the table: an experiment's runs), the order
claims take rows in, the columns a claim reads back, the column before which a free row is
not due, and the condition that a row is still queued (a finished run stays in its table; a
completed unit is deleted from its). The rules, the same for both:

- **Claim.** Up to ``limit`` due rows — free (and past their ``not_before``), or held under a
  lease that expired — are taken in the queue's order, in one transaction that raises each
  row's fencing token and sets its worker and lease. Rows another claimer is taking at that
  moment are passed over: ``FOR UPDATE SKIP LOCKED`` on PostgreSQL (the store's
  ``_SKIP_LOCKED``); a SQLite transaction keeps other claimers out.
- **Fence.** Every later write of a claim (``renew``, ``write``, ``release``, ``remove``)
  names the row and the token it holds, and changes the row only while the row is still
  queued and claimed with that token. A worker whose lease expired and was taken over
  changes nothing and learns so (False, or a count short of its claims), so a row is
  written, finished or removed by one holder only.
- **Lock order.** A transaction that writes several rows writes them in key order (an
  experiment's runs: case id, then trial), one order everywhere, so two transactions writing
  the same rows (a run renewed while it is finished, a run taken over) wait for each other
  instead of deadlocking; a row's own writes keep their order.
- **One statement or one transaction.** A write of one row is one statement that commits by
  itself (the store's ``_change``); one of several rows is one transaction. Either runs
  again from the start after a lost connection, a deadlock (40P01) or a serialization
  failure (40001): the store's ``_retry`` (``PostgresLedger``) decides. A repeat is safe: a
  fenced write that did commit finds its token gone or its row let go, and changes nothing.
- **Let go.** ``release`` (and a write that lets go) clears the worker and lease: the row is
  claimable at once, or — with the columns that end it, such as a run's ``finished_at`` —
  finished for good. ``release_of`` lets go every row of a holder known to be gone.

Worker ids are opaque here; both modes name their claims with ``Holder``'s format
(``storage.Holder``), which ``holders`` lists back so a process can tell which are gone.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar

from ._pages import check_limit

if TYPE_CHECKING:
    from ._sql import Session

__all__ = ["Held", "Leased", "LeasedQueue", "QueueStore", "Write", "check_lease"]

T = TypeVar("T")


def check_lease(lease_seconds: float) -> None:
    """Reject a lease that is not a positive number of seconds, naming the argument."""
    if isinstance(lease_seconds, bool) or not isinstance(lease_seconds, (int, float)):
        raise ValueError(f"lease_seconds must be a positive number, got {lease_seconds!r}")
    if not lease_seconds > 0:
        raise ValueError(f"lease_seconds must be a positive number, got {lease_seconds!r}")


class QueueStore(Protocol):
    """What a queue needs of its ledger: statements, transactions, retries and the dialect's
    ``SKIP LOCKED``."""

    @property
    def _SKIP_LOCKED(self) -> str:
        """Ends a claim's query of due rows: how claimers pass over the rows another is
        taking (nothing, where the transaction keeps other claimers out)."""
        ...

    def _rows(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of one statement."""
        ...

    def _change(self, sql: str, parameters: Sequence[Any] = ()) -> int:
        """Run one statement, atomic on its own (run again after a lost connection); the
        rows it changed."""
        ...

    def _transaction(self) -> AbstractContextManager[Session]:
        """A connection inside one transaction, committed when the block ends normally."""
        ...

    def _retry(self, call: Callable[[], T]) -> T:
        """``call()``, run again from the start where the backend sees fit (a lost
        connection, a transaction the server rolled back)."""
        ...


_NO_VALUES: Mapping[str, Any] = MappingProxyType({})
"""A write that sets no column (a release)."""


class Held(NamedTuple):
    """A claim's hold on one row: the row's key (its values of the queue's ``key``
    columns, scope first) and the fencing token the claim holds. (This and the other
    records of a queue's traffic are named tuples: made several times per row, a frozen
    dataclass's field-by-field ``__init__`` cost more than the row's SQL.)"""

    key: tuple[Any, ...]
    token: int


class Leased(NamedTuple):
    """A row a claim took: its key, the token the claim now holds, the values of the
    columns the queue ``carries``, and when the lease ends (epoch seconds)."""

    key: tuple[Any, ...]
    token: int
    carried: tuple[Any, ...]
    lease_until: float


class Write(NamedTuple):
    """A write made under a claim: the columns it sets, and whether it lets the row go
    (clears the worker and the lease: with ``values`` that end the row, it is finished;
    otherwise it is claimable again)."""

    held: Held
    values: Mapping[str, Any] = _NO_VALUES
    let_go: bool = False


@dataclass(frozen=True)
class LeasedQueue:
    """A table used as a leased, fenced queue (the module docstring has the rules).

    Attributes:
        table: The table.
        key: The columns that name a row, ``scope`` first: the lock order too.
        order: The ``ORDER BY`` list claims take due rows in.
        carries: The columns a claim reads back with each row.
        scope: The leading ``key`` columns that name one queue within the table (an
            experiment's runs); a claim, ``holders`` and ``release_of`` take their values.
        not_before: The column before whose time a free row is not due (``None``: none).
        queued: The condition that a row is still in the queue (``""``: every row is; a
            table whose finished rows stay names what finished them).

    Example:
        >>> runs = LeasedQueue("runs", key=("experiment", "run"), order="position",
        ...                    carries=("work",), scope=("experiment",), queued="done IS NULL")
        >>> for condition in runs.fence.split(" AND "):
        ...     print(condition)
        experiment = %s
        run = %s
        token = %s
        worker IS NOT NULL
        done IS NULL
    """

    table: str
    key: tuple[str, ...]
    order: str
    carries: tuple[str, ...]
    scope: tuple[str, ...] = ()
    not_before: str | None = None
    queued: str = ""

    def __post_init__(self) -> None:
        if self.key[: len(self.scope)] != self.scope:
            raise ValueError(f"the scope {self.scope} must lead the key {self.key}")

    # --- the SQL, built once per queue -------------------------------------------------------

    @functools.cached_property
    def fence(self) -> str:
        """The condition of every write made under a claim: the row named by its key, still
        queued, claimed with the token named."""
        return f"{self._named(self.key)} AND token = %s AND worker IS NOT NULL{self._and_queued}"

    @functools.cached_property
    def _and_queued(self) -> str:
        return f" AND {self.queued}" if self.queued else ""

    @functools.cached_property
    def _due(self) -> str:
        """The query of due rows (parameters: the scope, now, now, the limit)."""
        free = "worker IS NULL"
        if self.not_before is not None:
            free = f"({free} AND {self.not_before} <= %s)"
        where = [*([self._named(self.scope)] if self.scope else [])]
        where += [self.queued] if self.queued else []
        due = f"{free} OR (worker IS NOT NULL AND lease_until <= %s)"
        where.append(f"({due})" if where else due)
        return (
            f"SELECT {', '.join((*self.key, 'token', *self.carries))} FROM {self.table}"
            f" WHERE {' AND '.join(where)} ORDER BY {self.order} LIMIT %s"
        )

    @functools.cached_property
    def _take(self) -> str:
        return (
            f"UPDATE {self.table} SET worker = %s, token = token + 1, lease_until = %s"
            f" WHERE {self._named(self.key)}"
        )

    @functools.cached_property
    def _renew(self) -> str:
        return f"UPDATE {self.table} SET lease_until = %s WHERE {self.fence}"

    @functools.cached_property
    def _remove(self) -> str:
        return f"DELETE FROM {self.table} WHERE {self.fence}"

    def _update(self, columns: Sequence[str], let_go: bool) -> str:
        key = (tuple(columns), let_go)
        sql = self._updates.get(key)
        if sql is None:
            sets = [f"{column} = %s" for column in columns]
            sets += ["worker = NULL", "lease_until = NULL"] if let_go else []
            sql = self._updates[key] = (
                f"UPDATE {self.table} SET {', '.join(sets)} WHERE {self.fence}"
            )
        return sql

    @functools.cached_property
    def _updates(self) -> dict[tuple[tuple[str, ...], bool], str]:
        """The writes' statements made so far, by the columns they set (a queue's writes set
        one of a few column lists)."""
        return {}

    def _in_scope(self, condition: str) -> str:
        """``condition`` on the rows of one queue of the table that are still queued."""
        scoped = f"{self._named(self.scope)} AND " if self.scope else ""
        return f"{scoped}{condition}{self._and_queued}"

    @staticmethod
    def _named(columns: Sequence[str]) -> str:
        return " AND ".join(f"{column} = %s" for column in columns)

    # --- claims ------------------------------------------------------------------------------

    def claim(
        self,
        store: QueueStore,
        scope: Sequence[Any],
        worker_id: str,
        *,
        limit: int,
        lease_seconds: float,
    ) -> list[Leased]:
        """Claim up to ``limit`` due rows of the queue ``scope`` names for ``worker_id``, in
        the queue's order; rows another claimer is taking at that moment are passed over."""
        check_limit(limit)
        check_lease(lease_seconds)
        scope = tuple(scope)

        def claim() -> list[Leased]:
            with store._transaction() as tx:
                now = time.time()
                if self.not_before is None:
                    parameters: tuple[Any, ...] = (*scope, now, limit)
                else:
                    parameters = (*scope, now, now, limit)
                due = tx.rows(self._due + store._SKIP_LOCKED, parameters)
                lease_until = now + lease_seconds
                width = len(self.key)
                tx.change_many(self._take, [(worker_id, lease_until, *row[:width]) for row in due])
            return [
                Leased(tuple(row[:width]), int(row[width]) + 1, row[width + 1 :], lease_until)
                for row in due
            ]

        return store._retry(claim)

    def renew(
        self, store: QueueStore, held: Sequence[Held], *, lease_seconds: float
    ) -> tuple[int, float]:
        """Extend the leases of ``held`` rows still held; the number renewed, and when
        their leases now end."""
        check_lease(lease_seconds)
        lease_until = time.time() + lease_seconds
        return self._fenced(store, self._renew, [(lease_until,)] * len(held), held), lease_until

    def write(self, store: QueueStore, writes: Sequence[Write]) -> list[bool]:
        """Apply ``writes``, in one transaction when there are several, each while its claim
        holds; for each, whether it did (False: the claim was lost)."""
        if not writes:
            return []
        if len(writes) == 1:
            [one] = writes
            sql = self._update(list(one.values), one.let_go)
            return [store._change(sql, (*one.values.values(), *one.held.key, one.held.token)) == 1]

        def write() -> list[bool]:
            done = [False] * len(writes)
            with store._transaction() as tx:
                for index in sorted(range(len(writes)), key=lambda i: writes[i].held.key):
                    each = writes[index]
                    sql = self._update(list(each.values), each.let_go)
                    fence = (*each.held.key, each.held.token)
                    done[index] = tx.change(sql, (*each.values.values(), *fence)) == 1
            return done

        return store._retry(write)

    def release(self, store: QueueStore, held: Sequence[Held]) -> int:
        """Let ``held`` rows still held go, claimable at once; the number released."""
        return self._fenced(store, self._update((), let_go=True), [()] * len(held), held)

    def remove(self, tx: Session, held: Held) -> bool:
        """Delete a row while its claim holds, inside the caller's transaction (which writes
        what the row's work produced); whether it did."""
        return tx.change(self._remove, (*held.key, held.token)) == 1

    def _fenced(
        self,
        store: QueueStore,
        sql: str,
        values: Sequence[tuple[Any, ...]],
        held: Sequence[Held],
    ) -> int:
        """Run ``sql`` (its values, then the fence) for each of ``held``: one statement for
        one row, one transaction in lock order for several; the rows it changed."""
        rows = [(*value, *each.key, each.token) for value, each in zip(values, held, strict=True)]
        if len(rows) <= 1:
            return sum(store._change(sql, row) for row in rows)
        rows.sort(key=lambda row: row[len(values[0]) : -1])

        def change() -> int:
            with store._transaction() as tx:
                return tx.change_many(sql, rows)

        return store._retry(change)

    # --- holders -----------------------------------------------------------------------------

    def holders(self, store: QueueStore, scope: Sequence[Any]) -> list[str]:
        """The workers holding rows of the queue ``scope`` names (leases expired or not)."""
        rows = store._rows(
            f"SELECT DISTINCT worker FROM {self.table}"
            f" WHERE {self._in_scope('worker IS NOT NULL')}",
            tuple(scope),
        )
        return [str(worker) for (worker,) in rows]

    def release_of(self, store: QueueStore, scope: Sequence[Any], worker_id: str) -> int:
        """Let go every row ``worker_id`` holds in the queue ``scope`` names (it is known to
        be gone); the number released."""
        return store._change(
            f"UPDATE {self.table} SET worker = NULL, lease_until = NULL"
            f" WHERE {self._in_scope('worker = %s')}",
            (*scope, worker_id),
        )

    def reclaim_expired(self, store: QueueStore, scope: Sequence[Any] = ()) -> int:
        """Let go the rows whose lease expired, claimable again; the number reclaimed."""
        return store._change(
            f"UPDATE {self.table} SET worker = NULL, lease_until = NULL"
            f" WHERE {self._in_scope('worker IS NOT NULL AND lease_until <= %s')}",
            (*scope, time.time()),
        )
