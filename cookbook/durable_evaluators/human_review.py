"""A durable evaluator that waits for a person: a judge pre-screens, a reviewer decides.

The evaluator is a LangGraph graph of two nodes, registered as a ``DurableEvaluator``:

* node ``pre_screen``: a judge model gives its opinion of the reply; it is kept in the state;
* node ``ask_reviewer``: calls LangGraph's ``interrupt(payload)`` with the question, the
  reply and the judge's opinion. The evaluation then waits: nothing is recorded, and the
  work unit stays in the ledger's queue until ``runtime.resume(evaluation_id, answer)``.
  The node then runs again from its beginning, and ``interrupt`` returns the answer.

The wait survives a restart: the graph's checkpoint is kept in the ledger's SQLite file, so a
runtime started later on the same file can still be resumed. The script shows it: it closes
the first runtime while the review waits and answers through a second one. The evaluator
gives the review two days (``evaluation_timeout``); a review nobody answers by then is
recorded as failed, with error code ``timeout``.

The agent and the judge are ``ScriptedChatModel``s, and the script plays the reviewer, so it
runs offline and prints the same thing every time.

Run: ``.venv/bin/python cookbook/durable_evaluators/human_review.py``
"""

from __future__ import annotations

import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any, TypedDict

from langchain_core.messages import HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import RetryPolicy, interrupt
from pydantic import BaseModel

from langchain_evals_port import Score
from langchain_evals_port.core.errors import EvaluatorUsageError
from langchain_evals_port.runtime import (
    DurableEvaluator,
    EvaluationContext,
    EvaluationRuntime,
    SqliteLedger,
    evaluation_id,
)
from langchain_evals_port.testing import ScriptedChatModel

QUESTION = "My blender broke after 14 months. Is it still under warranty?"
REPLY = "Yes, every appliance has a 3-year warranty, so we will replace it for free."


def support_agent() -> Any:
    """A one-node LangGraph agent whose model answers from a script."""
    model = ScriptedChatModel([REPLY])

    def respond(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("respond", respond)
    graph.add_edge(START, "respond")
    graph.add_edge("respond", END)
    return graph.compile()


class Opinion(BaseModel):
    """The judge's structured answer."""

    passed: bool
    reason: str


JUDGE = ScriptedChatModel(
    responder=lambda messages: {
        "passed": True,
        "reason": "confident and polite, but I cannot check the warranty terms",
    }
)

# Where a real deployment would notify reviewers (a ticket, a chat message): the payloads of
# the reviews waiting, by evaluation id.
REVIEW_INBOX: dict[str, dict[str, Any]] = {}


class Review(TypedDict, total=False):
    """The evaluation's state: the judge's opinion, then the score."""

    opinion: Opinion
    score: Score


def pre_screen(state: Review, runtime: Runtime[EvaluationContext]) -> dict[str, Any]:
    interaction = runtime.context.interaction()
    prompt = (
        f"Is this reply correct?\nQ: {interaction.input_text}\nA: {interaction.final_response_text}"
    )
    # A retried node gets a fresh judge session: the session names the node and the attempt.
    session = runtime.context.judge_session("pre_screen", runtime.execution_info.node_attempt)
    opinion = JUDGE.with_structured_output(Opinion).invoke(
        prompt, config={"metadata": {"session_id": session}}
    )
    return {"opinion": opinion}


def ask_reviewer(state: Review, runtime: Runtime[EvaluationContext]) -> dict[str, Any]:
    interaction = runtime.context.interaction()
    opinion = state["opinion"]
    payload = {
        "question": interaction.input_text,
        "reply": interaction.final_response_text,
        "judge": f"{'pass' if opinion.passed else 'fail'}: {opinion.reason}",
    }
    # Code before interrupt runs again on resume, so it must be safe to repeat.
    REVIEW_INBOX[runtime.context.evaluation_id] = payload
    # The first time, interrupt stops the node and the evaluation waits; after
    # runtime.resume the node runs again and interrupt returns the reviewer's answer.
    answer = interrupt(payload)
    metadata = {
        "label": "reviewed",
        "reviewer": answer["reviewer"],
        "judge": "pass" if opinion.passed else "fail",
    }
    return {"score": Score(answer["approved"], answer["note"], metadata)}


def reviewed_by_human() -> DurableEvaluator:
    builder = StateGraph(Review, context_schema=EvaluationContext)
    builder.add_node("pre_screen", pre_screen, retry_policy=RetryPolicy(max_attempts=3))
    builder.add_node("ask_reviewer", ask_reviewer)
    builder.add_edge(START, "pre_screen")
    builder.add_edge("pre_screen", "ask_reviewer")
    builder.add_edge("ask_reviewer", END)
    # Without an answer within two days, the evaluation is recorded as failed (timeout).
    return DurableEvaluator(builder, evaluation_timeout=timedelta(days=2))


EVALUATORS = {"reviewed-by-human": reviewed_by_human()}
CONFIG = {"evaluation": {"evaluators": {"reviewed-by-human": {"agents": {"support-agent": {}}}}}}


def resume_when_waiting(runtime: EvaluationRuntime, waiting: str, answer: dict[str, Any]) -> None:
    """``runtime.resume``, retried briefly: the unit is parked just after the node stops."""
    deadline = time.monotonic() + 5
    while True:
        try:
            runtime.resume(waiting, answer)
            return
        except EvaluatorUsageError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "evals.db"

        # 1. A customer asks; the reply is recorded and the evaluation queued. The judge
        #    gives its opinion, then the evaluation waits for a person.
        ledger = SqliteLedger(path)
        with EvaluationRuntime(CONFIG, evaluators=EVALUATORS, ledger=ledger) as runtime:
            agent = runtime.bind(support_agent(), agent_id="support-agent")
            reply = agent.invoke_detailed({"messages": [HumanMessage(QUESTION)]})
            interaction = reply.interaction_id
            review = evaluation_id("reviewed-by-human", interaction)
            print(f"customer: {QUESTION}")
            print(f"agent:    {reply.output['messages'][-1].text}")
            deadline = time.monotonic() + 5
            while review not in REVIEW_INBOX and time.monotonic() < deadline:
                time.sleep(0.02)
        ledger.close()  # the process could stop here: the wait is kept in evals.db

        print()
        print("Waiting for a reviewer:")
        for key, value in REVIEW_INBOX[review].items():
            print(f"  {key:<8} {value}")

        # 2. Later, a new runtime on the same file: still nothing recorded, one unit waiting.
        ledger = SqliteLedger(path)
        with EvaluationRuntime(CONFIG, evaluators=EVALUATORS, ledger=ledger) as runtime:
            print(f"  recorded evaluations: {len(ledger.get_evaluations(interaction))}")
            print(f"  pending work units:   {ledger.pending_work(interaction)}")

            # 3. The reviewer answers (any JSON value but None); the evaluation carries on
            #    from the waiting node: the judge is not asked again.
            answer = {
                "approved": False,
                "note": "our warranty is 12 months; the agent promised a free replacement",
                "reviewer": "dana",
            }
            resume_when_waiting(runtime, review, answer)
            [record] = runtime.wait_for_evaluations(interaction, timeout=10)

        assert record.outcome == "verdict", record.results
        result = record.result
        votes = {key: result.metadata[key] for key in ("reviewer", "judge")}
        print()
        print("Recorded verdict:")
        print(f"  passed   {record.passed} [{result.metadata['label']}]")
        print(f"  why      {result.comment}")
        print(f"  votes    {votes}")
        print(f"  pending work units: {ledger.pending_work(interaction)}")
        print(f"  judge calls: {len(JUDGE.calls)}")
        ledger.close()


if __name__ == "__main__":
    main()
