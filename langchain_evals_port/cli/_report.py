"""``langchain-evals report``: an experiment's page (or a comparison's) as one file; and
``langchain-evals report schema``, the JSON Schema of the report files (``reporting.Report``:
an experiment's ``report.json``, the pytest plugin's ``eval-report.json``).

The file is ``experiments.report_html``'s, the page the console shows, and needs nothing else
to open: the style sheet is inlined and, when Plotly is installed, its JavaScript too (about
4.8 MB; ``--no-charts``, or no Plotly, draws the charts as tables, for a file of a few
kilobytes plus the rows), and nothing links elsewhere.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

from ._locations import STORE_HELP

__all__ = ["add_report", "run_report"]


def add_report(commands: Any) -> None:
    """The ``report`` command's arguments (on ``commands``, argparse's subparsers)."""
    report = commands.add_parser(
        "report",
        help="write an experiment's (or a comparison's) page as one self-contained HTML file "
        "(`report schema`: the report files' JSON Schema)",
        description="Write the console's page of EXPERIMENT (with --baseline, of its "
        "comparison with that experiment) as one HTML file that opens offline: figures with "
        "their 95% intervals, charts, and every run with its evaluators' scores and "
        "reasoning. Its charts use Plotly when it is installed (the console extra). "
        "`langchain-evals report schema` (without --html) prints instead the JSON Schema of "
        "the report files: an experiment's report.json and the pytest plugin's "
        "eval-report.json (its pinned baseline too).",
    )
    report.add_argument(
        "experiment",
        help="the experiment (the candidate, with --baseline); `schema` without --html "
        "prints the report files' JSON Schema",
    )
    report.add_argument("--baseline", help="compare EXPERIMENT with this experiment")
    # Required but for `report schema`: checked in run_report, so that one spelling stays.
    report.add_argument("--html", metavar="PATH", help="the file to write (required)")
    report.add_argument(
        "--store",
        help=STORE_HELP,
    )
    report.add_argument(
        "--no-charts",
        action="store_true",
        help="draw the charts as tables, without Plotly's 4.8 MB of JavaScript",
    )


def run_report(args: argparse.Namespace) -> int:
    """The ``report`` command: the process exit status."""
    if args.html is None:
        if args.experiment == "schema" and args.baseline is None and args.store is None:
            from langchain_evals_port.reporting import Report

            print(json.dumps(Report.json_schema(), indent=2, ensure_ascii=False))
            return 0
        print(
            "langchain-evals report: --html PATH is required (`langchain-evals report schema` "
            "alone prints the report files' JSON Schema)",
            file=sys.stderr,
        )
        return 2
    from langchain_evals_port.core.errors import EvalsError
    from langchain_evals_port.experiments import (
        DEFAULT_STORE,
        ExperimentStore,
        problem_lines,
        report_html,
    )
    from langchain_evals_port.reporting._render import write_text

    from ._locations import checked_location

    try:
        location = checked_location(args.store, default=DEFAULT_STORE, reads=True)
        with ExperimentStore(location) as store:
            info = store.info(args.experiment)
            result = store.load(args.experiment)
            baseline = None if args.baseline is None else store.load(args.baseline)
        page = report_html(result, baseline=baseline, info=info, plotly=not args.no_charts)
        path = Path(args.html)
        write_text(path, page)
    except (EvalsError, OSError, ValueError, sqlite3.Error) as error:
        print(f"langchain-evals report: {error}", file=sys.stderr)
        return 2
    size = path.stat().st_size
    print(
        f"wrote {path} ({size / 1e6:.1f} MB)"
        if size >= 1e6
        else f"wrote {path} ({size // 1000} kB)"
    )
    for line in problem_lines(result):
        print(line)
    return 0
