"""The ``langchain-evals`` command line.

Experiments (``run``, ``compare``, ``experiments``, ``rescore``: ``_experiments``), the
online runtime's ``worker`` (``_worker``), which also shares an experiment's cases with
``--experiment``, the web ``console`` (``_console``), an experiment's page as one HTML
file and the report files' JSON Schema (``report``, ``report schema``: ``_report``), the
evaluators' agreement with people's annotations (``agreement``: ``_agreement``) and the
judge prompts measured against labelled cases (``calibrate``: ``_calibrate``) and the
judges' cache file cleared (``cache clear``: ``_cache``), and the JSON Schema of the
evaluation configuration file (``config schema``: ``_config``). Each command imports what it
needs when it runs, so ``--help`` is fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

import langchain_evals_port

from ._agreement import add_agreement, run_agreement
from ._cache import add_cache, run_cache
from ._calibrate import add_calibrate, run_calibrate
from ._config import add_config, run_config
from ._console import add_console, run_console
from ._experiments import add_experiment_commands, run_command
from ._report import add_report, run_report
from ._worker import add_worker, load_evaluators, run_worker

__all__ = ["load_evaluators", "main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="langchain-evals",
        description="Evaluate LangChain and LangGraph applications with langchain-evals-port: "
        "run experiments over datasets and compare them, or run the evaluations an "
        "application queues in its ledger.",
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {langchain_evals_port.__version__}"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    add_experiment_commands(commands)
    add_worker(commands)
    add_console(commands)
    add_report(commands)
    add_agreement(commands)
    add_calibrate(commands)
    add_cache(commands)
    add_config(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; the process exit status."""
    args = _parser().parse_args(argv)
    # Targets, evaluators and judges are the user's modules: import them as ``python -m``
    # would, from the working directory.
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    if args.command == "worker" and args.experiment is None:
        return run_worker(args)
    if args.command == "console":
        return run_console(args)
    if args.command == "report":
        return run_report(args)
    if args.command == "agreement":
        return run_agreement(args)
    if args.command == "calibrate":
        return run_calibrate(args)
    if args.command == "cache":
        return run_cache(args)
    if args.command == "config":
        return run_config(args)
    return run_command(args)
