"""``EvalReport``: a tracer that collects results and writes Markdown, JSON and HTML summaries."""

from __future__ import annotations

import difflib
import itertools
import json
import os
import threading
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from langchain_evals_port.core import EvalRequest, EvalTracer, EvaluatorResult

from ._render import markdown_cell, one_line, write_text
from ._schema import (
    REPORT_SCHEMA_VERSION,
    Report,
    ReportComparison,
    ReportResult,
    ReportRow,
    ReportSchemaError,
)
from ._statistics import KeyComparison, KeyStatistics, compare, summarize
from ._summary import ReportEntry, describe, format_change, format_mean

SCHEMA_VERSION = REPORT_SCHEMA_VERSION
"""The ``schema_version`` of the JSON report (``Report``); the name of earlier releases."""

Baseline = Report | Mapping[str, Any]
"""A previous run: its ``Report``, or a report file's parsed JSON (``Report.from_json``)."""

FORMATS = ("md", "json", "html")
"""The report files ``EvalReport.write`` can write, by suffix: all three by default."""


class EvalReport:
    """Collects evaluation results as an ``EvalTracer`` and summarises them per feedback key.

    Hand it to evaluators (``tracer=report``) or open ``eval_scope(report)`` around the code
    under test; ``eval_scope(report.for_case(case_id))`` files the results under a case, so
    that a later run's results are compared with them case by case (the pytest plugin opens
    one case per test). It is safe to share between threads and asyncio tasks.
    ``to_markdown``, ``to_json`` and ``to_html`` render the summary; ``write`` writes all
    three and keeps a bounded history of runs for the HTML trend charts.

    Example:
        >>> from langchain_evals_port import ExactMatch
        >>> from langchain_evals_port.core import eval_scope
        >>> report = EvalReport()
        >>> with eval_scope(report):
        ...     _ = ExactMatch()(outputs="a", reference_outputs="a")
        ...     _ = ExactMatch()(outputs="a", reference_outputs="b")
        >>> figures = report.statistics()["exact_match"]
        >>> print(figures, figures.verdicts, figures.inconclusive, figures.failed)
        0.500 [0.095, 0.905] 2 0 0
    """

    def __init__(self) -> None:
        self._entries: list[ReportEntry] = []
        # Tracers are called from LangChain's batch threads and from coroutines; nothing
        # under the lock awaits, so it never blocks an event loop for long.
        self._lock = threading.Lock()

    # --- EvalTracer ----------------------------------------------------------------------

    def on_start(self, evaluator: str, request: EvalRequest) -> None:
        """Starts are not reported; only results are."""

    def on_result(self, evaluator: str, result: EvaluatorResult) -> None:
        """Keep ``result`` for the summary and the listing, outside any case."""
        self._add(ReportEntry(evaluator, result))

    def on_error(self, evaluator: str, error: BaseException) -> None:
        """Errors are not counted here: a recorded failure also arrives as a ``failed``
        result, and a raised one fails the caller, so counting both would count it twice."""

    def for_case(self, case: str) -> EvalTracer:
        """A tracer that files every result it receives in this report under ``case``.

        Results of one key filed under the same case are that case's trials. Two runs'
        results are compared case by case (``compare``) when every result of the key, in
        both runs, was filed under a case.

        Example:
            >>> from langchain_evals_port import ExactMatch
            >>> from langchain_evals_port.core import eval_scope
            >>> report = EvalReport()
            >>> with eval_scope(report.for_case("greeting")):
            ...     _ = ExactMatch()(outputs="hi", reference_outputs="hi")
            >>> report.entries[0].case
            'greeting'
        """
        if not isinstance(case, str):
            raise TypeError(f"case must be a case id (str), got {type(case).__name__}")
        return _CaseTracer(self, case)

    def _add(self, entry: ReportEntry) -> None:
        with self._lock:
            self._entries.append(entry)

    # --- figures -------------------------------------------------------------------------

    @property
    def entries(self) -> list[ReportEntry]:
        """A copy of every result received so far, in arrival order."""
        with self._lock:
            return list(self._entries)

    def summaries(self) -> dict[str, KeyStatistics]:
        """Deprecated: ``statistics()``, the same figures."""
        warnings.warn(
            "EvalReport.summaries is deprecated; use statistics() (KeyStatistics: verdicts "
            "for count)",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.statistics()

    def statistics(self) -> dict[str, KeyStatistics]:
        """Every feedback key's mean with its 95 % interval (``summarize``), keys in order.

        A result outside any case is a case of its own.
        """
        entries = self.entries
        named = {entry.case for entry in entries if entry.case is not None}
        # Results outside any case get names no real case has.
        unnamed = (name for n in itertools.count(1) if (name := f"result {n}") not in named)
        results_by_case: dict[str, list[EvaluatorResult]] = {}
        for entry in entries:
            case = entry.case if entry.case is not None else next(unnamed)
            results_by_case.setdefault(case, []).append(entry.result)
        return summarize(results_by_case)

    def compare(self, baseline: Baseline | None) -> dict[str, KeyComparison]:
        """This run's keys compared case by case with a previous run (its ``Report``, or
        ``to_json()``, of this release or of version 1).

        Only keys whose every result, in both runs, was filed under a case are compared
        (see ``for_case``); the rest have only the difference of their means.
        """
        uncased = _uncased_keys(self.entries)
        current = {key: s for key, s in self.statistics().items() if key not in uncased}
        before = _report_of(baseline)
        return compare(before.paired() if before is not None else {}, current)

    @classmethod
    def merged(cls, reports: Iterable[EvalReport]) -> EvalReport:
        """A new report holding the results of all ``reports`` (e.g. one per worker)."""
        combined = cls()
        for report in reports:
            combined._entries.extend(report.entries)
        return combined

    def to_records(self) -> list[dict[str, Any]]:
        """Every result as plain JSON data, for carrying a report across processes.

        Each record is ``{"evaluator": name, "result": {...}, "case": case}`` with the
        result's fields in JSON form (``case`` is ``None`` outside any case); metadata values
        JSON cannot hold are turned into their ``str``. ``from_records`` reads them back
        (e.g. to merge pytest-xdist workers' reports).

        Example:
            >>> from langchain_evals_port import ExactMatch
            >>> from langchain_evals_port.core import eval_scope
            >>> report = EvalReport()
            >>> with eval_scope(report):
            ...     _ = ExactMatch()(outputs="a", reference_outputs="a")
            >>> copy = EvalReport.from_records(report.to_records())
            >>> copy.statistics() == report.statistics()
            True
        """
        return [
            {
                "evaluator": entry.evaluator,
                "result": json.loads(json.dumps(entry.result.model_dump(), default=str)),
                "case": entry.case,
            }
            for entry in self.entries
        ]

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]]) -> EvalReport:
        """A new report holding the results of ``to_records()`` output, in order."""
        report = cls()
        report._entries.extend(
            ReportEntry(
                str(record["evaluator"]),
                EvaluatorResult.model_validate(record["result"]),
                None if record.get("case") is None else str(record["case"]),
            )
            for record in records
        )
        return report

    # --- renderings ----------------------------------------------------------------------

    def to_report(
        self, baseline: Baseline | None = None, *, baseline_name: str | None = None
    ) -> Report:
        """The report of this run (``Report``, the schema of every report file), its time
        in UTC, compared with ``baseline`` when given.

        Each key's figures are ``statistics()``'s; a key with a result outside any case has
        no ``case_means`` (it cannot be paired with a later run). A row per case (the
        pytest plugin's: per test), in case order, then one of the results outside any
        case, holds every result with its evaluator's name, in arrival order.

        Args:
            baseline: A previous run, for the ``comparison``.
            baseline_name: What to call the baseline (its file's name).

        Example:
            >>> from langchain_evals_port import ExactMatch
            >>> from langchain_evals_port.core import eval_scope
            >>> report = EvalReport()
            >>> with eval_scope(report.for_case("test_capital")):
            ...     _ = ExactMatch()(outputs="Paris", reference_outputs="Paris")
            >>> written = report.to_report()
            >>> written.keys["exact_match"].case_means, written.runs[0].case_id
            ({'test_capital': 1.0}, 'test_capital')
        """
        entries = self.entries
        uncased = _uncased_keys(entries)
        statistics = {
            key: replace(figures, case_means={}) if key in uncased else figures
            for key, figures in self.statistics().items()
        }
        rows: dict[str | None, list[ReportResult]] = {}
        for entry in entries:
            rows.setdefault(entry.case, []).append(ReportResult.of(entry.result, entry.evaluator))
        # Sorted, so that a pinned baseline changes only where a result did (pytest-xdist
        # workers' results arrive in any order).
        order = sorted(rows, key=lambda case: (case is None, case or ""))
        before = _report_of(baseline)
        comparison = None
        if before is not None:
            comparisons = self.compare(before)
            comparison = ReportComparison.of(baseline_name, comparisons, statistics, before.keys)
        return Report(
            source="pytest",
            keys=statistics,
            comparison=comparison,
            runs=[ReportRow(case_id=case, results=rows[case]) for case in order],
        )

    def to_json(self) -> dict[str, Any]:
        """``to_report()`` as JSON data: what ``write`` writes to the ``.json`` twin.

        ``{"schema_version": 2, "source": "pytest", "generated_at": "2026-01-31T12:00:00Z",
        "keys": {key: {"mean": ..., "verdicts": ..., "inconclusive": ..., "failed": ...,
        "case_means": {case: mean}, ...}}, "runs": [{"case_id": ..., "results": [...]}],
        ...}``; ``mean`` is ``null`` for a key without verdicts. The README's "The report
        files" section describes every field; ``Report.json_schema()`` is their schema.
        """
        return self.to_report().to_json()

    def to_markdown(self, baseline: Baseline | None = None) -> str:
        """A Markdown summary: a table, the cases that changed, every result with its reasoning.

        The table has the columns ``evaluator`` (the feedback key, as in evals4j), ``mean
        score``, its ``95 % interval`` and ``n`` (over verdicts only), ``change`` and the
        ``inconclusive`` and ``failed`` counts. ``change`` compares with ``baseline`` case by
        case where both runs filed the key's results under cases (``-0.120 [-0.200, -0.040]
        worse``: the mean per-case difference, its 95 % interval and the verdict, see
        ``compare``), and is the plain difference of the means otherwise; blank without a
        baseline. The cases that got worse or better, or are in one run only, are listed under
        the table, and every result is listed with the case (the test id) it was filed under.

        Args:
            baseline: A previous run (its ``Report``, or ``to_json()``).
        """
        statistics = self.statistics()
        summaries = statistics
        before = _report_of(baseline)
        comparisons = self.compare(before)
        changes = _change_column(summaries, comparisons, before)
        lines = [
            "# Evaluation report",
            "",
            "| evaluator | mean score | 95 % interval | n | change | inconclusive | failed |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for key, summary in summaries.items():
            interval = statistics[key].interval
            lines.append(
                f"| {markdown_cell(key)} | {format_mean(summary.mean)} "
                f"| {interval or '—'} | {summary.verdicts} "
                f"| {changes[key]} | {summary.inconclusive} | {summary.failed} |"
            )
        if by_case := _case_changes(comparisons):
            lines += ["", "## Changes by case", ""]
            lines += [f"- {one_line(line)}" for line in by_case]
        lines += ["", "## Results", ""]
        lines += [
            f"- {_code(entry.case) + ': ' if entry.case else ''}{one_line(describe(entry))}"
            for entry in self.entries
        ]
        return "\n".join(lines) + "\n"

    def to_html(
        self,
        history: Sequence[Baseline] = (),
        baseline: Baseline | None = None,
        *,
        plotly: bool = True,
    ) -> str:
        """A self-contained HTML page (the shared ``run_report.html`` template): the table with
        each key's 95 % interval and change, the cases that changed, a trend chart per key,
        every result.

        Args:
            history: Past runs (``Report`` or ``to_json()``), oldest first; each key's chart
                plots its mean in every past run that has one, then this run's (a run
                without a verdict for the key has no point).
            baseline: A previous run for the ``change`` column, as in
                ``to_markdown``.
            plotly: Draw the charts with Plotly, its JavaScript inlined (about 4.8 MB), when
                ``plotly`` is installed; otherwise each trend is a small SVG line and the page
                has no script.
        """
        from ._charts import trend_chart
        from ._pages import standalone

        statistics = self.statistics()
        summaries = statistics
        before = _report_of(baseline)
        past = [report for run in history if (report := _report_of(run)) is not None]
        comparisons = self.compare(before)
        trends = [
            trend_chart(
                f"trend-{index}",
                key,
                [*_history_means(past, key), *([s.mean] if s.mean is not None else [])],
            )
            for index, (key, s) in enumerate(summaries.items())
        ]
        return standalone(
            "run_report.html",
            plotly=plotly,
            summaries=list(summaries.values()),
            intervals={key: s.interval or "—" for key, s in statistics.items()},
            changes=_change_column(summaries, comparisons, before),
            case_changes=_case_changes(comparisons),
            trends=trends,
            listing=[describe(entry) for entry in self.entries],
        )

    # --- files ---------------------------------------------------------------------------

    def write(
        self,
        path: str | os.PathLike[str],
        *,
        baseline_path: str | os.PathLike[str] | None = None,
        update_baseline: bool = False,
        history_path: str | os.PathLike[str] | None = None,
        history_limit: int = 20,
        plotly: bool = True,
        formats: Iterable[str] = FORMATS,
    ) -> bool:
        """Write the Markdown report to ``path`` and its ``.json`` and ``.html`` twins (those
        of ``formats``).

        A report without results writes nothing. Unreadable baseline or history files never
        fail the run: they are skipped with a ``RuntimeWarning``.

        Args:
            path: Where the Markdown goes (e.g. ``evals-report.md``).
            baseline_path: A previous run's JSON for the ``change`` column (a pinned
                baseline). Without one, the ``.json`` twin left at ``path`` by the previous
                run is the baseline, when it exists (its absence is normal on a first run and
                not warned about).
            update_baseline: Also write this run's JSON to ``baseline_path``, after reading
                the old one for the ``change`` column; a missing old one is then no warning.
            history_path: A JSON list of past runs; this run is appended and the list is cut
                to the newest ``history_limit`` runs. Without one, no history is kept.
            history_limit: How many runs the history keeps.
            plotly: Draw the HTML page's charts with Plotly when it is installed (see
                ``to_html``).
            formats: Which files to write, of ``FORMATS`` (``"md"``, ``"json"``,
                ``"html"``): without ``"json"`` the next run has no previous run to compare
                with, and the history (for the HTML trend charts) is kept only with
                ``"html"``. The pinned baseline is written whatever they are.

        Returns:
            Whether anything was written.

        Raises:
            ValueError: A format is not one of ``FORMATS`` (the message names the closest),
                or ``formats`` is empty.
        """
        chosen = check_formats(formats)
        if history_limit < 1:
            raise ValueError(f"history_limit must be at least 1, got {history_limit}")
        if update_baseline and baseline_path is None:
            raise ValueError("update_baseline needs the baseline_path to write")
        if not self.entries:
            return False
        markdown_path = Path(path)
        json_path = markdown_path.with_suffix(".json")
        before_path = Path(baseline_path) if baseline_path is not None else json_path
        # A first run has no previous twin, and a first pin no old baseline: both are normal.
        missing_is_news = baseline_path is not None and not update_baseline
        baseline = _read_report(before_path, "baseline", warn_if_missing=missing_is_news)
        history = _read_history(Path(history_path)) if history_path is not None else []
        current = self.to_report(baseline, baseline_name=before_path.name)
        if "md" in chosen:
            write_text(markdown_path, self.to_markdown(baseline))
        if "json" in chosen:
            current.write(json_path)
        if "html" in chosen:
            html = self.to_html(history, baseline, plotly=plotly)
            write_text(markdown_path.with_suffix(".html"), html)
        if history_path is not None and "html" in chosen:
            # The history keeps each run's figures, for the trend charts; not its rows.
            kept = [*history, current.model_copy(update={"runs": None})][-history_limit:]
            text = json.dumps([run.to_json() for run in kept], indent=2, ensure_ascii=False)
            write_text(Path(history_path), text + "\n")
        if update_baseline:
            assert baseline_path is not None  # checked above, before anything was written
            current.write(baseline_path)
        return True


def check_formats(formats: Iterable[str]) -> list[str]:
    """``formats`` checked against ``FORMATS``, in their order, each once.

    Example:
        >>> check_formats(["json", "md"])
        ['json', 'md']
        >>> check_formats(["markdown"])
        Traceback (most recent call last):
        ...
        ValueError: unknown report format 'markdown'; expected md, json, html (did you mean md?)
    """
    if isinstance(formats, str):
        raise TypeError(f"formats is a list of formats, e.g. ['md', 'json'], got {formats!r}")
    chosen = list(dict.fromkeys(formats))
    for name in chosen:
        if name not in FORMATS:
            guess = difflib.get_close_matches(name, FORMATS, n=1, cutoff=0.3)
            if name.lower() in ("markdown", "mdown"):
                guess = ["md"]
            hint = f" (did you mean {guess[0]}?)" if guess else ""
            raise ValueError(f"unknown report format {name!r}; expected {', '.join(FORMATS)}{hint}")
    if not chosen:
        raise ValueError(f"no report format chosen; expected {', '.join(FORMATS)}")
    return chosen


def _code(text: str) -> str:
    """``text`` as a Markdown code span (a test id holds ``[`` and ``_``)."""
    return f"`{text}`" if "`" not in text else f"`` {text} ``"


class _CaseTracer:
    """Files the results it receives in a report under one case (``EvalReport.for_case``)."""

    def __init__(self, report: EvalReport, case: str) -> None:
        self._report = report
        self._case = case

    def on_start(self, evaluator: str, request: EvalRequest) -> None:
        """Starts are not reported; only results are."""

    def on_result(self, evaluator: str, result: EvaluatorResult) -> None:
        """Keep ``result`` under the case."""
        self._report._add(ReportEntry(evaluator, result, self._case))

    def on_error(self, evaluator: str, error: BaseException) -> None:
        """Errors are not counted (see ``EvalReport.on_error``)."""


def _uncased_keys(entries: Iterable[ReportEntry]) -> set[str]:
    """The keys with a result outside any case: they cannot be compared case by case."""
    return {entry.result.key for entry in entries if entry.case is None}


def _change_column(
    summaries: Mapping[str, KeyStatistics],
    comparisons: Mapping[str, KeyComparison],
    baseline: Report | None,
) -> dict[str, str]:
    """Each key's ``change``: paired where the runs share cases, else the means' difference."""
    previous = baseline.means() if baseline is not None else {}
    return {
        key: (
            str(comparisons[key])
            if key in comparisons and comparisons[key].shared
            else format_change(summary.mean, previous.get(key))
        )
        for key, summary in summaries.items()
    }


def _case_changes(comparisons: Mapping[str, KeyComparison]) -> list[str]:
    return [f"{key}: {text}" for key, c in comparisons.items() if (text := c.case_changes())]


def _history_means(history: Sequence[Report], key: str) -> list[float]:
    return [means[key] for run in history if key in (means := run.means())]


def _report_of(baseline: Baseline | None) -> Report | None:
    """``baseline`` as a ``Report`` (``Report.from_json`` of parsed JSON)."""
    if baseline is None or isinstance(baseline, Report):
        return baseline
    return Report.from_json(baseline, source="the baseline")


def _read_report(path: Path, what: str, *, warn_if_missing: bool) -> Report | None:
    data = _read_json(path, what, warn_if_missing=warn_if_missing)
    if data is None:
        return None
    try:
        return Report.from_json(data, source=f"{what} {path}")
    except ReportSchemaError as error:
        warnings.warn(f"{error}; going on without it", RuntimeWarning, 3)
        return None


def _read_json(path: Path, what: str, *, warn_if_missing: bool) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if warn_if_missing:
            warnings.warn(f"{what} {path} does not exist; going on without it", RuntimeWarning, 3)
        return None
    except OSError as error:
        warnings.warn(
            f"{what} {path} is unreadable ({error}); going on without it", RuntimeWarning, 3
        )
        return None
    try:
        return json.loads(text)
    except ValueError as error:
        warnings.warn(
            f"{what} {path} is not valid JSON ({error}); going on without it", RuntimeWarning, 3
        )
        return None


def _read_history(path: Path) -> list[Report]:
    history = _read_json(path, "history", warn_if_missing=False)
    if history is None:
        return []
    if not isinstance(history, list) or not all(isinstance(run, dict) for run in history):
        warnings.warn(
            f"history {path} is not a list of reports; starting a fresh history", RuntimeWarning, 3
        )
        return []
    runs = []
    for number, run in enumerate(history, start=1):
        try:
            runs.append(Report.from_json(run, source=f"run {number} of the history {path}"))
        except ReportSchemaError as error:
            warnings.warn(f"{error}; left out of the trends", RuntimeWarning, 3)
    return runs
