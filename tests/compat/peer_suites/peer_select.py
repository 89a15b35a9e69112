"""A pytest plugin for the inner run of ``test_peer_suites.py``: with ``PEER_SUITE_SELECT``
naming a file of node ids, only those tests run (the others are deselected), so a test file
that cannot be imported is an error of its own instead of ending the selection."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep the selected node ids only."""
    select = os.environ.get("PEER_SUITE_SELECT")
    if not select:
        return
    wanted = set(Path(select).read_text(encoding="utf-8").splitlines())
    config.hook.pytest_deselected(items=[item for item in items if item.nodeid not in wanted])
    items[:] = [item for item in items if item.nodeid in wanted]
