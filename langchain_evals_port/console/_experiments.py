"""The console's experiment pages, and the same pages as one self-contained file.

``/experiments`` lists the store's experiments with a form choosing two to compare;
``/experiments/{name}`` shows one (each key's figures, then a row per run: inputs, outputs or
the target's error, every evaluator's score or outcome with its reasoning; ``?show=`` keeps
the cases with a problem); ``/experiments/compare?baseline=A&candidate=B`` pairs two case by
case (``reporting.statistics``), with the cases whose score changed, worse first. A name the
store does not know is a 404 naming the closest one.

``report_html`` renders the experiment or comparison page with the same templates as one
HTML document that needs nothing else: the style sheet and Plotly's JavaScript inlined (or
the charts left out), no links to follow. ``langchain-evals report`` writes it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from pydantic_core import to_jsonable_python

from langchain_evals_port.core import EvaluatorResult
from langchain_evals_port.experiments import (
    CaseResult,
    ExperimentInfo,
    ExperimentNotFoundError,
    ExperimentResult,
    ExperimentStore,
)
from langchain_evals_port.reporting import KeyComparison, KeyStatistics

from ._templates import HERE, plotly_path, template_environment

__all__ = ["SHOW", "experiment_routes", "report_html"]

SHOW = {
    "all": "every case",
    "problems": "not passed: failed, inconclusive or a failing verdict",
    "failed": "failed",
    "inconclusive": "inconclusive",
}
"""The experiment page's ``?show=`` filter: which cases it lists."""

# A run's inputs and outputs are cut to this in a cell; the whole text opens on a click.
_CELL_LIMIT = 200

Page = Callable[..., Any]
"""The console's page renderer: ``page(request, template, status=200, **context)``."""


def experiment_routes(store: ExperimentStore, page: Page) -> list[Any]:
    """The experiment pages over ``store``, rendered by the console's ``page``."""
    from starlette.routing import Route

    pages = _ExperimentPages(store, page)
    return [
        Route("/experiments", pages.listing),
        # Before /experiments/{name}: "compare" is a page, not an experiment.
        Route("/experiments/compare", pages.compare),
        Route("/experiments/{name:path}", pages.experiment),
    ]


class _ExperimentPages:
    """The page handlers; the store's reads run on a worker thread (its SQL blocks)."""

    def __init__(self, store: ExperimentStore, page: Page) -> None:
        self.store = store
        self.page = page

    async def listing(self, request: Any) -> Any:
        summaries = await asyncio.to_thread(self.store.experiments)
        names = [summary.info.name for summary in reversed(summaries)]
        return self.page(
            request,
            "experiments.html",
            summaries=list(reversed(summaries)),
            candidate=names[0] if names else None,
            baseline=names[1] if len(names) > 1 else None,
        )

    async def experiment(self, request: Any, name: str | None = None) -> Any:
        name = name or request.path_params["name"]
        show = request.query_params.get("show") or "all"
        if show not in SHOW:
            return _bad_request(f"show: expected one of {', '.join(SHOW)}, got {show!r}")
        try:
            info, result = await asyncio.to_thread(self._load, name)
        except ExperimentNotFoundError as error:
            return self.page(request, "missing.html", status=404, message=str(error))
        return self.page(request, "experiment.html", **experiment_context(result, info, show=show))

    async def compare(self, request: Any) -> Any:
        query = request.query_params
        baseline_name, candidate_name = query.get("baseline"), query.get("candidate")
        if "baseline" not in query and "candidate" not in query:
            # The list's link to an experiment named "compare" (or its filter form).
            return await self.experiment(request, "compare")
        if not baseline_name or not candidate_name:
            return _bad_request("compare: name a baseline and a candidate experiment")
        try:
            baseline = await asyncio.to_thread(self.store.load, baseline_name)
            candidate = await asyncio.to_thread(self.store.load, candidate_name)
        except ExperimentNotFoundError as error:
            return self.page(request, "missing.html", status=404, message=str(error))
        return self.page(request, "compare.html", **comparison_context(baseline, candidate))

    def _load(self, name: str) -> tuple[ExperimentInfo, ExperimentResult]:
        return self.store.info(name), self.store.load(name)


def report_html(
    result: ExperimentResult,
    *,
    baseline: ExperimentResult | None = None,
    info: ExperimentInfo | None = None,
    charts: bool = True,
) -> str:
    """The console's page of ``result`` (or of its comparison with ``baseline``) as one
    self-contained HTML document: the console's style sheet and, with ``charts``, Plotly's
    JavaScript (about 4.8 MB) inlined, no link to anything else, so it opens offline.

    Args:
        result: The experiment (the candidate, with a ``baseline``).
        baseline: An experiment to compare ``result`` with, case by case.
        info: What the store knows of ``result`` (its target, trials, evaluators, start).
        charts: Include the Plotly charts; without them the file is a few kilobytes plus
            its rows.

    Returns:
        The HTML document.
    """
    from markupsafe import Markup

    env = template_environment()
    context: dict[str, Any] = {
        "standalone": True,
        "read_only": True,
        "experiments": False,
        "generated": datetime.now(timezone.utc),
        # Trusted text of this package and of plotly's: inlined as it is. Neither holds the
        # end tag of its element, which is all that could end it early.
        "inline_css": Markup(_inline((HERE / "static" / "console.css").read_text("utf-8"))),
        "plotly_js": Markup(_inline(plotly_path().read_text("utf-8"))) if charts else None,
    }
    if baseline is None:
        context.update(experiment_context(result, info, show="all"))
        return str(env.get_template("experiment.html").render(context))
    context.update(comparison_context(baseline, result))
    return str(env.get_template("compare.html").render(context))


def _inline(text: str) -> str:
    return text.replace("</", "<\\/")


# --- what the pages show -------------------------------------------------------------------


@dataclass(frozen=True)
class ResultCell:
    """One evaluator result as a cell shows it."""

    label: str
    outcome: str
    passed: bool | None
    reasoning: str


@dataclass(frozen=True)
class RunRow:
    """One run of a case as a row shows it."""

    case_id: str
    trial: int
    inputs: str
    reference: str
    outputs: str
    error: str | None
    latency: float
    results: Mapping[str, Sequence[ResultCell]]


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
    result: ExperimentResult, info: ExperimentInfo | None, *, show: str
) -> dict[str, Any]:
    """What ``experiment.html`` shows of ``result``, its runs filtered by ``show``."""
    statistics = result.statistics()
    keys = list(statistics)
    rows = [_row(run) for run in result.runs]
    problem_cases = {row.case_id for row in rows if _has_problem(row, "problems")}
    if show != "all":
        # A case is listed with all its trials when any of them has the problem.
        kept = {row.case_id for row in rows if _has_problem(row, show)}
        rows = [row for row in rows if row.case_id in kept]
    return {
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
        "charts": [_scores_chart(statistics)] if statistics else [],
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


def _row(run: CaseResult) -> RunRow:
    failure = run.run.interaction.failure
    error = None
    if run.run.failed:
        error = f"{failure.reason}: {failure.summary}" if failure else "the target raised"
    results: dict[str, list[ResultCell]] = {}
    for result in run.results:
        results.setdefault(result.key, []).append(_cell(result))
    return RunRow(
        case_id=run.case.id,
        trial=run.trial,
        inputs=_text(run.case.inputs),
        reference=_text(run.case.reference_outputs),
        outputs=_text(run.run.outputs),
        error=error,
        latency=run.run.latency,
        results=results,
    )


def _cell(result: EvaluatorResult) -> ResultCell:
    if result.outcome == "verdict":
        score = result.score
        label = str(score) if isinstance(score, bool) or score is None else f"{score:.3f}"
        reasoning = result.comment or ""
    else:
        label = f"failed [{result.error_code}]" if result.error_code else result.outcome
        reasoning = "\n".join(part for part in (result.reason, result.comment) if part)
    return ResultCell(label, result.outcome, _passed(result), reasoning)


def _passed(result: EvaluatorResult) -> bool | None:
    """Whether a verdict passed: a bool score as it is, a number only when its evaluator
    said (``metadata["passed"]``); ``None`` otherwise."""
    if result.outcome != "verdict":
        return None
    if isinstance(result.score, bool):
        return result.score
    passed = result.metadata.get("passed")
    return passed if isinstance(passed, bool) else None


def _has_problem(row: RunRow, show: str) -> bool:
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


# --- charts --------------------------------------------------------------------------------


def _error_bars(figures: Sequence[KeyStatistics]) -> dict[str, Any]:
    def above(s: KeyStatistics) -> float:
        return 0.0 if s.interval is None or s.mean is None else s.interval.high - s.mean

    def below(s: KeyStatistics) -> float:
        return 0.0 if s.interval is None or s.mean is None else s.mean - s.interval.low

    return {
        "type": "data",
        "symmetric": False,
        "array": [above(s) for s in figures],
        "arrayminus": [below(s) for s in figures],
    }


def _bars(name: str, figures: Sequence[KeyStatistics]) -> dict[str, Any]:
    return {
        "type": "bar",
        "name": name,
        "x": [s.key for s in figures],
        "y": [s.mean for s in figures],
        "error_y": _error_bars(figures),
        "text": [f"{s.kind} {s} (n={s.cases})" for s in figures],
        "hoverinfo": "text",
        "textposition": "none",
    }


def _layout(title: str, y_title: str) -> dict[str, Any]:
    return {
        "title": {"text": title},
        "yaxis": {"title": {"text": y_title}, "rangemode": "tozero"},
        "height": 320,
        "margin": {"l": 60, "r": 10, "t": 40, "b": 60},
    }


def _scores_chart(statistics: Mapping[str, KeyStatistics]) -> dict[str, Any]:
    """Each key's mean or pass rate, with its 95 % interval."""
    return {
        "id": "chart-scores",
        "data": [_bars("score", list(statistics.values()))],
        "layout": _layout("Score per key, with 95 % intervals", "pass rate / mean"),
    }


def _comparison_charts(
    comparisons: Mapping[str, KeyComparison], baseline: str, candidate: str
) -> list[dict[str, Any]]:
    """Both sides of each key with their 95 % intervals; the paired difference with its."""
    values = list(comparisons.values())
    if not values:
        return []
    paired = [c for c in values if c.difference is not None]
    sides = _layout("Baseline and candidate per key, with 95 % intervals", "pass rate / mean")
    change = _layout("Paired change per key (candidate - baseline), 95 % interval", "change")
    change["yaxis"] = {"title": {"text": "change"}, "zeroline": True, "zerolinewidth": 2}
    return [
        {
            "id": "chart-comparison",
            "data": [
                _bars(f"baseline: {baseline}", [c.baseline for c in values]),
                _bars(f"candidate: {candidate}", [c.candidate for c in values]),
            ],
            "layout": {**sides, "barmode": "group"},
        },
        {
            "id": "chart-change",
            "data": [
                {
                    "type": "scatter",
                    "mode": "markers",
                    "name": "change",
                    "x": [c.key for c in paired],
                    "y": [c.difference for c in paired],
                    "error_y": {
                        "type": "data",
                        "symmetric": False,
                        "array": [_above(c) for c in paired],
                        "arrayminus": [_below(c) for c in paired],
                    },
                    "text": [f"{c} ({c.shared} shared cases)" for c in paired],
                    "hoverinfo": "text",
                    "marker": {"size": 10},
                }
            ],
            "layout": change,
        },
    ]


def _above(c: KeyComparison) -> float:
    return 0.0 if c.interval is None or c.difference is None else c.interval.high - c.difference


def _below(c: KeyComparison) -> float:
    return 0.0 if c.interval is None or c.difference is None else c.difference - c.interval.low


def _bad_request(message: str) -> Any:
    from starlette.responses import PlainTextResponse

    return PlainTextResponse(message, status_code=400)
