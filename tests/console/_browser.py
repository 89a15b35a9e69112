"""What the console's browser tests share: a real uvicorn server in a thread, a tab of headless
Chromium (Playwright) with the network cut off, and screenshots kept as artefacts and checked
non-blank. The ``browser`` and ``tab`` fixtures are in ``conftest.py``.

A module of browser tests sets ``pytestmark = needs_a_browser()``: without Chromium or
Playwright its tests skip, loudly; under ``CI=true`` they fail.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest
from _png import distinct_rows

if TYPE_CHECKING:
    from playwright.sync_api import Page, Response

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

ARTEFACTS = (
    Path(os.environ["LANGCHAIN_EVALS_ARTEFACTS"]) / "console"
    if os.environ.get("LANGCHAIN_EVALS_ARTEFACTS")
    else Path(__file__).parent / "artefacts"
)


def missing() -> str | None:
    """Why the browser tests cannot run here, or ``None``."""
    if CHROMIUM is None:
        return "chromium is not installed"
    for module, package in (("playwright", "playwright"), ("uvicorn", "the console extra")):
        if importlib.util.find_spec(module) is None:
            return f"{package} is not installed"
    return None


def needs_a_browser() -> pytest.MarkDecorator:
    """The ``pytestmark`` of a browser test module: skip without a browser, fail in CI."""
    reason = missing()
    if reason is not None and os.environ.get("CI") == "true":
        # A skipped browser suite is a failure in CI.
        pytest.fail(f"{reason}: the console was NOT checked in a browser (CI=true)", pytrace=False)
    return pytest.mark.skipif(
        reason is not None, reason=f"{reason}: the console was NOT checked in a browser"
    )


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """``app`` served by uvicorn on a free port of 127.0.0.1 in a thread; its base URL."""
    import uvicorn

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    # The lifespan warms the console up before it serves, as the command's does.
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    while not server.started:  # uvicorn stops (and the thread ends) if it cannot start
        assert thread.is_alive(), "uvicorn stopped while starting"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        listener.close()


@dataclass
class Tab:
    """A page in a fresh browser context, with what it did besides rendering."""

    page: Page
    dialogs: list[str] = field(default_factory=list)
    """The message of every dialog (``alert``, ``confirm``...) a page opened."""
    elsewhere: list[str] = field(default_factory=list)
    """Every request to a host other than 127.0.0.1 (aborted: the network is off)."""
    local: list[str] = field(default_factory=list)
    """The paths requested from 127.0.0.1."""
    files: list[str] = field(default_factory=list)
    """The ``file://`` addresses requested (a report opened from disk)."""

    def on_dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def route(self, route: Any) -> None:
        """Let 127.0.0.1 and local files through, and abort (and record) everything else."""
        url = urlsplit(route.request.url)
        if url.scheme == "file":
            self.files.append(route.request.url)
            route.continue_()
        elif url.hostname == "127.0.0.1":
            self.local.append(url.path)
            route.continue_()
        else:
            self.elsewhere.append(route.request.url)
            route.abort()


def screenshot(page: Page, name: str) -> None:
    """Keep the page's screenshot as an artefact; it must not be blank."""
    data = page.screenshot(full_page=True)
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    (ARTEFACTS / f"{name}.png").write_bytes(data)
    assert distinct_rows(data) > 10, f"the screenshot of {name} is blank"


def status(response: Response | None) -> int:
    """A navigation's HTTP status (it must have had a response)."""
    assert response is not None, "the navigation had no response"
    return response.status


def charts_render(page: Page) -> int:
    """Wait until every chart holds Plotly's SVG; how many charts there are."""
    charts = page.locator("figure.chart")
    for n in range(charts.count()):
        charts.nth(n).locator("svg.main-svg").first.wait_for(timeout=10_000)
    return charts.count()


def overlaps(page: Page) -> list[str]:
    """What covers or cuts a chart's text, for every chart of the page (hovered, so Plotly's
    mode bar shows): the mode bar over the title, a tick label or axis title outside the
    chart."""
    problems: list[str] = []
    charts = page.locator("figure.chart")
    for n in range(charts.count()):
        chart = charts.nth(n)
        chart.hover()
        problems += chart.evaluate(
            """figure => {
                const box = element => element.getBoundingClientRect();
                const meets = (a, b) => a.left < b.right && b.left < a.right
                    && a.top < b.bottom && b.top < a.bottom;
                const inside = (a, b) => a.left >= b.left - 0.5 && a.right <= b.right + 0.5
                    && a.top >= b.top - 0.5 && a.bottom <= b.bottom + 0.5;
                const found = [];
                const svg = box(figure.querySelector("svg.main-svg"));
                const bar = figure.querySelector(".modebar");
                const title = figure.querySelector(".gtitle");
                if (bar && title && meets(box(bar), box(title)))
                    found.push(`${figure.querySelector("div").id}: the mode bar covers the title`);
                for (const text of figure.querySelectorAll(
                        ".xtick text, .ytick text, .g-xtitle text, .g-ytitle text, .gtitle")) {
                    if (!inside(box(text), svg))
                        found.push(`${figure.querySelector("div").id}: "${text.textContent}" is cut`);
                }
                return found;
            }"""
        )
    return problems
