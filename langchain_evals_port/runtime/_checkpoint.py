"""The LangGraph checkpointer durable evaluations keep their steps in, chosen by the ledger.

A ``SqliteLedger`` keeps checkpoints in its own file (LangGraph's tables beside the ledger's),
a ``PostgresLedger`` in its database, and an ``InMemoryLedger`` in memory — so whatever storage
survives a restart for the ledger survives it for the steps too.

The tables are set up when the checkpointer opens, before any evaluation uses it (so even
deleting the thread of an evaluation that timed out before its first step finds them). On
PostgreSQL the application and its workers may open theirs at the same moment on a new
database; the setups take turns under an advisory lock. SQLite's own file lock serialises
theirs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from .ledger import Ledger

__all__ = ["open_checkpointer"]


@asynccontextmanager
async def open_checkpointer(ledger: Ledger) -> AsyncIterator[BaseCheckpointSaver[str]]:
    """An async checkpointer on the ledger's storage, open for the ``async with`` block (it
    belongs to the event loop that opened it)."""
    from .ledger._postgres import PostgresLedger, set_up_checkpoints
    from .ledger._sqlite import SqliteLedger

    if isinstance(ledger, SqliteLedger):
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        async with AsyncSqliteSaver.from_conn_string(str(ledger.path)) as saver:
            await saver.setup()
            yield saver
        return
    if isinstance(ledger, PostgresLedger):
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        async with AsyncPostgresSaver.from_conn_string(ledger.dsn) as saver:
            await set_up_checkpoints(saver)
            yield saver
        return
    from langgraph.checkpoint.memory import InMemorySaver

    yield InMemorySaver()
