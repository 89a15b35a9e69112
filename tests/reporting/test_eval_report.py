"""EvalReport: figures, renderings, files, thread and task safety, and results by case
(per-case scores in the JSON, the change column compared case by case)."""

from __future__ import annotations

import asyncio
import html
import json
import re
import threading
import warnings
from datetime import datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from langchain_evals_port import EvaluatorResult, ExactMatch
from langchain_evals_port.core import eval_scope
from langchain_evals_port.reporting import EvalReport, KeyStatistics
from langchain_evals_port.reporting._pages import plotly_path


def figures(key: str, mean: float | None, verdicts: int, inconclusive: int, failed: int) -> tuple:
    """The figures a report's table shows of a key."""
    return (key, mean, verdicts, inconclusive, failed)


def shown(statistics: KeyStatistics) -> tuple:
    return (
        statistics.key,
        statistics.mean,
        statistics.verdicts,
        statistics.inconclusive,
        statistics.failed,
    )


def without_interval(markdown: str) -> str:
    """The Markdown report without its table's interval column (the third), for rows whose
    other figures a test checks."""
    return re.sub(r"^(\| [^|]* \| [^|]* \|) [^|]* \|", r"\1", markdown, flags=re.MULTILINE)


def verdict(key: str, score: bool | float, comment: str | None = None) -> EvaluatorResult:
    return EvaluatorResult(key=key, score=score, comment=comment)


def report_of(*results: EvaluatorResult, evaluator: str = "judge") -> EvalReport:
    report = EvalReport()
    for result in results:
        report.on_result(evaluator, result)
    return report


def mixed_report() -> EvalReport:
    return report_of(
        verdict("concise", True, "short and direct"),
        verdict("concise", False, "rambles"),
        verdict("concise", True),
        EvaluatorResult.inconclusive("concise", "no answer to judge"),
        EvaluatorResult.failed("concise", "timeout", "judge took too long"),
        verdict("correct", 0.5),
        verdict("correct", 1.0),
    )


def test_means_count_verdicts_only_with_booleans_as_0_and_1() -> None:
    summaries = mixed_report().statistics()
    assert shown(summaries["concise"]) == figures("concise", 2 / 3, 3, 1, 1)
    assert shown(summaries["correct"]) == figures("correct", 0.75, 2, 0, 0)


def test_a_key_without_verdicts_has_no_mean() -> None:
    report = report_of(EvaluatorResult.inconclusive("k", "nothing"))
    assert shown(report.statistics()["k"]) == figures("k", None, 0, 1, 0)
    assert report.to_json()["keys"]["k"]["mean"] is None
    assert "| k | — | 0 |  | 1 | 0 |" in without_interval(report.to_markdown())


def test_real_evaluators_report_through_the_scope() -> None:
    report = EvalReport()
    with eval_scope(report):
        ExactMatch().invoke({"outputs": 1, "reference_outputs": 1})
        ExactMatch().invoke({"outputs": 1, "reference_outputs": 2})
    assert [entry.evaluator for entry in report.entries] == ["exact_match"] * 2
    assert report.statistics()["exact_match"].mean == 0.5


def test_many_threads_reporting_at_once_lose_nothing() -> None:
    report = EvalReport()
    barrier = threading.Barrier(16)

    def work(worker: int) -> None:
        barrier.wait()
        for i in range(500):
            report.on_result(f"w{worker}", verdict("k", i % 2 == 0))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert shown(report.statistics()["k"]) == figures("k", 0.5, 8000, 0, 0)


async def test_many_tasks_reporting_through_a_scope_lose_nothing() -> None:
    report = EvalReport()
    match = ExactMatch()

    async def work(n: int) -> None:
        for i in range(20):
            await match.ainvoke({"outputs": i, "reference_outputs": i if n % 2 else -1})
            await asyncio.sleep(0)

    with eval_scope(report):
        await asyncio.gather(*(work(n) for n in range(50)))
    assert shown(report.statistics()["exact_match"]) == figures("exact_match", 0.5, 1000, 0, 0)


def test_markdown_table_with_change_against_a_baseline() -> None:
    report = report_of(verdict("concise", True), verdict("concise", False), verdict("correct", 0.8))
    baseline = {"schema": 1, "keys": {"concise": {"mean": 0.45}, "correct": {"mean": 0.9}}}
    markdown = report.to_markdown(baseline)
    assert (
        "| evaluator | mean score | 95 % interval | n | change | inconclusive | failed |"
        in markdown
    )
    assert "| concise | 0.500 | 2 | +0.050 | 0 | 0 |" in without_interval(markdown)
    assert "| correct | 0.800 | 1 | -0.100 | 0 | 0 |" in without_interval(markdown)


def test_markdown_change_is_blank_without_a_baseline_or_for_a_new_key() -> None:
    report = report_of(verdict("concise", True), verdict("new", 0.2))
    assert "| concise | 1.000 | 1 |  | 0 | 0 |" in without_interval(report.to_markdown())
    tolerant = {"keys": {"concise": {"mean": 1.0}, "new": {"mean": "bad"}, "odd": 3}}
    markdown = report.to_markdown(tolerant)
    assert "| concise | 1.000 | 1 | +0.000 | 0 | 0 |" in without_interval(markdown)
    assert "| new | 0.200 | 1 |  | 0 | 0 |" in without_interval(markdown)


def test_markdown_lists_each_result_with_its_reasoning_or_reason() -> None:
    markdown = mixed_report().to_markdown()
    assert "| concise | 0.667 | 3 |  | 1 | 1 |" in without_interval(markdown)
    assert "- concise (judge): score False — rambles" in markdown
    assert "- concise (judge): inconclusive — no answer to judge" in markdown
    assert "- concise (judge): failed [timeout] — judge took too long" in markdown


def test_markdown_keeps_multiline_reasoning_on_one_item() -> None:
    markdown = report_of(verdict("k", True, "first line\nsecond | line")).to_markdown()
    assert "- k (judge): score True — first line second | line" in markdown


def test_json_is_a_report_of_schema_version_2() -> None:
    data = mixed_report().to_json()
    assert list(data) == [
        "schema_version",
        "source",
        "name",
        "generated_at",
        "keys",
        "comparison",
        "runs",
    ]
    assert (data["schema_version"], data["source"], data["name"]) == (2, "pytest", None)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", data["generated_at"])
    assert (
        datetime.fromisoformat(data["generated_at"].replace("Z", "+00:00")).utcoffset() is not None
    )
    counts = {
        key: (figures["mean"], figures["verdicts"], figures["inconclusive"], figures["failed"])
        for key, figures in data["keys"].items()
    }
    assert counts == {"concise": (2 / 3, 3, 1, 1), "correct": (0.75, 2, 0, 0)}
    # Results outside any case: their key has no case means to pair a later run with.
    assert data["keys"]["concise"]["case_means"] == {}
    [row] = data["runs"]
    assert row["case_id"] is None
    assert [(r["key"], r["evaluator"], r["outcome"]) for r in row["results"]][3:5] == [
        ("concise", "judge", "inconclusive"),
        ("concise", "judge", "failed"),
    ]
    json.dumps(data)


class _WellFormed(HTMLParser):
    """Checks that tags nest and close, counts chart circles per figure (the charts drawn
    without Plotly) and keeps the Plotly charts' data (the charts drawn with it)."""

    VOID = frozenset({"meta", "br", "img", "hr", "input", "link"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.figure: str | None = None
        self.circles: dict[str, int] = {}
        self.in_chart_data = False
        self.charts: list[dict[str, Any]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.in_chart_data = tag == "script" and dict(attrs).get("class") == "chart-data"
        if tag == "figure":
            self.figure = dict(attrs)["data-key"]
            self.circles[self.figure or ""] = 0
        if tag == "circle":
            assert self.figure is not None
            self.circles[self.figure] += 1
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_data(self, data: str) -> None:
        if self.in_chart_data:
            self.charts += json.loads(data)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "circle":
            raise AssertionError("circles are written with a title inside")

    def handle_endtag(self, tag: str) -> None:
        self.in_chart_data = False
        assert self.stack, f"</{tag}> closes nothing"
        assert self.stack.pop() == tag
        if tag == "figure":
            self.figure = None


def parse(page: str) -> _WellFormed:
    parser = _WellFormed()
    parser.feed(page)
    parser.close()
    assert parser.stack == []
    return parser


def points(page: str) -> dict[str, int]:
    """How many points each key's trend has, whichever way the page draws its charts."""
    parsed = parse(page)
    if not parsed.charts:
        return parsed.circles
    # Plotly reads tags and entities in labels: a name is written escaped, shown as it is.
    return {
        html.unescape(chart["data"][0]["name"]): len(chart["data"][0]["y"])
        for chart in parsed.charts
    }


HISTORY = [
    {"schema": 1, "keys": {"concise": {"mean": 0.5}, "correct": {"mean": 0.9}}},
    {"schema": 1, "keys": {"concise": {"mean": 0.6}}},
    {"schema": 1, "keys": {"concise": {"mean": 0.7}, "correct": {"mean": None}}},
]


def test_html_without_plotly_is_well_formed_script_free_and_has_a_point_per_run() -> None:
    page = mixed_report().to_html(HISTORY, plotly=False)
    parsed = parse(page)
    assert parsed.circles == {"concise": 4, "correct": 2}
    assert "<script" not in page.lower()
    assert "http" not in page.lower()
    assert page.startswith("<!DOCTYPE html>")
    assert "judge took too long" in page
    assert "<td>concise</td><td>0.667</td><td>[0.208, 0.939]</td><td>3</td>" in page


@pytest.mark.skipif(plotly_path() is None, reason="plotly is not installed")
def test_html_with_plotly_inlines_it_and_plots_a_point_per_run() -> None:
    page = mixed_report().to_html(HISTORY)
    assert points(page) == {"concise": 4, "correct": 2}
    assert parse(page).circles == {"concise": 0, "correct": 0}  # drawn by Plotly, not as SVG
    assert page.count("<script") == 3  # Plotly, the charts' data, the call that draws them
    assert "<script src" not in page
    assert len(page) > 4_000_000


def test_html_escapes_every_text() -> None:
    report = report_of(verdict("<k&>", True, "<script>alert(1)</script>"), evaluator='"x"')
    page = report.to_html()
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert points(page) == {"<k&>": 1}
    assert parse(page).charts[0]["data"][0]["name"] == "&lt;k&amp;&gt;"
    plain = report.to_html(plotly=False)
    assert "<script" not in plain
    assert parse(plain).circles == {"<k&>": 1}


def test_html_chart_of_a_key_without_verdicts_has_no_points() -> None:
    page = report_of(EvaluatorResult.inconclusive("k", "nothing")).to_html()
    assert points(page) == {"k": 0}
    assert parse(
        report_of(EvaluatorResult.inconclusive("k", "x")).to_html(plotly=False)
    ).circles == {"k": 0}


def test_write_writes_markdown_json_and_html(tmp_path: Path) -> None:
    path = tmp_path / "out" / "evals.md"
    assert mixed_report().write(path)
    assert "| concise | 0.667 | 3 |" in without_interval(path.read_text())
    assert json.loads(path.with_suffix(".json").read_text())["keys"]["correct"]["mean"] == 0.75
    parse(path.with_suffix(".html").read_text())


def test_write_uses_the_previous_json_twin_as_the_default_baseline(tmp_path: Path) -> None:
    path = tmp_path / "evals.md"
    report_of(verdict("k", 0.9)).write(path)
    report_of(verdict("k", 0.8)).write(path)
    assert "| k | 0.800 | 1 | -0.100 | 0 | 0 |" in without_interval(path.read_text())


def test_write_with_an_explicit_baseline(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({"schema": 1, "keys": {"k": {"mean": 0.5, "count": 2}}}))
    report_of(verdict("k", 0.55)).write(tmp_path / "evals.md", baseline_path=baseline)
    assert "| k | 0.550 | 1 | +0.050 | 0 | 0 |" in without_interval(
        (tmp_path / "evals.md").read_text()
    )


def test_update_baseline_compares_with_the_old_one_then_replaces_it(tmp_path: Path) -> None:
    baseline = tmp_path / "pinned" / "baseline.json"
    path = tmp_path / "evals.md"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a first pin has nothing to compare with, silently
        report_of(verdict("k", 0.5)).write(path, baseline_path=baseline, update_baseline=True)
    assert json.loads(baseline.read_text())["keys"]["k"]["mean"] == 0.5
    report_of(verdict("k", 0.75)).write(path, baseline_path=baseline, update_baseline=True)
    assert "| k | 0.750 | 1 | +0.250 | 0 | 0 |" in without_interval(path.read_text())
    assert json.loads(baseline.read_text()) == json.loads(path.with_suffix(".json").read_text())
    report_of(verdict("k", 0.0)).write(path, baseline_path=baseline)
    assert json.loads(baseline.read_text())["keys"]["k"]["mean"] == 0.75


def test_update_baseline_needs_a_baseline_path(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="update_baseline needs the baseline_path"):
        report_of(verdict("k", 1.0)).write(tmp_path / "evals.md", update_baseline=True)
    assert list(tmp_path.iterdir()) == []


def test_a_missing_explicit_baseline_warns_and_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "evals.md"
    with pytest.warns(RuntimeWarning, match="does not exist"):
        assert report_of(verdict("k", True)).write(path, baseline_path=tmp_path / "none.json")
    assert "| k | 1.000 | 1 |  | 0 | 0 |" in without_interval(path.read_text())


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '"text"'])
def test_a_corrupt_baseline_warns_and_is_ignored(tmp_path: Path, content: str) -> None:
    baseline = tmp_path / "baseline.json"
    baseline.write_text(content)
    path = tmp_path / "evals.md"
    with pytest.warns(RuntimeWarning, match="going on without it"):
        assert report_of(verdict("k", True)).write(path, baseline_path=baseline)
    assert "| k | 1.000 | 1 |  | 0 | 0 |" in without_interval(path.read_text())


def test_a_missing_first_run_twin_is_not_warned_about(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert report_of(verdict("k", True)).write(tmp_path / "evals.md")


def test_an_empty_report_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "evals.md"
    history = tmp_path / "history.json"
    assert EvalReport().write(path, history_path=history) is False
    assert list(tmp_path.iterdir()) == []


def test_history_is_appended_bounded_and_charted(tmp_path: Path) -> None:
    path = tmp_path / "evals.md"
    history = tmp_path / "history.json"
    for run in range(5):
        report_of(verdict("k", run / 10)).write(path, history_path=history, history_limit=3)
    runs = json.loads(history.read_text())
    assert [run["keys"]["k"]["mean"] for run in runs] == [0.2, 0.3, 0.4]
    # The page of the last run plots the three kept before it, then itself.
    assert points(path.with_suffix(".html").read_text()) == {"k": 4}


@pytest.mark.parametrize("content", ["{broken", '{"a": 1}', "[1, 2]"])
def test_a_corrupt_history_starts_fresh_with_a_warning(tmp_path: Path, content: str) -> None:
    history = tmp_path / "history.json"
    history.write_text(content)
    with pytest.warns(RuntimeWarning, match="history"):
        report_of(verdict("k", True)).write(tmp_path / "evals.md", history_path=history)
    assert len(json.loads(history.read_text())) == 1


def test_history_limit_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="history_limit"):
        report_of(verdict("k", True)).write(tmp_path / "e.md", history_limit=0)


def test_merged_reports_combine_results_and_counts() -> None:
    first = report_of(verdict("k", True), EvaluatorResult.inconclusive("k", "no"), evaluator="a")
    second = report_of(
        verdict("k", False), EvaluatorResult.failed("k", "timeout", "slow"), evaluator="b"
    )
    merged = EvalReport.merged([first, second])
    assert shown(merged.statistics()["k"]) == figures("k", 0.5, 2, 1, 1)
    assert [entry.evaluator for entry in merged.entries] == ["a", "a", "b", "b"]
    assert len(first.entries) == 2


def test_written_files_are_readable_as_the_umask_allows(tmp_path):
    import os
    import stat

    from langchain_evals_port.core import EvaluatorResult

    report = EvalReport()
    report.on_result("exact", EvaluatorResult(key="exact_match", score=True))
    old = os.umask(0o022)
    try:
        report.write(tmp_path / "eval-report.md")
    finally:
        os.umask(old)
    for name in ("eval-report.md", "eval-report.json", "eval-report.html"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644


# --- results by case -------------------------------------------------------------------


def cased(scores: dict[str, list[bool | float]], key: str = "k") -> EvalReport:
    """A report with each case's scores filed under it."""
    report = EvalReport()
    for case, values in scores.items():
        tracer = report.for_case(case)
        for value in values:
            tracer.on_result("judge", verdict(key, value))
    return report


BEFORE = {"q0": [0.9], "q1": [0.8], "q2": [0.9], "q3": [0.7], "q4": [0.8]}
AFTER = {"q0": [0.7], "q1": [0.7], "q2": [0.8], "q3": [0.6], "q4": [0.6]}


def test_an_eval_scope_for_a_case_files_real_results_under_it() -> None:
    report = EvalReport()
    with eval_scope(report.for_case("greeting")):
        ExactMatch().invoke({"outputs": "hi", "reference_outputs": "hi"})
    with eval_scope(report):
        ExactMatch().invoke({"outputs": "hi", "reference_outputs": "ho"})
    assert [(entry.case, entry.result.score) for entry in report.entries] == [
        ("greeting", True),
        (None, False),
    ]


def test_for_case_needs_a_string() -> None:
    with pytest.raises(TypeError, match="case must be a case id \\(str\\), got int"):
        EvalReport().for_case(3)  # type: ignore[arg-type]


def test_the_json_keeps_each_cases_mean_and_a_row_per_case_in_order() -> None:
    report = cased({"b": [0.5, 0.25], "a": [True]}, key="mixed")
    report.for_case("c").on_result("judge", EvaluatorResult.inconclusive("mixed", "no answer"))
    report.on_result("judge", verdict("other", 1.0))
    data = report.to_json()
    figures = data["keys"]["mixed"]
    assert figures["case_means"] == {"a": 1.0, "b": 0.375}
    assert figures["inconclusive"] == 1
    rows = [(row["case_id"], [r["score"] for r in row["results"]]) for row in data["runs"]]
    assert rows == [("a", [True]), ("b", [0.5, 0.25]), ("c", [None]), (None, [1.0])]
    json.dumps(data)


def test_a_key_with_a_result_outside_any_case_keeps_no_cases() -> None:
    report = cased({"a": [1.0]})
    report.on_result("judge", verdict("k", 0.0))
    assert report.to_json()["keys"]["k"]["case_means"] == {}


def test_the_mean_weighs_every_case_the_same() -> None:
    report = cased({"a": [1.0, 1.0, 1.0], "b": [0.0]})
    assert shown(report.statistics()["k"]) == figures("k", 0.5, 4, 0, 0)
    assert report.statistics()["k"].method == "clustered logit t"


def test_results_outside_any_case_are_cases_of_their_own_whatever_the_real_names() -> None:
    report = cased({"result 1": [1.0]})
    report.on_result("judge", verdict("k", 0.0))
    report.on_result("judge", verdict("k", 0.5))
    figures = report.statistics()["k"]
    assert (figures.cases, figures.mean) == (3, 0.5)


def test_the_change_column_is_paired_with_its_interval_and_names_the_cases() -> None:
    markdown = cased(AFTER).to_markdown(cased(BEFORE).to_json())
    assert "| k | 0.680 | 5 | -0.140 [-0.208, -0.072] worse | 0 | 0 |" in without_interval(markdown)
    assert (
        "## Changes by case\n\n- k: worse: q0 (-0.200), q4 (-0.200), q1 (-0.100), q2 (-0.100), "
        "q3 (-0.100)\n" in markdown
    )


def test_a_run_compared_with_itself_has_no_change_and_no_case_section() -> None:
    report = cased(BEFORE)
    markdown = report.to_markdown(report.to_json())
    assert (
        "| k | 0.820 | 5 | +0.000 [+0.000, +0.000] no detectable change | 0 | 0 |"
        in without_interval(markdown)
    )
    assert "Changes by case" not in markdown


def test_the_statistics_read_back_from_the_json_are_the_reports() -> None:
    report = cased({"a": [True, False], "b": [True, True], "c": [False, False]})
    comparison = report.compare(report.to_json())["k"]
    assert comparison.baseline == report.statistics()["k"]


def test_an_old_baseline_without_cases_gets_the_plain_difference() -> None:
    old = {"schema": 1, "keys": {"k": {"mean": 0.9, "count": 5}}}
    markdown = cased(AFTER).to_markdown(old)
    assert "| k | 0.680 | 5 | -0.220 | 0 | 0 |" in without_interval(markdown)


@pytest.mark.parametrize(
    "cases",
    [[0.9], {"q0": 0.9}, {"q0": ["high"]}, {"q0": [float("nan")]}],
    ids=["list", "bare-score", "text-score", "nan"],
)
def test_malformed_cases_in_a_baseline_fall_back_to_the_plain_difference(cases: object) -> None:
    baseline = {"schema": 1, "keys": {"k": {"mean": 0.9, "cases": cases}}}
    assert "| k | 0.680 | 5 | -0.220 | 0 | 0 |" in without_interval(
        cased(AFTER).to_markdown(baseline)
    )


def test_results_outside_any_case_are_not_paired() -> None:
    report = EvalReport()
    for values in AFTER.values():
        report.on_result("judge", verdict("k", values[0]))
    markdown = report.to_markdown(cased(BEFORE).to_json())
    assert "| k | 0.680 | 5 | -0.140 | 0 | 0 |" in without_interval(markdown)
    assert "Changes by case" not in markdown


def test_without_shared_cases_the_change_is_the_plain_difference_and_the_cases_are_named() -> None:
    markdown = cased({"new": [0.5], "other": [0.7]}).to_markdown(cased({"old": [0.9]}).to_json())
    assert "| k | 0.600 | 2 | -0.300 | 0 | 0 |" in without_interval(markdown)
    assert "- k: only in the baseline: old; only in the candidate: new, other" in markdown


def test_the_html_page_shows_the_same_change_and_cases() -> None:
    before = cased(BEFORE, key="<k>")
    page = cased({**AFTER, "q5": [1.0]}, key="<k>").to_html(baseline=before.to_json())
    parse(page)
    assert "<td>-0.140 [-0.208, -0.072] worse</td>" in page
    assert "<h2>Changes by case</h2>" in page
    assert "<li>&lt;k&gt;: worse: q0 (-0.200), q4 (-0.200)" in page
    assert "only in the candidate: q5</li>" in page


def test_records_carry_the_case_and_old_records_read_as_outside_any_case() -> None:
    report = cased({"a": [1.0]})
    report.on_result("judge", verdict("k", 0.0))
    records = report.to_records()
    assert [record["case"] for record in records] == ["a", None]
    copy = EvalReport.from_records(records)
    assert [entry.case for entry in copy.entries] == ["a", None]
    old = [{key: value for key, value in record.items() if key != "case"} for record in records]
    assert [entry.case for entry in EvalReport.from_records(old).entries] == [None, None]


def test_a_pinned_baseline_written_by_case_compares_on_the_next_write(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    path = tmp_path / "evals.md"
    cased(BEFORE).write(path, baseline_path=baseline, update_baseline=True)
    assert json.loads(baseline.read_text())["keys"]["k"]["case_means"]["q3"] == 0.7
    cased(AFTER).write(path, baseline_path=baseline)
    assert "| k | 0.680 | 5 | -0.140 [-0.208, -0.072] worse | 0 | 0 |" in without_interval(
        path.read_text()
    )


def test_summaries_is_deprecated_for_statistics() -> None:
    report = EvalReport()
    with eval_scope(report):
        ExactMatch()(outputs="a", reference_outputs="a")
    with pytest.warns(DeprecationWarning, match=r"use statistics\(\)"):
        assert report.summaries() == report.statistics()
