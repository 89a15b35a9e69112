"""The console's experiment pages, and the file ``langchain-evals report`` writes, as a person
sees them: headless Chromium (Playwright) on a real uvicorn server over an experiment store.

Experiments of plain functions scored by ``ExactMatch`` (and a ``length`` judge) are listed and
compared from the form; one shows its runs with their reasoning, an output holding a script tag
as text, its filter and its chart; a comparison finds the injected regression and lists the
worse cases first; the report file, opened from disk with every request aborted, shows the
same figures and chart, requests nothing, and filters its rows in the page. A run is annotated
from the form in its row (a note holding a script tag is shown as text) and the store holds
it. Pages load with the network cut off except 127.0.0.1, dialogs are recorded, screenshots
are kept and checked non-blank (``_browser``, ``conftest``).

Without Chromium or Playwright these tests skip, loudly; under ``CI=true`` they fail.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from _browser import Tab, charts_render, needs_a_browser, overlaps, screenshot, serving, status
from _seed import CASES, SCRIPT, length, seed_experiments

from langchain_evals_port import ExactMatch
from langchain_evals_port.console import create_app
from langchain_evals_port.experiments import ExperimentStore, run_experiment
from langchain_evals_port.runtime import SqliteLedger

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = needs_a_browser()

PROBLEMS = ["c4", "c5", "c6", "c7", "xss"]
"""candidate-run's cases with a problem: c4..c7 answer wrong, xss's output is too long."""


def mixed(inputs: dict[str, int]) -> str:
    # Worse on exact_match from c4 on and for xss, better on length for xss (short now).
    return "short" if inputs["n"] == 99 else ("ok" if inputs["n"] >= 4 else f"ok {inputs['n']}")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``seed_experiments`` (baseline-run, candidate-run), then mixed-run."""
    path = tmp_path_factory.mktemp("experiments") / "experiments.db"
    seed_experiments(path)
    run_experiment(
        mixed, CASES, [ExactMatch(), length], name="mixed-run", store=path, progress=False
    )
    return path


@pytest.fixture(scope="module")
def console(store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The console over an empty ledger and the store; its base URL."""
    ledger = SqliteLedger(tmp_path_factory.mktemp("ledger") / "ledger.db")
    experiments = ExperimentStore(store)
    with serving(create_app(ledger, experiments)) as base:
        yield base
    experiments.close()
    ledger.close()


def visible_cases(page: Page) -> list[str]:
    """The case of every run row shown, in order."""
    rows = page.locator("#runs tr.run:visible")
    return [str(case) for case in rows.evaluate_all("rows => rows.map(r => r.dataset.case)")]


def test_the_list_shows_the_experiments_and_the_form_opens_a_comparison(
    console: str, tab: Tab
) -> None:
    page = tab.page
    assert status(page.goto(f"{console}/experiments")) == 200
    names = page.locator("#experiments tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.experiment)"
    )
    assert names == ["mixed-run", "candidate-run", "baseline-run"]  # newest first
    cells = page.locator('#experiments tr[data-experiment="baseline-run"] td').all_inner_texts()
    assert cells[:6] == ["baseline-run", "good", "9", "1", "9 / 9", "exact_match, length"]
    # The form proposes the two newest; choose the other way round instead.
    form = page.locator("#compare-form")
    assert form.locator("select[name=baseline]").input_value() == "candidate-run"
    assert form.locator("select[name=candidate]").input_value() == "mixed-run"
    screenshot(page, "experiments")
    form.locator("select[name=baseline]").select_option("baseline-run")
    form.locator("select[name=candidate]").select_option("candidate-run")
    with page.expect_navigation() as navigation:
        form.locator("button[type=submit]").click()
    assert status(navigation.value) == 200
    assert page.url.endswith("/experiments/compare?baseline=baseline-run&candidate=candidate-run")
    assert page.locator("h1").inner_text() == "candidate-run against baseline-run"
    assert page.locator('#comparison tr[data-key="exact_match"] td.verdict').inner_text() == "worse"

    # Both names link to their experiment's page.
    with page.expect_navigation():
        page.locator("main p a", has_text="baseline-run").click()
    assert page.locator("h1").inner_text() == "Experiment baseline-run"
    assert tab.elsewhere == []


def test_an_experiment_shows_its_runs_and_reasoning_filters_them_and_draws_its_chart(
    console: str, tab: Tab
) -> None:
    page = tab.page
    assert status(page.goto(f"{console}/experiments/candidate-run")) == 200
    assert visible_cases(page) == [*(f"c{n}" for n in range(8)), "xss"]
    score = page.locator('#statistics tr[data-key="exact_match"] td.score')
    assert score.inner_text() == "0.556"  # 5 of 9 match
    c4 = page.locator('#runs tr[data-case="c4"]')
    assert c4.locator("td.outputs").inner_text() == "ok"
    assert c4.locator('td[data-key="exact_match"] .outcome').inner_text() == "False"
    reasoning = c4.locator('td[data-key="length"] .reasoning')
    assert reasoning.inner_text() == "2 characters, said the judge"
    assert reasoning.is_visible()
    # The untrusted output is shown as its text, and nothing runs.
    xss = page.locator('#runs tr[data-case="xss"]')
    assert xss.locator("td.outputs").inner_text() == SCRIPT
    assert page.get_by_text(SCRIPT).first.is_visible()
    assert page.locator("#runs script").count() == 0
    assert charts_render(page) == 1
    assert page.locator("#chart-scores svg.main-svg").first.is_visible()
    page.wait_for_timeout(200)  # give a script that should not be there the time to run
    assert tab.dialogs == []
    screenshot(page, "experiment")

    page.locator("#show-form select[name=show]").select_option("problems")
    with page.expect_navigation():
        page.locator("#show-form button[type=submit]").click()
    assert "show=problems" in page.url
    assert visible_cases(page) == PROBLEMS
    assert page.locator("#show-form select[name=show]").input_value() == "problems"
    screenshot(page, "experiment-problems")

    page.locator("#show-form select[name=show]").select_option("failed")
    with page.expect_navigation():
        page.locator("#show-form button[type=submit]").click()
    assert visible_cases(page) == []
    assert page.locator("p.empty").inner_text() == "No case matches."
    assert tab.dialogs == []
    assert tab.elsewhere == []
    assert "/static/plotly.min.js" in tab.local  # from the console, not a CDN


def test_a_comparison_finds_the_regression_and_lists_the_worse_cases_first(
    console: str, tab: Tab
) -> None:
    page = tab.page
    response = page.goto(f"{console}/experiments/compare?baseline=baseline-run&candidate=mixed-run")
    assert status(response) == 200
    exact = page.locator('#comparison tr[data-key="exact_match"]')
    assert exact.locator("td.verdict").inner_text() == "worse"
    assert exact.locator("td.change").inner_text() == "-0.556"  # 5 of 9 cases fell
    # One case rose on length: too few for a verdict either way.
    assert page.locator('#comparison tr[data-key="length"] td.change').inner_text() == "+0.111"
    length_verdict = page.locator('#comparison tr[data-key="length"] td.verdict')
    assert length_verdict.inner_text() == "no detectable change"
    changes = page.locator("#changes tbody tr").evaluate_all(
        "rows => rows.map(r => [r.className, r.dataset.key, r.dataset.case])"
    )
    assert changes == [
        *(["worse", "exact_match", case] for case in PROBLEMS),
        ["better", "length", "xss"],
    ]
    # The baseline's output for xss, a script tag, is shown as text in the diff.
    xss = page.locator('#changes tr[data-key="exact_match"][data-case="xss"] td.text')
    assert xss.all_inner_texts() == [SCRIPT, "short"]
    assert charts_render(page) == 2
    assert overlaps(page) == []  # no mode bar over a title, no label cut
    page.wait_for_timeout(200)
    assert tab.dialogs == []
    assert tab.elsewhere == []
    screenshot(page, "experiments-compare")


def test_a_case_is_annotated_from_its_row_and_the_note_is_shown_as_text(
    console: str, store: Path, tab: Tab
) -> None:
    page = tab.page
    assert status(page.goto(f"{console}/experiments/mixed-run?show=problems")) == 200
    c4 = page.locator('#runs tr[data-case="c4"]')
    assert c4.locator("li.annotation").count() == 0
    form = c4.locator("details.annotate form")
    assert not form.is_visible()  # folded until asked for
    c4.locator("details.annotate summary").click()
    assert form.is_visible()
    keys = form.locator("select[name=key] option").evaluate_all("os => os.map(o => o.value)")
    assert keys == ["exact_match", "length"]
    form.get_by_label("Key").select_option("exact_match")
    form.get_by_label("Verdict").select_option("pass")
    form.get_by_label("Note").fill(f"{SCRIPT} is fine too")
    form.get_by_label("Annotator").fill("ana")
    screenshot(page, "experiment-annotate-filled")
    with page.expect_navigation() as navigation:
        form.get_by_role("button", name="Add annotation").click()
    assert status(navigation.value) == 200
    assert "show=problems&annotated=exact_match&case=c4&trial=0" in page.url
    assert page.locator("p.notice").inner_text() == "Annotated exact_match of case c4, trial 0."
    assert visible_cases(page) == PROBLEMS  # the filter is kept
    annotation = c4.locator("li.annotation")
    assert annotation.inner_text() == f"exact_match: pass {SCRIPT} is fine too (ana)"
    assert annotation.locator(".note").inner_text() == f"{SCRIPT} is fine too"
    assert page.locator("#runs script").count() == 0
    page.wait_for_timeout(200)  # give a script that should not be there the time to run
    assert tab.dialogs == []
    screenshot(page, "experiment-annotated")

    # A score on another row; then a bad one, refused with the reason.
    xss = page.locator('#runs tr[data-case="xss"]')
    xss.locator("details.annotate summary").click()
    xss.get_by_label("Key").select_option("length")
    xss.get_by_label("or score").fill("0.5")
    with page.expect_navigation():
        xss.get_by_role("button", name="Add annotation").click()
    assert xss.locator("li.annotation").inner_text() == "length: 0.5"
    xss.locator("details.annotate summary").click()
    xss.get_by_label("or score").fill("high")
    with page.expect_navigation() as navigation:
        xss.get_by_role("button", name="Add annotation").click()
    assert status(navigation.value) == 400
    assert page.locator("body").inner_text() == "score: expected a number, got 'high'"
    assert tab.elsewhere == []

    experiments = ExperimentStore(store)
    try:
        stored = [
            (a.subject_id, a.key, a.value, a.note, a.annotator)
            for a in experiments.annotations("mixed-run")
        ]
    finally:
        experiments.close()
    assert stored == [
        ("mixed-run:c4:0", "exact_match", True, f"{SCRIPT} is fine too", "ana"),
        ("mixed-run:xss:0", "length", 0.5, None, None),
    ]


def report(store: Path, out: Path, *options: str) -> subprocess.Popen[str]:
    """``langchain-evals report`` writing ``out``, started (the caller waits)."""
    command = [sys.executable, "-m", "langchain_evals_port.cli", "report", *options]
    return subprocess.Popen(
        [*command, "--html", str(out), "--store", str(store)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_the_report_file_opens_offline_renders_and_filters_in_the_page(
    store: Path, tmp_path: Path, tab: Tab
) -> None:
    page = tab.page
    one, compared = tmp_path / "candidate-run.html", tmp_path / "compared.html"
    commands = [
        report(store, one, "candidate-run"),
        report(store, compared, "candidate-run", "--baseline", "baseline-run"),
    ]
    for command in commands:
        _, err = command.communicate(timeout=60)
        assert command.returncode == 0, err
    page.context.set_offline(True)

    page.goto(one.as_uri())
    assert page.locator("h1").inner_text() == "Experiment candidate-run"
    statistics = page.locator('#statistics tr[data-key="exact_match"]')
    assert statistics.locator("td.score").inner_text() == "0.556"
    assert statistics.locator("td.interval").inner_text() == "[0.267, 0.811]"
    assert charts_render(page) == 1
    assert page.locator('#runs tr[data-case="xss"] td.outputs').inner_text() == SCRIPT
    assert visible_cases(page) == [*(f"c{n}" for n in range(8)), "xss"]
    screenshot(page, "report-experiment")
    checkbox = page.get_by_label("only the cases with a problem")
    checkbox.check()
    assert visible_cases(page) == PROBLEMS
    screenshot(page, "report-experiment-problems")
    checkbox.uncheck()
    assert len(visible_cases(page)) == 9

    page.goto(compared.as_uri())
    assert page.locator('#comparison tr[data-key="exact_match"] td.verdict').inner_text() == (
        "worse"
    )
    assert charts_render(page) == 2
    screenshot(page, "report-compare")

    page.wait_for_timeout(200)
    assert tab.dialogs == []
    # The two files, and nothing else: no request went anywhere, not even to 127.0.0.1.
    assert tab.files == [one.as_uri(), compared.as_uri()]
    assert tab.elsewhere == []
    assert tab.local == []
