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

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
_MISSING = "chromium is not installed: the HTML report was NOT checked in a browser"

if CHROMIUM is None and os.environ.get("CI") == "true":
    # A skipped service suite is a failure in CI.
    pytest.fail(f"{_MISSING} (CI=true)", pytrace=False)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=_MISSING)


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


@pytest.fixture
def page(tmp_path: Path) -> Path:
    """A report with three past runs, written as HTML."""
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
    path.write_text(report.to_html(history), encoding="utf-8")
    return path


def test_the_report_renders_as_a_non_blank_screenshot(tmp_path: Path, page: Path) -> None:
    shot = tmp_path / "report.png"
    run = chromium(tmp_path, f"--screenshot={shot}", page.as_uri())
    assert shot.exists(), run.stderr
    data = shot.read_bytes()
    assert len(data) > 5_000, f"suspiciously small screenshot ({len(data)} bytes)"
    assert distinct_rows(data) > 10, "the screenshot is blank"


def test_the_rendered_dom_has_a_circle_per_run(tmp_path: Path, page: Path) -> None:
    run = chromium(tmp_path, "--dump-dom", page.as_uri())
    assert run.returncode == 0, run.stderr
    figures = re.findall(r'<figure data-key="([^"]+)">(.*?)</figure>', run.stdout, re.S)
    circles = {key: body.count("<circle") for key, body in figures}
    assert circles == {"concise": 4, "correct": 3}
