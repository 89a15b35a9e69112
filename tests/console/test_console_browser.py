"""The console as a person sees it: headless Chromium (driven by Playwright) on a real uvicorn
server over SQLite and PostgreSQL ledgers.

Every page is loaded with the network cut off except 127.0.0.1 (a route aborts anything else
and records it), every dialog a page opens is recorded (an escaped ``alert`` never opens one),
and each page's screenshot is kept as an artefact (``tests/console/artefacts/``, or
``$LANGCHAIN_EVALS_ARTEFACTS/console``) and checked non-blank; ``_browser`` and ``conftest``
hold the server, the browser and the tab. An interaction is annotated from its form (a note
holding a script tag is shown as text, never run) and the ledger holds it. The waiting review
and the retried failure run on a real ``EvaluationRuntime`` in this process, on the same
SQLite file the console serves.

Without Chromium or Playwright these tests skip, loudly; under ``CI=true`` they fail.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import pytest
from _browser import Tab, charts_render, needs_a_browser, overlaps, screenshot, serving, status
from _seed import SCRIPT, seed_small
from langchain_core.runnables import RunnableLambda
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from langchain_evals_port import Score, evaluator
from langchain_evals_port.console import create_app
from langchain_evals_port.runtime import (
    DurableEvaluator,
    EvaluationContext,
    EvaluationRuntime,
    PostgresLedger,
    SqliteLedger,
    evaluation_id,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = needs_a_browser()

AGENT = "support"
PASS_RATE = "0.700 [0.397, 0.892]"  # seed_small: 7 of 10 passed, Wilson's 95 % interval


def listed(page: Page) -> list[str]:
    """The interaction ids the interactions page lists, in order."""
    links = page.locator("#interactions tbody tr td:first-child a")
    return [
        str(href).rsplit("/", 1)[-1] for href in links.evaluate_all("as => as.map(a => a.href)")
    ]


# --- a seeded SQLite ledger, served once for the pages that only read --------------------------


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The console over a SQLite ledger holding ``seed_small``; its base URL."""
    ledger = SqliteLedger(tmp_path_factory.mktemp("console") / "ledger.db")
    seed_small(ledger)
    with serving(create_app(ledger)) as base:
        yield base
    ledger.close()


def test_the_overview_shows_the_pass_rate_and_draws_the_charts(seeded: str, tab: Tab) -> None:
    response = tab.page.goto(seeded)
    assert status(response) == 200
    rate = tab.page.locator('#summary tr[data-evaluator="helpfulness"] .pass-rate')
    assert rate.inner_text() == PASS_RATE
    assert tab.page.locator('#summary tr[data-evaluator="tone"] .pass-rate').inner_text() == "—"
    assert charts_render(tab.page) == 2  # helpfulness and tone
    # What Plotly drew: one daily bucket at 7/10, its interval as error bars, over the week.
    plotted = tab.page.evaluate(
        """() => {
            const chart = document.getElementById("chart-support-helpfulness");
            const rate = chart.data.find(trace => trace.name === "pass rate");
            return {y: rate.y, plus: rate.error_y.array, minus: rate.error_y.arrayminus,
                    range: chart.layout.xaxis.range};
        }"""
    )
    assert plotted["y"] == [0.7]
    assert [round(0.7 + plotted["plus"][0], 3), round(0.7 - plotted["minus"][0], 3)] == [
        0.892,
        0.397,
    ]
    start, end = (datetime.fromisoformat(moment) for moment in plotted["range"])
    assert end - start == timedelta(days=7)
    assert tab.page.locator("#chart-support-helpfulness .errorbar").count() >= 1
    assert "TimeoutError: judge timed out" in tab.page.locator("#latest-failures").inner_text()
    # Plotly's mode bar (on hover) covers no title, and no tick label or axis title is cut.
    assert overlaps(tab.page) == []
    screenshot(tab.page, "overview")


def test_the_interactions_are_filtered_from_the_form(seeded: str, tab: Tab) -> None:
    page = tab.page
    page.goto(f"{seeded}/interactions")
    assert listed(page) == [f"i-{n}" for n in reversed(range(10))]  # newest first
    screenshot(page, "interactions")

    page.select_option("select[name=outcome]", "failed")
    with page.expect_navigation():
        page.click("#filters button[type=submit]")
    assert "outcome=failed" in page.url
    assert listed(page) == ["i-1"]  # the one tone failed
    screenshot(page, "interactions-failed")

    page.select_option("select[name=outcome]", "")
    page.fill("input[name=text]", "order 3")
    with page.expect_navigation():
        page.press("input[name=text]", "Enter")
    assert listed(page) == ["i-3"]

    page.fill("input[name=text]", "")
    page.select_option("select[name=evaluator]", "tone")
    with page.expect_navigation():
        page.click("#filters button[type=submit]")
    assert listed(page) == ["i-1"]
    # The form shows the filters it applied.
    assert page.locator("select[name=evaluator]").input_value() == "tone"

    page.select_option("select[name=evaluator]", "")
    page.fill("input[name=text]", "no such order")
    with page.expect_navigation():
        page.click("#filters button[type=submit]")
    assert listed(page) == []
    assert page.locator("p.empty").inner_text() == "No interactions match."
    assert tab.dialogs == []  # the list shows i-0's script tag too


def test_a_script_in_a_transcript_is_shown_as_text_and_never_runs(seeded: str, tab: Tab) -> None:
    page = tab.page
    page.goto(f"{seeded}/interactions/i-0")
    transcript = page.locator("#transcript")
    assert SCRIPT in transcript.inner_text()
    assert page.get_by_text(SCRIPT).first.is_visible()
    assert transcript.locator("script").count() == 0
    page.wait_for_timeout(200)  # give a script that should not be there the time to run
    assert tab.dialogs == []
    assert "reasoning 0" in page.locator("#evaluations").inner_text()
    screenshot(page, "interaction")


def test_every_page_loads_with_the_network_off(seeded: str, tab: Tab) -> None:
    page = tab.page
    for path in ("/", "/interactions", "/interactions/i-0", "/waiting", "/failed"):
        response = page.goto(f"{seeded}{path}")
        assert status(response) == 200, path
    page.goto(seeded)
    assert charts_render(page) == 2
    assert tab.elsewhere == []
    assert "/static/plotly.min.js" in tab.local  # from the console, not a CDN
    screenshot(page, "overview-offline")
    page.goto(f"{seeded}/waiting")
    screenshot(page, "waiting")
    page.goto(f"{seeded}/failed")
    screenshot(page, "failed")


# --- pages that change the ledger, each on a ledger of its own ---------------------------------


def bound(evaluator_id: str) -> dict[str, Any]:
    """A runtime configuration binding ``evaluator_id`` to the agent."""
    return {"evaluation": {"evaluators": {evaluator_id: {"agents": {AGENT: {}}}}}}


def answer_once(runtime: EvaluationRuntime, question: str) -> str:
    """The agent answers ``question`` once; the interaction id."""
    agent = RunnableLambda(lambda asked: f"You asked: {asked}", name="echo")
    return runtime.bind(agent, agent_id=AGENT).invoke_detailed(question).interaction_id


class Reviewed(TypedDict, total=False):
    """A review's state: its score."""

    score: Score


def ask_a_person(state: Reviewed, runtime: Runtime[EvaluationContext]) -> dict[str, Any]:
    """Asks whether the reply is right; the answer is the verdict."""
    reply = runtime.context.interaction().final_response_text
    answer = interrupt({"question": "Is this reply right?", "reply": reply})
    return {"score": Score(answer["approved"], answer["note"])}


def human_review() -> DurableEvaluator:
    builder = StateGraph(Reviewed, context_schema=EvaluationContext)
    builder.add_node("ask_a_person", ask_a_person)
    builder.add_edge(START, "ask_a_person")
    builder.add_edge("ask_a_person", END)
    return DurableEvaluator(builder, evaluation_timeout=timedelta(hours=1))


def until(condition: Any, what: str, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what} within {timeout} s"
        time.sleep(0.02)


def test_a_waiting_review_is_resumed_from_the_form_and_its_verdict_appears(
    tmp_path: Path, tab: Tab
) -> None:
    page = tab.page
    path = tmp_path / "ledger.db"
    ledger = SqliteLedger(path)  # the runtime's; the console opens the file on its own
    console = SqliteLedger(path)
    runtime = EvaluationRuntime(
        bound("review"), evaluators={"review": human_review()}, ledger=ledger, poll_interval=0.02
    )
    try:
        interaction = answer_once(runtime, "Can I return opened headphones?")
        review = evaluation_id("review", interaction)
        until(lambda: runtime.waiting_evaluations(), "the review never waited for a person")
        with serving(create_app(console)) as base:
            page.goto(f"{base}/waiting")
            section = page.locator("section.waiting", has_text=review)
            assert "Is this reply right?" in section.locator("pre.question").inner_text()
            note = f"checked the policy {SCRIPT}"  # the reviewer's note is untrusted text too
            section.locator("textarea[name=answer]").fill(f'{{"approved": true, "note": "{note}"}}')
            screenshot(page, "waiting-filled")
            with page.expect_navigation():
                section.locator("button[type=submit]").click()
            assert f"Resumed {review}" in page.locator("p.notice").inner_text()

            # The runtime picks the answer up from the ledger; reload until the verdict shows.
            verdicts = page.locator("#evaluations tr.verdict")
            deadline = time.monotonic() + 15
            while True:
                page.goto(f"{base}/interactions/{interaction}")
                if verdicts.count():
                    break
                assert time.monotonic() < deadline, "the resumed review's verdict never appeared"
                page.wait_for_timeout(100)
            assert page.locator("#output").inner_text() == (
                "You asked: Can I return opened headphones?"
            )
            cells = verdicts.first.locator("td").all_inner_texts()
            assert cells[:5] == ["review", "verdict", "review", "True", note]
            assert tab.dialogs == []
            screenshot(page, "interaction-reviewed")
            page.goto(f"{base}/waiting")
            assert page.locator("p.empty").inner_text() == "Nothing is waiting for a person."
    finally:
        runtime.close()
        console.close()
        ledger.close()
    [record] = SqliteLedger(path).get_evaluations(interaction)
    assert (record.evaluation_id, record.outcome, record.passed) == (review, "verdict", True)


def test_a_failed_evaluation_is_retried_from_the_failed_page_exactly_once(
    tmp_path: Path, tab: Tab
) -> None:
    page = tab.page
    runs: list[str] = []

    @evaluator(feedback_key="tone")
    def tone(outputs: str) -> bool:
        runs.append(outputs)
        if len(runs) == 1:
            raise RuntimeError("the judge is unreachable")
        return True

    path = tmp_path / "ledger.db"
    ledger = SqliteLedger(path)
    console = SqliteLedger(path)
    runtime = EvaluationRuntime(
        bound("tone"), evaluators={"tone": tone}, ledger=ledger, poll_interval=0.02
    )
    try:
        interaction = answer_once(runtime, "Why is my parcel late?")
        [failed] = runtime.wait_for_evaluations(interaction, timeout=15)
        assert failed.outcome == "failed"
        assert len(runs) == 1
        with serving(create_app(console)) as base:
            page.goto(f"{base}/failed")
            row = page.locator("#failed tbody tr", has_text="the judge is unreachable")
            assert row.count() == 1
            screenshot(page, "failed-before-retry")
            retry_id = f"{failed.evaluation_id}:retry"
            notices = []
            for _ in range(2):  # a second click: the retry is already queued (or recorded)
                with page.expect_navigation():
                    row.locator("button", has_text="Retry").click()
                notices.append(page.locator("p.notice").inner_text())
            assert notices == [
                f"Queued {retry_id}: a worker runs it once.",
                f"{retry_id} was queued already (or has run): nothing new was queued.",
            ]
            until(
                lambda: len(console.get_evaluations(interaction)) == 2,
                "the retry was never recorded",
            )
            records = runtime.wait_for_evaluations(interaction, timeout=15)
            page.goto(f"{base}/interactions/{interaction}")
            outcomes = page.locator("#evaluations tbody tr td:nth-child(2)").all_inner_texts()
            assert sorted(outcomes) == ["failed", "verdict"]
            screenshot(page, "interaction-retried")
    finally:
        runtime.close()
        console.close()
        ledger.close()
    by_id = {record.evaluation_id: record for record in records}
    assert sorted(by_id) == [failed.evaluation_id, f"{failed.evaluation_id}:retry"]
    assert by_id[f"{failed.evaluation_id}:retry"].outcome == "verdict"
    assert len(runs) == 2  # the evaluator ran exactly once more


def test_an_interaction_is_annotated_from_its_form_and_the_note_is_shown_as_text(
    tmp_path: Path, tab: Tab
) -> None:
    page = tab.page
    ledger = SqliteLedger(tmp_path / "ledger.db")
    seed_small(ledger)
    evaluations = ledger.get_evaluations("i-3")
    note = f"{SCRIPT} misses the refund"
    try:
        with serving(create_app(ledger)) as base:
            assert status(page.goto(f"{base}/interactions/i-3")) == 200
            assert page.get_by_text("No one has annotated this interaction.").is_visible()
            form = page.locator("#annotate")
            form.get_by_label("Feedback key").fill("helpfulness")
            form.get_by_label("Verdict").select_option("fail")
            form.get_by_label("Note").fill(note)
            form.get_by_label("Annotator").fill("ana")
            screenshot(page, "interaction-annotate-filled")
            with page.expect_navigation() as navigation:
                form.get_by_role("button", name="Add annotation").click()
            assert status(navigation.value) == 200
            assert page.url == f"{base}/interactions/i-3?annotated=helpfulness#annotations"
            assert page.locator("p.notice").inner_text() == "Annotated helpfulness."
            [listed_row] = page.locator("#annotation-list tbody tr").all()
            cells = listed_row.locator("td").all_inner_texts()
            assert cells[:4] == ["helpfulness", "fail", note, "ana"]
            assert page.locator("#annotation-list script").count() == 0
            page.wait_for_timeout(200)  # give a script that should not be there the time to run
            assert tab.dialogs == []
            screenshot(page, "interaction-annotated")
        [stored] = ledger.annotations(subject_id="i-3")
        assert (stored.subject_kind, stored.key, stored.score) == (
            "interaction",
            "helpfulness",
            False,
        )
        assert (stored.note, stored.annotator) == (note, "ana")
        assert ledger.get_evaluations("i-3") == evaluations  # the judge's results untouched
    finally:
        ledger.close()
    assert tab.elsewhere == []


def test_a_token_is_required_and_a_form_without_its_csrf_token_is_refused(
    tmp_path: Path, tab: Tab
) -> None:
    page = tab.page
    ledger = SqliteLedger(tmp_path / "ledger.db")
    ids = seed_small(ledger)
    try:
        with serving(create_app(ledger, token="s3cret")) as base:
            for path in ("/", "/failed", "/static/plotly.min.js"):
                response = page.goto(f"{base}{path}")
                assert status(response) == 401, path
            refused = page.request.post(f"{base}/failed/{ids['failed']}/retry", form={})
            assert refused.status == 401  # no token: not even the CSRF check is reached

            # The token once in the address: kept in a cookie, the address cleaned of it.
            response = page.goto(f"{base}/failed?token=s3cret")
            assert status(response) == 200
            assert "token" not in page.url
            assert page.goto(f"{base}/")
            charts_render(page)
            screenshot(page, "overview-with-token")

            # A forged CSRF token in the form, then no form field at all: 403, nothing queued.
            page.goto(f"{base}/failed")
            page.evaluate("document.querySelector('input[name=csrf_token]').value = 'forged'")
            with page.expect_navigation() as navigation:
                page.click("#failed button[type=submit]")
            assert status(navigation.value) == 403
            refused = page.request.post(f"{base}/failed/{ids['failed']}/retry", form={})
            assert refused.status == 403
            assert ledger.pending_work() == 1  # only the seeded review

            # The form as served is accepted.
            page.goto(f"{base}/failed")
            with page.expect_navigation() as navigation:
                page.click("#failed button[type=submit]")
            assert status(navigation.value) == 200
            assert f"Queued {ids['failed']}:retry" in page.locator("p.notice").inner_text()
            assert ledger.pending_work() == 2
    finally:
        ledger.close()


def test_a_postgresql_ledger_is_served_too(postgres_dsn: str, tab: Tab) -> None:
    page = tab.page
    ledger = PostgresLedger(postgres_dsn, pool_size=4)
    ids = seed_small(ledger)
    try:
        with serving(create_app(ledger)) as base:
            page.goto(base)
            rate = page.locator('#summary tr[data-evaluator="helpfulness"] .pass-rate')
            assert rate.inner_text() == PASS_RATE
            assert charts_render(page) == 2
            screenshot(page, "postgres-overview")
            page.goto(f"{base}/interactions/{ids['script']}")
            assert SCRIPT in page.locator("#transcript").inner_text()
            assert "reasoning 0" in page.locator("#evaluations").inner_text()
            screenshot(page, "postgres-interaction")
            page.goto(f"{base}/interactions?outcome=failed")
            assert listed(page) == ["i-1"]
    finally:
        ledger.close()
    assert tab.dialogs == []
    assert tab.elsewhere == []
