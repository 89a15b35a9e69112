"""``langchain-evals agreement``: how well the ledger's evaluators agree with people's
annotations, per feedback key (``runtime.ledger_agreement``)."""

from __future__ import annotations

import argparse
import sqlite3
import sys
from datetime import datetime, timezone
from typing import Any

from langchain_evals_port._locations import DEFAULT_LEDGER

__all__ = ["add_agreement", "run_agreement"]


def add_agreement(commands: Any) -> None:
    """The ``agreement`` command's arguments (on ``commands``, argparse's subparsers)."""
    parser = commands.add_parser(
        "agreement",
        help="how well the evaluators agree with people's annotations, per feedback key",
        description="Pair the ledger's evaluation results with the annotations of the same "
        "interaction and feedback key and print, per key: the pairs, accuracy, Cohen's kappa "
        "with its 95% interval, the confusion matrix, precision and recall of 'fail', "
        "Spearman's rho for numeric scores, and the judge outcomes that were inconclusive "
        "or failed (counted apart, never as disagreement).",
    )
    parser.add_argument(
        "--ledger",
        help=f"a postgresql:// DSN or a SQLite file (default: {DEFAULT_LEDGER})",
    )
    parser.add_argument("--evaluator", help="only this evaluator's results")
    parser.add_argument(
        "--since", metavar="ISO", help="only results recorded at or after (UTC unless zoned)"
    )
    parser.add_argument(
        "--threshold",
        type=float,
        help="read numeric scores as pass (>= THRESHOLD) or fail for the class figures",
    )


def run_agreement(args: argparse.Namespace) -> int:
    """The ``agreement`` command: the process exit status."""
    from langchain_evals_port.core.errors import EvalsError
    from langchain_evals_port.storage import open_storage
    from langchain_evals_port.trust import ledger_agreement

    from ._locations import NO_LEDGER, checked_location

    try:
        since = _moment(args.since)
        ledger = open_storage(
            checked_location(args.ledger, default=DEFAULT_LEDGER, reads=True, missing=NO_LEDGER)
        )
        try:
            figures = ledger_agreement(
                ledger, evaluator_id=args.evaluator, since=since, threshold=args.threshold
            )
        finally:
            ledger.close()
    except (EvalsError, OSError, ValueError, sqlite3.Error) as error:
        print(f"langchain-evals agreement: {error}", file=sys.stderr)
        return 2
    if not figures:
        print("No evaluation result has an annotation of the same interaction and key.")
        return 0
    for key, judged in figures.items():
        print(f"{key}  ({judged.kind})")
        print(f"  {judged}")
        if judged.classes:
            print("  " + judged.confusion_table().replace("\n", "\n  "))
        print()
    return 0


def _moment(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"--since: expected an ISO date such as 2026-12-01 or 2026-12-01T09:30, got {text!r}"
        ) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)
