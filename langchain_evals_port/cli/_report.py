"""``langchain-evals report``: an experiment's console page (or a comparison's) as one file.

The file is rendered with the console's templates and needs nothing else to open: the style
sheet and Plotly's JavaScript are inlined (about 4.8 MB; ``--no-charts`` leaves the charts
out for a file of a few kilobytes plus the rows), and nothing links elsewhere.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_report", "run_report"]


def add_report(commands: Any) -> None:
    """The ``report`` command's arguments (on ``commands``, argparse's subparsers)."""
    report = commands.add_parser(
        "report",
        help="write an experiment's (or a comparison's) page as one self-contained HTML file",
        description="Write the console's page of EXPERIMENT (with --baseline, of its "
        "comparison with that experiment) as one HTML file that opens offline: figures with "
        "their 95%% intervals, charts, and every run with its evaluators' scores and "
        "reasoning. Needs the console extra: pip install 'langchain-evals-port[console]'.",
    )
    report.add_argument("experiment", help="the experiment (the candidate, with --baseline)")
    report.add_argument("--baseline", help="compare EXPERIMENT with this experiment")
    report.add_argument("--html", required=True, metavar="PATH", help="the file to write")
    report.add_argument(
        "--store",
        help="the experiment store: a postgresql:// DSN or a SQLite file "
        "(default: .langchain-evals/experiments.db)",
    )
    report.add_argument(
        "--no-charts",
        action="store_true",
        help="leave the charts out (and Plotly's 4.8 MB of JavaScript with them)",
    )


def run_report(args: argparse.Namespace) -> int:
    """The ``report`` command: the process exit status."""
    from langchain_evals_port.core.errors import EvalsError

    try:
        import jinja2  # noqa: F401  (the console extra, checked before the store is read)
        import plotly  # type: ignore[import-untyped]  # noqa: F401

        from langchain_evals_port.console import report_html
    except ImportError as error:
        print(
            f"langchain-evals report: {error}; install the console extra: "
            "pip install 'langchain-evals-port[console]'",
            file=sys.stderr,
        )
        return 2
    from langchain_evals_port.experiments import ExperimentStore
    from langchain_evals_port.reporting._render import write_text

    try:
        with ExperimentStore(args.store) as store:
            info = store.info(args.experiment)
            result = store.load(args.experiment)
            baseline = None if args.baseline is None else store.load(args.baseline)
        page = report_html(result, baseline=baseline, info=info, charts=not args.no_charts)
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
    return 0
