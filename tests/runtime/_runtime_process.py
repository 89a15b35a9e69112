"""A separate process running an ``EvaluationRuntime`` on a shared SQLite ledger.

Run by ``test_runtime_processes.py`` with ``sys.executable``:

* ``blocker DB STARTED N``: binds an agent, invokes it N times, runs evaluator ``marker``
  that appends this pid to STARTED and then blocks; prints the interaction ids as one JSON
  line once an evaluation has started, then waits to be killed.
* ``durable DB``: starts one durable ``three-steps`` evaluation (its second node hangs when
  ``DURABLE_BLOCK_IN_SECOND`` is set) and prints the interaction id.
* ``review DB LOG``: starts one durable ``review`` evaluation (``review_graph``), whose first
  node appends this pid to LOG and whose second waits for a person; prints the interaction
  id and the evaluation id as one JSON line once it waits, then waits to be killed.
* ``worker DB LOG DONE``: runs evaluator ``logger``, which appends
  ``"<evaluation id> <pid>"`` to LOG and sleeps 10 ms, two at a time; prints ``ready`` once
  its worker runs and exits (printing how many evaluations it ran) when the file DONE exists
  and no work is left in the ledger.
* ``kept DB``: starts one durable ``kept-score`` evaluation (``kept_score_graph``), whose
  first node keeps a ``Score`` in the graph state under a loose annotation and whose second
  prints ``blocked`` and hangs; prints the interaction id.
* ``kept-resume DB ID``: resumes the ``kept-score`` evaluation of interaction ID on the
  ledger and prints its record as JSON.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, TypedDict

from _agents import echo_agent, three_steps
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from langchain_evals_port import Score, evaluator
from langchain_evals_port.runtime import (
    DurableEvaluator,
    EvaluationRuntime,
    SqliteLedger,
    evaluation_id,
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
    @evaluator(feedback_key="marker")
    def blocking_marker(evaluation_id: str) -> Score:
        append_line(started, f"{evaluation_id} {os.getpid()}")
        time.sleep(600)
        return Score(True, "never reached")

    runtime = EvaluationRuntime(
        bound("marker"),
        evaluators={"marker": blocking_marker},
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

    @evaluator(feedback_key="logger")
    def logger(evaluation_id: str) -> Score:
        append_line(log, f"{evaluation_id} {os.getpid()}")
        ran.append(evaluation_id)
        time.sleep(0.01)
        return Score(True, f"logged by {os.getpid()}")

    ledger = SqliteLedger(database)
    runtime = EvaluationRuntime(
        bound("logger"),
        evaluators={"logger": logger},
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
    """Start one ``three-steps`` evaluation; its second node prints ``blocked`` and hangs."""
    runtime = EvaluationRuntime(
        bound("three-steps"),
        evaluators={"three-steps": three_steps()},
        ledger=SqliteLedger(database),
        lease_seconds=1.0,
        poll_interval=0.05,
    )
    agent = runtime.bind(echo_agent(), agent_id=AGENT)
    print(json.dumps(agent.invoke_detailed("question").interaction_id), flush=True)
    threading.Event().wait(120)  # killed long before this
    sys.exit("never killed")


class Kept(TypedDict, total=False):
    """The state of ``kept_score_graph``: a judge's ``Score`` and the final score, typed
    loosely (as the durable testkit's example does), so LangGraph's schema-derived allowlist
    does not name the package's types."""

    first: object
    score: object


def kept_score_graph() -> DurableEvaluator:
    """Two nodes: ``judge`` keeps a ``Score`` in the state; ``decide`` (which prints
    ``blocked`` and hangs when ``DURABLE_BLOCK_IN_SECOND`` is set) reads it back."""

    def judge(state: Kept) -> dict[str, Any]:
        return {"first": Score(True, "long enough", {"judge": "first"})}

    def decide(state: Kept) -> dict[str, Any]:
        if os.environ.get("DURABLE_BLOCK_IN_SECOND"):
            print("blocked", flush=True)
            time.sleep(600)
        first = state["first"]
        assert isinstance(first, Score), f"the kept score came back as {first!r}"
        return {"score": Score(first.value, f"kept: {first.comment}", first.metadata)}

    builder = StateGraph(Kept)
    builder.add_node("judge", judge)
    builder.add_node("decide", decide)
    builder.add_edge(START, "judge")
    builder.add_edge("judge", "decide")
    builder.add_edge("decide", END)
    return DurableEvaluator(builder)


def kept(database: str) -> None:
    """Start one ``kept-score`` evaluation; print the interaction id, then hang (in
    ``decide``, with ``DURABLE_BLOCK_IN_SECOND``)."""
    runtime = EvaluationRuntime(
        bound("kept-score"),
        evaluators={"kept-score": kept_score_graph()},
        ledger=SqliteLedger(database),
        lease_seconds=1.0,
        poll_interval=0.05,
    )
    agent = runtime.bind(echo_agent(), agent_id=AGENT)
    print(json.dumps(agent.invoke_detailed("question").interaction_id), flush=True)
    threading.Event().wait(120)  # killed long before this
    sys.exit("never killed")


def kept_resume(database: str, interaction_id: str) -> None:
    """Resume the ``kept-score`` evaluation of ``interaction_id``; print its record."""
    runtime = EvaluationRuntime(
        bound("kept-score"),
        evaluators={"kept-score": kept_score_graph()},
        ledger=SqliteLedger(database),
        lease_seconds=1.0,
        poll_interval=0.05,
    )
    try:
        [record] = runtime.wait_for_evaluations(interaction_id, timeout=60)
    finally:
        runtime.close()
    print(record.model_dump_json(), flush=True)


class Reviewed(TypedDict, total=False):
    """The state of ``review_graph``: the pre-screen's opinion, then the score."""

    opinion: str
    score: Score


def review_graph(log: str) -> DurableEvaluator:
    """A review in two nodes: ``pre_screen`` (a judge's stand-in) appends
    ``"pre_screen <pid>"`` to ``log`` and keeps its opinion in the state; ``ask_reviewer``
    waits in ``interrupt`` and scores the answer, signed with the pid that recorded it."""

    def pre_screen(state: Reviewed) -> dict[str, Any]:
        append_line(log, f"pre_screen {os.getpid()}")
        return {"opinion": "pass"}

    def ask_reviewer(state: Reviewed) -> dict[str, Any]:
        answer = interrupt({"question": "Is this reply right?", "judge": state["opinion"]})
        comment = f"{answer['reviewer']}, recorded by {os.getpid()}"
        return {"score": Score(answer["approved"], comment, {"judge": state["opinion"]})}

    builder = StateGraph(Reviewed)
    builder.add_node("pre_screen", pre_screen)
    builder.add_node("ask_reviewer", ask_reviewer)
    builder.add_edge(START, "pre_screen")
    builder.add_edge("pre_screen", "ask_reviewer")
    builder.add_edge("ask_reviewer", END)
    return DurableEvaluator(builder)


def review(database: str, log: str) -> None:
    """Start one ``review`` evaluation; once it waits for a person, print the interaction
    and evaluation ids."""
    runtime = EvaluationRuntime(
        bound("review"),
        evaluators={"review": review_graph(log)},
        ledger=SqliteLedger(database),
        lease_seconds=1.0,
        poll_interval=0.05,
    )
    agent = runtime.bind(echo_agent(), agent_id=AGENT)
    interaction_id = agent.invoke_detailed("Is it still under warranty?").interaction_id
    waiting = evaluation_id("review", interaction_id)
    deadline = time.monotonic() + 30
    while waiting not in {w.evaluation_id for w in runtime.waiting_evaluations()}:
        if time.monotonic() > deadline:
            sys.exit("the review never waited for a person within 30 s")
        time.sleep(0.01)
    print(json.dumps([interaction_id, waiting]), flush=True)
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
    elif mode == "review":
        review(*arguments)
    elif mode == "kept":
        kept(*arguments)
    elif mode == "kept-resume":
        kept_resume(*arguments)
    else:
        sys.exit(f"unknown mode {mode!r}")
