"""Reports of evaluation runs, and the statistics that compare them.

``EvalReport`` is an ``EvalTracer``: open ``eval_scope(report)`` around a run (or pass
``tracer=report``), then ``report.write("evals-report.md")`` for a Markdown table with the
change against the previous run, its JSON twin (the next run's baseline) and a
self-contained HTML page with a trend chart per feedback key. Every HTML page of results
(this one, an experiment's, the console's) is rendered from the same templates, style sheet
and charts (``templates/``): Plotly's when it is installed, else plain SVG lines and tables.

``Report`` is the one schema of every report file (version 2, ``REPORT_SCHEMA_VERSION``):
an experiment's ``report.json`` and this report's JSON twin, pinned baseline and history are
written from it and read back with ``Report.read``; ``langchain-evals report schema`` prints
its JSON Schema.

``summarize``, ``compare`` and ``gate`` (also in ``reporting.statistics``, whose documentation
says how each interval is computed) give every key its mean with a 95 % interval, compare two
runs case by case, and fail only on a drop outside the noise. How well a judge agrees with
people's labels is ``langchain_evals_port.trust``'s (``agreement``, ``Agreement``; importing
them from here still works, with a ``DeprecationWarning``).

This package is not imported by ``import langchain_evals_port``; import it explicitly.
"""

import importlib
import warnings
from typing import Any

from ._report import SCHEMA_VERSION, EvalReport
from ._schema import (
    REPORT_SCHEMA_VERSION,
    CaseChange,
    KeyChange,
    Report,
    ReportComparison,
    ReportResult,
    ReportRow,
    ReportSchemaError,
    TargetError,
)
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
    "REPORT_SCHEMA_VERSION",
    "SCHEMA_VERSION",
    "CaseChange",
    "EvalReport",
    "GateResult",
    "Interval",
    "KeyChange",
    "KeyComparison",
    "KeyStatistics",
    "Report",
    "ReportComparison",
    "ReportEntry",
    "ReportResult",
    "ReportRow",
    "ReportSchemaError",
    "TargetError",
    "compare",
    "gate",
    "summarize",
    "wilson_interval",
]


def __getattr__(name: str) -> Any:
    if name not in ("Agreement", "agreement"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"importing {name} from langchain_evals_port.reporting is deprecated; import it from "
        "langchain_evals_port.trust",
        DeprecationWarning,
        stacklevel=2,
    )
    # Not a module-level import: trust builds on reporting, this only forwards old names.
    return getattr(importlib.import_module("langchain_evals_port.trust"), name)
