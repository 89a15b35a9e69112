"""Every ledger of the package passes the shipped contract suite
(``langchain_evals_port.runtime.ledger.contract``), which others run on ledgers of their own.

A new ledger of the package joins by adding one factory to ``FACTORIES`` (it may call
``pytest.skip`` when its server is not available).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _postgres_server import open_postgres_ledger

from langchain_evals_port.runtime import InMemoryLedger, Ledger, SqliteLedger
from langchain_evals_port.runtime.ledger.contract import LedgerContract

ROOT = Path(__file__).resolve().parents[2]

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


def test_the_runtime_imports_without_pytest() -> None:
    # The contract needs pytest; a user who never runs it must not need pytest installed.
    code = (
        "import sys\n"
        "sys.modules['pytest'] = None  # not installed\n"
        "import langchain_evals_port.runtime, langchain_evals_port.runtime.ledger\n"
        "from langchain_evals_port.runtime import open_ledger, SqliteLedger, PostgresLedger\n"
        "print('imported')\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "imported"
