"""The pytest plugin: ambient eval scope, one report per run, baseline, trend, max drop, xdist."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# pytester's in-process runs forget the modules first imported during them, and numpy (under
# scipy.stats, which the report's statistics use) cannot be imported twice in one process:
# it is imported here, once, for every inner run.
import scipy.stats  # noqa: F401

# Block the entry-point registration (if installed) and load the module by name, so the
# inner runs use this checkout's plugin whether or not the entry point is registered.
PLUGIN = ["-p", "no:langchain_evals", "-p", "langchain_evals_port.pytest_plugin"]
OPTS = [*PLUGIN, "-p", "no:cacheprovider", "-o", "asyncio_default_fixture_loop_scope=function"]

# One test per score, named by its position, so that a run with other scores keeps the
# same tests (the cases the change column and the max drop compare one by one).
SCORES = """
import pytest
from langchain_evals_port import evaluator

SCORES = {scores}


@evaluator(feedback_key="quality")
def quality(outputs, reference_outputs):
    return reference_outputs


@pytest.mark.eval_suite
@pytest.mark.parametrize("case", range(len(SCORES)))
def test_quality(case):
    score = SCORES[case]
    assert quality(outputs="x", reference_outputs=score)["score"] == score
"""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess(*OPTS, *args)


def report_json(pytester: pytest.Pytester, name: str = "eval-report.json") -> dict:
    return json.loads((pytester.path / name).read_text(encoding="utf-8"))


def counts(pytester: pytest.Pytester) -> dict[str, int]:
    return {key: figures["verdicts"] for key, figures in report_json(pytester)["keys"].items()}


def test_marker_on_function_class_and_module(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_function="""
        import pytest
        from langchain_evals_port import ExactMatch

        @pytest.mark.eval_suite
        def test_marked():
            ExactMatch(feedback_key="function")(outputs="a", reference_outputs="a")

        def test_unmarked():
            ExactMatch(feedback_key="unmarked")(outputs="a", reference_outputs="a")
        """,
        test_class="""
        import pytest
        from langchain_evals_port import ExactMatch

        @pytest.mark.eval_suite
        class TestMarked:
            def test_one(self):
                ExactMatch(feedback_key="class")(outputs="a", reference_outputs="b")
        """,
        test_module="""
        import pytest
        from langchain_evals_port import ExactMatch

        pytestmark = pytest.mark.eval_suite

        def test_one():
            ExactMatch(feedback_key="module")(outputs="a", reference_outputs="a")
        """,
    )
    result = run(pytester, "--strict-markers")
    result.assert_outcomes(passed=4)
    assert counts(pytester) == {"class": 1, "function": 1, "module": 1}
    assert (pytester.path / "eval-report.md").is_file()
    assert (pytester.path / "eval-report.html").is_file()
    result.stdout.fnmatch_lines(["*evaluation report written to *eval-report.md*"])


def test_evals_autouse_ini_reports_every_test(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nevals_autouse = true\n")
    pytester.makepyfile(
        """
        from langchain_evals_port import ExactMatch

        def test_one():
            ExactMatch()(outputs="a", reference_outputs="a")

        def test_two():
            ExactMatch()(outputs="a", reference_outputs="a")
        """
    )
    run(pytester).assert_outcomes(passed=2)
    assert counts(pytester) == {"exact_match": 2}


def test_nothing_evaluated_writes_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        from langchain_evals_port import ExactMatch

        def test_unmarked():
            ExactMatch()(outputs="a", reference_outputs="a")

        def test_plain():
            assert True
        """
    )
    result = run(pytester)
    result.assert_outcomes(passed=2)
    assert sorted(p.name for p in pytester.path.iterdir() if "eval-report" in p.name) == []
    assert "evaluation report" not in result.stdout.str()


def test_evaluator_with_its_own_tracer_keeps_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest
        from langchain_evals_port import ExactMatch
        from langchain_evals_port.testing import RecordingTracer

        @pytest.mark.eval_suite
        def test_own_tracer(eval_report):
            tracer = RecordingTracer()
            ExactMatch(feedback_key="own", tracer=tracer)(outputs="a", reference_outputs="a")
            ExactMatch(feedback_key="ambient")(outputs="a", reference_outputs="a")
            assert [event.kind for event in tracer.events] == ["start", "result"]
            assert [entry.result.key for entry in eval_report.entries] == ["ambient"]
        """
    )
    run(pytester).assert_outcomes(passed=1)
    assert counts(pytester) == {"ambient": 1}


def test_eval_report_fixture_collects_across_tests(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest
        from langchain_evals_port import ExactMatch

        pytestmark = pytest.mark.eval_suite

        def test_first(eval_report):
            ExactMatch()(outputs="a", reference_outputs="b")
            assert eval_report.statistics()["exact_match"].mean == 0.0

        def test_second(eval_report):
            ExactMatch()(outputs="a", reference_outputs="a")
            assert eval_report.statistics()["exact_match"].verdicts == 2
            assert eval_report.statistics()["exact_match"].mean == 0.5
        """
    )
    run(pytester).assert_outcomes(passed=2)


def test_async_test_reports_into_the_scope(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_mode = auto\n")
    pytester.makepyfile(
        """
        import asyncio
        import pytest
        from langchain_evals_port import ExactMatch

        @pytest.mark.eval_suite
        async def test_async():
            await ExactMatch().ainvoke({"outputs": "a", "reference_outputs": "a"})
            await asyncio.gather(
                ExactMatch().ainvoke({"outputs": "a", "reference_outputs": "b"}),
            )
        """
    )
    run(pytester).assert_outcomes(passed=1)
    assert counts(pytester) == {"exact_match": 2}


def test_report_path_option_and_ini(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(SCORES.format(scores=[1.0]))
    run(pytester, "--evals-report", "out/cli.md").assert_outcomes(passed=1)
    assert {p.name for p in (pytester.path / "out").iterdir()} == {
        "cli.md",
        "cli.json",
        "cli.html",
        "cli.history.json",
    }
    pytester.makeini("[pytest]\nevals_report = ini/report.md\n")
    run(pytester).assert_outcomes(passed=1)
    assert (pytester.path / "ini" / "report.json").is_file()
    assert not (pytester.path / "eval-report.md").exists()


def test_second_run_has_change_column_and_trend(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(SCORES.format(scores=[1.0, 0.8]))
    run(pytester).assert_outcomes(passed=2)
    first = (pytester.path / "eval-report.md").read_text(encoding="utf-8")
    assert "| quality | 0.900 | [0.000, 1.000] | 2 |  |" in first
    pytester.makepyfile(SCORES.format(scores=[1.0, 1.0]))
    run(pytester).assert_outcomes(passed=2)
    second = (pytester.path / "eval-report.md").read_text(encoding="utf-8")
    # Test by test: one rose by 0.2, one stayed; two tests cannot tell that from noise.
    # The paired t interval, [-1.171, +1.371], would leave -1 to 1: it is taken on the logit.
    assert (
        "| quality | 1.000 | [1.000, 1.000] | 2 | +0.100 [-0.828, +0.882] no detectable change |"
        in second
    )
    assert (
        "- quality: better: test_second_run_has_change_column_and_trend.py::test_quality[1] (+0.200)"
        in second
    )
    html = (pytester.path / "eval-report.html").read_text(encoding="utf-8")
    assert trend_points(html) == 2
    history = json.loads((pytester.path / "eval-report.history.json").read_text())
    assert [run["keys"]["quality"]["mean"] for run in history] == [0.9, 1.0]


PIN = ("--evals-baseline", "eval-baseline.json")


def baseline_mean(pytester: pytest.Pytester) -> float:
    return report_json(pytester, "eval-baseline.json")["keys"]["quality"]["mean"]


def test_a_regression_fails_every_run_until_it_is_accepted(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(SCORES.format(scores=[1.0] * 4))
    result = run(pytester, *PIN, "--evals-update-baseline")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*baseline *eval-baseline.json updated with this run*"])
    assert baseline_mean(pytester) == 1.0

    # The bot got worse on every test: every run fails, not only the first one after it.
    pytester.makepyfile(SCORES.format(scores=[0.9, 0.8, 0.8, 0.7]))
    for _ in range(2):
        result = run(pytester, *PIN, "--evals-max-drop", "0.05")
        result.assert_outcomes(passed=4)
        assert result.ret == pytest.ExitCode.TESTS_FAILED
        result.stdout.fnmatch_lines(
            [
                "FAILED: evaluation scores fell below the baseline *eval-baseline.json by more "
                "than 0.05:"
            ]
        )
        assert (
            "\n    quality: -0.200 [-0.330, -0.070] worse: a drop of more than 0.05 outside "
            "the noise\n" in result.stdout.str()
        )
        assert baseline_mean(pytester) == 1.0
        markdown = (pytester.path / "eval-report.md").read_text()
        row = r"\| quality \| 0\.800 \| \[[^]]*\] \| 4 \| -0\.200 \[-0\.330, -0\.070\] worse \|"
        assert re.search(row, markdown)

    # Accepting the new figures passes and re-pins; the next run compares with them.
    result = run(pytester, *PIN, "--evals-max-drop", "0.05", "--evals-update-baseline")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["accepted into the baseline: *"])
    assert "\n    quality: -0.200 [-0.330, -0.070] worse: " in result.stdout.str()
    assert baseline_mean(pytester) == pytest.approx(0.8)
    assert run(pytester, *PIN, "--evals-max-drop", "0.05").ret == pytest.ExitCode.OK

    # The trend keeps every run, apart from the baseline.
    history = json.loads((pytester.path / "eval-report.history.json").read_text())
    assert [r["keys"]["quality"]["mean"] for r in history] == pytest.approx([1.0, *[0.8] * 4])


def test_max_drop_lets_a_larger_drop_within_the_noise_through(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(SCORES.format(scores=[1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]))
    run(pytester, *PIN, "--evals-update-baseline").assert_outcomes(passed=8)
    # The mean fell by 0.125, more than the limit (the plain rule on means failed this run),
    # but two tests fell and one rose: eight tests cannot tell that from noise.
    pytester.makepyfile(SCORES.format(scores=[0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]))
    result = run(pytester, *PIN, "--evals-max-drop", "0.05")
    assert result.ret == pytest.ExitCode.OK
    assert (
        "\nnot failed: drops of more than 0.05 that cannot be told from noise:\n"
        "    quality: -0.125 [-0.661, +0.411] no detectable change: a drop of more than 0.05, "
        "within the noise\n" in result.stdout.str()
    )
    assert "FAILED" not in result.stdout.str()
    markdown = (pytester.path / "eval-report.md").read_text()
    assert re.search(
        r"- quality: worse: \S+\[0\] \(-1\.000\), \S+\[3\] \(-1\.000\); "
        r"better: \S+\[6\] \(\+1\.000\)",
        markdown,
    ), markdown


def test_max_drop_within_the_limit_passes(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nevals_baseline = eval-baseline.json\nevals_max_drop = 0.1\n")
    pytester.makepyfile(SCORES.format(scores=[1.0, 1.0]))
    run(pytester, "--evals-update-baseline").assert_outcomes(passed=2)
    pytester.makepyfile(SCORES.format(scores=[1.0, 0.8]))
    result = run(pytester)
    assert result.ret == pytest.ExitCode.OK
    assert "dropped" not in result.stdout.str()


def test_bad_max_drop_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nevals_max_drop = lots\n")
    pytester.makepyfile("def test_nothing(): pass")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*evals_max_drop must be a number*"])


@pytest.mark.parametrize(
    ("ini", "args", "message"),
    [
        (
            "",
            ["--evals-max-drop", "0.05"],
            "*--evals-max-drop needs a pinned baseline: pass --evals-baseline PATH or set "
            "evals_baseline in the ini (e.g. *eval-baseline.json)*",
        ),
        ("evals_max_drop = 0.05", [], "*evals_max_drop needs a pinned baseline*"),
        ("", ["--evals-update-baseline"], "*--evals-update-baseline needs a pinned baseline*"),
        (
            "",
            [*PIN],
            "*--evals-baseline *eval-baseline.json does not exist; "
            "write it with --evals-update-baseline*",
        ),
        (
            "evals_baseline = eval-report.json",
            ["--evals-update-baseline"],
            "*evals_baseline *eval-report.json is rewritten by every run of the report "
            "eval-report.md; pin a file of its own, e.g. *eval-baseline.json*",
        ),
        (
            "",
            ["--evals-baseline", "eval-report.history.json"],
            "*--evals-baseline *eval-report.history.json is rewritten by every run*",
        ),
        (
            "",
            ["--evals-baseline", "baseline.md"],
            "*--evals-baseline is a report's JSON file; got baseline.md, did you mean "
            "baseline.json?*",
        ),
        (
            "",
            ["--evals-baseline", "eval-report.md"],
            "*got eval-report.md, did you mean eval-baseline.json?*",
        ),
        (
            "",
            ["--evals-report", "report.json"],
            "*--evals-report is the Markdown file (its .json and .html twins go beside it); "
            "got report.json, did you mean report.md?*",
        ),
    ],
    ids=[
        "max-drop-without-baseline",
        "ini-max-drop-without-baseline",
        "update-without-baseline",
        "missing-baseline",
        "baseline-is-the-report-json",
        "baseline-is-the-history",
        "baseline-not-json",
        "baseline-is-the-report",
        "report-is-json",
    ],
)
def test_misused_options_are_usage_errors_that_say_what_to_do(
    pytester: pytest.Pytester, ini: str, args: list[str], message: str
) -> None:
    pytester.makeini(f"[pytest]\n{ini}\n")
    pytester.makepyfile(SCORES.format(scores=[1.0]))
    result = run(pytester, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert not (pytester.path / "eval-baseline.json").exists()


def test_a_corrupt_pinned_baseline_stops_the_run_until_it_is_rewritten(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(SCORES.format(scores=[1.0]))
    (pytester.path / "eval-baseline.json").write_text("<<<<<<< HEAD\n", encoding="utf-8")
    result = run(pytester, *PIN, "--evals-max-drop", "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*eval-baseline.json is not a report's JSON (*)*"])
    result = run(pytester, *PIN, "--evals-update-baseline")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        ["*baseline *eval-baseline.json is not a report's JSON (*); replacing it"]
    )
    assert baseline_mean(pytester) == 1.0


def test_a_failing_run_does_not_update_the_baseline(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(SCORES.format(scores=[1.0]))
    run(pytester, *PIN, "--evals-update-baseline").assert_outcomes(passed=1)
    pytester.makepyfile(SCORES.format(scores=[0.0]) + "\n\ndef test_broken():\n    assert False\n")
    result = run(pytester, *PIN, "--evals-update-baseline")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*the tests did not pass; the baseline *eval-baseline.json is unchanged"]
    )
    assert baseline_mean(pytester) == 1.0


def test_a_corrupt_previous_report_does_not_fail(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(SCORES.format(scores=[1.0]))
    (pytester.path / "eval-report.json").write_text("{not json", encoding="utf-8")
    (pytester.path / "eval-report.history.json").write_text("[1, 2", encoding="utf-8")
    result = run(pytester, "-W", "error")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*baseline*is not valid JSON*", "*history*"])
    assert report_json(pytester)["keys"]["quality"]["mean"] == 1.0


@pytest.mark.processes
def test_xdist_workers_merge_into_one_report(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    pytester.makepyfile(SCORES.format(scores=[1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.5, 0.5]))
    result = pytester.runpytest_subprocess(*OPTS, "-n", "2", *PIN, "--evals-update-baseline")
    result.assert_outcomes(passed=8)
    figures = report_json(pytester)["keys"]["quality"]
    assert figures["verdicts"] == 8
    assert figures["mean"] == 0.625
    assert report_json(pytester, "eval-baseline.json")["keys"]["quality"] == figures
    # Every worker's results keep their test as their case.
    tests = [f"test_xdist_workers_merge_into_one_report.py::test_quality[{n}]" for n in range(8)]
    assert list(figures["case_means"]) == tests
    # A row per test, in order whichever worker finished first.
    assert [row["case_id"] for row in report_json(pytester)["runs"]] == tests
    markdown = (pytester.path / "eval-report.md").read_text(encoding="utf-8")
    assert markdown.count("`: quality (quality): ") == 8
    assert len(json.loads((pytester.path / "eval-report.history.json").read_text())) == 1
    written = sorted(p.name for p in pytester.path.rglob("eval-report*"))
    assert written == [
        "eval-report.history.json",
        "eval-report.html",
        "eval-report.json",
        "eval-report.md",
    ]


def test_without_xdist_an_unrelated_test_runs_and_a_report_is_still_written(
    pytester: pytest.Pytester,
) -> None:
    # pytest-xdist is not a dependency: its hooks must not be required to start pytest.
    pytester.makepyfile(
        test_plain="def test_one():\n    assert 1 + 1 == 2\n",
        test_scores=SCORES.format(scores=[1.0, 0.5]),
    )
    result = run(pytester, "-p", "no:xdist")
    result.assert_outcomes(passed=3)
    assert report_json(pytester)["keys"]["quality"]["mean"] == 0.75


@pytest.mark.processes
def test_an_inert_plugin_imports_nothing_but_itself(pytester: pytest.Pytester) -> None:
    # Every pytest start in the environment pays for what the plugin imports.
    pytester.makepyfile(
        """
        import sys

        def test_modules():
            ours = sorted(m for m in sys.modules if m.startswith("langchain_evals_port"))
            assert ours == ["langchain_evals_port", "langchain_evals_port.pytest_plugin"]
            assert "langchain_core" not in sys.modules
        """
    )
    pytester.runpytest_subprocess(*OPTS).assert_outcomes(passed=1)


@pytest.mark.processes
def test_cookbook_suite_run_twice_shows_change_and_trend(tmp_path: Path) -> None:
    suite = Path(__file__).resolve().parents[2] / "cookbook" / "eval_suite"
    (tmp_path / "test_support_answers.py").write_text(
        (suite / "test_support_answers.py").read_text(encoding="utf-8"), encoding="utf-8"
    )
    report = tmp_path / "out" / "support.md"
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        *OPTS,
        "--rootdir",
        str(tmp_path),
        "-c",
        os.devnull,
        str(tmp_path),
        "--evals-report",
        str(report),
    ]
    for _ in range(2):
        completed = subprocess.run(
            command, cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
        assert completed.returncode == 0, completed.stdout + completed.stderr
    markdown = report.read_text(encoding="utf-8")
    for key in ("concise", "mentions_facts", "routing"):
        unchanged = r"\+0\.000 \[\+0\.000, \+0\.000\] no detectable change"
        row = rf"\| {key} \| [0-9.]+ \| \[[^]]*\] \| 3 \| {unchanged} \|"
        assert re.search(row, markdown), markdown
    assert trend_points(report.with_suffix(".html").read_text(encoding="utf-8")) == 6


UNSCORED = """
import pytest
from langchain_evals_port import Score, evaluator


@evaluator(feedback_key="quality")
def quality(outputs):
    return Score.unscored("judge unavailable")


@pytest.mark.eval_suite
def test_quality():
    quality(outputs="x")
"""


def test_max_drop_counts_a_key_without_verdicts_as_dropped(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(SCORES.format(scores=[1.0, 1.0]))
    run(pytester, *PIN, "--evals-update-baseline").assert_outcomes(passed=2)
    pytester.makepyfile(UNSCORED)
    result = run(pytester, *PIN, "--evals-max-drop", "0.05")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["    quality: no verdicts now (was 1.000 [1.000, 1.000])"])


OLD_BASELINE = {
    "schema": 1,
    "keys": {"quality": {"mean": 1.0, "count": 2, "inconclusive": 0, "failed": 0}},
}


def test_a_baseline_without_per_test_scores_is_read_but_cannot_gate(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(SCORES.format(scores=[1.0, 0.8]))
    (pytester.path / "eval-baseline.json").write_text(json.dumps(OLD_BASELINE), encoding="utf-8")
    # The change column still compares the means.
    assert run(pytester, *PIN).ret == pytest.ExitCode.OK
    markdown = (pytester.path / "eval-report.md").read_text()
    assert re.search(r"\| quality \| 0\.900 \| \[[^]]*\] \| 2 \| -0\.100 \|", markdown)
    # The max drop compares test by test, which such a baseline cannot.
    result = run(pytester, *PIN, "--evals-max-drop", "0.05")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*--evals-baseline *eval-baseline.json has no per-test scores for quality (it was "
            "written before they were kept); --evals-max-drop compares test by test: rewrite it "
            "with --evals-update-baseline"
        ]
    )
    result = run(pytester, *PIN, "--evals-max-drop", "0.05", "--evals-update-baseline")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*so their drops are not judged; replacing it"])
    assert report_json(pytester, "eval-baseline.json")["keys"]["quality"]["case_means"]
    assert run(pytester, *PIN, "--evals-max-drop", "0.05").ret == pytest.ExitCode.OK


def test_results_outside_a_tests_scope_are_named_as_not_judged(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(SCORES.format(scores=[1.0, 1.0]))
    run(pytester, *PIN, "--evals-update-baseline").assert_outcomes(passed=2)
    pytester.makepyfile(
        """
        from langchain_evals_port import EvaluatorResult

        def test_direct(eval_report):
            eval_report.on_result("direct", EvaluatorResult(key="quality", score=0.0))
        """
    )
    result = run(pytester, *PIN, "--evals-max-drop", "0.05")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        ["warning: not judged by the max drop: quality (results reported outside a test's eval*"]
    )


def trend_points(html: str) -> int:
    """How many points the HTML report's trend charts have: in the data Plotly draws them
    from when it is installed (and inlined), else as the page's SVG circles."""
    data = re.search(r'<script type="application/json" class="chart-data">(.*?)</script>', html)
    if data is None:
        return html.count("<circle")
    return sum(len(chart["data"][0]["y"]) for chart in json.loads(data.group(1)))


def test_report_formats_choose_the_files_written(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(SCORES.format(scores=[1.0]))
    result = run(pytester, "--evals-report-formats", "md,json")
    result.assert_outcomes(passed=1)
    assert {p.name for p in pytester.path.glob("eval-report*")} == {
        "eval-report.md",
        "eval-report.json",
    }
    result.stdout.fnmatch_lines(
        ["*evaluation report written to *: eval-report.md, eval-report.json"]
    )
    for name in pytester.path.glob("eval-report*"):
        name.unlink()
    pytester.makeini("[pytest]\nevals_report_formats = json\n")
    run(pytester).assert_outcomes(passed=1)
    assert {p.name for p in pytester.path.glob("eval-report*")} == {"eval-report.json"}


def test_an_unknown_report_format_is_a_usage_error_naming_the_closest(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(SCORES.format(scores=[1.0]))
    result = run(pytester, "--evals-report-formats", "md,htm")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*--evals-report-formats: unknown report format 'htm'; expected md, json, html "
            "(did you mean html?)"
        ]
    )


def test_the_markdown_report_has_the_interval_and_the_test_ids(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(SCORES.format(scores=[1.0, 0.5, 0.75]))
    run(pytester, "--evals-report-formats", "md").assert_outcomes(passed=3)
    markdown = (pytester.path / "eval-report.md").read_text(encoding="utf-8")
    assert "| evaluator | mean score | 95 % interval | n |" in markdown
    assert re.search(r"\| quality \| 0\.750 \| \[0\.\d{3}, [01]\.\d{3}\] \| 3 \|", markdown)
    test_id = "test_the_markdown_report_has_the_interval_and_the_test_ids.py::test_quality[1]"
    assert f"- `{test_id}`: quality (quality): score 0.5" in markdown


def test_keys_whose_tests_were_deselected_are_named_as_not_compared(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        SCORES.format(scores=[1.0, 1.0])
        + """

@evaluator(feedback_key="style")
def style(outputs):
    return True


@pytest.mark.eval_suite
def test_style():
    assert style(outputs="x")["score"]
"""
    )
    run(pytester, *PIN, "--evals-update-baseline").assert_outcomes(passed=3)
    result = run(pytester, *PIN, "--evals-max-drop", "0.05", "-k", "quality")
    result.assert_outcomes(passed=2, deselected=1)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        ["*not compared with the baseline: style (no test of this run scored them*"]
    )


VERSION_1 = Path(__file__).resolve().parents[1] / "reporting" / "version_1"


def test_a_version_1_pinned_baseline_still_gates_test_by_test(pytester: pytest.Pytester) -> None:
    # A baseline pinned by the release before (evals4j's format, "schema": 1), of this run's
    # tests: the same shape as version_1/eval-baseline.json.
    module = "test_a_version_1_pinned_baseline_still_gates_test_by_test.py"
    cases = {f"{module}::test_quality[{n}]": [1.0] for n in range(4)}
    old = {
        "schema": 1,
        "generatedAt": "2026-01-31T12:00:00Z",
        "keys": {
            "quality": {"mean": 1.0, "count": 4, "inconclusive": 0, "failed": 0, "cases": cases}
        },
    }
    (pytester.path / "eval-baseline.json").write_text(json.dumps(old), encoding="utf-8")
    pytester.makepyfile(SCORES.format(scores=[1.0] * 4))
    assert run(pytester, *PIN, "--evals-max-drop", "0.05").ret == pytest.ExitCode.OK
    pytester.makepyfile(SCORES.format(scores=[0.0] * 4))
    result = run(pytester, *PIN, "--evals-max-drop", "0.05")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["    quality: -1.000 *a drop of more than 0.05 outside the noise"])
    assert report_json(pytester, "eval-baseline.json") == old
    assert report_json(pytester)["comparison"]["keys"]["quality"]["verdict"] == "worse"


def test_a_version_1_experiment_report_as_the_baseline_is_refused_by_name(
    pytester: pytest.Pytester,
) -> None:
    shutil.copy(VERSION_1 / "report.json", pytester.path / "eval-baseline.json")
    pytester.makepyfile(SCORES.format(scores=[1.0]))
    result = run(pytester, *PIN)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*--evals-baseline *eval-baseline.json is an experiment report of schema_version 1;"
            " this release reads schema_version 2*; rewrite it with --evals-update-baseline"
        ]
    )
