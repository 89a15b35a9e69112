"""The pytest plugin: one evaluation report per test run, inert until asked.

Registered through the ``pytest11`` entry point as ``langchain_evals``. Nothing happens
until a test is marked ``@pytest.mark.eval_suite`` (on the test, its class or its module, via
``pytestmark``) or the ini sets ``evals_autouse = true``. Each such test runs inside
``eval_scope(report)``, so evaluators built without a tracer report into the run's single
``EvalReport``; an evaluator given its own tracer keeps it. The ``eval_report`` fixture hands
that report to a test (under pytest-xdist, the report of the test's worker).

At the end of the run the report is written, when anything was evaluated, to
``eval-report.md`` with ``.json`` and ``.html`` twins, and the run is appended to
``eval-report.history.json`` beside it for the HTML trend charts. The previous ``.json`` is
read once at start as the baseline of the ``change`` column and of ``--evals-max-drop``.
Under pytest-xdist the workers send their results to the controller, which merges and
writes them. In a test also marked ``@pytest.mark.langsmith``, every result is logged as that
LangSmith test's feedback too (``langsmith.testing.log_feedback``).

Options (each also an ini key of ``[tool.pytest.ini_options]``; the command line wins):

- ``--evals-report PATH`` / ``evals_report``: where the Markdown goes; a command-line path is
  relative to the invocation directory, an ini one to the rootdir.
- ``--evals-max-drop DROP`` / ``evals_max_drop``: fail the session when any key's mean is
  more than ``DROP`` below the baseline's.
- ``evals_autouse`` (ini only): open the scope around every test.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from langchain_evals_port.reporting import EvalReport

# Every pytest start in the environment imports this module, so at load time it imports
# nothing but pytest and the standard library; the evaluation machinery (langchain-core,
# pydantic) is imported when a test first asks for the report.

DEFAULT_REPORT = "eval-report.md"
"""Where the report goes without ``--evals-report`` or ``evals_report``, from the rootdir."""

HISTORY_LIMIT = 20
"""How many past runs the history file keeps."""

MARKER = "eval_suite"
_WORKER_OUTPUT_KEY = "langchain_evals_records"


@dataclass
class _EvalRun:
    """The state of one pytest run: its report, the baseline, and what to say at the end."""

    path: Path
    max_drop: float | None
    report: EvalReport | None = None
    baseline: dict[str, Any] | None = None
    written: bool = False
    drops: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

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
        "--evals-max-drop",
        dest="evals_max_drop",
        metavar="DROP",
        type=float,
        default=None,
        help="fail the session when any key's mean falls more than DROP below the baseline.",
    )
    parser.addini("evals_report", "where the evaluation report goes, from the rootdir.")
    parser.addini("evals_max_drop", "fail when any key's mean falls more than this below.")
    parser.addini(
        "evals_autouse", "open an eval scope around every test.", type="bool", default=False
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker, settle the options and, on the controller, read the baseline."""
    config.addinivalue_line(
        "markers",
        f"{MARKER}: evaluators run by the test report into the run's evaluation report.",
    )
    run = _EvalRun(path=_report_path(config), max_drop=_max_drop(config))
    if not hasattr(config, "workerinput"):
        run.baseline = _read_baseline(run.path.with_suffix(".json"), run.notes)
    config.stash[_RUN] = run


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
        raise pytest.UsageError(f"the evaluation report is the Markdown file; got {path.name}")
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


def _read_baseline(path: Path, notes: list[str]) -> dict[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as error:
        notes.append(f"baseline {path} is unreadable ({error}); going on without it")
        return None
    try:
        data: Any = json.loads(text)
    except ValueError as error:
        notes.append(f"baseline {path} is not valid JSON ({error}); going on without it")
        return None
    return data if isinstance(data, dict) else None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    """Run a marked test (setup, call and teardown) inside ``eval_scope(report)``."""
    if item.get_closest_marker(MARKER) is None and not item.config.getini("evals_autouse"):
        return (yield)
    from langchain_evals_port.core import eval_scope

    with eval_scope(item.config.stash[_RUN].collecting(), *_langsmith_feedback(item)):
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
    if run.report is None:  # nothing asked for the report: nothing to write or compare
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run.written = run.report.write(
            run.path, history_path=run.history_path, history_limit=HISTORY_LIMIT
        )
    # The baseline's problems were noted at start; the history's are news.
    run.notes += [str(w.message) for w in caught if "baseline" not in str(w.message)]
    if run.max_drop is not None:
        run.drops = _drops(run)
        if run.drops and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _drops(run: _EvalRun) -> list[str]:
    from langchain_evals_port.reporting._summary import baseline_means

    assert run.max_drop is not None
    assert run.report is not None
    drops = []
    summaries = run.report.summaries()
    for key, before in baseline_means(run.baseline).items():
        summary = summaries.get(key)
        if summary is None:
            continue
        mean = summary.mean
        # A key that was scored before and has no verdict now (every result failed or
        # inconclusive) is the worst drop there is.
        if mean is None:
            drops.append(f"{key} {before:.3f} -> no verdicts")
        # A hair of tolerance, so a drop of exactly the limit does not fail on rounding.
        elif before - mean > run.max_drop + 1e-9:
            drops.append(f"{key} {before:.3f} -> {mean:.3f}")
    return drops


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Say where the report went, what was wrong with its inputs, and which keys dropped."""
    run = config.stash.get(_RUN, None)
    if run is None or hasattr(config, "workerinput"):
        return
    if not (run.written or run.notes or run.drops):
        return
    terminalreporter.section("evaluation report")
    for note in run.notes:
        terminalreporter.write_line(f"warning: {note}", yellow=True)
    if run.written:
        terminalreporter.write_line(
            f"evaluation report written to {run.path} (+ .json, .html; history in "
            f"{run.history_path.name})"
        )
    if run.drops:
        terminalreporter.write_line(
            f"FAILED: evaluation means dropped more than {run.max_drop} below the baseline: "
            + ", ".join(run.drops),
            red=True,
        )
