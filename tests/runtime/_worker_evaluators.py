"""Evaluators for ``langchain-evals worker`` processes, and a child entry point.

``test_workers.py`` starts workers with ``--evaluators _worker_evaluators:EVALUATORS`` (or
``:DURABLE``), this folder on ``PYTHONPATH``. The plain evaluators are steered by environment
variables, so one module serves every test:

* ``WORKER_STARTED``: a file each evaluation appends ``"<evaluation id> <pid>"`` to when it
  starts (optional);
* ``WORKER_LOG``: a file each evaluation appends ``"<evaluation id> <pid>"`` to when it has
  finished evaluating, just before it returns its verdict (optional);
* ``WORKER_SLEEP``: seconds an evaluation takes (default 0.005).

Each verdict's comment is ``"by <pid>"``: the process that produced it.

``python -m _worker_evaluators durable DSN`` records one interaction on the PostgreSQL ledger
at DSN and starts its durable ``three-steps`` evaluation (``_agents.three_steps``; set
``DURABLE_BLOCK_IN_SECOND`` to make its second node hang), printing the interaction id as a
JSON line — a process to kill in the middle of a durable evaluation.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time

from _agents import three_steps

from langchain_evals_port import Score, evaluator
from langchain_evals_port.runtime import InteractionRecord, Subject

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


@evaluator(feedback_key="logged")
async def logged(evaluation_id: str, interaction: InteractionRecord, subject: Subject) -> Score:
    """An ``async`` evaluator: logs its start, sleeps, checks the interaction the runtime read
    from the ledger, logs its end and passes, signed with its pid."""
    append_line("WORKER_STARTED", evaluation_id)
    await asyncio.sleep(_sleep_seconds())
    if interaction.interaction_id != subject.interaction_id:
        raise AssertionError("the ledger returned another interaction")
    append_line("WORKER_LOG", evaluation_id)
    return Score(True, f"by {os.getpid()}")


@evaluator(feedback_key="blocking")
def blocking(evaluation_id: str) -> Score:
    """``logged`` as a plain ``def``: its sleep blocks a thread and cannot be cancelled."""
    append_line("WORKER_STARTED", evaluation_id)
    time.sleep(_sleep_seconds())
    append_line("WORKER_LOG", evaluation_id)
    return Score(True, f"by {os.getpid()}")


EVALUATORS = {"logged": logged, "blocking": blocking}
DURABLE = {"three-steps": three_steps()}


def durable(dsn: str) -> None:
    """Record one interaction on the ledger at ``dsn`` and start its ``three-steps``
    evaluation; print the interaction id, then wait to be killed."""
    from _agents import echo_agent

    from langchain_evals_port.runtime import EvaluationRuntime
    from langchain_evals_port.storage import open_storage

    config = {"evaluation": {"evaluators": {"three-steps": {"agents": {AGENT: {}}}}}}
    runtime = EvaluationRuntime(
        config,
        evaluators=DURABLE,
        ledger=open_storage(dsn),
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
