"""``langchain-evals worker``: a process running the evaluations an application queues in
its ledger (``--config evals.yaml --evaluators mypackage.evals:EVALUATORS --ledger
postgresql://...``), or sharing an experiment's cases (``--experiment NAME --store URL``).

What a worker does is told once, in its help text (``_WORKER``): plain text, because argparse
prints it as written.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from collections.abc import Mapping
from typing import Any

__all__ = ["add_worker", "load_evaluators", "run_worker"]

logger = logging.getLogger("langchain_evals_port.worker")

_WORKER = (
    "Run evaluations in a process of its own: load the same configuration files and "
    "evaluator code as the application, claim work from the shared ledger, and stop "
    "gracefully on SIGTERM or SIGINT - claim nothing more, let running evaluations finish "
    "within --grace seconds and hand the rest back to the ledger for another worker. "
    "Several workers on several machines share one PostgreSQL ledger (or, on one machine, "
    "one SQLite file) and never run one evaluation twice."
)


def load_evaluators(spec: str) -> Mapping[str, Any]:
    """The evaluators named by ``module:ATTRIBUTE``: a mapping of configuration id to
    evaluator, factory, ``DurableEvaluator`` or ``Registration`` — what the application
    passes as ``EvaluationRuntime(evaluators=...)``.

    Raises:
        EvaluatorUsageError: ``spec`` is not ``module:ATTRIBUTE``, the module cannot be
            imported (or raised while importing: named at its file and line), or the
            attribute does not exist.
        ValueError: The attribute is not a mapping.
    """
    from langchain_evals_port.core._specs import import_spec

    value = import_spec(spec, "--evaluators")
    if not isinstance(value, Mapping):
        raise ValueError(
            f"--evaluators: {spec} is a {type(value).__name__}; expected a mapping of "
            'configuration id to evaluator, e.g. EVALUATORS = {"helpfulness": LLMJudge(...)}'
        )
    return value


def add_worker(commands: Any) -> None:
    """The ``worker`` command's arguments (on ``commands``, argparse's subparsers)."""
    worker = commands.add_parser(
        "worker",
        help="run evaluations (or an experiment's cases) from shared storage",
        description=_WORKER,
    )
    worker.add_argument(
        "--config",
        action="append",
        help="a YAML or TOML configuration file; repeat to layer overrides over the base",
    )
    worker.add_argument(
        "--evaluators", help="module:ATTRIBUTE naming the mapping of configuration id to evaluator"
    )
    worker.add_argument("--ledger", help="a postgresql:// DSN or the path of a SQLite file")
    worker.add_argument(
        "--experiment",
        help="instead: run this experiment's unfinished cases, shared with the processes "
        "already on it, until none is left (with --store)",
    )
    worker.add_argument(
        "--store", help="with --experiment: the experiment store (a postgresql:// DSN or a path)"
    )
    worker.add_argument(
        "--concurrency", type=int, default=8, help="evaluations at once (default %(default)s)"
    )
    worker.add_argument(
        "--lease-seconds",
        type=float,
        default=5,
        help="seconds a claim is held before another worker may take it (default %(default)s)",
    )
    worker.add_argument(
        "--grace",
        type=float,
        default=30,
        help="seconds running evaluations get to finish on a stop (default %(default)s)",
    )
    worker.add_argument(
        "--worker-id",
        help=(
            "names this worker's claims (default: host, process id, a random instance id, and "
            "where and when the process runs: a storage.Holder, as experiments name theirs)"
        ),
    )


def run_worker(args: argparse.Namespace) -> int:
    """The ``worker`` command: the process exit status."""
    given = {"--config": args.config, "--evaluators": args.evaluators, "--ledger": args.ledger}
    missing = [option for option, value in given.items() if not value]
    if missing:
        print(
            f"langchain-evals worker: {', '.join(missing)} required (or --experiment NAME "
            "--store URL to work on an experiment)",
            file=sys.stderr,
        )
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    from langchain_evals_port.core.errors import EvalsError
    from langchain_evals_port.runtime import EvaluationRuntime
    from langchain_evals_port.storage import open_storage

    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    ledger = None
    try:
        evaluators = load_evaluators(args.evaluators)
        ledger = open_storage(args.ledger)
        runtime = EvaluationRuntime.from_files(
            *args.config,
            evaluators=evaluators,
            ledger=ledger,
            concurrency=args.concurrency,
            lease_seconds=args.lease_seconds,
            worker_id=args.worker_id,
        )
    except (EvalsError, OSError, ValueError) as error:  # our usage errors, files, DSNs
        if ledger is not None:
            ledger.close()
        print(f"langchain-evals worker: {error}", file=sys.stderr)
        return 2
    # The ledger's class only: a DSN may hold a password.
    logger.info("worker started: %d evaluators, %s", len(evaluators), type(ledger).__name__)
    stop.wait()
    logger.info("stopping: running evaluations get %g s to finish", args.grace)
    runtime.close(timeout=args.grace, drain=False)
    ledger.close()
    logger.info("worker stopped")
    return 0
