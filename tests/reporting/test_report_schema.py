"""The one report schema (``reporting.Report``, version 2): both writers write it, the JSON
Schema that ``langchain-evals report schema`` prints holds their files, and the files of
version 1 (``version_1/``, written by the release before) are read (the pytest plugin's, a
pinned baseline) or refused by name (an experiment's)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from langchain_evals_port import EvaluatorResult, ExactMatch
from langchain_evals_port.cli import main
from langchain_evals_port.experiments import Dataset, run_experiment
from langchain_evals_port.reporting import (
    REPORT_SCHEMA_VERSION,
    EvalReport,
    KeyStatistics,
    Report,
    ReportSchemaError,
)

VERSION_1 = Path(__file__).parent / "version_1"

DATASET = Dataset.from_records(
    [
        {"id": "add", "inputs": {"q": "2 + 2"}, "reference_outputs": "4"},
        {"id": "div", "inputs": {"q": "8 / 2"}, "reference_outputs": "4"},
        {"id": "bad", "inputs": {"q": "1 / 0"}, "reference_outputs": "?"},
    ]
)


def calculator(inputs: dict[str, str]) -> str:
    return str(eval(inputs["q"]))  # the app under test: raises on "1 / 0"


def experiment_files(folder: Path) -> dict[str, Any]:
    """An experiment's report.json, compared with a baseline experiment."""
    before = run_experiment(lambda inputs: "4", DATASET, [ExactMatch()], name="before", store=False)
    after = run_experiment(calculator, DATASET, [ExactMatch()], name="after", store=False)
    paths = after.write(folder, baseline=before, plotly=False)
    return json.loads(paths[1].read_text(encoding="utf-8"))


def plugin_report() -> EvalReport:
    report = EvalReport()
    for n, score in enumerate([1.0, 0.5, 0.0]):
        report.for_case(f"test_app.py::test_quality[{n}]").on_result(
            "quality", EvaluatorResult(key="quality", score=score, comment=f"case {n}")
        )
    report.for_case("test_app.py::test_capital").on_result(
        "exact_match", EvaluatorResult.failed("exact_match", "timeout", "slow")
    )
    report.on_result("direct", EvaluatorResult(key="direct", score=True))
    return report


def plugin_files(folder: Path) -> tuple[dict[str, Any], dict[str, Any], list[Any]]:
    """The plugin's eval-report.json, pinned baseline and history, after two runs."""
    path, baseline, history = folder / "eval-report.md", folder / "pin.json", folder / "h.json"
    for _ in range(2):
        plugin_report().write(
            path, baseline_path=baseline, update_baseline=True, history_path=history, plotly=False
        )
    read = [
        json.loads(p.read_text(encoding="utf-8"))
        for p in (path.with_suffix(".json"), baseline, history)
    ]
    return read[0], read[1], read[2]


def test_both_writers_write_the_one_model(tmp_path: Path) -> None:
    experiment = Report.model_validate(experiment_files(tmp_path / "experiment"))
    assert (experiment.source, experiment.name) == ("experiment", "after")
    assert experiment.comparison is not None
    assert experiment.comparison.baseline == "before"
    assert isinstance(experiment.keys["exact_match"], KeyStatistics)
    assert experiment.runs is not None
    bad = next(row for row in experiment.runs if row.case_id == "bad")
    assert bad.error is not None
    assert (bad.error.type, bad.error.message) == ("ZeroDivisionError", "division by zero")
    assert [result.outcome for result in bad.results] == ["inconclusive"]

    current, pinned, history = plugin_files(tmp_path / "plugin")
    report = Report.model_validate(current)
    assert (report.source, report.name, report.schema_version) == ("pytest", None, 2)
    assert report.keys == Report.model_validate(pinned).keys
    assert report.comparison is not None
    assert report.comparison.baseline == "pin.json"
    assert report.comparison.keys["quality"].verdict == "no detectable change"
    assert report.runs is not None
    # Per-case rows of the same shape: the plugin's carry the evaluator, not the run's data.
    assert [row.case_id for row in report.runs] == [
        "test_app.py::test_capital",
        *(f"test_app.py::test_quality[{n}]" for n in range(3)),
        None,
    ]
    assert report.runs[1].results[0].evaluator == "quality"
    assert report.runs[1].results[0].comment == "case 0"
    # The history keeps each run's figures, not its rows.
    assert [Report.model_validate(run).runs for run in history] == [None, None]
    # A key with a result outside any test is compared by its mean alone.
    assert report.keys["direct"].case_means == {}
    assert set(report.paired()) == {"quality"}


def test_the_per_key_figures_are_the_statistics_that_wrote_them(tmp_path: Path) -> None:
    report = plugin_report()
    written = Report.from_json(report.to_json())
    assert written.keys["quality"] == report.statistics()["quality"]


def test_the_schema_command_prints_a_json_schema_that_holds_both_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", "schema"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    schema = json.loads(captured.out)
    assert schema == Report.json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    current, pinned, history = plugin_files(tmp_path / "plugin")
    for document in [experiment_files(tmp_path / "experiment"), current, pinned, *history]:
        validator.validate(document)
    assert schema["title"] == "langchain-evals report"
    assert schema["properties"]["schema_version"]["const"] == REPORT_SCHEMA_VERSION
    wrong = {**current, "keys": {"quality": {**current["keys"]["quality"], "mean": "high"}}}
    assert not validator.is_valid(wrong)


def test_report_without_html_says_what_is_missing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "calc"]) == 2
    assert "--html PATH is required" in capsys.readouterr().err


def test_a_version_1_plugin_report_is_read_with_its_per_test_scores() -> None:
    old = Report.read(VERSION_1 / "eval-baseline.json")
    assert (old.source, old.runs) == ("pytest", None)
    quality = old.keys["quality"]
    assert quality.case_means == {
        "tests/test_app.py::test_quality[0]": 1.0,
        "tests/test_app.py::test_quality[1]": 1.0,
        "tests/test_app.py::test_quality[2]": 0.5,
    }
    assert (quality.mean, quality.verdicts, quality.kind) == (pytest.approx(5 / 6), 3, "mean")
    assert (old.keys["exact_match"].verdicts, old.keys["exact_match"].failed) == (1, 1)
    assert old.generated_at.year >= 2026


def test_a_version_1_pinned_baseline_still_compares_test_by_test(tmp_path: Path) -> None:
    pinned = tmp_path / "eval-baseline.json"
    shutil.copy(VERSION_1 / "eval-baseline.json", pinned)
    report = EvalReport()
    for n, score in enumerate([1.0, 0.0, 0.5]):
        report.for_case(f"tests/test_app.py::test_quality[{n}]").on_result(
            "quality", EvaluatorResult(key="quality", score=score)
        )
    report.write(tmp_path / "eval-report.md", baseline_path=pinned)
    markdown = (tmp_path / "eval-report.md").read_text(encoding="utf-8")
    assert "- quality: worse: tests/test_app.py::test_quality[1] (-1.000)" in markdown
    # The pinned file is left as it is until the baseline is updated.
    assert json.loads(pinned.read_text())["schema"] == 1


def test_a_version_1_experiment_report_is_refused_naming_the_file_and_versions() -> None:
    path = VERSION_1 / "report.json"
    with pytest.raises(ReportSchemaError) as raised:
        Report.read(path)
    message = str(raised.value)
    assert str(path) in message
    assert "schema_version 1" in message
    assert f"reads schema_version {REPORT_SCHEMA_VERSION}" in message


@pytest.mark.parametrize(
    ("data", "found"),
    [
        ({"schema_version": 3, "keys": {}}, "schema_version 3"),
        ({"schema": 2, "keys": {}}, "schema 2"),
    ],
)
def test_a_report_of_a_later_version_is_refused(data: dict[str, Any], found: str) -> None:
    with pytest.raises(ReportSchemaError, match=f"future.json is a report of {found}; this"):
        Report.from_json(data, source="future.json")


def test_a_version_2_file_that_breaks_the_schema_says_where(tmp_path: Path) -> None:
    data = plugin_report().to_json()
    data["keys"]["quality"]["verdicts"] = "many"
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(data))
    with pytest.raises(
        ReportSchemaError, match=r"broken.json is not a report's JSON \(keys\.quality\.verdicts"
    ):
        Report.read(path)
