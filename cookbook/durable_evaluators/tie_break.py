"""A durable evaluator that asks two LLM judges and calls a third only when they disagree.

``TieBreakPanel`` is a ``DurableEvaluator``: it runs in steps, and the runtime checkpoints
each step (in the ledger's SQLite file), so a process that stops mid-evaluation carries on
from the last finished step instead of paying for every judge call again.

* step ``ask_accuracy``: the accuracy judge votes; its vote goes into the state;
* step ``ask_helpfulness``: the helpfulness judge votes; if both agree, that is the verdict;
* step ``tie_break``: reached only on a disagreement, with a summary of the dispute as its
  input; the referee judge decides.

The verdict carries a score (the share of judges who passed the reply), a label
(``unanimous`` or ``tie-break``) and each judge's vote as an attribute. The evaluator is
bound to a LangGraph support agent by configuration; all models are ``ScriptedChatModel``s,
so the script runs offline and prints the same thing every time.

Run: ``.venv/bin/python cookbook/durable_evaluators/tie_break.py``
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from pydantic import BaseModel

from langchain_evals_port.runtime import (
    DurableEvaluator,
    Evaluation,
    EvaluationContext,
    EvaluationRuntime,
    Settings,
    SqliteLedger,
    Verdict,
)
from langchain_evals_port.testing import ScriptedChatModel

# --- the agent ------------------------------------------------------------------------------

QUESTIONS_AND_REPLIES = [
    (
        "How do I reset my password?",
        "Open Settings > Security, choose 'Reset password' and follow the link we email you.",
    ),
    (
        "Can I still get a refund? I bought the lamp 40 days ago.",
        "Refunds are only possible within 30 days of purchase, so this order no longer qualifies.",
    ),
    ("What is your phone number?", "I don't know."),
]


def support_agent() -> Any:
    """A one-node LangGraph agent whose model answers from a script."""
    model = ScriptedChatModel([reply for _, reply in QUESTIONS_AND_REPLIES])

    def respond(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("respond", respond)
    graph.add_edge(START, "respond")
    graph.add_edge("respond", END)
    return graph.compile()


# --- the judges (offline stand-ins for real judge models) ----------------------------------


class Vote(BaseModel):
    """What a judge answers, through ``with_structured_output``."""

    passed: bool
    reason: str


def reply_in(messages: list[BaseMessage]) -> str:
    found = re.search(r"<reply>(.*?)</reply>", messages[-1].text, re.S)
    return found.group(1) if found else ""


def accuracy_rule(messages: list[BaseMessage]) -> dict[str, Any]:
    if "don't know" in reply_in(messages):
        return {"passed": False, "reason": "it gives no answer"}
    return {"passed": True, "reason": "it states the facts correctly"}


def helpfulness_rule(messages: list[BaseMessage]) -> dict[str, Any]:
    if re.search(r"\b(open|choose|contact|call)\b", reply_in(messages), re.I):
        return {"passed": True, "reason": "it gives a next step"}
    return {"passed": False, "reason": "it leaves the customer without a next step"}


def referee_rule(messages: list[BaseMessage]) -> dict[str, Any]:
    if "within 30 days" in reply_in(messages):
        return {"passed": True, "reason": "a clear refusal that cites the policy is right here"}
    return {"passed": False, "reason": "the reply does not hold up"}


JUDGES = {
    "accuracy": ScriptedChatModel(responder=accuracy_rule, model_name="accuracy-judge"),
    "helpfulness": ScriptedChatModel(responder=helpfulness_rule, model_name="helpful-judge"),
    "referee": ScriptedChatModel(responder=referee_rule, model_name="referee-judge"),
}

SESSIONS: list[str] = []  # every judge session id used, to show their shape below

PROMPT = """Grade this customer-support reply for {aspect}.
{extra}
<question>{question}</question>
<reply>{reply}</reply>"""

# --- the durable evaluator ------------------------------------------------------------------


class Panel(BaseModel):
    """The evaluator's state, kept between steps (stored as JSON in the checkpoint)."""

    votes: dict[str, Vote] = {}


class TieBreakPanel(DurableEvaluator[Panel]):
    id = "tie-break-panel"  # its key under evaluation.evaluators in the configuration

    def settings(self) -> Settings:
        # A judge call that fails (a timeout, a rate limit) is retried, twice at most.
        return Settings.defaults().with_max_step_retries(2).with_default_step_timeout(30)

    def on_evaluation(self, ctx: EvaluationContext) -> Any:
        return self.effects().transition_to(self.ask_accuracy)

    def ask_accuracy(self) -> Any:
        panel = Panel(votes={"accuracy": self.ask("accuracy", "accuracy")})
        return self.effects().update_state(panel).transition_to(self.ask_helpfulness)

    def ask_helpfulness(self) -> Any:
        panel = self.current_state() or Panel()
        votes = {**panel.votes, "helpfulness": self.ask("helpfulness", "helpfulness")}
        panel = Panel(votes=votes)
        first, second = votes["accuracy"], votes["helpfulness"]
        if first.passed == second.passed:
            return self.effects().update_state(panel).complete(verdict(votes, "unanimous"))
        dispute = (
            f"The accuracy judge says {'pass' if first.passed else 'fail'}: {first.reason}. "
            f"The helpfulness judge says {'pass' if second.passed else 'fail'}: {second.reason}."
        )
        # Only a disagreement reaches the third step; the dispute is its input.
        return self.effects().update_state(panel).transition_to(self.tie_break).with_input(dispute)

    def tie_break(self, dispute: str) -> Any:
        panel = self.current_state() or Panel()
        votes = {**panel.votes, "referee": self.ask("referee", "overall quality", dispute)}
        return self.effects().update_state(Panel(votes=votes)).complete(verdict(votes, "tie-break"))

    def ask(self, judge: str, aspect: str, extra: str = "") -> Vote:
        """One judge's vote on the interaction being evaluated."""
        interaction = self.evaluation_context().interaction()
        prompt = PROMPT.format(
            aspect=aspect,
            extra=extra,
            question=interaction.input_text,
            reply=interaction.final_response_text,
        )
        # The session id is unique to this evaluation, step and attempt: a retried step
        # talks to a judge session with no memory of the attempt that failed.
        session = self.session_id(judge)
        SESSIONS.append(session)
        config: Any = {"metadata": {"session_id": session}, "configurable": {"thread_id": session}}
        vote = JUDGES[judge].with_structured_output(Vote).invoke(prompt, config=config)
        assert isinstance(vote, Vote)
        return vote


def verdict(votes: dict[str, Vote], label: str) -> Evaluation:
    """The combined verdict: the referee decides if there is one, else the agreeing pair."""
    deciding = votes.get("referee") or votes["accuracy"]
    in_favour = sum(vote.passed for vote in votes.values())
    evaluation = (
        Evaluation.of(deciding.passed, deciding.reason)
        .with_score(round(in_favour / len(votes), 2))
        .with_label(label)
    )
    for judge, vote in votes.items():
        evaluation = evaluation.with_attribute(judge, "pass" if vote.passed else "fail")
    return evaluation


# --- run it -----------------------------------------------------------------------------------

CONFIG = {"evaluation": {"evaluators": {"tie-break-panel": {"agents": {"support-agent": {}}}}}}


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        ledger = SqliteLedger(Path(folder) / "evals.db")
        with EvaluationRuntime(CONFIG, evaluators=[TieBreakPanel], ledger=ledger) as runtime:
            agent = runtime.bind(support_agent(), agent_id="support-agent")
            replies = [
                agent.invoke_detailed({"messages": [HumanMessage(question)]})
                for question, _ in QUESTIONS_AND_REPLIES
            ]
            print(f"{'':<3} {'passed':<6} {'score':<5} {'label':<9} {'votes':<44} explanation")
            for number, reply in enumerate(replies, start=1):
                [record] = runtime.wait_for_evaluations(reply.interaction_id, timeout=10)
                assert isinstance(record.outcome, Verdict), record.outcome
                evaluation = record.outcome.evaluation
                votes = " ".join(f"{judge}={vote}" for judge, vote in evaluation.attributes.items())
                print(
                    f"Q{number:<2} {evaluation.passed!s:<6} {evaluation.score:<5.2f} "
                    f"{evaluation.label:<9} {votes:<44} {evaluation.explanation}"
                )
        ledger.close()

    # Each judge model counts its calls: the referee ran for the one disagreement only.
    print()
    print("Judge calls: " + ", ".join(f"{n} {len(m.calls)}" for n, m in JUDGES.items()))
    # A session id names the evaluation, the step (with its visit number) and the attempt.
    referee = next(s for s in SESSIONS if s.endswith("/referee"))
    print("Referee session id: <evaluation id>/" + referee.split("/", 1)[1])


if __name__ == "__main__":
    main()
