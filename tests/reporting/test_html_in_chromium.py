"""The HTML report as a real browser renders it: headless Chromium screenshots and DOM."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from _png import distinct_rows

from langchain_evals_port import EvaluatorResult
from langchain_evals_port.reporting import EvalReport
from langchain_evals_port.reporting._pages import plotly_path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
_MISSING = "chromium is not installed: the HTML report was NOT checked in a browser"

if CHROMIUM is None and os.environ.get("CI") == "true":
    # A skipped service suite is a failure in CI.
    pytest.fail(f"{_MISSING} (CI=true)", pytrace=False)
pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason=_MISSING),
    pytest.mark.processes,
    pytest.mark.services,
]


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run headless Chromium with a private profile and no background traffic."""
    assert CHROMIUM is not None
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--window-size=1200,900",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(params=[True, False], ids=["plotly", "no-plotly"])
def page(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """A report with three past runs, written as HTML with Plotly's charts and without."""
    if request.param and plotly_path() is None:
        pytest.skip("plotly is not installed")
    report = EvalReport()
    for score in (True, False, True):
        report.on_result("judge", EvaluatorResult(key="concise", score=score))
    report.on_result("judge", EvaluatorResult(key="correct", score=0.8))
    history = [
        {"schema": 1, "keys": {"concise": {"mean": 0.5}, "correct": {"mean": 0.9}}},
        {"schema": 1, "keys": {"concise": {"mean": 0.6}}},
        {"schema": 1, "keys": {"concise": {"mean": 0.7}, "correct": {"mean": 0.4}}},
    ]
    path = tmp_path / "report.html"
    path.write_text(report.to_html(history, plotly=request.param), encoding="utf-8")
    return path


def test_the_report_renders_as_a_non_blank_screenshot(tmp_path: Path, page: Path) -> None:
    shot = tmp_path / "report.png"
    run = chromium(tmp_path, f"--screenshot={shot}", page.as_uri())
    assert shot.exists(), run.stderr
    data = shot.read_bytes()
    assert len(data) > 5_000, f"suspiciously small screenshot ({len(data)} bytes)"
    assert distinct_rows(data) > 10, "the screenshot is blank"


def test_the_rendered_dom_has_a_point_per_run(tmp_path: Path, page: Path) -> None:
    # Plotly draws a marker per point (a path of class "point") once its script ran, offline;
    # without Plotly each point is an SVG circle of the page.
    run = chromium(tmp_path, "--dump-dom", page.as_uri())
    assert run.returncode == 0, run.stderr
    figures = re.findall(
        r'<figure class="chart" data-key="([^"]+)">(.*?)</figure>', run.stdout, re.S
    )
    points = {
        key: body.count("<circle") + len(re.findall(r'<path class="point"', body))
        for key, body in figures
    }
    assert points == {"concise": 4, "correct": 3}
