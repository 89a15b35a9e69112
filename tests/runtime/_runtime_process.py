"""A separate process running an ``EvaluationRuntime`` on a shared SQLite ledger.

Run by ``test_runtime_processes.py`` with ``sys.executable``:

* ``blocker DB STARTED N``: binds an agent, invokes it N times, runs evaluator ``marker``
  that appends this pid to STARTED and then blocks; prints the interaction ids as one JSON
  line once an evaluation has started, then waits to be killed.
* ``durable DB``: starts one durable ``three-steps`` evaluation (its second step hangs when
  ``DURABLE_BLOCK_IN_SECOND`` is set) and prints the interaction id.
* ``worker DB LOG DONE``: runs evaluator ``logger``, which appends
  ``"<evaluation id> <pid>"`` to LOG and sleeps 10 ms, two at a time; prints ``ready`` once
  its worker runs and exits (printing how many evaluations it ran) when the file DONE exists
  and no work is left in the ledger.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from _agents import ThreeSteps, echo_agent

from langchain_evals_port.runtime import (
    Evaluation,
    EvaluationContext,
    EvaluationRuntime,
    OnlineEvaluator,
    SqliteLedger,
)

AGENT = "support-agent"


def bound(evaluator_id: str) -> dict[str, Any]:
    return {"evaluation": {"evaluators": {evaluator_id: {"agents": {AGENT: {}}}}}}


def append_line(path: str, line: str) -> None:
    # One write per line on a file opened for appending: lines from several processes
    # never interleave.
    with open(path, "a", encoding="utf-8") as out:
        out.write(line + "\n")


def blocker(database: str, started: str, count: int) -> None:
    class BlockingMarker(OnlineEvaluator):
        id = "marker"

        def evaluate(self, ctx: EvaluationContext) -> Any:
            append_line(started, f"{ctx.evaluation_id} {os.getpid()}")
            time.sleep(600)
            return self.effects().complete(Evaluation.passed("never reached"))

    runtime = EvaluationRuntime(
        bound("marker"),
        evaluators=[BlockingMarker],
        ledger=SqliteLedger(database),
        lease_seconds=1.0,
        poll_interval=0.05,
    )
    agent = runtime.bind(echo_agent(), agent_id=AGENT)
    ids = [agent.invoke_detailed(f"question {n}").interaction_id for n in range(count)]
    deadline = time.monotonic() + 30
    while not (Path(started).exists() and Path(started).read_text()):
        if time.monotonic() > deadline:
            sys.exit("no evaluation started within 30 s")
        time.sleep(0.01)
    print(json.dumps(ids), flush=True)
    threading.Event().wait(120)  # killed long before this
    sys.exit("never killed")


def worker(database: str, log: str, done: str) -> None:
    ran: list[str] = []

    class Logger(OnlineEvaluator):
        id = "logger"

        def evaluate(self, ctx: EvaluationContext) -> Any:
            append_line(log, f"{ctx.evaluation_id} {os.getpid()}")
            ran.append(ctx.evaluation_id)
            time.sleep(0.01)
            return self.effects().complete(Evaluation.passed(f"logged by {os.getpid()}"))

    ledger = SqliteLedger(database)
    runtime = EvaluationRuntime(
        bound("logger"),
        evaluators=[Logger],
        ledger=ledger,
        concurrency=2,
        lease_seconds=5.0,
        poll_interval=0.02,
    )
    print("ready", flush=True)
    deadline = time.monotonic() + 60
    while not (Path(done).exists() and ledger.pending_work() == 0):
        if time.monotonic() > deadline:
            sys.exit("the parent never finished")
        time.sleep(0.02)
    runtime.close()
    ledger.close()
    print(json.dumps({"pid": os.getpid(), "ran": len(ran)}), flush=True)


def durable(database: str) -> None:
    """Start one ``three-steps`` evaluation; its second step prints ``blocked`` and hangs."""
    runtime = EvaluationRuntime(
        bound(ThreeSteps.id),
        evaluators=[ThreeSteps],
        ledger=SqliteLedger(database),
        lease_seconds=1.0,
        poll_interval=0.05,
    )
    agent = runtime.bind(echo_agent(), agent_id=AGENT)
    print(json.dumps(agent.invoke_detailed("question").interaction_id), flush=True)
    threading.Event().wait(120)  # killed long before this
    sys.exit("never killed")


if __name__ == "__main__":
    mode, *arguments = sys.argv[1:]
    if mode == "blocker":
        blocker(arguments[0], arguments[1], int(arguments[2]))
    elif mode == "worker":
        worker(*arguments)
    elif mode == "durable":
        durable(*arguments)
    else:
        sys.exit(f"unknown mode {mode!r}")
