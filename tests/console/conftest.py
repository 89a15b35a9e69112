"""Fixtures of the console tests: a SQLite ledger seeded with ``seed_small`` and a test client
of the console over it; one headless Chromium per module and a fresh tab per test for the
browser tests (``_browser``); the PostgreSQL ones live in ``_postgres_server``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from _browser import CHROMIUM, Tab
from _postgres_server import postgres_dsn
from _seed import seed_small

from langchain_evals_port.storage import SqliteLedger

if TYPE_CHECKING:
    from playwright.sync_api import Browser

__all__ = ["browser", "client", "ledger", "postgres_dsn", "tab"]


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[SqliteLedger]:
    """A SQLite ledger seeded with ``seed_small``."""
    ledger = SqliteLedger(tmp_path / "ledger.db")
    seed_small(ledger)
    yield ledger
    ledger.close()


@pytest.fixture
def client(ledger: SqliteLedger) -> Any:
    """Starlette's test client of the console over ``ledger`` (skips without the extra)."""
    pytest.importorskip("starlette", reason="the console extra is not installed")
    from starlette.testclient import TestClient

    from langchain_evals_port.console import create_app

    return TestClient(create_app(ledger), base_url="http://127.0.0.1")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the module."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def tab(browser: Browser) -> Iterator[Tab]:
    """A page in a fresh context: dialogs recorded and dismissed, and every request but those
    to 127.0.0.1 and local files aborted and recorded."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    opened = Tab(page)
    page.on("dialog", opened.on_dialog)
    page.route("**/*", opened.route)
    yield opened
    context.close()
