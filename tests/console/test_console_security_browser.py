"""The console's defences against what a page of another site does in a real browser (headless
Chromium): a name of the attacker's resolved to 127.0.0.1 (DNS rebinding) reads nothing, a
page on another port of 127.0.0.1 that overwrites the CSRF cookie and submits a form stores
nothing, and ids holding Plotly's HTML (``<b>``, ``<a href>``) are shown in chart titles as
the text they are.

Without Chromium or Playwright these tests skip, loudly; under ``CI=true`` they fail.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from _browser import CHROMIUM, Tab, charts_render, needs_a_browser, screenshot, serving, status
from _seed import evaluation, interaction, passed, seed_small

from langchain_evals_port.console import create_app
from langchain_evals_port.runtime import SqliteLedger

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = needs_a_browser()

REBOUND = "rebind.attacker.test"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the module, resolving ``REBOUND`` to 127.0.0.1: what an
    attacker's DNS does in a rebinding attack."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", f"--host-resolver-rules=MAP {REBOUND} 127.0.0.1"],
        )
        yield launched
        launched.close()


@pytest.fixture
def seeded(tmp_path: Path) -> Iterator[tuple[SqliteLedger, str]]:
    """A ``seed_small`` ledger and the base URL of the console serving it."""
    ledger = SqliteLedger(tmp_path / "ledger.db")
    seed_small(ledger)
    with serving(create_app(ledger)) as base:
        yield ledger, base
    ledger.close()


def test_a_rebound_name_reads_nothing(browser: Browser, seeded: tuple[SqliteLedger, str]) -> None:
    _, base = seeded
    port = base.rsplit(":", 1)[1]
    context = browser.new_context()  # no route: the name must reach the console
    try:
        page = context.new_page()
        response = page.goto(f"http://{REBOUND}:{port}/interactions/i-0")
        assert status(response) == 400
        assert "Where is my order" not in page.content()
        # The console's own address still works.
        assert status(page.goto(f"{base}/interactions/i-0")) == 200
        assert "Where is my order 0" in page.content()
    finally:
        context.close()


def attacker_app(console: str) -> Any:
    """A page on another port of 127.0.0.1: it sets the console's CSRF cookie (cookies do not
    tell ports apart) and submits an annotation with the same token."""
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    async def page(request: Any) -> Any:
        answer = HTMLResponse(
            f"""<!doctype html><form id="f" method="post"
            action="{console}/interactions/i-3/annotations">
            <input name="csrf_token" value="forged"><input name="key" value="helpfulness">
            <input name="verdict" value="fail"><input name="note" value="posted by the attacker">
            </form><script>document.getElementById("f").submit()</script>"""
        )
        answer.set_cookie("langchain_evals_csrf", "forged", path="/", samesite="lax")
        return answer

    return Starlette(routes=[Route("/", page)])


def test_a_page_on_another_port_cannot_post_with_a_cookie_it_wrote(
    seeded: tuple[SqliteLedger, str], tab: Tab
) -> None:
    ledger, base = seeded
    page = tab.page
    assert status(page.goto(f"{base}/interactions/i-3")) == 200  # the victim has a session
    with serving(attacker_app(base)) as attacker:
        with page.expect_response(lambda r: r.url.endswith("/annotations")) as posted:
            page.goto(attacker)
        assert posted.value.status == 403
    assert ledger.annotations(subject_id="i-3") == []
    # The victim's own form still works (the console replaced the cookie it did not sign).
    page.goto(f"{base}/interactions/i-3")
    form = page.locator("#annotate")
    form.get_by_label("Feedback key").fill("helpfulness")
    form.get_by_label("Verdict").select_option("pass")
    with page.expect_navigation() as navigation:
        form.get_by_role("button", name="Add annotation").click()
    assert status(navigation.value) == 200
    [stored] = ledger.annotations(subject_id="i-3")
    assert stored.score is True


AGENT = "<b>agent</b>"
EVALUATOR = '<a href="https://attacker.test/">judge</a>'


def test_ids_holding_html_are_shown_as_text_in_chart_titles(tmp_path: Path, tab: Tab) -> None:
    ledger = SqliteLedger(tmp_path / "ledger.db")
    when = datetime.now(timezone.utc) - timedelta(minutes=5)
    record = interaction("i-html", AGENT, when, "Hello?", "Hi.")
    ledger.record_interaction(record)
    ledger.record_evaluation(evaluation("e-html", record, EVALUATOR, passed("ok", True)))
    page = tab.page
    try:
        with serving(create_app(ledger)) as base:
            assert status(page.goto(base)) == 200
            assert charts_render(page) == 1
            chart = page.locator("figure.chart").first
            assert chart.locator(".gtitle").text_content() == f"{AGENT} · {EVALUATOR}"
            assert chart.locator("svg a").count() == 0  # no link drawn
            screenshot(page, "overview-html-ids")
    finally:
        ledger.close()
    assert tab.elsewhere == []
