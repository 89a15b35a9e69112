"""``SqlLedger``: what the SQL ledgers share, written once over the few parts a backend
supplies — its connections and the SQL fragments where the dialects differ.

Statements here use ``%s`` placeholders (psycopg's); the SQLite backend turns them into
``?``.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, ClassVar, Protocol

from langchain_evals_port.runtime._records import EvaluationRecord

from ._errors import LedgerSchemaError
from ._migrations import MIGRATIONS, SCHEMA_VERSION, Migration
from ._pages import decode_cursor, epoch

__all__ = ["Session", "SqlLedger", "evaluation_row", "keyset_filter"]

logger = logging.getLogger("langchain_evals_port.runtime")


class Session(Protocol):
    """Statements on one connection (inside a transaction when ``_transaction`` gave it)."""

    def rows(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of one statement."""

    def change(self, sql: str, parameters: Sequence[Any] = ()) -> int:
        """Run one statement; the rows it changed."""

    def change_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        """Run one statement for each of ``rows``; the rows they changed in all."""


class SqlLedger(ABC):
    """The part of the SQLite and PostgreSQL ledgers written once: the schema, brought to
    this release's version by ``setup()``.

    A backend supplies ``_connect`` and ``_transaction`` and the fragments below.
    """

    MIGRATIONS: ClassVar[tuple[Migration, ...]] = MIGRATIONS
    """The schema, version by version (the index is the version)."""

    _DIALECT: ClassVar[str]
    """The name the migrations give this backend's statements."""

    _HAS_TABLE: ClassVar[str]
    """A query of one row, one column: whether the table named by its parameter exists."""

    # --- what a backend supplies ------------------------------------------------------------

    @abstractmethod
    def _connect(self) -> AbstractContextManager[Session]:
        """A connection in autocommit mode: each statement commits by itself."""

    @abstractmethod
    def _transaction(self) -> AbstractContextManager[Session]:
        """A connection inside one transaction that keeps other writers of the rows it
        writes out, committed when the block ends normally."""

    def _lock_schema(self, tx: Session) -> None:  # noqa: B027 (optional: a hook, not abstract)
        """Make ledgers that set up the same storage at once take turns (the transaction
        alone does it here)."""

    def _unrecorded_version(self, session: Session) -> int:
        """The schema version of a storage whose ``ledger_schema`` records none: -1, none."""
        return -1

    def _record_version(self, tx: Session, version: int) -> None:
        """Record that the storage is at ``version``."""
        tx.change("INSERT INTO ledger_schema (version) VALUES (%s)", (version,))

    # --- the schema -------------------------------------------------------------------------

    def setup(self) -> None:
        """Create the ledger's tables, or migrate them to this release's schema; nothing to
        do when they are up to date. Ledgers (and processes) setting up the same storage at
        once take turns, and each migration runs once.

        Raises:
            LedgerSchemaError: The storage was set up by a newer release.
        """
        with self._transaction() as tx:
            self._lock_schema(tx)
            # The versions table first, as a SQLite file of release 0.1.0 has none.
            self._run(tx, self.MIGRATIONS[0])
            recorded = self._recorded_version(tx)
            found = self._unrecorded_version(tx) if recorded is None else recorded
            self._refuse_newer(found)
            if recorded is None and found >= 0:
                self._record_version(tx, found)  # kept elsewhere until now: recorded here too
            for version in range(found + 1, SCHEMA_VERSION + 1):
                migration = self.MIGRATIONS[version]
                logger.info("%r: schema version %d: %s", self, version, migration.summary)
                self._run(tx, migration)
                self._record_version(tx, version)

    def _prepare(self, setup: bool) -> None:
        """Run ``setup()``, or (``setup=False``) check that the schema is this release's."""
        if setup:
            self.setup()
            return
        with self._connect() as session:
            found = self._stored_version(session)
        self._refuse_newer(found)
        if found < SCHEMA_VERSION:
            raise LedgerSchemaError(
                f"{self!r} {_holding(found)}; this release needs schema version "
                f"{SCHEMA_VERSION}: call setup(), or open it without setup=False",
                found=found,
                expected=SCHEMA_VERSION,
            )

    def _run(self, tx: Session, migration: Migration) -> None:
        for statement in migration.statements(self._DIALECT):
            tx.change(statement)

    def _stored_version(self, session: Session) -> int:
        """The schema version the storage is at (-1: none), read without changing it."""
        recorded = self._recorded_version(session)
        return self._unrecorded_version(session) if recorded is None else recorded

    def _recorded_version(self, session: Session) -> int | None:
        """The last version ``ledger_schema`` records; ``None`` when it records none."""
        [(exists,)] = session.rows(self._HAS_TABLE, ("ledger_schema",))
        if not exists:
            return None
        [(version,)] = session.rows("SELECT max(version) FROM ledger_schema")
        return None if version is None else int(version)

    def _refuse_newer(self, found: int) -> None:
        if found > SCHEMA_VERSION:
            raise LedgerSchemaError(
                f"{self!r} {_holding(found)}; this release of langchain-evals-port knows "
                f"schema versions up to {SCHEMA_VERSION}: upgrade it to open this ledger",
                found=found,
                expected=SCHEMA_VERSION,
            )


def _holding(version: int) -> str:
    return "has no ledger tables" if version < 0 else f"has schema version {version}"


def keyset_filter(
    equal: Mapping[str, str | None],
    *,
    moment: str,
    key: str,
    since: datetime | None,
    until: datetime | None,
    cursor: str | None,
    placeholder: str,
) -> tuple[str, list[Any]]:
    """The ``WHERE`` clause (or ``""``) and parameters of a SQL ledger's keyset-paged query:
    columns equal to the values given (``None``: any), ``moment`` in ``[since, until)``, and
    after ``cursor`` in ``(moment, key)`` order; ``placeholder`` is the driver's (``?``, ``%s``)."""
    conditions = [
        f"{column} = {placeholder}" for column, value in equal.items() if value is not None
    ]
    parameters: list[Any] = [value for value in equal.values() if value is not None]
    if since is not None:
        conditions.append(f"{moment} >= {placeholder}")
        parameters.append(epoch(since))
    if until is not None:
        conditions.append(f"{moment} < {placeholder}")
        parameters.append(epoch(until))
    if cursor is not None:
        conditions.append(f"({moment}, {key}) > ({placeholder}, {placeholder})")
        parameters.extend(decode_cursor(cursor))
    return (f"WHERE {' AND '.join(conditions)}" if conditions else ""), parameters


def evaluation_row(record: EvaluationRecord) -> tuple[str, str, str, str, float, str]:
    """The columns a SQL ledger stores an evaluation record in: ids, time, the JSON."""
    return (
        record.evaluation_id,
        record.interaction_id,
        record.agent_id,
        record.evaluator_id,
        epoch(record.timestamp),
        record.model_dump_json(),
    )
