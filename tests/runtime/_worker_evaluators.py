"""Evaluators for ``langchain-evals worker`` processes, and a child entry point.

``test_workers.py`` starts workers with ``--evaluators _worker_evaluators:EVALUATORS`` (this
folder on ``PYTHONPATH``). The evaluators are steered by environment variables, so one module
serves every test:

* ``WORKER_STARTED``: a file each evaluation appends ``"<evaluation id> <pid>"`` to when it
  starts (optional);
* ``WORKER_LOG``: a file each evaluation appends ``"<evaluation id> <pid>"`` to when it has
  finished evaluating, just before it returns its verdict (optional);
* ``WORKER_SLEEP``: seconds an evaluation takes (default 0.005).

Each verdict's explanation is ``"by <pid>"``: the process that produced it.

``python -m _worker_evaluators durable DSN`` records one interaction on the PostgreSQL ledger
at DSN and starts its durable ``three-steps`` evaluation (``_agents.ThreeSteps``; set
``DURABLE_BLOCK_IN_SECOND`` to make its second step hang), printing the interaction id as a
JSON line — a process to kill in the middle of a durable evaluation.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
from typing import Any

from langchain_evals_port.runtime import Evaluation, EvaluationContext, OnlineEvaluator

AGENT = "support-agent"


def append_line(variable: str, evaluation_id: str) -> None:
    """Append ``"<evaluation id> <pid>"`` to the file named by ``variable``, if it is set.

    One ``write`` of one short line to a file opened for appending: lines written by several
    processes at once never interleave.
    """
    path = os.environ.get(variable)
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(f"{evaluation_id} {os.getpid()}\n")


def _sleep_seconds() -> float:
    return float(os.environ.get("WORKER_SLEEP", "0.005"))


class Logged(OnlineEvaluator):
    """An ``async`` evaluator: logs its start, sleeps, reads the interaction from the ledger,
    logs its end and passes, signed with its pid."""

    id = "logged"

    async def evaluate(self, ctx: EvaluationContext) -> Any:
        append_line("WORKER_STARTED", ctx.evaluation_id)
        await asyncio.sleep(_sleep_seconds())
        interaction = await ctx.ainteraction()
        if interaction.interaction_id != ctx.subject.interaction_id:
            raise AssertionError("the ledger returned another interaction")
        append_line("WORKER_LOG", ctx.evaluation_id)
        return self.effects().complete(Evaluation.passed(f"by {os.getpid()}"))


class Blocking(OnlineEvaluator):
    """``Logged`` as a plain ``def``: its sleep blocks a thread and cannot be cancelled."""

    id = "blocking"

    def evaluate(self, ctx: EvaluationContext) -> Any:
        append_line("WORKER_STARTED", ctx.evaluation_id)
        time.sleep(_sleep_seconds())
        append_line("WORKER_LOG", ctx.evaluation_id)
        return self.effects().complete(Evaluation.passed(f"by {os.getpid()}"))


EVALUATORS = [Logged, Blocking]


def durable(dsn: str) -> None:
    """Record one interaction on the ledger at ``dsn`` and start its ``three-steps``
    evaluation; print the interaction id, then wait to be killed."""
    from _agents import ThreeSteps, echo_agent

    from langchain_evals_port.runtime import EvaluationRuntime, open_ledger

    config = {"evaluation": {"evaluators": {ThreeSteps.id: {"agents": {AGENT: {}}}}}}
    runtime = EvaluationRuntime(
        config,
        evaluators=[ThreeSteps],
        ledger=open_ledger(dsn),
        lease_seconds=1.0,
        poll_interval=0.05,
    )
    agent = runtime.bind(echo_agent(), agent_id=AGENT)
    print(json.dumps(agent.invoke_detailed("question").interaction_id), flush=True)
    threading.Event().wait(120)  # killed long before this
    sys.exit("never killed")


if __name__ == "__main__":
    mode, *arguments = sys.argv[1:]
    if mode == "durable" and len(arguments) == 1:
        durable(arguments[0])
    else:
        sys.exit(f"usage: python -m _worker_evaluators durable DSN (got {sys.argv[1:]!r})")
