"""Every ledger of the package passes the shipped contract suite
(``langchain_evals_port.storage.contract``), which others run on ledgers of their own.

A new ledger of the package joins by adding one factory to ``FACTORIES`` (it may call
``pytest.skip`` when its server is not available).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _postgres_server import open_postgres_ledger

from langchain_evals_port.runtime import InMemoryLedger, Ledger, SqliteLedger
from langchain_evals_port.storage.contract import LedgerContract

FACTORIES: dict[str, Callable[[Path], Ledger]] = {
    "memory": lambda folder: InMemoryLedger(),
    "sqlite": lambda folder: SqliteLedger(folder / "ledger.db"),
    # A fresh schema per test on LANGCHAIN_EVALS_PG_DSN; skips (fails under CI) without one.
    "postgres": open_postgres_ledger,
}


@pytest.fixture(params=list(FACTORIES))
def ledger(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Ledger]:
    ledger = FACTORIES[request.param](tmp_path)
    yield ledger
    ledger.close()


class TestLedgerContract(LedgerContract):
    """The contract, on the in-memory, SQLite and PostgreSQL ledgers."""
