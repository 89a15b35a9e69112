"""Experiment reports: the Markdown, JSON and HTML files, and the terminal tables."""

from __future__ import annotations

import io
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from langchain_evals_port import ExactMatch, Score, evaluator
from langchain_evals_port.experiments import (
    REPORT_SCHEMA_VERSION,
    Dataset,
    ExperimentResult,
    print_comparison,
    print_summary,
    run_experiment,
)
from langchain_evals_port.testing import ScriptedChatModel

ARITHMETIC = Dataset.from_records(
    [
        {"id": "add", "inputs": {"q": "2 + 2"}, "reference_outputs": "4"},
        {"id": "mul", "inputs": {"q": "3 * 3"}, "reference_outputs": "9"},
        {"id": "sub", "inputs": {"q": "5 - 1"}, "reference_outputs": "4"},
        {"id": "div", "inputs": {"q": "8 / 2"}, "reference_outputs": "4"},
    ]
)


def calculator(inputs: dict[str, str]) -> str:
    return str(eval(inputs["q"]))  # the app under test: a tiny calculator


@evaluator(feedback_key="brevity")
def brevity(outputs: str) -> Score:
    return Score(1.0 if len(outputs) <= 2 else 0.5, comment=f"{len(outputs)} characters")


def experiment(app: Any, name: str, dataset: Dataset = ARITHMETIC, **options: Any) -> Any:
    return run_experiment(
        app, dataset, [ExactMatch(), brevity], name=name, progress=False, **options
    )


def written(result: ExperimentResult, directory: Path, **options: Any) -> dict[str, Any]:
    """The three files, the HTML page without Plotly (its charts as tables, no script) and
    with no white space between its tags."""
    paths = result.write(directory, plotly=False, **options)
    assert [path.name for path in paths] == ["report.md", "report.json", "report.html"]
    return {
        "md": paths[0].read_text(encoding="utf-8"),
        "json": json.loads(paths[1].read_text(encoding="utf-8")),
        "html": re.sub(r">\s+<", "><", paths[2].read_text(encoding="utf-8")),
    }


def printed(render: Any, *args: Any, **options: Any) -> str:
    console = Console(file=io.StringIO(), width=120)
    render(*args, console=console, **options)
    text = console.file.getvalue()
    assert "\x1b[" not in text  # not a terminal: plain text, no colour codes
    return text


def row(table: str, key: str) -> str:
    """``key``'s row in a printed table, its cells one space apart."""
    [line] = [line for line in table.splitlines() if line.startswith(f"{key} ")]
    return " ".join(line.split())


def test_the_json_report_holds_the_statistics_and_every_run(tmp_path: Path) -> None:
    # "div" answers "4.0": exact match fails there, brevity scores it 0.5.
    result = experiment(calculator, "calc")
    report = written(result, tmp_path / "new" / "folder")["json"]

    assert report["schema_version"] == REPORT_SCHEMA_VERSION == 2
    assert (report["source"], report["name"]) == ("experiment", "calc")
    assert report["comparison"] is None
    stats = result.statistics()
    exact = report["keys"]["exact_match"]
    assert exact["kind"] == "pass rate"
    assert exact["mean"] == stats["exact_match"].mean == 0.75
    assert exact["interval"] == {
        "low": stats["exact_match"].interval.low,
        "high": stats["exact_match"].interval.high,
    }
    assert (exact["cases"], exact["verdicts"], exact["inconclusive"], exact["failed"]) == (
        4,
        4,
        0,
        0,
    )
    assert exact["case_means"] == {"add": 1.0, "div": 0.0, "mul": 1.0, "sub": 1.0}
    assert report["keys"]["brevity"]["kind"] == "mean"
    assert report["keys"]["brevity"]["mean"] == pytest.approx(0.875)

    runs = {run["case_id"]: run for run in report["runs"]}
    assert list(runs) == ["add", "mul", "sub", "div"]
    div = runs["div"]
    assert (div["trial"], div["inputs"], div["outputs"], div["error"]) == (
        0,
        {"q": "8 / 2"},
        "4.0",
        None,
    )
    assert div["reference_outputs"] == "4"
    assert div["latency_seconds"] >= 0
    results = {r["key"]: r for r in div["results"]}
    assert (results["exact_match"]["outcome"], results["exact_match"]["score"]) == (
        "verdict",
        False,
    )
    assert (results["brevity"]["score"], results["brevity"]["comment"]) == (0.5, "3 characters")


def test_markdown_and_html_show_the_figures_and_each_evaluator_s_reasoning(
    tmp_path: Path,
) -> None:
    result = experiment(calculator, "calc")
    files = written(result, tmp_path)
    figures = str(result.statistics()["exact_match"].interval)
    assert figures == "[0.301, 0.954]"

    md = files["md"]
    assert md.startswith("# Experiment calc\n")
    assert "4 runs of 4 cases (1 trial each)." in md
    assert f"| exact_match | pass rate | 0.750 | {figures} | 4 | 0 | 0 |" in md
    assert "| brevity | mean | 0.875 |" in md
    assert '| div | 0 | `{"q": "8 / 2"}` | `4.0` |' in md
    assert "| 0.500 — 3 characters | False |" in md

    html = files["html"]
    assert "<h1>Experiment calc</h1>" in html
    assert (
        '<td>exact_match</td><td>pass rate</td><td class="num score">0.750</td>'
        f'<td class="num interval">{figures}</td>'
    ) in html
    reasoning = '<div class="reasoning"><pre>3 characters</pre></div>'
    # A score with no threshold to pass: neither passed nor not (its own colour, in the legend).
    chip = '<span class="outcome verdict no-threshold" title="verdict: a score with no threshold'
    assert f'{chip} to pass">0.500</span>{reasoning}' in html


def test_a_target_that_raised_shows_its_error_in_every_file(tmp_path: Path) -> None:
    def picky(inputs: dict[str, str]) -> str:
        if "*" in inputs["q"]:
            raise ConnectionError("the multiplication service is down")
        return calculator(inputs)

    result = experiment(picky, "picky")
    files = written(result, tmp_path)
    error = "ConnectionError: the multiplication service is down"

    [mul] = [run for run in files["json"]["runs"] if run["case_id"] == "mul"]
    assert mul["error"] == {
        "type": "ConnectionError",
        "message": "the multiplication service is down",
    }
    assert mul["outputs"] is None
    assert {r["outcome"] for r in mul["results"]} == {"inconclusive"}
    assert files["json"]["keys"]["exact_match"]["inconclusive"] == 1

    assert f'| mul | 0 | `{{"q": "3 * 3"}}` | raised {error} |' in files["md"]
    assert f"inconclusive — the target raised {error}" in files["md"]
    assert f'<span class="failed">raised {error}</span>' in files["html"]

    # 3 cases judged, one inconclusive, none failed.
    assert (
        row(printed(print_summary, result), "exact_match")
        == "exact_match pass rate 0.667 [0.208, 0.939] 3 1 0"
    )


def test_an_evaluator_failure_shows_its_code_and_reason(tmp_path: Path) -> None:
    @evaluator(feedback_key="judge")
    def judge(outputs: str) -> bool:
        if outputs == "9":
            raise TimeoutError("the judge timed out")
        return True

    result = run_experiment(calculator, ARITHMETIC, [judge], name="judged", progress=False)
    files = written(result, tmp_path)
    [mul] = [run for run in files["json"]["runs"] if run["case_id"] == "mul"]
    assert mul["results"][0]["outcome"] == "failed"
    assert mul["results"][0]["error_code"] == "timeout"
    assert files["json"]["keys"]["judge"]["failed"] == 1
    reason = "evaluator 'judge' failed: TimeoutError: the judge timed out"
    assert f"| failed [timeout] — {reason} |" in files["md"]
    shown = reason.replace("'", "&#39;")  # escaped, quotes too
    assert (
        f'<span class="outcome failed" title="failed">failed [timeout]</span><div class="reasoning">'
        f"<pre>{shown}</pre></div>"
    ) in files["html"]
    # 3 cases judged, none inconclusive, one failed.
    assert (
        row(printed(print_summary, result), "judge") == "judge pass rate 1.000 [0.439, 1.000] 3 0 1"
    )


def test_html_escapes_what_the_target_and_the_evaluators_said(tmp_path: Path) -> None:
    @evaluator(feedback_key="safe<b>")
    def safe(outputs: str) -> Score:
        return Score(False, comment="found <img src=x onerror=alert(2)> & more")

    dataset = Dataset.from_records([{"id": "x<i>", "inputs": {"q": "<q>"}}])
    result = run_experiment(
        lambda inputs: "<script>alert(1)</script>",
        dataset,
        [safe],
        name="<evil>",
        progress=False,
    )
    files = written(result, tmp_path)
    html = files["html"]
    # The page's one script is its own (the "only the cases with a problem" filter).
    for raw in ("<script>alert", "<img", "<evil>", "<b>", "<i>", "<q>"):
        assert raw not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "found &lt;img src=x onerror=alert(2)&gt; &amp; more" in html
    assert "<title>Experiment &lt;evil&gt; · langchain-evals</title>" in html
    assert "<td>x&lt;i&gt;</td>" in html
    # Markdown shows outputs as code, where no renderer reads them as HTML.
    assert "| `<script>alert(1)</script>` |" in files["md"]
    assert files["json"]["runs"][0]["outputs"] == "<script>alert(1)</script>"


def test_long_outputs_are_cut_in_markdown_and_html_and_whole_in_json(tmp_path: Path) -> None:
    long = "word " * 200
    result = run_experiment(
        lambda inputs: long,
        Dataset.from_records([{"id": "long", "inputs": {"q": "say a lot"}}]),
        [brevity],
        name="long",
        progress=False,
    )
    files = written(result, tmp_path)
    assert files["json"]["runs"][0]["outputs"] == long
    # Its trailing space is kept visible: a JSON string, quoted.
    cut = '"' + "word " * 23 + "wor…"
    assert len(cut) == 120
    assert f"| `{cut}` |" in files["md"]
    assert long.strip() not in files["md"]
    # The page cuts at 200 characters, as the console does, and opens the whole on a click.
    assert f"<details><summary>{long[:200]}…</summary><pre>{long}</pre></details>" in files["html"]


def test_outputs_json_cannot_hold_are_written_as_text(tmp_path: Path) -> None:
    class Opaque:
        def __str__(self) -> str:
            return "an opaque answer"

    answers = {"add": {"value": Opaque(), "ratio": math.nan}}

    result = run_experiment(
        lambda inputs: answers["add"],
        Dataset.from_records([{"id": "add", "inputs": {"q": "2 + 2"}}]),
        [],
        name="opaque",
        progress=False,
    )
    report = written(result, tmp_path)["json"]
    assert report["runs"][0]["outputs"] == {"value": "an opaque answer", "ratio": None}
    assert report["keys"] == {}


def test_token_usage_of_the_target_s_model_calls_is_reported(tmp_path: Path) -> None:
    model = ScriptedChatModel(
        responder=lambda messages: "4",
        usage={"input_tokens": 10, "output_tokens": 2, "total_tokens": 12},
    )

    def app(inputs: dict[str, str]) -> str:
        return model.invoke(inputs["q"]).text

    dataset = Dataset.from_records([{"id": "add", "inputs": {"q": "2 + 2"}}])
    result = run_experiment(app, dataset, [brevity], name="model", progress=False)
    files = written(result, tmp_path)
    assert files["json"]["runs"][0]["usage"] == {
        "input_tokens": 10,
        "output_tokens": 2,
        "total_tokens": 12,
    }
    assert "| 12 (10 in, 2 out) |" in files["md"]
    assert '<td class="num tokens">12 (10 in, 2 out)</td>' in files["html"]


CASES = Dataset.from_records(
    [
        {"id": f"c{i:02}", "inputs": {"q": f"{i} + 1"}, "reference_outputs": str(i + 1)}
        for i in range(12)
    ]
)


def broken(inputs: dict[str, str]) -> str:
    number = int(inputs["q"].split()[0])
    return calculator(inputs) if number < 4 else "?"


def test_a_report_with_a_baseline_compares_case_by_case(tmp_path: Path) -> None:
    before = experiment(calculator, "before", CASES)
    worse = experiment(broken, "worse", CASES)
    comparison = worse.compare(before)["exact_match"]
    assert str(comparison) == "-0.667 [-0.980, -0.354] worse"

    files = written(worse, tmp_path, baseline=before)
    data = files["json"]["comparison"]
    assert data["baseline"] == "before"
    exact = data["keys"]["exact_match"]
    assert (exact["baseline_mean"], exact["mean"]) == (1.0, pytest.approx(4 / 12))
    assert exact["difference"] == pytest.approx(-8 / 12)
    assert exact["interval"] == {"low": comparison.interval.low, "high": comparison.interval.high}
    assert (exact["verdict"], exact["shared"]) == ("worse", 12)
    assert [case["case_id"] for case in exact["worse"]] == [f"c{i:02}" for i in range(4, 12)]
    assert {case["difference"] for case in exact["worse"]} == {-1.0}
    assert exact["better"] == []
    assert data["keys"]["brevity"]["verdict"] == "no detectable change"

    md = files["md"]
    assert "## Compared with before" in md
    assert (
        "| exact_match | 1.000 [0.758, 1.000] | 0.333 [0.138, 0.609] | -0.667 "
        "| [-0.980, -0.354] | worse | 12 |"
    ) in md
    assert "- exact_match: worse: c04 (-1.000), c05 (-1.000)" in md
    html = files["html"]
    assert "<h2>Compared with before</h2>" in html
    assert (
        '<td class="num change">-0.667</td><td class="num">[-0.980, -0.354]</td>'
        '<td class="verdict worse">worse</td><td class="num">12</td>'
    ) in html
    assert "<li>exact_match: worse: c04 (-1.000), c05 (-1.000)" in html


def test_the_summary_table_has_every_key_and_with_a_baseline_the_change() -> None:
    before = experiment(calculator, "before", CASES)
    worse = experiment(broken, "worse", CASES)

    alone = printed(worse.print)
    assert alone.splitlines()[0].strip() == "worse"
    assert row(alone, "exact_match") == "exact_match pass rate 0.333 [0.138, 0.609] 12 0 0"
    assert row(alone, "brevity") == "brevity mean 1.000 [1.000, 1.000] 12 0 0"
    assert "change" not in alone

    against = printed(worse.print, baseline=before)
    assert against.splitlines()[0].strip() == "worse against before"
    assert row(against, "exact_match") == (
        "exact_match pass rate 0.333 [0.138, 0.609] 12 0 0 -0.667 [-0.980, -0.354] worse"
    )
    assert row(against, "brevity") == (
        "brevity mean 1.000 [1.000, 1.000] 12 0 0 +0.000 [+0.000, +0.000] no detectable change"
    )
    assert "exact_match: worse: c04 (-1.000), c05 (-1.000)" in against


def test_print_comparison_shows_both_sides_the_change_and_the_cases() -> None:
    before = experiment(calculator, "before", CASES)
    again = experiment(calculator, "again", CASES)
    worse = experiment(broken, "worse", CASES)

    text = printed(print_comparison, worse, before)
    assert text.splitlines()[0].strip() == "worse against before"
    assert "baseline: before" in text.splitlines()[1]
    assert row(text, "exact_match") == (
        "exact_match 1.000 [0.758, 1.000] 0.333 [0.138, 0.609] -0.667 [-0.980, -0.354] worse 12"
    )
    assert "exact_match: worse: c04 (-1.000)" in text

    unchanged = printed(print_comparison, again, before)
    assert row(unchanged, "exact_match").endswith("+0.000 [+0.000, +0.000] no detectable change 12")
    assert "worse:" not in unchanged


def test_keys_of_one_side_only_are_named(tmp_path: Path) -> None:
    before = run_experiment(calculator, CASES, [ExactMatch()], name="before", progress=False)
    now = experiment(calculator, "now", CASES)
    summary = printed(print_summary, now, baseline=before)
    assert row(summary, "brevity").endswith("12 0 0 — not in the baseline")
    assert "not in the baseline: brevity" in summary
    assert "only in the baseline" not in summary
    report = written(now, tmp_path, baseline=before)["json"]
    assert report["comparison"]["not_in_baseline"] == ["brevity"]
    assert list(report["comparison"]["keys"]) == ["exact_match"]


def test_trials_are_rows_of_their_own(tmp_path: Path) -> None:
    result = experiment(calculator, "trials", ARITHMETIC, trials=2)
    files = written(result, tmp_path)
    assert "8 runs of 4 cases (2 trials each)." in files["md"]
    assert [(r["case_id"], r["trial"]) for r in files["json"]["runs"][:2]] == [
        ("add", 0),
        ("add", 1),
    ]
    assert files["json"]["keys"]["exact_match"]["verdicts"] == 8
    assert files["json"]["keys"]["exact_match"]["cases"] == 4


def test_markdown_keeps_the_whitespace_of_outputs_visible(tmp_path: Path) -> None:
    dataset = Dataset.from_records(
        [
            {"id": "padded", "inputs": {"q": "a  b"}, "reference_outputs": "padded"},
            {"id": "lines", "inputs": {"q": "c"}, "reference_outputs": "x"},
        ]
    )
    answers = {"a  b": "  padded  ", "c": "one\ntwo"}
    result = run_experiment(
        lambda inputs: answers[inputs["q"]], dataset, [ExactMatch()], name="ws", progress=False
    )
    markdown = written(result, tmp_path)["md"]
    assert '`"  padded  "`' in markdown
    assert '`"one\\ntwo"`' in markdown
    assert '`{"q": "a  b"}`' in markdown


def test_an_agent_s_messages_read_as_a_folded_transcript(tmp_path: Path) -> None:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from langchain_evals_port.experiments import ExperimentStore, report_html

    def agent(inputs: dict[str, str]) -> dict[str, Any]:
        call = {"name": "weather", "args": {"city": "Paris"}, "id": "c1"}
        return {
            "messages": [
                HumanMessage(inputs["q"]),
                AIMessage("", tool_calls=[call]),
                ToolMessage("sunny, 21 °C", tool_call_id="c1", name="weather"),
                AIMessage("It is sunny in Paris."),
            ],
            "remaining_steps": 3,
        }

    dataset = Dataset.from_records([{"id": "paris", "inputs": {"q": "Weather in Paris?"}}])
    with ExperimentStore(tmp_path / "experiments.db") as store:
        run_experiment(agent, dataset, [brevity], name="agent", store=store, progress=False)
        loaded = store.load("agent")
    pages = [
        re.sub(r">\s+<", "><", report_html(loaded, plotly=False)),
        written(loaded, tmp_path / "files")["html"],
    ]
    for page in pages:
        cell = page[page.index('<td class="text outputs">') :]
        cell = cell[: cell.index("</td>")]
        assert cell.startswith(
            '<td class="text outputs"><details class="run-transcript">'
            "<summary>4 messages, 1 tool call: It is sunny in Paris.</summary>"
            '<ol class="transcript">'
        )
        assert '<li class="message human"><div class="role">human</div>' in cell
        assert (
            "calls <code>weather</code><pre>{\n  &#34;city&#34;: &#34;Paris&#34;\n}</pre>" in cell
        )
        assert '<div class="role">tool · weather</div><pre class="content">sunny, 21 °C</pre>' in (
            cell
        )
        assert "additional_kwargs" not in cell  # no serialized-message dump


def test_the_runs_table_gives_text_room_and_never_breaks_a_word() -> None:
    from langchain_evals_port.reporting._pages import STYLE_SHEET

    css = STYLE_SHEET.read_text(encoding="utf-8")
    assert "break-word" not in css
    assert "break-all" not in css
    assert "#runs td.outputs { min-width: 28rem; }" in css


def test_a_logit_interval_is_marked_and_explained_in_every_rendering(tmp_path: Path) -> None:
    # Eleven cases at 1.0 and one at 0.9: the t interval is [0.973, 1.010].
    @evaluator(feedback_key="share")
    def share(outputs: str) -> Score:
        return Score(0.9 if outputs == "1" else 1.0)

    result = run_experiment(calculator, CASES, [share], name="bounded", progress=False)
    figures = result.statistics()["share"]
    assert figures.method == "logit t"
    assert figures.interval is not None
    assert figures.interval.high <= 1.0
    note = "A logit interval stays within the score's bounds (0 and 1)"
    assert "(logit)" in row(printed(print_summary, result), "share")
    assert note in printed(print_summary, result)
    files = written(result, tmp_path)
    assert note in files["md"]
    assert note in files["html"]


def test_with_trials_every_count_of_the_summary_is_of_runs(tmp_path: Path) -> None:
    result = experiment(calculator, "trials", ARITHMETIC, trials=2)
    table = printed(print_summary, result)
    header = " ".join(table.splitlines()[1].split())
    assert header == "key measure score [95 % interval] verdicts inconclusive failed"
    assert row(table, "exact_match") == "exact_match pass rate 0.750 [0.301, 0.954] 8 0 0"
    assert "Counts are runs (2 trials of each case)" in table
    markdown = written(result, tmp_path)["md"]
    assert (
        "| key | measure | score | 95 % interval | verdicts | inconclusive | failed |" in markdown
    )
