"""``langchain-evals calibrate``: how well catalog judge prompts agree with labelled cases on a
model of your choice, or your own judge with your labels
(``langchain_evals_port.trust.calibration``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_calibrate", "run_calibrate"]


def add_calibrate(commands: Any) -> None:
    """The ``calibrate`` command's arguments (on ``commands``, argparse's subparsers)."""
    calibrate = commands.add_parser(
        "calibrate",
        help="measure judge prompts (the catalog's or your own) against labelled cases",
        description="Run catalog prompts as judges on MODEL over labelled cases (the sets "
        "shipped with the package, or --labels for one --prompt), or your own --judge over "
        "--labels, and print, per prompt, accuracy and Cohen's kappa (with 95% intervals) "
        "against the labels, precision and recall of 'fail', the parse-failure rate, the "
        "tokens used and the latency of a case. A 'provider:model' string needs the langchain "
        "extra: pip install 'langchain-evals-port[langchain]'.",
    )
    judged = calibrate.add_mutually_exclusive_group(required=True)
    judged.add_argument(
        "--model", help="the judge model for catalog prompts, 'provider:model' (openai:gpt-4o-mini)"
    )
    judged.add_argument(
        "--judge",
        metavar="MODULE:ATTR",
        help="your own judge instead of catalog prompts: an evaluator (an LLMJudge, say) "
        "named module:attr, calibrated over --labels",
    )
    calibrate.add_argument(
        "--prompt",
        action="append",
        metavar="NAME",
        help="a catalog prompt (repeatable; default: every prompt with a shipped set)",
    )
    calibrate.add_argument(
        "--labels",
        metavar="FILE",
        help="a JSONL file of labelled cases for the one --prompt, or for --judge",
    )
    calibrate.add_argument("--report", metavar="DIR", help="write calibration.json and .md here")
    calibrate.add_argument(
        "--concurrency", type=int, default=8, help="cases judged at once (default 8)"
    )


def run_calibrate(args: argparse.Namespace) -> int:
    """The ``calibrate`` command: the process exit status."""
    from langchain_evals_port.core._specs import import_spec
    from langchain_evals_port.core.errors import EvalsError
    from langchain_evals_port.trust.calibration import calibrate

    try:
        judge = None
        if args.judge:
            judge = import_spec(args.judge, "--judge")
        report = calibrate(
            args.model, args.prompt, args.labels, judge=judge, max_concurrency=args.concurrency
        )
    except KeyboardInterrupt:
        print("langchain-evals calibrate: interrupted", file=sys.stderr)
        return 130
    except (EvalsError, ImportError, OSError) as error:
        print(f"langchain-evals calibrate: {error}", file=sys.stderr)
        return 2
    report.print()
    if args.report:
        for path in report.write(args.report):
            print(f"wrote {path}")
    return 0
