"""The pytest plugin: one evaluation report per test run, inert until asked.

Registered through the ``pytest11`` entry point as ``langchain_evals``. Nothing happens
until a test is marked ``@pytest.mark.eval_suite`` (on the test, its class or its module, via
``pytestmark``) or the ini sets ``evals_autouse = true``. Each such test runs inside
``eval_scope(report.for_case(nodeid))``, so evaluators built without a tracer report into the
run's single ``EvalReport``, filed under the test (its case); an evaluator given its own
tracer keeps it. The ``eval_report`` fixture hands
that report to a test (under pytest-xdist, the report of the test's worker).

At the end of the run the report is written, when anything was evaluated, to
``eval-report.md`` with ``.json`` and ``.html`` twins, and the run is appended to
``eval-report.history.json`` beside it for the HTML trend charts. The ``change`` column
compares with the pinned baseline when there is one, else with the previous run's ``.json``,
test by test: the mean per-test difference with its 95 % interval and a verdict
(``reporting.statistics``).
Under pytest-xdist (optional) the workers send their results to the controller, which merges
and writes them. In a test also marked ``@pytest.mark.langsmith``, every result is logged as
that LangSmith test's feedback too (``langsmith.testing.log_feedback``).

The baseline of ``--evals-max-drop`` is pinned: a file of its own, which no run changes
unless told to, so a regression fails every run until it is fixed or accepted. (Comparing
with the previous run let a regression fail once and pass from its second run on.)

Options (the first three also ini keys of ``[tool.pytest.ini_options]``; the command line
wins; a command-line path is relative to the invocation directory, an ini one to the rootdir):

- ``--evals-report PATH`` / ``evals_report``: where the Markdown goes.
- ``--evals-report-formats md,json`` / ``evals_report_formats``: which report files to write
  (of ``md``, ``json``, ``html``; default all three). The HTML page inlines Plotly (about
  4.8 MB) when it is installed; without ``json`` the next run has no previous run to compare
  with, and the history file is kept only with ``html``.
- ``--evals-baseline PATH`` / ``evals_baseline``: the pinned baseline, a report's JSON. It
  must exist and hold a report (else a usage error), except when it is being updated.
- ``--evals-max-drop DROP`` / ``evals_max_drop``: fail the session when any key dropped by
  more than ``DROP`` below the pinned baseline *and* outside the noise (the 95 % interval of
  the per-test differences lies below 0; ``reporting.gate``), or lost all its verdicts; a
  larger drop within the noise is reported, not failed. Needs ``--evals-baseline``, with
  per-test scores (a baseline written before they were kept is a usage error). A key of the
  baseline that no test of this run scored (its tests deselected with ``-k``, say) is named
  as not compared.
- ``--evals-update-baseline``: when the tests pass, write this run's figures to the pinned
  baseline (drops are then reported as accepted, not failed); needs ``--evals-baseline``.
- ``evals_autouse`` (ini only): open the scope around every test.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from langchain_evals_port.reporting import EvalReport, GateResult, Report

# Every pytest start in the environment imports this module, so at load time it imports
# nothing but pytest and the standard library; the evaluation machinery (langchain-core,
# pydantic) is imported when a test first asks for the report.

DEFAULT_REPORT = "eval-report.md"
"""Where the report goes without ``--evals-report`` or ``evals_report``, from the rootdir."""

SUGGESTED_BASELINE = "eval-baseline.json"
"""The name error messages suggest for a pinned baseline."""

HISTORY_LIMIT = 20
"""How many past runs the history file keeps."""

MARKER = "eval_suite"
_WORKER_OUTPUT_KEY = "langchain_evals_records"


@dataclass
class _EvalRun:
    """The state of one pytest run: its report, the baseline, and what to say at the end."""

    path: Path
    max_drop: float | None
    formats: tuple[str, ...] = ("md", "json", "html")
    baseline_path: Path | None = None
    update_baseline: bool = False
    report: EvalReport | None = None
    baseline: Report | None = None
    written: bool = False
    baseline_updated: bool = False
    gated: list[GateResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    not_compared: list[str] = field(default_factory=list)

    @property
    def history_path(self) -> Path:
        """The history file beside the report: ``eval-report.history.json``."""
        return self.path.with_suffix(".history.json")

    def collecting(self) -> EvalReport:
        """The run's report, made on first use (a run that evaluates nothing never loads it)."""
        if self.report is None:
            from langchain_evals_port.reporting import EvalReport

            self.report = EvalReport()
        return self.report


_RUN = pytest.StashKey[_EvalRun]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add the ``--evals-*`` options and their ini keys."""
    group = parser.getgroup("langchain-evals", "evaluation reports (langchain_evals_port)")
    group.addoption(
        "--evals-report",
        dest="evals_report",
        metavar="PATH",
        default=None,
        help=f"where the evaluation report goes (default: {DEFAULT_REPORT} in the rootdir).",
    )
    group.addoption(
        "--evals-report-formats",
        dest="evals_report_formats",
        metavar="FORMATS",
        default=None,
        help="which report files to write, comma-separated, of md, json and html "
        "(default: all three; the html page is about 4.8 MB with Plotly installed).",
    )
    group.addoption(
        "--evals-baseline",
        dest="evals_baseline",
        metavar="PATH",
        default=None,
        help="the pinned baseline (a report's JSON) of --evals-max-drop and the change "
        "column; only --evals-update-baseline writes it.",
    )
    group.addoption(
        "--evals-max-drop",
        dest="evals_max_drop",
        metavar="DROP",
        type=float,
        default=None,
        help="fail the session when any key falls more than DROP below the pinned baseline "
        "and outside the noise, compared test by test (needs --evals-baseline).",
    )
    group.addoption(
        "--evals-update-baseline",
        dest="evals_update_baseline",
        action="store_true",
        default=False,
        help="when the tests pass, write this run's figures to the pinned baseline "
        "(needs --evals-baseline).",
    )
    parser.addini("evals_report", "where the evaluation report goes, from the rootdir.")
    parser.addini(
        "evals_report_formats", "which report files to write: md, json, html (comma-separated)."
    )
    parser.addini("evals_baseline", "the pinned baseline (a report's JSON), from the rootdir.")
    parser.addini(
        "evals_max_drop", "fail when any key falls more than this below, outside the noise."
    )
    parser.addini(
        "evals_autouse", "open an eval scope around every test.", type="bool", default=False
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker, settle the options and, on the controller, read the baseline."""
    config.addinivalue_line(
        "markers",
        f"{MARKER}: evaluators run by the test report into the run's evaluation report.",
    )
    run = _EvalRun(
        path=_report_path(config),
        max_drop=_max_drop(config),
        formats=_report_formats(config),
        update_baseline=config.getoption("evals_update_baseline"),
    )
    run.baseline_path = _baseline_path(config, run)
    if run.baseline_path is not None and not hasattr(config, "workerinput"):
        name = _setting(config, "evals_baseline")
        run.baseline = _read_baseline(run.baseline_path, name, run.update_baseline, run.notes)
        if run.max_drop is not None and run.baseline is not None:
            _check_cases(run, name, _setting(config, "evals_max_drop"))
    config.stash[_RUN] = run


def _setting(config: pytest.Config, dest: str) -> str:
    # Errors name a setting as the user gave it: the command-line option, else the ini key.
    return "--" + dest.replace("_", "-") if config.getoption(dest) is not None else dest


def _report_path(config: pytest.Config) -> Path:
    option: str | None = config.getoption("evals_report")
    ini: str = config.getini("evals_report")
    path = (
        config.invocation_params.dir / option
        if option
        else config.rootpath / (ini or DEFAULT_REPORT)
    )
    if path.suffix in (".json", ".html"):
        # The .json and .html twins are written beside the Markdown under its name.
        raise pytest.UsageError(
            f"{_setting(config, 'evals_report')} is the Markdown file (its .json and .html "
            f"twins go beside it); got {path.name}, did you mean {path.with_suffix('.md').name}?"
        )
    return path


def _report_formats(config: pytest.Config) -> tuple[str, ...]:
    option: str | None = config.getoption("evals_report_formats")
    ini: str = config.getini("evals_report_formats")
    text = option if option is not None else ini
    if not text:
        return _EvalRun.formats
    from langchain_evals_port.reporting._report import check_formats

    try:
        return tuple(check_formats(part.strip() for part in text.split(",") if part.strip()))
    except ValueError as error:
        raise pytest.UsageError(f"{_setting(config, 'evals_report_formats')}: {error}") from None


def _baseline_path(config: pytest.Config, run: _EvalRun) -> Path | None:
    option: str | None = config.getoption("evals_baseline")
    ini: str = config.getini("evals_baseline")
    # The report's own files are rewritten by every run: pinning one of them would bring
    # back the moving baseline that lets a regression pass on its second run.
    rewritten = {p.resolve() for p in (run.path.with_suffix(".json"), run.history_path)}
    suggestion = run.path.parent / SUGGESTED_BASELINE
    if not (option or ini):
        if run.update_baseline or run.max_drop is not None:
            needing = (
                "--evals-update-baseline"
                if run.update_baseline
                else _setting(config, "evals_max_drop")
            )
            raise pytest.UsageError(
                f"{needing} needs a pinned baseline: pass --evals-baseline PATH or set "
                f"evals_baseline in the ini (e.g. {suggestion}); --evals-update-baseline "
                "writes it the first time"
            )
        return None
    name = _setting(config, "evals_baseline")
    path = config.invocation_params.dir / option if option else config.rootpath / ini
    if path.suffix != ".json":
        # Suggested as the user spelt it, unless that would be one of the report's own files.
        spelt = Path(option or ini)
        as_json = spelt.with_suffix(".json")
        if path.with_suffix(".json").resolve() in rewritten:
            as_json = spelt.parent / SUGGESTED_BASELINE
        raise pytest.UsageError(
            f"{name} is a report's JSON file; got {spelt}, did you mean {as_json}?"
        )
    if path.resolve() in rewritten:
        raise pytest.UsageError(
            f"{name} {path} is rewritten by every run of the report {run.path.name}; pin a "
            f"file of its own, e.g. {suggestion}"
        )
    return path


def _max_drop(config: pytest.Config) -> float | None:
    drop: float | None = config.getoption("evals_max_drop")
    ini: str = config.getini("evals_max_drop")
    if drop is None and ini:
        try:
            drop = float(ini)
        except ValueError:
            raise pytest.UsageError(f"evals_max_drop must be a number, got {ini!r}") from None
    if drop is not None and not (math.isfinite(drop) and drop >= 0):
        raise pytest.UsageError(f"the evals max drop must be a number >= 0, got {drop}")
    return drop


def _read_baseline(path: Path, name: str, updating: bool, notes: list[str]) -> Report | None:
    # A pinned baseline is a committed file: one that cannot be read is a mistake to stop
    # at, not to run past (the drop check would pass with nothing to compare). Only a run
    # that replaces it may go on without it. One of the plugin's version 1 reads on.
    from langchain_evals_port.reporting import Report, ReportSchemaError

    try:
        return Report.read(path)
    except FileNotFoundError:
        if updating:
            return None
        problem = f"{path} does not exist; write it with --evals-update-baseline"
    except (OSError, ReportSchemaError) as error:
        if updating:
            notes.append(f"baseline {error}; replacing it")
            return None
        problem = f"{error}; rewrite it with --evals-update-baseline"
    raise pytest.UsageError(f"{name} {problem}")


def _check_cases(run: _EvalRun, name: str, max_drop: str) -> None:
    # The gate compares test by test: a baseline written before the per-test scores were
    # kept would let every key through unjudged.
    assert run.baseline is not None
    missing = sorted(run.baseline.means().keys() - run.baseline.paired().keys())
    if not missing:
        return
    problem = (
        f"{name} {run.baseline_path} has no per-test scores for {', '.join(missing)} (it was "
        f"written before they were kept); {max_drop} compares test by test"
    )
    if not run.update_baseline:
        raise pytest.UsageError(f"{problem}: rewrite it with --evals-update-baseline")
    run.notes.append(f"{problem}, so their drops are not judged; replacing it")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    """Run a marked test (setup, call and teardown) inside ``eval_scope``, its results filed
    in the report under the test's node id (the case the next run compares it with)."""
    if item.get_closest_marker(MARKER) is None and not item.config.getini("evals_autouse"):
        return (yield)
    from langchain_evals_port.core import eval_scope

    report = item.config.stash[_RUN].collecting()
    with eval_scope(report.for_case(item.nodeid), *_langsmith_feedback(item)):
        return (yield)


def _langsmith_feedback(item: pytest.Item) -> list[Any]:
    # Inside a LangSmith test every result is also logged as that test's feedback.
    if item.get_closest_marker("langsmith") is None:
        return []
    from langchain_evals_port.integrations.langsmith import LangSmithTestFeedback

    return [LangSmithTestFeedback()]


@pytest.fixture
def eval_report(request: pytest.FixtureRequest) -> EvalReport:
    """The run's evaluation report (under pytest-xdist, this worker's part of it)."""
    return request.config.stash[_RUN].collecting()


# pytest-xdist declares this hook; without it installed (or with ``-p no:xdist``) an
# implementation pytest does not know would stop every run with an INTERNALERROR.
@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """On the pytest-xdist controller, merge a finished worker's results into the report."""
    records = getattr(node, "workeroutput", {}).get(_WORKER_OUTPUT_KEY)
    if records:
        from langchain_evals_port.reporting import EvalReport

        run: _EvalRun = node.config.stash[_RUN]
        run.report = EvalReport.merged([run.collecting(), EvalReport.from_records(records)])


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """Send a worker's results to the controller; elsewhere write the report and check drops."""
    config = session.config
    run = config.stash[_RUN]
    workeroutput: dict[str, Any] | None = getattr(config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput[_WORKER_OUTPUT_KEY] = run.report.to_records() if run.report else []
        return
    # A failing or interrupted run may be missing evaluations: it never becomes the baseline.
    passed = session.exitstatus == pytest.ExitCode.OK
    if run.report is None or not run.report.entries:
        if run.update_baseline:
            run.notes.append(
                f"nothing was evaluated; the baseline {run.baseline_path} is unchanged"
            )
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run.written = run.report.write(
            run.path,
            baseline_path=run.baseline_path,
            update_baseline=run.update_baseline and passed,
            history_path=run.history_path,
            history_limit=HISTORY_LIMIT,
            formats=run.formats,
        )
    run.baseline_updated = run.update_baseline and passed
    if run.update_baseline and not passed:
        run.notes.append(f"the tests did not pass; the baseline {run.baseline_path} is unchanged")
    # A pinned baseline's problems were settled at start; the rest is news.
    pinned = str(run.baseline_path) if run.baseline_path else None
    run.notes += [str(w.message) for w in caught if not (pinned and pinned in str(w.message))]
    if run.max_drop is not None:
        run.gated = _gate(run)
        # Accepting the figures into the baseline is accepting their drops too.
        if passed and not run.update_baseline and not all(g.passed for g in run.gated):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _gate(run: _EvalRun) -> list[GateResult]:
    from langchain_evals_port.reporting import gate

    assert run.max_drop is not None
    assert run.report is not None
    comparisons = run.report.compare(run.baseline)
    current = run.report.statistics().keys()
    before = run.baseline.paired().keys() if run.baseline is not None else set()
    # A key whose tests did not run (deselected) would otherwise leave the gate unnoticed.
    run.not_compared = sorted(before - current)
    comparable = current & before
    uncased = sorted(comparable - comparisons.keys())
    if uncased:
        run.notes.append(
            f"not judged by the max drop: {', '.join(uncased)} (results reported outside a "
            "test's eval scope, e.g. to the eval_report fixture, have no case to compare)"
        )
    return [gate(comparison, run.max_drop) for comparison in comparisons.values()]


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Say where the report went, what was wrong with its inputs, and which keys dropped."""
    run = config.stash.get(_RUN, None)
    if run is None or hasattr(config, "workerinput"):
        return
    drops = [g for g in run.gated if not g.passed]
    forgiven = [g for g in run.gated if g.dropped and g.passed]
    if not (run.written or run.notes or run.gated or run.not_compared):
        return
    terminalreporter.section("evaluation report")
    for note in run.notes:
        terminalreporter.write_line(f"warning: {note}", yellow=True)
    if run.written:
        compared = f"; compared with {run.baseline_path}" if run.baseline_path else ""
        files = [run.path.with_suffix(f".{suffix}").name for suffix in run.formats]
        history = f"; history in {run.history_path.name}" if "html" in run.formats else ""
        terminalreporter.write_line(
            f"evaluation report written to {run.path.parent}: {', '.join(files)}{history}{compared}"
        )
    if run.not_compared:
        terminalreporter.write_line(
            f"not compared with the baseline: {', '.join(run.not_compared)} (no test of this "
            "run scored them: deselected with -k or -m, or skipped?)",
            yellow=True,
        )
    if run.baseline_updated:
        terminalreporter.write_line(f"baseline {run.baseline_path} updated with this run")
    if forgiven:
        terminalreporter.write_line(
            f"not failed: drops of more than {run.max_drop} that cannot be told from noise:"
        )
        for result in forgiven:
            terminalreporter.write_line(f"    {result}")
    if drops:
        dropped = (
            f"evaluation scores fell below the baseline {run.baseline_path} by more than "
            f"{run.max_drop}:"
        )
        if run.baseline_updated:
            terminalreporter.write_line(f"accepted into the baseline: {dropped}", yellow=True)
        else:
            terminalreporter.write_line(f"FAILED: {dropped}", red=True)
        for result in drops:
            terminalreporter.write_line(f"    {result}", red=not run.baseline_updated)
