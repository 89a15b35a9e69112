"""``EvalReport``: a tracer that collects results and writes Markdown, JSON and HTML summaries."""

from __future__ import annotations

import json
import os
import tempfile
import threading
import warnings
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from langchain_evals_port.core import EvalRequest, EvaluatorResult

from ._html import render_html
from ._summary import (
    KeySummary,
    ReportEntry,
    baseline_means,
    describe,
    format_change,
    format_mean,
    summarise,
)

SCHEMA_VERSION = 1
"""The ``schema`` number of the JSON report (the evals4j format)."""


class EvalReport:
    """Collects evaluation results as an ``EvalTracer`` and summarises them per feedback key.

    Hand it to evaluators (``tracer=report``) or open ``eval_scope(report)`` around the code
    under test. It is safe to share between threads and asyncio tasks. ``to_markdown``,
    ``to_json`` and ``to_html`` render the summary; ``write`` writes all three and keeps a
    bounded history of runs for the HTML trend charts.

    Example:
        >>> from langchain_evals_port import ExactMatch, eval_scope
        >>> report = EvalReport()
        >>> with eval_scope(report):
        ...     _ = ExactMatch()(outputs="a", reference_outputs="a")
        ...     _ = ExactMatch()(outputs="a", reference_outputs="b")
        >>> report.summaries()["exact_match"]
        KeySummary(key='exact_match', mean=0.5, count=2, inconclusive=0, failed=0)
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
        """Keep ``result`` for the summary and the listing."""
        with self._lock:
            self._entries.append(ReportEntry(evaluator, result))

    def on_error(self, evaluator: str, error: BaseException) -> None:
        """Errors are not counted here: a recorded failure also arrives as a ``failed``
        result, and a raised one fails the caller, so counting both would count it twice."""

    # --- figures -------------------------------------------------------------------------

    @property
    def entries(self) -> list[ReportEntry]:
        """A copy of every result received so far, in arrival order."""
        with self._lock:
            return list(self._entries)

    def summaries(self) -> dict[str, KeySummary]:
        """The figures of every feedback key, keys in sorted order."""
        by_key: dict[str, list[EvaluatorResult]] = {}
        for entry in self.entries:
            by_key.setdefault(entry.result.key, []).append(entry.result)
        return {key: summarise(key, by_key[key]) for key in sorted(by_key)}

    @classmethod
    def merged(cls, reports: Iterable[EvalReport]) -> EvalReport:
        """A new report holding the results of all ``reports`` (e.g. one per worker)."""
        combined = cls()
        for report in reports:
            combined._entries.extend(report.entries)
        return combined

    def to_records(self) -> list[dict[str, Any]]:
        """Every result as plain JSON data, for carrying a report across processes.

        Each record is ``{"evaluator": name, "result": {...}}`` with the result's fields in
        JSON form; metadata values JSON cannot hold are turned into their ``str``.
        ``from_records`` reads them back (e.g. to merge pytest-xdist workers' reports).

        Example:
            >>> from langchain_evals_port import ExactMatch, eval_scope
            >>> report = EvalReport()
            >>> with eval_scope(report):
            ...     _ = ExactMatch()(outputs="a", reference_outputs="a")
            >>> copy = EvalReport.from_records(report.to_records())
            >>> copy.summaries() == report.summaries()
            True
        """
        return [
            {
                "evaluator": entry.evaluator,
                "result": json.loads(json.dumps(entry.result.model_dump(), default=str)),
            }
            for entry in self.entries
        ]

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]]) -> EvalReport:
        """A new report holding the results of ``to_records()`` output, in order."""
        report = cls()
        report._entries.extend(
            ReportEntry(str(record["evaluator"]), EvaluatorResult.model_validate(record["result"]))
            for record in records
        )
        return report

    # --- renderings ----------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The summary in evals4j's JSON format, with this run's time in UTC.

        ``{"schema": 1, "generatedAt": "2026-01-31T12:00:00Z", "keys": {key: {"mean": ...,
        "count": ..., "inconclusive": ..., "failed": ...}}}``; ``mean`` is ``null`` for a key
        without verdicts. Readers take only ``mean`` and ignore what they do not know.
        """
        generated = datetime.now(timezone.utc).isoformat(timespec="seconds")
        return {
            "schema": SCHEMA_VERSION,
            "generatedAt": generated.replace("+00:00", "Z"),
            "keys": {
                key: {
                    "mean": summary.mean,
                    "count": summary.count,
                    "inconclusive": summary.inconclusive,
                    "failed": summary.failed,
                }
                for key, summary in self.summaries().items()
            },
        }

    def to_markdown(self, baseline: Mapping[str, Any] | None = None) -> str:
        """A Markdown summary: a table, then every result with its reasoning.

        The table has the columns ``evaluator`` (the feedback key, as in evals4j), ``mean
        score`` and ``n`` (over verdicts only), ``change`` (the mean minus ``baseline``'s mean
        for the key, blank without one) and the ``inconclusive`` and ``failed`` counts.

        Args:
            baseline: A previous run's ``to_json()``.
        """
        previous = baseline_means(baseline)
        lines = [
            "# Evaluation report",
            "",
            "| evaluator | mean score | n | change | inconclusive | failed |",
            "| --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        for key, summary in self.summaries().items():
            lines.append(
                f"| {_cell(key)} | {format_mean(summary.mean)} | {summary.count} "
                f"| {format_change(summary.mean, previous.get(key))} "
                f"| {summary.inconclusive} | {summary.failed} |"
            )
        lines += ["", "## Results", ""]
        lines += [f"- {_one_line(describe(entry))}" for entry in self.entries]
        return "\n".join(lines) + "\n"

    def to_html(
        self,
        history: Sequence[Mapping[str, Any]] = (),
        baseline: Mapping[str, Any] | None = None,
    ) -> str:
        """A self-contained HTML page: the table, a trend chart per key, every result.

        Args:
            history: Past runs' ``to_json()``, oldest first; each key's chart plots its mean
                in every past run that has one, then this run's (a run without a verdict
                for the key has no point).
            baseline: A previous run's ``to_json()`` for the ``change`` column.
        """
        summaries = self.summaries()
        trends = {
            key: [*_history_means(history, key), *([s.mean] if s.mean is not None else [])]
            for key, s in summaries.items()
        }
        listing = [describe(entry) for entry in self.entries]
        return render_html(list(summaries.values()), trends, listing, baseline_means(baseline))

    # --- files ---------------------------------------------------------------------------

    def write(
        self,
        path: str | os.PathLike[str],
        *,
        baseline_path: str | os.PathLike[str] | None = None,
        update_baseline: bool = False,
        history_path: str | os.PathLike[str] | None = None,
        history_limit: int = 20,
    ) -> bool:
        """Write the Markdown report to ``path`` and its ``.json`` and ``.html`` twins.

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

        Returns:
            Whether anything was written.
        """
        if history_limit < 1:
            raise ValueError(f"history_limit must be at least 1, got {history_limit}")
        if update_baseline and baseline_path is None:
            raise ValueError("update_baseline needs the baseline_path to write")
        if not self.entries:
            return False
        markdown_path = Path(path)
        json_path = markdown_path.with_suffix(".json")
        if baseline_path is not None:
            baseline = _read_json(
                Path(baseline_path), "baseline", warn_if_missing=not update_baseline
            )
        else:
            baseline = _read_json(json_path, "baseline", warn_if_missing=False)
        history = _read_history(Path(history_path)) if history_path is not None else []
        if baseline is not None and not isinstance(baseline, dict):
            warnings.warn(
                "the baseline is not a JSON report object; going on without it",
                RuntimeWarning,
                stacklevel=2,
            )
            baseline = None
        current = self.to_json()
        _write_text(markdown_path, self.to_markdown(baseline))
        _write_text(json_path, json.dumps(current, indent=2) + "\n")
        _write_text(markdown_path.with_suffix(".html"), self.to_html(history, baseline))
        if history_path is not None:
            kept = [*history, current][-history_limit:]
            _write_text(Path(history_path), json.dumps(kept, indent=2) + "\n")
        if update_baseline:
            assert baseline_path is not None  # checked above, before anything was written
            _write_text(Path(baseline_path), json.dumps(current, indent=2) + "\n")
        return True


def _history_means(history: Sequence[Mapping[str, Any]], key: str) -> list[float]:
    return [means[key] for run in history if key in (means := baseline_means(run))]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _one_line(text: str) -> str:
    # A newline in a judge's reasoning would end the Markdown list item early.
    return " ".join(text.split())


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


def _read_history(path: Path) -> list[dict[str, Any]]:
    history = _read_json(path, "history", warn_if_missing=False)
    if history is None:
        return []
    if not isinstance(history, list) or not all(isinstance(run, dict) for run in history):
        warnings.warn(
            f"history {path} is not a list of reports; starting a fresh history", RuntimeWarning, 3
        )
        return []
    return history


def _write_text(path: Path, text: str) -> None:
    # Write-then-rename, so a run killed mid-write leaves the previous file intact rather
    # than a truncated baseline or history for the next run to trip over.
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", delete=False
    ) as handle:
        handle.write(text)
    # Temporary files are private (0600); a report is an ordinary file, readable as the
    # umask allows.
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(handle.name, 0o666 & ~umask)
    os.replace(handle.name, path)
