"""An experiment's HTML page, and two experiments' comparison page: what they show and the
shared templates (``reporting``'s ``experiment.html`` and ``compare.html``) they render.

The console serves these pages; ``report_html`` writes them as one self-contained file
(``langchain-evals report``), and ``write_report``'s ``report.html`` is the experiment page.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage
from pydantic_core import to_jsonable_python

from langchain_evals_port.core import EvaluatorResult, to_langchain_messages
from langchain_evals_port.core.errors import MessageFormatError
from langchain_evals_port.reporting import KeyComparison
from langchain_evals_port.reporting._charts import Chart, change_chart, interval_bars
from langchain_evals_port.reporting._pages import standalone
from langchain_evals_port.reporting._render import shorten

from ._result import CaseResult, ExperimentResult
from ._store import ExperimentInfo

__all__ = ["SHOW", "comparison_context", "experiment_context", "report_html"]

SHOW = {
    "all": "every case",
    "problems": "not passed: failed, inconclusive or a failing verdict",
    "failed": "failed",
    "inconclusive": "inconclusive",
}
"""The experiment page's ``?show=`` filter: which cases it lists."""

# A run's inputs and outputs are cut to this in a cell; the whole text opens on a click.
_CELL_LIMIT = 200
# An agent's last reply in the folded transcript's summary.
_SUMMARY_LIMIT = 120


def report_html(
    result: ExperimentResult,
    *,
    baseline: ExperimentResult | None = None,
    info: ExperimentInfo | None = None,
    plotly: bool = True,
) -> str:
    """The page of ``result`` (or of its comparison with ``baseline``), as the console shows
    it, as one self-contained HTML document: the style sheet and, with ``plotly`` when it is
    installed, Plotly's JavaScript (about 4.8 MB) inlined, no link to anything else, so it
    opens offline. Without Plotly the charts are drawn as tables and the file is a few
    kilobytes plus its rows.

    Args:
        result: The experiment (the candidate, with a ``baseline``).
        baseline: An experiment to compare ``result`` with, case by case.
        info: What the store knows of ``result`` (its target, trials, evaluators, start).
        plotly: Draw the charts with Plotly when it is installed.

    Returns:
        The HTML document.

    Example:
        >>> from langchain_evals_port import ExactMatch
        >>> from langchain_evals_port.experiments import Dataset, run_experiment
        >>> dataset = Dataset.from_records([{"inputs": {"q": "2 + 2"}, "reference_outputs": "4"}])
        >>> result = run_experiment(lambda inputs: "4", dataset, [ExactMatch()], store=False)
        >>> "<td>exact_match</td>" in report_html(result, plotly=False)
        True
    """
    if baseline is None:
        context = experiment_context(result, info, show="all")
        return standalone("experiment.html", plotly=plotly, **context)
    return standalone("compare.html", plotly=plotly, **comparison_context(baseline, result))


@dataclass(frozen=True)
class ResultCell:
    """One evaluator result as a cell shows it."""

    label: str
    outcome: str
    passed: bool | None
    reasoning: str


@dataclass(frozen=True)
class RunView:
    """One run of a case as a row shows it; an agent's outputs that are messages (a list,
    or a graph state's ``messages``) also as a ``transcript`` with a one-line summary."""

    case_id: str
    trial: int
    inputs: str
    reference: str
    outputs: str
    error: str | None
    latency: float
    tokens: str
    results: Mapping[str, Sequence[ResultCell]]
    transcript: Sequence[BaseMessage] | None = None
    transcript_summary: str = ""


@dataclass(frozen=True)
class CaseChange:
    """A case whose score for one key changed between two experiments."""

    key: str
    case_id: str
    before: float
    after: float
    difference: float
    verdict: str
    baseline_outputs: str
    candidate_outputs: str


def experiment_context(
    result: ExperimentResult,
    info: ExperimentInfo | None,
    *,
    show: str,
    baseline: ExperimentResult | None = None,
) -> dict[str, Any]:
    """What ``experiment.html`` shows of ``result``, its runs filtered by ``show``; with a
    ``baseline``, also each key compared with it."""
    statistics = result.statistics()
    keys = list(statistics)
    rows = [_row(run) for run in result.runs]
    problem_cases = {row.case_id for row in rows if _has_problem(row, "problems")}
    if show != "all":
        # A case is listed with all its trials when any of them has the problem.
        kept = {row.case_id for row in rows if _has_problem(row, show)}
        rows = [row for row in rows if row.case_id in kept]
    comparison: dict[str, Any] = {}
    if baseline is not None:
        before = baseline.statistics()
        comparison = {
            "baseline": baseline.name,
            "comparisons": list(result.compare(baseline).values()),
            "only_candidate": sorted(statistics.keys() - before.keys()),
            "only_baseline": sorted(before.keys() - statistics.keys()),
        }
    return {
        **comparison,
        "name": result.name,
        "info": info,
        "statistics": list(statistics.values()),
        "keys": keys,
        "rows": rows,
        "problem_cases": problem_cases,
        "total_runs": len(result.runs),
        "cases": len({run.case.id for run in result.runs}),
        "show": show,
        "shows": SHOW,
        "charts": (
            [
                interval_bars(
                    "chart-scores", "Score per key, with 95 % intervals", [("score", values)]
                )
            ]
            if (values := list(statistics.values()))
            else []
        ),
        "limit": _CELL_LIMIT,
    }


def comparison_context(baseline: ExperimentResult, candidate: ExperimentResult) -> dict[str, Any]:
    """What ``compare.html`` shows of ``candidate`` against ``baseline``."""
    comparisons = candidate.compare(baseline)
    before, after = baseline.statistics(), candidate.statistics()
    return {
        "baseline": baseline.name,
        "candidate": candidate.name,
        "comparisons": list(comparisons.values()),
        "only_candidate": sorted(after.keys() - before.keys()),
        "only_baseline": sorted(before.keys() - after.keys()),
        "changes": _changes(comparisons, baseline, candidate),
        "charts": _comparison_charts(comparisons, baseline.name, candidate.name),
        "limit": _CELL_LIMIT,
    }


def _row(run: CaseResult) -> RunView:
    failure = run.run.interaction.failure
    error = None
    if run.run.failed:
        error = f"{failure.reason}: {failure.summary}" if failure else "the target raised"
    results: dict[str, list[ResultCell]] = {}
    for result in run.results:
        results.setdefault(result.key, []).append(_cell(result))
    transcript = _transcript(run.run.outputs)
    return RunView(
        case_id=run.case.id,
        trial=run.trial,
        inputs=_text(run.case.inputs),
        reference=_text(run.case.reference_outputs),
        outputs=_text(run.run.outputs),
        error=error,
        latency=run.run.latency,
        tokens=run_tokens(run),
        results=results,
        transcript=transcript,
        transcript_summary=_transcript_summary(transcript) if transcript else "",
    )


def _transcript(outputs: Any) -> list[BaseMessage] | None:
    """``outputs`` as messages when they are a conversation (a list of messages, or a
    state with ``messages``), else ``None``."""
    if isinstance(outputs, Mapping):
        outputs = outputs.get("messages")
    if not isinstance(outputs, (list, tuple)) or not outputs:
        return None
    try:
        return to_langchain_messages(outputs)
    except MessageFormatError:
        return None


def _transcript_summary(messages: Sequence[BaseMessage]) -> str:
    """``4 messages, 1 tool call: <the last reply>``, the reply cut short."""
    calls = sum(len(getattr(message, "tool_calls", None) or []) for message in messages)
    counts = f"{len(messages)} messages, {calls} tool call{'' if calls == 1 else 's'}"
    last = messages[-1].text.strip()
    return f"{counts}: {shorten(' '.join(last.split()), _SUMMARY_LIMIT)}" if last else counts


def _cell(result: EvaluatorResult) -> ResultCell:
    if result.outcome == "verdict":
        score = result.score
        label = str(score) if isinstance(score, bool) or score is None else f"{score:.3f}"
        reasoning = result.comment or ""
    else:
        label = f"failed [{result.error_code}]" if result.error_code else result.outcome
        reasoning = "\n".join(part for part in (result.reason, result.comment) if part)
    return ResultCell(label, result.outcome, result.passed, reasoning)


def _has_problem(row: RunView, show: str) -> bool:
    cells = [cell for cells in row.results.values() for cell in cells]
    if show == "problems":
        return row.error is not None or any(
            cell.outcome != "verdict" or cell.passed is False for cell in cells
        )
    return any(cell.outcome == show for cell in cells)


def _text(value: Any) -> str:
    """``value`` as one reads it: a string as it is, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(to_jsonable_python(value, fallback=str), ensure_ascii=False)


def _changes(
    comparisons: Mapping[str, KeyComparison],
    baseline: ExperimentResult,
    candidate: ExperimentResult,
) -> list[CaseChange]:
    """Every case whose score changed, per key: the falls (largest first), then the rises."""
    before_outputs = _first_outputs(baseline)
    after_outputs = _first_outputs(candidate)
    changes = []
    for key, comparison in comparisons.items():
        for verdict, cases in (("worse", comparison.worse), ("better", comparison.better)):
            for case in cases:
                before = comparison.baseline.case_means[case]
                after = comparison.candidate.case_means[case]
                changes.append(
                    CaseChange(
                        key,
                        case,
                        before,
                        after,
                        after - before,
                        verdict,
                        before_outputs.get(case, ""),
                        after_outputs.get(case, ""),
                    )
                )
    return sorted(changes, key=lambda c: (c.verdict != "worse", -abs(c.difference)))


def _first_outputs(result: ExperimentResult) -> dict[str, str]:
    """Each case's output (its first trial's), or the target's error."""
    outputs: dict[str, str] = {}
    for run in result.runs:
        if run.case.id not in outputs:
            row = _row(run)
            outputs[run.case.id] = f"raised {row.error}" if row.error else row.outputs
    return outputs


def _comparison_charts(
    comparisons: Mapping[str, KeyComparison], baseline: str, candidate: str
) -> list[Chart]:
    """Both sides of each key with their 95 % intervals; the paired difference with its."""
    values = list(comparisons.values())
    if not values:
        return []
    sides = interval_bars(
        "chart-comparison",
        "Baseline and candidate per key, with 95 % intervals",
        [
            (f"baseline: {baseline}", [c.baseline for c in values]),
            (f"candidate: {candidate}", [c.candidate for c in values]),
        ],
    )
    change = change_chart("chart-change", comparisons)
    return [sides] if change is None else [sides, change]


def run_tokens(run: CaseResult) -> str:
    """A run's token usage in words (``12 (10 in, 2 out)``), ``—`` when no call reported any."""
    if not any(response.usage for response in run.run.interaction.responses):
        return "—"
    usage = run.run.usage
    return f"{usage.total_tokens} ({usage.input_tokens} in, {usage.output_tokens} out)"
