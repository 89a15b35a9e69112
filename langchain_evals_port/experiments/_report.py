"""Reports of an experiment: Markdown, JSON and HTML files, and a table on the terminal.

``write_report`` writes ``report.md``, ``report.json`` and ``report.html``: each feedback key's
figures (mean or pass rate with its 95 % interval, ``n``, inconclusive and failed counts), the
comparison with a baseline experiment when one is given, and a row per run of a case (inputs,
outputs or the target's error, latency, tokens, every evaluator's score or outcome with its
reasoning); ``report.html`` is the experiment's page of the shared templates (``_page``),
the one the console serves and ``langchain-evals report`` writes. ``print_summary`` and
``print_comparison`` print the figures as a rich table, plain text when the output is not a
terminal. Every figure reads as ``reporting.statistics`` renders
it, so the files, the terminal and the pytest plugin's reports agree.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_evals_port.capture import TokenUsage
from langchain_evals_port.core import EvaluatorResult
from langchain_evals_port.reporting import (
    REPORT_SCHEMA_VERSION,
    KeyComparison,
    KeyStatistics,
    Report,
    ReportComparison,
    ReportResult,
    ReportRow,
    TargetError,
)
from langchain_evals_port.reporting._display import terminal
from langchain_evals_port.reporting._pages import standalone
from langchain_evals_port.reporting._render import (
    figure,
    markdown_cell,
    one_line,
    shorten,
    write_text,
)
from langchain_evals_port.reporting._schema import plain_json

from ._page import experiment_context, run_tokens
from ._result import CaseResult, ExperimentResult

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

__all__ = [
    "REPORT_SCHEMA_VERSION",
    "print_comparison",
    "print_summary",
    "problem_lines",
    "write_report",
]

# Inputs, outputs and a reasoning in a Markdown cell; the JSON has them in full (the HTML
# page's cells are the experiment page's).
_CELL_LIMIT = 120
_REASONING_LIMIT = 300

_NOTE = "n counts the cases with a verdict."
_TRIALS_NOTE = (
    "Counts are runs ({trials} trials of each case); a case scores the mean of its trials, and "
    "the intervals are clustered by case."
)
_LOGIT_NOTE = (
    "A logit interval stays within the score's bounds (0 and 1) where the t interval would "
    "run past them."
)

# The reasons shown per key, and the case ids per line, in the terminal's summary.
_TOP_REASONS = 3
_CASES_SHOWN = 8
_MESSAGE_LIMIT = 200


def write_report(
    result: ExperimentResult,
    directory: str | os.PathLike[str],
    *,
    baseline: ExperimentResult | None = None,
    plotly: bool = True,
) -> list[Path]:
    """Write ``report.md``, ``report.json`` and ``report.html`` of ``result`` into ``directory``.

    Each file holds the experiment's name, every feedback key's figures (mean or pass rate
    with its 95 % interval, ``n``, inconclusive and failed counts), the comparison with
    ``baseline`` when given (the paired difference with its interval, the verdict, the cases
    that got worse or better), and one row per run: case id, trial, inputs, outputs (cut
    short in Markdown and HTML, whole in JSON), the target's error if it raised, latency,
    tokens, and each evaluator's score or outcome with its reasoning. ``report.json`` is the
    one report schema (``reporting.Report``, ``schema_version`` 2, described in the README and
    printed by ``langchain-evals report schema``); values JSON cannot hold are written as
    their ``str()``.
    ``report.html`` is the experiment's page as the console and ``langchain-evals report``
    show it (``report_html``), with the comparison under its figures: self-contained, and
    escaping everything it shows.

    Args:
        result: The experiment to report.
        directory: Where the files go (created if missing; existing reports are replaced).
        baseline: An earlier experiment to compare with, case by case.
        plotly: Draw the HTML page's charts with Plotly, its JavaScript inlined (about
            4.8 MB), when it is installed; otherwise they are tables and the page has no
            script.

    Returns:
        The paths written: Markdown, JSON, HTML.

    Example:
        >>> import json, tempfile
        >>> from langchain_evals_port import ExactMatch
        >>> from langchain_evals_port.experiments import Dataset, run_experiment
        >>> dataset = Dataset.from_records([{"inputs": {"q": "2 + 2"}, "reference_outputs": "4"}])
        >>> result = run_experiment(lambda inputs: "4", dataset, [ExactMatch()], store=False)
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     paths = write_report(result, folder)
        ...     data = json.loads(paths[1].read_text())
        >>> [path.name for path in paths], data["keys"]["exact_match"]["mean"]
        (['report.md', 'report.json', 'report.html'], 1.0)
    """
    folder = Path(directory)
    statistics = result.statistics()
    comparisons = result.compare(baseline) if baseline is not None else None
    view = _View(result, statistics, baseline, comparisons)
    paths = [folder / "report.md", folder / "report.json", folder / "report.html"]
    write_text(paths[0], _markdown(view))
    _report(view).write(paths[1])
    context = experiment_context(result, None, show="all", baseline=baseline)
    write_text(paths[2], standalone("experiment.html", plotly=plotly, **context))
    return paths


def print_summary(
    result: ExperimentResult,
    *,
    baseline: ExperimentResult | None = None,
    console: Console | None = None,
) -> None:
    """Print a table of ``result``'s figures: one row per feedback key.

    Each row has the mean or pass rate, its 95 % interval, ``n`` (cases with a verdict) and
    the inconclusive and failed counts (with several trials every count is of runs, and the
    table says so); with a ``baseline``, also the paired change, its interval and the
    verdict, and the cases that changed are listed under the table. Under it, as pytest's
    short summary does, each key's failing cases and its most frequent reasons for failed
    and inconclusive results (``problem_lines``).

    Args:
        result: The experiment to summarise.
        baseline: An earlier experiment to compare with, case by case.
        console: Where to print (default: a ``rich.console.Console`` on standard output,
            plain text when that is not a terminal).

    Example:
        >>> import io
        >>> from rich.console import Console
        >>> from langchain_evals_port import ExactMatch
        >>> from langchain_evals_port.experiments import Dataset, run_experiment
        >>> dataset = Dataset.from_records([{"inputs": {"q": "2 + 2"}, "reference_outputs": "4"}])
        >>> result = run_experiment(lambda inputs: "4", dataset, [ExactMatch()], store=False)
        >>> out = Console(file=io.StringIO(), width=100)
        >>> print_summary(result, console=out)
        >>> "exact_match" in out.file.getvalue()
        True
    """
    from rich.text import Text

    out = _console(console)
    statistics = result.statistics()
    comparisons = result.compare(baseline) if baseline is not None else {}
    title = f"{result.name} against {baseline.name}" if baseline is not None else result.name
    table = _table(title)
    table.add_column("key", no_wrap=True)
    table.add_column("measure", no_wrap=True)
    table.add_column("score [95 % interval]", justify="right", no_wrap=True)
    for header in _count_headers(result):
        table.add_column(header, justify="right", no_wrap=True)
    if baseline is not None:
        table.add_column("change [95 % interval]", justify="right", no_wrap=True)
        table.add_column("verdict", min_width=len("no detectable change"))
    for key, figures in statistics.items():
        row = [key, figures.kind, _marked(figures), *_counts(result, figures)]
        if baseline is not None:
            comparison = comparisons.get(key)
            row += _terminal_change(comparison) if comparison else ["—", "not in the baseline"]
        table.add_row(*(Text(cell) for cell in row))
    out.print(table)
    for line in _notes(result, statistics, comparisons.values()):
        out.print(Text(line))
    if baseline is not None:
        for line in _comparison_notes(comparisons, statistics, baseline.statistics()):
            out.print(Text(line))
    for line in problem_lines(result):
        out.print(Text(line))


def problem_lines(result: ExperimentResult) -> list[str]:
    """Why results did not pass, per key, as pytest's short summary says it: the cases with
    a failing verdict, then the most frequent reasons for failed and inconclusive results,
    each with its count, its first message and its cases. Empty when everything passed.

    Reasons are told apart by outcome, failure code and message, numbers aside (``timed out
    after 30 s`` and ``... 31 s`` are one reason).

    Example:
        >>> from langchain_evals_port import ExactMatch
        >>> from langchain_evals_port.experiments import Dataset, run_experiment
        >>> dataset = Dataset.from_records(
        ...     [{"id": f"c{n}", "inputs": {"n": n}, "reference_outputs": "ok"} for n in range(3)]
        ... )
        >>> def app(inputs):
        ...     if inputs["n"] == 2:
        ...         raise RuntimeError("boom")
        ...     return "ok" if inputs["n"] == 0 else "no"
        >>> for line in problem_lines(run_experiment(app, dataset, [ExactMatch()], store=False)):
        ...     print(line)
        exact_match: 1 case failed: c1
        exact_match: 1 inconclusive: the target raised RuntimeError: boom (c2)
    """
    failing: dict[str, list[str]] = {}
    reasons: dict[str, dict[tuple[str, str, str], list[tuple[str, str]]]] = {}
    for run in result.runs:
        for evaluated in run.results:
            key = evaluated.key
            if evaluated.outcome == "verdict":
                if evaluated.passed is False and run.case.id not in failing.get(key, []):
                    failing.setdefault(key, []).append(run.case.id)
                continue
            message = one_line(evaluated.reason or "")
            group = (evaluated.outcome, evaluated.error_code or "", re.sub(r"\d+", "#", message))
            reasons.setdefault(key, {}).setdefault(group, []).append((run.case.id, message))
    lines = []
    for key in sorted(failing.keys() | reasons.keys()):
        if cases := failing.get(key):
            lines.append(f"{key}: {_count(len(cases), 'case')} failed: {_case_list(cases)}")
        groups = sorted(reasons.get(key, {}).items(), key=lambda item: -len(item[1]))
        for (outcome, code, _), found in groups[:_TOP_REASONS]:
            label = f"{outcome} [{code}]" if code else outcome
            ids = list(dict.fromkeys(case for case, _ in found))
            message = shorten(found[0][1], _MESSAGE_LIMIT)
            lines.append(f"{key}: {len(found)} {label}: {message} ({_case_list(ids)})")
        if len(groups) > _TOP_REASONS:
            rest = sum(len(found) for _, found in groups[_TOP_REASONS:])
            lines.append(f"{key}: {rest} more with {len(groups) - _TOP_REASONS} other reasons")
    return lines


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _case_list(cases: Sequence[str]) -> str:
    shown = ", ".join(cases[:_CASES_SHOWN])
    more = len(cases) - _CASES_SHOWN
    return f"{shown} and {more} more" if more > 0 else shown


def _trials(result: ExperimentResult) -> int:
    return max((run.trial for run in result.runs), default=-1) + 1


def _count_headers(result: ExperimentResult) -> list[str]:
    """The count columns, in one unit: cases, or runs when there are several trials."""
    if _trials(result) > 1:
        return ["verdicts", "inconclusive", "failed"]
    return ["n", "inconclusive", "failed"]


def _counts(result: ExperimentResult, figures: KeyStatistics) -> list[str]:
    first = figures.verdicts if _trials(result) > 1 else figures.cases
    return [str(first), str(figures.inconclusive), str(figures.failed)]


def _marked(figures: KeyStatistics) -> str:
    """The figure with its interval, ``(logit)`` after an interval taken on that scale."""
    logit = figures.method is not None and "logit" in figures.method
    return f"{figures} (logit)" if logit else str(figures)


def _notes(
    result: ExperimentResult,
    statistics: Mapping[str, KeyStatistics],
    comparisons: Iterable[KeyComparison],
) -> list[str]:
    """What the table's counts are, and what a logit interval is when one is shown."""
    trials = _trials(result)
    notes = [_TRIALS_NOTE.format(trials=trials)] if trials > 1 else []
    methods = [figures.method for figures in statistics.values()]
    methods += [comparison.method for comparison in comparisons]
    if any(method is not None and "logit" in method for method in methods):
        notes.append(_LOGIT_NOTE)
    return notes


def print_comparison(
    result: ExperimentResult, baseline: ExperimentResult, *, console: Console | None = None
) -> None:
    """Print how ``result`` compares with ``baseline``: one row per feedback key of both.

    Each row has both sides' figures, the paired change with its 95 % interval, the verdict
    (``worse`` or ``better`` only outside the noise) and how many cases were paired; the cases
    that got worse or better, and keys of one side only, are listed under the table.

    Args:
        result: The experiment to judge (the candidate).
        baseline: The earlier experiment.
        console: Where to print (default: a ``rich.console.Console`` on standard output,
            plain text when that is not a terminal).

    Example:
        >>> import io
        >>> from rich.console import Console
        >>> from langchain_evals_port import ExactMatch
        >>> from langchain_evals_port.experiments import Dataset, run_experiment
        >>> dataset = Dataset.from_records(
        ...     [{"id": f"c{n}", "inputs": {"n": n}, "reference_outputs": "ok"} for n in range(4)]
        ... )
        >>> def run(app, name):
        ...     return run_experiment(app, dataset, [ExactMatch()], name=name, store=False)
        >>> before = run(lambda inputs: "ok", "before")
        >>> after = run(lambda inputs: "ok" if inputs["n"] < 2 else "?", "after")
        >>> out = Console(file=io.StringIO(), width=100)
        >>> print_comparison(after, before, console=out)
        >>> print(out.file.getvalue().splitlines()[-1])
        exact_match: worse: c2 (-1.000), c3 (-1.000)
    """
    from rich.text import Text

    out = _console(console)
    comparisons = result.compare(baseline)
    table = _table(f"{result.name} against {baseline.name}")
    table.add_column("key", no_wrap=True)
    table.add_column(f"baseline: {baseline.name}", justify="right", no_wrap=True)
    table.add_column(result.name, justify="right", no_wrap=True)
    table.add_column("change [95 % interval]", justify="right", no_wrap=True)
    table.add_column("verdict", min_width=len("no detectable change"))
    table.add_column("shared cases", justify="right", no_wrap=True)
    for key, comparison in comparisons.items():
        cells = [key, str(comparison.baseline), str(comparison.candidate)]
        cells += [*_terminal_change(comparison), str(comparison.shared)]
        table.add_row(*(Text(cell) for cell in cells))
    out.print(table)
    for line in _comparison_notes(comparisons, result.statistics(), baseline.statistics()):
        out.print(Text(line))


def _table(title: str) -> Table:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    # Names are shown as they are: a "[" in one is text, not rich markup.
    return Table(
        title=Text(title),
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
    )


def _terminal_change(comparison: KeyComparison) -> list[str]:
    """change with its interval, verdict."""
    change, interval, verdict = _change_cells(comparison)
    logit = " (logit)" if comparison.method == "logit t" else ""
    return [change if interval == "—" else f"{change} {interval}{logit}", verdict]


# --- what every rendering shows ------------------------------------------------------------


class _View:
    """An experiment with its figures, computed once for the three files."""

    def __init__(
        self,
        result: ExperimentResult,
        statistics: dict[str, KeyStatistics],
        baseline: ExperimentResult | None,
        comparisons: dict[str, KeyComparison] | None,
    ) -> None:
        self.result = result
        self.statistics = statistics
        self.baseline = baseline
        self.comparisons = comparisons
        self.baseline_statistics = baseline.statistics() if baseline is not None else {}
        # summarize lists every key that has a result, verdict or not.
        self.keys = list(statistics)

    def notes(self) -> list[str]:
        if self.comparisons is None:
            return []
        return _comparison_notes(self.comparisons, self.statistics, self.baseline_statistics)


def _statistics_cells(result: ExperimentResult, figures: KeyStatistics) -> list[str]:
    """A key's row: key, measure, score, interval (and its method when logit), counts."""
    interval = "—" if figures.interval is None else str(figures.interval)
    if figures.method is not None and "logit" in figures.method:
        interval += " (logit)"
    return [
        figures.key,
        figures.kind,
        "—" if figures.mean is None else figure(figures.mean),
        interval,
        *_counts(result, figures),
    ]


def _change_cells(comparison: KeyComparison) -> list[str]:
    """change, its interval, verdict."""
    if comparison.difference is None:
        return ["—", "—", "no shared cases"]
    interval = comparison.interval
    return [
        figure(comparison.difference, signed=True),
        "—" if interval is None else interval.format(signed=True),
        comparison.verdict if interval is not None else "one shared case, no interval",
    ]


def _comparison_notes(
    comparisons: Mapping[str, KeyComparison],
    current: Mapping[str, KeyStatistics],
    baseline: Mapping[str, KeyStatistics],
) -> list[str]:
    """The cases behind each key's change, and the keys of one side only, in words."""
    lines = [f"{key}: {text}" for key, c in comparisons.items() if (text := c.case_changes())]
    if only_now := sorted(current.keys() - baseline.keys()):
        lines.append(f"not in the baseline: {', '.join(only_now)}")
    if only_before := sorted(baseline.keys() - current.keys()):
        lines.append(f"only in the baseline: {', '.join(only_before)}")
    return lines


def _console(console: Console | None) -> Console:
    return console if console is not None else terminal()


def _text(value: Any) -> str:
    """``value`` as one reads it: a string as is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(plain_json(value), ensure_ascii=False)


def _error(run: CaseResult) -> str | None:
    failure = run.run.interaction.failure
    if not run.run.failed:
        return None
    return f"{failure.reason}: {failure.summary}" if failure else "the target raised"


def _outcome(result: EvaluatorResult) -> str:
    """The score of a verdict, else the outcome (with a failure's code)."""
    if result.outcome == "verdict":
        score = result.score
        return str(score) if isinstance(score, bool) or score is None else figure(score)
    return f"failed [{result.error_code}]" if result.error_code else result.outcome


def _reasoning(result: EvaluatorResult) -> str:
    """Why: a verdict's comment; a non-verdict's reason, then its comment if any."""
    parts = [result.comment] if result.outcome == "verdict" else [result.reason, result.comment]
    return "\n".join(part for part in parts if part)


# --- Markdown ------------------------------------------------------------------------------


def _markdown(view: _View) -> str:
    result = view.result
    lines = [f"# Experiment {one_line(result.name)}", ""]
    lines += [_runs_line(result), ""]
    lines += [
        "## Scores",
        "",
        _markdown_row(["key", "measure", "score", "95 % interval", *_count_headers(result)]),
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for figures in view.statistics.values():
        lines.append(_markdown_row(_statistics_cells(result, figures)))
    comparisons = view.comparisons.values() if view.comparisons is not None else ()
    lines += ["", " ".join(_notes(result, view.statistics, comparisons) or [_NOTE]), ""]
    if problems := problem_lines(result):
        lines += ["## Why not passed", "", *(f"- {line}" for line in problems), ""]
    if view.baseline is not None and view.comparisons is not None:
        lines += [
            f"## Compared with {one_line(view.baseline.name)}",
            "",
            "| key | baseline | this experiment | change | 95 % interval | verdict | shared |",
            "| --- | ---: | ---: | ---: | ---: | --- | ---: |",
        ]
        for key, c in view.comparisons.items():
            cells = [key, str(c.baseline), str(c.candidate), *_change_cells(c), str(c.shared)]
            lines.append(_markdown_row(cells))
        lines += ["", *(f"- {one_line(note)}" for note in view.notes()), ""]
    headers = ["case", "trial", "inputs", "outputs", "latency", "tokens", *view.keys]
    lines += [
        "## Runs",
        "",
        _markdown_row(headers),
        "| "
        + " | ".join(["---", "---:", "---", "---", "---:", "---:"] + ["---"] * len(view.keys))
        + " |",
    ]
    for run in result.runs:
        error = _error(run)
        outputs = _visible(run.run.outputs)
        cells = [
            run.case.id,
            str(run.trial),
            _code(shorten(_visible(run.case.inputs), _CELL_LIMIT)),
            f"raised {one_line(error)}" if error else _code(shorten(outputs, _CELL_LIMIT)),
            f"{run.run.latency:.3f} s",
            run_tokens(run),
            *(_markdown_results(run, key) for key in view.keys),
        ]
        lines.append(_markdown_row(cells))
    return "\n".join(lines).rstrip("\n") + "\n"


def _runs_line(result: ExperimentResult) -> str:
    cases = len({run.case.id for run in result.runs})
    trials = _trials(result)
    each = "1 trial" if trials == 1 else f"{trials} trials"
    return f"{len(result.runs)} runs of {cases} cases ({each} each)."


def _visible(value: Any) -> str:
    """``value`` on one line with its white space kept visible: a string whose spaces or
    line breaks would be lost in a table cell is shown as a JSON string (``"  padded  "``,
    ``"one\\ntwo"``), anything else as compact JSON (which has no line breaks)."""
    text = _text(value)
    if isinstance(value, str) and one_line(text) != text:
        return json.dumps(text, ensure_ascii=False)
    return text


def _code(text: str) -> str:
    """``text`` as a Markdown code span: shown as written, never read as Markdown or HTML."""
    if not text:
        return ""
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return f"{fence}{padded}{fence}"


def _markdown_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(markdown_cell(cell) for cell in cells) + " |"


def _markdown_results(run: CaseResult, key: str) -> str:
    texts = []
    for result in run.results:
        if result.key == key:
            reasoning = _reasoning(result)
            text = _outcome(result)
            texts.append(
                f"{text} — {shorten(one_line(reasoning), _REASONING_LIMIT)}" if reasoning else text
            )
    return "; ".join(texts)


# --- JSON ----------------------------------------------------------------------------------


def _report(view: _View) -> Report:
    """The experiment as the one report schema (``reporting.Report``)."""
    comparison = None
    if view.baseline is not None and view.comparisons is not None:
        comparison = ReportComparison.of(
            view.baseline.name, view.comparisons, view.statistics, view.baseline_statistics
        )
    return Report(
        source="experiment",
        name=view.result.name,
        keys=view.statistics,
        comparison=comparison,
        runs=[_row(run) for run in view.result.runs],
    )


def _row(run: CaseResult) -> ReportRow:
    failure = run.run.interaction.failure
    return ReportRow(
        case_id=run.case.id,
        trial=run.trial,
        inputs=plain_json(run.case.inputs),
        reference_outputs=plain_json(run.case.reference_outputs),
        metadata=plain_json(run.case.metadata),
        outputs=plain_json(run.run.outputs),
        error=(
            TargetError(type=failure.reason, message=failure.summary)
            if run.run.failed and failure is not None
            else None
        ),
        latency_seconds=run.run.latency,
        usage=TokenUsage.model_validate(run.run.usage, from_attributes=True),
        results=[ReportResult.of(result) for result in run.results],
    )
