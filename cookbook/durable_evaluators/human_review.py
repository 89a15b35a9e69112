"""A durable evaluator that waits for a person: a judge pre-screens, a reviewer decides.

``ReviewedByHuman`` runs in two steps:

* step ``pre_screen``: a judge model gives its opinion of the reply; it is kept in the state;
* step ``ask_reviewer``: calls LangGraph's ``interrupt(payload)`` with the question, the
  reply and the judge's opinion. The evaluation then waits: nothing is recorded, and the
  work unit stays in the ledger's queue until ``runtime.resume(evaluation_id, answer)``.
  The step then runs again from its beginning, and ``interrupt`` returns the answer.

The wait survives a restart: the step's checkpoint is kept in the ledger's SQLite file, so a
runtime started later on the same file can still be resumed. The script shows it: it closes
the first runtime while the review waits and answers through a second one. The evaluator's
settings give the review two days (``Settings.with_evaluation_timeout``); a review nobody
answers by then is recorded as Failed, with error code ``timeout``.

The agent and the judge are ``ScriptedChatModel``s, and the script plays the reviewer, so it
runs offline and prints the same thing every time.

Run: ``.venv/bin/python cookbook/durable_evaluators/human_review.py``
"""

from __future__ import annotations

import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt
from pydantic import BaseModel

from langchain_evals_port.core.errors import EvaluatorUsageError
from langchain_evals_port.runtime import (
    DurableEvaluator,
    Evaluation,
    EvaluationContext,
    EvaluationRuntime,
    Settings,
    SqliteLedger,
    Verdict,
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
    """The judge's structured answer, and the evaluator's state after the first step."""

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


class ReviewedByHuman(DurableEvaluator[Opinion]):
    id = "reviewed-by-human"

    def settings(self) -> Settings:
        # Without an answer within two days, the evaluation is recorded as Failed (timeout).
        return Settings.defaults().with_evaluation_timeout(timedelta(days=2))

    def on_evaluation(self, ctx: EvaluationContext) -> Any:
        return self.effects().transition_to(self.pre_screen)

    def pre_screen(self) -> Any:
        interaction = self.evaluation_context().interaction()
        prompt = f"Is this reply correct?\nQ: {interaction.input_text}\nA: {interaction.final_response_text}"
        session = self.session_id("judge")  # a retried step gets a fresh judge session
        opinion = JUDGE.with_structured_output(Opinion).invoke(
            prompt, config={"metadata": {"session_id": session}}
        )
        return self.effects().update_state(opinion).transition_to(self.ask_reviewer)

    def ask_reviewer(self) -> Any:
        interaction = self.evaluation_context().interaction()
        opinion = self.current_state()
        assert opinion is not None
        payload = {
            "question": interaction.input_text,
            "reply": interaction.final_response_text,
            "judge": f"{'pass' if opinion.passed else 'fail'}: {opinion.reason}",
        }
        # Code before interrupt runs again on resume, so it must be safe to repeat.
        REVIEW_INBOX[self.evaluation_context().evaluation_id] = payload
        # The first time, interrupt stops the step and the evaluation waits; after
        # runtime.resume the step runs again and interrupt returns the reviewer's answer.
        answer = interrupt(payload)
        return self.effects().complete(
            Evaluation.of(answer["approved"], answer["note"])
            .with_label("reviewed")
            .with_attribute("reviewer", answer["reviewer"])
            .with_attribute("judge", "pass" if opinion.passed else "fail")
        )


CONFIG = {"evaluation": {"evaluators": {"reviewed-by-human": {"agents": {"support-agent": {}}}}}}


def resume_when_waiting(runtime: EvaluationRuntime, waiting: str, answer: dict[str, Any]) -> None:
    """``runtime.resume``, retried briefly: the unit is parked just after the step stops."""
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
        with EvaluationRuntime(CONFIG, evaluators=[ReviewedByHuman], ledger=ledger) as runtime:
            agent = runtime.bind(support_agent(), agent_id="support-agent")
            reply = agent.invoke_detailed({"messages": [HumanMessage(QUESTION)]})
            interaction = reply.interaction_id
            review = evaluation_id(ReviewedByHuman.id, interaction)
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
        with EvaluationRuntime(CONFIG, evaluators=[ReviewedByHuman], ledger=ledger) as runtime:
            print(f"  recorded evaluations: {len(ledger.get_evaluations(interaction))}")
            print(f"  pending work units:   {ledger.pending_work(interaction)}")

            # 3. The reviewer answers (any JSON value but None); the evaluation carries on
            #    from the waiting step: the judge is not asked again.
            answer = {
                "approved": False,
                "note": "our warranty is 12 months; the agent promised a free replacement",
                "reviewer": "dana",
            }
            resume_when_waiting(runtime, review, answer)
            [record] = runtime.wait_for_evaluations(interaction, timeout=10)

        assert isinstance(record.outcome, Verdict), record.outcome
        evaluation = record.outcome.evaluation
        print()
        print("Recorded verdict:")
        print(f"  passed   {evaluation.passed} [{evaluation.label}]")
        print(f"  why      {evaluation.explanation}")
        print(f"  votes    {evaluation.attributes}")
        print(f"  pending work units: {ledger.pending_work(interaction)}")
        print(f"  judge calls: {len(JUDGE.calls)}")
        ledger.close()


if __name__ == "__main__":
    main()
