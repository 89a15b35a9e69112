"""A durable evaluator that asks two LLM judges and calls a third only when they disagree.

The evaluator is a LangGraph ``StateGraph`` registered as a ``DurableEvaluator``: the runtime
compiles it with a checkpointer in the ledger's SQLite file and runs one thread per
evaluation, so a process that stops mid-evaluation carries on after the last finished node
instead of paying for every judge call again.

* node ``ask_accuracy``: the accuracy judge votes; its vote goes into the state;
* node ``ask_helpfulness``: the helpfulness judge votes;
* a conditional edge: when the two agree, straight to ``decide``; when they disagree, to
* node ``tie_break``: the referee judge reads a summary of the dispute and votes;
* node ``decide``: the ``score`` — the share of judges who passed the reply, so the majority
  decides (``pass_threshold: 0.5`` in the configuration) — with its label (``unanimous`` or
  ``tie-break``) and each judge's vote in the metadata.

Each judge node has a ``RetryPolicy`` (a failed judge call is retried, twice at most) and a
timeout. The evaluator is bound to a LangGraph support agent by configuration; all models
are ``ScriptedChatModel``s, so the script runs offline and prints the same thing every time.

Run: ``.venv/bin/python cookbook/durable_evaluators/tie_break.py``
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import RetryPolicy
from pydantic import BaseModel

from langchain_evals_port import Score
from langchain_evals_port.runtime import (
    DurableEvaluator,
    EvaluationContext,
    EvaluationRuntime,
    SqliteLedger,
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

# --- the durable evaluator: a graph -----------------------------------------------------------


def merge(left: dict[str, Vote], right: dict[str, Vote]) -> dict[str, Vote]:
    return {**left, **right}


class Panel(TypedDict, total=False):
    """The evaluation's state, checkpointed after every node: the votes, then the score."""

    votes: Annotated[dict[str, Vote], merge]
    score: Score


async def ask(
    runtime: Runtime[EvaluationContext], node: str, judge: str, aspect: str, extra: str = ""
) -> dict[str, Any]:
    """The vote of ``judge``, asked from ``node``, on the interaction being evaluated, as a
    state update."""
    interaction = await runtime.context.ainteraction()
    prompt = PROMPT.format(
        aspect=aspect,
        extra=extra,
        question=interaction.input_text,
        reply=interaction.final_response_text,
    )
    # The session id is unique to this evaluation, node and attempt: a retried node talks
    # to a judge session with no memory of the attempt that failed.
    session = runtime.context.judge_session(node, runtime.execution_info.node_attempt)
    SESSIONS.append(session)
    config: Any = {"metadata": {"session_id": session}, "configurable": {"thread_id": session}}
    vote = await JUDGES[judge].with_structured_output(Vote).ainvoke(prompt, config=config)
    return {"votes": {judge: vote}}


async def ask_accuracy(state: Panel, runtime: Runtime[EvaluationContext]) -> dict[str, Any]:
    return await ask(runtime, "ask_accuracy", "accuracy", "accuracy")


async def ask_helpfulness(state: Panel, runtime: Runtime[EvaluationContext]) -> dict[str, Any]:
    return await ask(runtime, "ask_helpfulness", "helpfulness", "helpfulness")


def agreement(state: Panel) -> str:
    """Where to go after the first two votes: ``decide`` when they agree, else ``tie_break``."""
    votes = state["votes"]
    return "decide" if votes["accuracy"].passed == votes["helpfulness"].passed else "tie_break"


async def tie_break(state: Panel, runtime: Runtime[EvaluationContext]) -> dict[str, Any]:
    first, second = state["votes"]["accuracy"], state["votes"]["helpfulness"]
    dispute = (
        f"The accuracy judge says {'pass' if first.passed else 'fail'}: {first.reason}. "
        f"The helpfulness judge says {'pass' if second.passed else 'fail'}: {second.reason}."
    )
    return await ask(runtime, "tie_break", "referee", "overall quality", dispute)


def decide(state: Panel) -> dict[str, Any]:
    """The score: the share of judges in favour (the majority passes); the referee's reason
    when there is one, else the agreeing pair's."""
    votes = state["votes"]
    deciding = votes.get("referee") or votes["accuracy"]
    in_favour = sum(vote.passed for vote in votes.values())
    metadata = {
        "label": "tie-break" if "referee" in votes else "unanimous",
        "votes": {judge: "pass" if vote.passed else "fail" for judge, vote in votes.items()},
    }
    return {"score": Score(round(in_favour / len(votes), 2), deciding.reason, metadata)}


def tie_break_panel() -> DurableEvaluator:
    # A judge call that fails (a rate limit, a server error) is retried, twice at most; one
    # that takes longer than 30 s is cut short (and retried).
    judged = {"retry_policy": RetryPolicy(max_attempts=3), "timeout": 30}
    builder = StateGraph(Panel, context_schema=EvaluationContext)
    builder.add_node("ask_accuracy", ask_accuracy, **judged)
    builder.add_node("ask_helpfulness", ask_helpfulness, **judged)
    builder.add_node("tie_break", tie_break, **judged)
    builder.add_node("decide", decide)
    builder.add_edge(START, "ask_accuracy")
    builder.add_edge("ask_accuracy", "ask_helpfulness")
    builder.add_conditional_edges("ask_helpfulness", agreement, ["decide", "tie_break"])
    builder.add_edge("tie_break", "decide")
    builder.add_edge("decide", END)
    return DurableEvaluator(builder)


# --- run it -----------------------------------------------------------------------------------

CONFIG = {
    "evaluation": {
        "evaluators": {
            "tie-break-panel": {"pass_threshold": 0.5, "agents": {"support-agent": {}}},
        }
    }
}


def main() -> None:
    evaluators = {"tie-break-panel": tie_break_panel()}
    with tempfile.TemporaryDirectory() as folder:
        ledger = SqliteLedger(Path(folder) / "evals.db")
        with EvaluationRuntime(CONFIG, evaluators=evaluators, ledger=ledger) as runtime:
            agent = runtime.bind(support_agent(), agent_id="support-agent")
            replies = [
                agent.invoke_detailed({"messages": [HumanMessage(question)]})
                for question, _ in QUESTIONS_AND_REPLIES
            ]
            print(f"{'':<3} {'passed':<6} {'score':<5} {'label':<9} {'votes':<44} explanation")
            for number, reply in enumerate(replies, start=1):
                [record] = runtime.wait_for_evaluations(reply.interaction_id, timeout=10)
                assert record.outcome == "verdict", record.results
                result = record.result
                votes = " ".join(f"{j}={v}" for j, v in result.metadata["votes"].items())
                print(
                    f"Q{number:<2} {record.passed!s:<6} {result.score:<5.2f} "
                    f"{result.metadata['label']:<9} {votes:<44} {result.comment}"
                )
        ledger.close()

    # Each judge model counts its calls: the referee ran for the one disagreement only.
    print()
    print("Judge calls: " + ", ".join(f"{n} {len(m.calls)}" for n, m in JUDGES.items()))
    # A session id names the evaluation, the node and the attempt.
    referee = next(s for s in SESSIONS if ":tie_break:" in s)
    print("Referee session id: <evaluation id>:" + referee.split(":", 1)[1])


if __name__ == "__main__":
    main()
