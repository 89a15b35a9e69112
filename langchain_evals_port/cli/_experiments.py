"""The experiment commands: ``run``, ``compare``, ``experiments``, ``rescore``, and
``worker --experiment``.

``run`` and ``rescore`` print a summary table compared with the previous experiment of the
same target (or ``--baseline``); ``compare`` exits with 1 when an evaluator got worse by more
than ``--fail-if-worse`` outside the noise, for CI. Targets and evaluators are ``module:attr``
names imported with the working directory on ``sys.path``, as ``python -m`` would.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sqlite3
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ._locations import STORE_HELP

__all__ = ["add_experiment_commands", "run_command"]


def add_experiment_commands(commands: Any) -> None:
    """The experiment commands' arguments (on ``commands``, argparse's subparsers)."""
    run = commands.add_parser(
        "run",
        help="run an application over a dataset and score it",
        description="Run the target on every case of DATA, score each output with the "
        "evaluators, keep everything in the store as it finishes (run it again with the same "
        "--name to resume), and print a summary compared with the previous experiment of the "
        "same target.",
    )
    run.add_argument("data", help="a .jsonl, .csv or .json file, or a LangSmith dataset's name")
    run.add_argument("--target", required=True, help="module:attr of the application")
    columns = run.add_argument_group(
        "CSV columns by name",
        "Map the columns of a CSV file to a case's fields by name, as Dataset.from_csv's "
        "inputs=, reference_outputs= and metadata= do; every column is then listed or is "
        "the id column. Without them, columns are named inputs.<key>, "
        "reference_outputs.<key>, metadata.<key> or id.",
    )
    for option, field in [
        ("--inputs", "the inputs"),
        ("--reference", "the reference outputs"),
        ("--metadata", "the metadata"),
    ]:
        columns.add_argument(
            option,
            action="extend",
            type=lambda text: text.split(","),
            metavar="COLUMN[,COLUMN]",
            help=f"the columns holding {field} (repeatable)",
        )
    _evaluators_argument(run)
    run.add_argument("--name", help="the experiment's name (default: the target's, numbered)")
    run.add_argument("--trials", type=int, default=1, help="runs of each case (default 1)")
    _run_options(run)
    run.add_argument(
        "--langsmith", action="store_true", help="also upload the experiment to LangSmith"
    )

    compare = commands.add_parser(
        "compare",
        help="compare two experiments; exit 1 on a regression",
        description="Compare experiment CANDIDATE with BASELINE case by case: per evaluator "
        "the paired difference with its 95% interval and the cases that got worse or better. "
        "Exits with 1 when an evaluator dropped by more than --fail-if-worse outside the "
        "noise.",
    )
    compare.add_argument("baseline", help="the experiment compared against")
    compare.add_argument("candidate", help="the experiment compared")
    compare.add_argument(
        "--fail-if-worse",
        type=float,
        default=0.0,
        metavar="DELTA",
        help="the largest drop let through (0.05: five points of a pass rate; default 0)",
    )
    compare.add_argument("--store", help=STORE_HELP)

    listing = commands.add_parser(
        "experiments",
        help="list the experiments in the store",
        description="List the experiments in the store, oldest first: each one's target (or "
        "the experiment it rescored), cases, trials, runs finished of all, evaluators and "
        "when it started. Compare two of them with `langchain-evals compare`.",
    )
    listing.add_argument("--store", help=STORE_HELP)

    rescore = commands.add_parser(
        "rescore",
        help="score a stored experiment's outputs again, without running its target",
        description="Score the stored outputs of EXPERIMENT with the evaluators as a new "
        "experiment, without running the target (change a judge prompt, then compare).",
    )
    rescore.add_argument("experiment", help="the experiment whose outputs are scored")
    _evaluators_argument(rescore)
    rescore.add_argument("--name", help="the new experiment's name (default: numbered)")
    _run_options(rescore)


def _evaluators_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--evaluators", required=True, help="module:ATTR naming a list of evaluators"
    )


def _run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--concurrency", type=int, default=8, help="cases run at once (default 8)")
    parser.add_argument("--store", help=STORE_HELP)
    parser.add_argument("--report", metavar="DIR", help="write report.md, .json and .html here")
    parser.add_argument(
        "--baseline", help="the experiment to compare with (default: the previous one)"
    )
    caching = parser.add_mutually_exclusive_group()
    caching.add_argument(
        "--judge-cache",
        choices=["use", "refresh", "off"],
        default="use",
        help="use: answer judges from their cache and keep new replies (default); refresh: "
        "ask the judges again and write their replies over the cached ones; off: neither "
        "read nor write the cache",
    )
    caching.add_argument(
        "--no-cache",
        dest="judge_cache",
        action="store_const",
        const="off",
        help="the same as --judge-cache=off (the cached replies stay: use refresh to replace them)",
    )


def run_command(args: argparse.Namespace) -> int:
    """Run the experiment command ``args`` names; the process exit status."""
    from langsmith.utils import LangSmithError

    from langchain_evals_port.core.errors import EvalsError
    from langchain_evals_port.experiments import DEFAULT_STORE

    from ._locations import checked_location

    # SIGTERM stops like Ctrl-C: running cases are cancelled and their claims handed back.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        if args.command == "worker" and _ledger_options(args):
            return _work(args)  # a usage error, said before anything about the store
        # Only ``run`` starts a store; the others read one that must be there.
        reads = args.command != "run"
        args.store = checked_location(args.store, default=DEFAULT_STORE, reads=reads)
        if args.command == "run":
            return _run(args)
        if args.command == "rescore":
            return _rescore(args)
        if args.command == "compare":
            return _compare(args)
        if args.command == "experiments":
            return _list(args)
        return _work(args)
    except KeyboardInterrupt:
        print(f"langchain-evals {args.command}: interrupted", file=sys.stderr)
        return 130
    except (EvalsError, OSError, ValueError, sqlite3.Error, LangSmithError) as error:
        # Usage, files, stores and DSNs, LangSmith: a message, never a traceback.
        print(f"langchain-evals {args.command}: {error}", file=sys.stderr)
        return 2


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _run(args: argparse.Namespace) -> int:
    from langchain_evals_port.experiments import (
        Dataset,
        ExperimentStore,
        arun_experiment,
        upload_to_langsmith,
    )

    dataset = Dataset.load(args.data, **_columns(args))
    with ExperimentStore(args.store) as store:
        if args.baseline is not None:
            store.info(args.baseline)  # a misspelt baseline is an error before the run
        started = datetime.now(timezone.utc)
        reused = 0 if args.name is None else _finished(store, args.name)[0]
        try:
            result = asyncio.run(
                arun_experiment(
                    args.target,
                    dataset,
                    args.evaluators,
                    name=args.name,
                    trials=args.trials,
                    max_concurrency=args.concurrency,
                    store=store,
                    cache=args.judge_cache,
                )
            )
        except KeyboardInterrupt:
            print(f"langchain-evals run: {_how_to_resume(store, args, started)}", file=sys.stderr)
            return 130
        if reused and result.ran:  # all reused: the summary says nothing ran
            print(
                f"Resumed {result.name}: {reused} of {len(result.runs)} runs were finished "
                "before and reused"
            )
        _summarize(store, result, args)
    if args.langsmith:
        # After the summary: an upload that fails loses nothing, and says why (exit 2).
        print(f"LangSmith: {upload_to_langsmith(result)}")
    return 0


def _finished(store: Any, name: str) -> tuple[int, int]:
    """How many runs of experiment ``name`` are finished, of how many (0 of 0: none)."""
    for summary in store.experiments():
        if summary.info.name == name:
            return summary.finished, summary.runs
    return 0, 0


def _how_to_resume(store: Any, args: argparse.Namespace, started: datetime) -> str:
    """What an interrupted ``run`` kept, and the command that resumes it."""
    name = args.name
    if name is None:  # the numbered name this run took: its newest of this target
        mine = [
            summary.info.name
            for summary in store.experiments()
            if summary.info.target_spec == args.target and summary.info.created_at >= started
        ]
        if not mine:
            return "interrupted before the experiment started; nothing was kept"
        name = mine[-1]
    finished, runs = _finished(store, name)
    again = "again" if args.name is not None else f"with --name {name}"
    return (
        f"interrupted: {finished} of {runs} runs of {name} finished and kept; to resume, run "
        f"the same command {again}"
    )


def _columns(args: argparse.Namespace) -> dict[str, list[str]]:
    """``Dataset.from_csv``'s column mapping from ``--inputs``, ``--reference`` and
    ``--metadata``."""
    given = {
        "inputs": args.inputs,
        "reference_outputs": args.reference,
        "metadata": args.metadata,
    }
    columns = {field: value for field, value in given.items() if value}
    if columns and Path(args.data).suffix.lower() != ".csv":
        raise ValueError(
            "--inputs, --reference and --metadata map the columns of a CSV file; "
            f"{args.data} is not one"
        )
    return columns


def _rescore(args: argparse.Namespace) -> int:
    from langchain_evals_port.experiments import ExperimentStore, arescore

    with ExperimentStore(args.store) as store:
        if args.baseline is not None:
            store.info(args.baseline)
        result = asyncio.run(
            arescore(
                args.experiment,
                args.evaluators,
                name=args.name,
                max_concurrency=args.concurrency,
                store=store,
                cache=args.judge_cache,
            )
        )
        args.baseline = args.baseline or args.experiment
        _summarize(store, result, args)
    return 0


def _summarize(store: Any, result: Any, args: argparse.Namespace) -> None:
    """The summary table (against the baseline) and, with ``--report``, the report files."""
    name = args.baseline
    if name is None:
        previous = store.latest_before(result.name)
        name = None if previous is None else previous.name
    baseline = None if name is None else store.load(name)
    compared = f", compared with {baseline.name}" if baseline else ""
    cache = result.judge_cache
    judged = (
        f"; judge calls: {cache.misses} made, {cache.hits} answered from the cache"
        if cache is not None and cache.hits + cache.misses
        else ""
    )
    complete = ": already complete, nothing run" if result.ran == 0 and result.runs else ""
    print(f"Experiment {result.name}{complete}: {len(result.runs)} runs{compared}{judged}")
    result.print(baseline=baseline)
    if args.report:
        for path in result.write(Path(args.report), baseline=baseline):
            print(f"wrote {path}")


def _compare(args: argparse.Namespace) -> int:
    from langchain_evals_port.experiments import ExperimentStore, print_comparison
    from langchain_evals_port.reporting import gate

    with ExperimentStore(args.store) as store:
        baseline = store.load(args.baseline)
        candidate = store.load(args.candidate)
    print_comparison(candidate, baseline)
    comparisons = candidate.compare(baseline)
    if comparisons and not any(comparison.shared for comparison in comparisons.values()):
        print(
            f"langchain-evals compare: {args.baseline} and {args.candidate} share no cases; "
            "compare experiments of one dataset",
            file=sys.stderr,
        )
        return 2
    gates = [gate(comparison, args.fail_if_worse) for comparison in comparisons.values()]
    failed = [str(result) for result in gates if not result.passed]
    # An evaluator the candidate lost is a regression a gate must not wave through.
    failed += [
        f"{key}: in {args.baseline}, missing from {args.candidate}"
        for key in baseline.statistics()
        if key not in comparisons
    ]
    for reason in failed:
        print(f"regression: {reason}")
    return 1 if failed else 0


def _list(args: argparse.Namespace) -> int:
    from rich.table import Table

    from langchain_evals_port.experiments import ExperimentStore
    from langchain_evals_port.reporting._display import terminal

    with ExperimentStore(args.store) as store:
        listing = store.experiments()
    table = Table("experiment", "target", "cases", "trials", "finished", "evaluators", "started")
    for summary in listing:
        info = summary.info
        table.add_row(
            info.name,
            info.target if info.rescored_from is None else f"rescore of {info.rescored_from}",
            str(info.cases),
            str(info.trials),
            f"{summary.finished}/{summary.runs}",
            ", ".join(info.evaluators),
            info.created_at.strftime("%Y-%m-%d %H:%M"),
        )
    terminal().print(table)
    return 0


def _work(args: argparse.Namespace) -> int:
    from langchain_evals_port.experiments import awork_on

    given = _ledger_options(args)
    if given:
        print(
            f"langchain-evals worker: {', '.join(given)} apply to a ledger's evaluations, not "
            "to --experiment (which takes --store and --concurrency)",
            file=sys.stderr,
        )
        return 2

    finished = asyncio.run(
        awork_on(args.experiment, store=args.store, max_concurrency=args.concurrency)
    )
    print(f"worker: finished {finished} runs of {args.experiment}")
    return 0


def _ledger_options(args: argparse.Namespace) -> list[str]:
    """The options of a ledger's worker given to ``worker --experiment``, which takes none."""
    options = ("config", "evaluators", "ledger", "lease_seconds", "grace", "worker_id")
    return [f"--{option.replace('_', '-')}" for option in options if _given(args, option)]


def _given(args: argparse.Namespace, option: str) -> bool:
    """Whether ``option`` was given on the command line (its value is not the default)."""
    defaults = {"lease_seconds": 5.0, "grace": 30.0}
    value = getattr(args, option)
    return value is not None and value != defaults.get(option)
