"""Reports of evaluation runs, and the statistics that compare them.

``EvalReport`` is an ``EvalTracer``: open ``eval_scope(report)`` around a run (or pass
``tracer=report``), then ``report.write("evals-report.md")`` for a Markdown table with the
change against the previous run, its JSON twin (the next run's baseline, in evals4j's format)
and a self-contained HTML page with a trend chart per feedback key. Every HTML page of results
(this one, an experiment's, the console's) is rendered from the same templates, style sheet
and charts (``templates/``): Plotly's when it is installed, else plain SVG lines and tables.

``summarize``, ``compare`` and ``gate`` (also in ``reporting.statistics``, whose documentation
says how each interval is computed) give every key its mean with a 95 % interval, compare two
runs case by case, and fail only on a drop outside the noise. ``agreement`` measures how well
a judge agrees with people's labels: accuracy, Cohen's κ with its interval, the confusion
matrix, precision and recall of "fail", Spearman's rho for numeric scores.

This package is not imported by ``import langchain_evals_port``; import it explicitly.
"""

from ._agreement import Agreement, agreement
from ._report import SCHEMA_VERSION, EvalReport
from ._statistics import (
    GateResult,
    Interval,
    KeyComparison,
    KeyStatistics,
    compare,
    gate,
    summarize,
    wilson_interval,
)
from ._summary import ReportEntry

__all__ = [
    "SCHEMA_VERSION",
    "Agreement",
    "EvalReport",
    "GateResult",
    "Interval",
    "KeyComparison",
    "KeyStatistics",
    "ReportEntry",
    "agreement",
    "compare",
    "gate",
    "summarize",
    "wilson_interval",
]
