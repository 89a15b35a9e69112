"""Online evaluation of a LangGraph support agent: evaluators bound by configuration.

A customer-support agent (a LangGraph ``StateGraph``: model -> ``lookup_order`` tool ->
model) answers three customers. ``evals.yaml`` binds two evaluators to it, by agent id and
by role, and neither the agent nor its callers know about them. They are ordinary
evaluators of the package, the same ones an offline test would call, given to the runtime
by their configuration ids:

* ``reply-quality``, a rule-based ``@evaluator`` function written below;
* ``helpfulness-judge``, an ``LLMJudge``.

Every interaction is recorded in a SQLite ledger before the reply returns; the evaluations
run afterwards in the background and record their outcomes in the same ledger, which the
script then prints. Both the agent's model and the judge are ``ScriptedChatModel``s, so it
runs offline and prints the same thing every time.

Run: ``.venv/bin/python cookbook/online_support_agent/run.py``
(``DEPLOYMENT=prod`` layers ``evals.prod.yaml`` over ``evals.yaml``: the judge then samples
one interaction in ten, so which ones it judges varies from run to run.)
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from langchain_evals_port import LLMJudge, Score, evaluator
from langchain_evals_port.runtime import (
    EvaluationConfig,
    EvaluationRecord,
    EvaluationRuntime,
    EvaluatorConfig,
    InteractionRecord,
    SqliteLedger,
)
from langchain_evals_port.testing import ScriptedChatModel, ToolCallReply

HERE = Path(__file__).resolve().parent
CONFIG_FILES = {
    "dev": [HERE / "evals.yaml"],
    "prod": [HERE / "evals.yaml", HERE / "evals.prod.yaml"],
}
ORDER_ID = re.compile(r"\bA-\d{4}\b")

# --- the agent ----------------------------------------------------------------------------

ORDERS = {
    "A-1001": "shipped on 3 March, arriving 6 March",
    "A-1002": "delayed at the warehouse, shipping on 10 March",
}


@tool
def lookup_order(order_id: str) -> str:
    """Look up the shipping status of an order by its id (e.g. A-1001)."""
    return ORDERS.get(order_id, "no order with this id")


QUESTIONS = [
    "Where is my order A-1001?",
    "Why hasn't A-1002 arrived yet?",
    "My parcel never came, what now?",
]

# What the agent's model says, call after call: a tool call, then an answer for the first two
# questions; the third names no order, so the model asks for one. The second answer is poor.
AGENT_SCRIPT = [
    ToolCallReply("lookup_order", {"order_id": "A-1001"}),
    "Good news: order A-1001 shipped on 3 March and should arrive on 6 March.",
    ToolCallReply("lookup_order", {"order_id": "A-1002"}),
    "A-1002 is delayed, sorry.",
    "I'm sorry it hasn't arrived! Could you tell me your order number so I can check?",
]


def support_agent() -> Any:
    """The support agent: a compiled StateGraph looping model -> tools -> model."""
    model = ScriptedChatModel(AGENT_SCRIPT, model_name="support-model").bind_tools([lookup_order])

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", call_model)
    graph.add_node("tools", ToolNode([lookup_order]))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)  # tool calls -> "tools", else end
    graph.add_edge("tools", "model")
    return graph.compile()


# --- evaluator 1: a rule-based function ---------------------------------------------------


@evaluator
def reply_quality(
    inputs: str, outputs: str, interaction: InteractionRecord, config: EvaluatorConfig
) -> Score:
    """The share of checks the reply meets: long enough, and names the order the customer
    asked about. A number, so ``pass_threshold`` in evals.yaml turns it into pass or fail."""
    # ``inputs`` and ``outputs`` are the question and the final reply; ``interaction`` is the
    # whole record from the ledger and ``config`` the evaluator's properties.
    if interaction.failed:  # evals.yaml sets trigger_on_failure, so this can happen
        return Score.unscored(f"the agent failed: {interaction.failure_summary}")
    order = ORDER_ID.search(inputs)
    if order is None:
        return Score.unscored("the customer named no order")
    minimum = config.get_int("min_length")  # min_length: 30 in evals.yaml
    checks = {
        "long_enough": len(outputs) >= minimum,
        "names_order": order.group() in outputs,
    }
    met = sum(checks.values())
    missed = [name for name, ok in checks.items() if not ok]
    return Score(
        met / len(checks),
        f"missed: {', '.join(missed)}" if missed else "ok",
        {
            "label": "good" if met == len(checks) else "poor",
            "order_id": order.group(),
            "tool_calls": len(interaction.tool_calls),
        },
    )


# --- evaluator 2: an LLM judge, run online -------------------------------------------------

HELPFULNESS_PROMPT = """You grade customer-support replies for helpfulness.
A helpful reply gives the customer a concrete next step or date, or asks for what it needs.

<question>{inputs}</question>
<reply>{outputs}</reply>"""


def offline_judge(messages: list[BaseMessage]) -> dict[str, Any]:
    """A stand-in for a real judge model: helpful when the reply has a date or a question."""
    reply = re.search(r"<reply>(.*?)</reply>", messages[-1].text, re.S)
    text = reply.group(1) if reply else ""
    if re.search(r"\b\d{1,2} [A-Z][a-z]+", text):  # e.g. "6 March"
        return {"reasoning": "It gives a concrete date. Score: true.", "score": True}
    if "?" in text:
        return {"reasoning": "It asks for the missing details. Score: true.", "score": True}
    return {"reasoning": "No date and no next step. Score: false.", "score": False}


# The evaluators by configuration id (the keys under evaluation.evaluators in evals.yaml).
EVALUATORS = {
    "reply-quality": reply_quality,
    "helpfulness-judge": LLMJudge(
        prompt=HELPFULNESS_PROMPT,
        model=ScriptedChatModel(responder=offline_judge, model_name="judge-model"),
        feedback_key="helpfulness",
    ),
}

# --- run it ----------------------------------------------------------------------------------


def print_bindings() -> None:
    """How each deployment's configuration binds the evaluators to the support agent."""
    print("Bindings for support-agent (role customer-facing):")
    for deployment, files in CONFIG_FILES.items():
        config = EvaluationConfig.from_files(*files)
        for binding in config.bindings_for("support-agent", ["customer-facing"]):
            print(
                f"  {deployment:<5} {binding.evaluator_id:<18} "
                f"sampling {binding.sampling_ratio:>4.0%}  via {binding.key_path}"
            )
    print()


def describe(record: EvaluationRecord) -> str:
    """The outcome, pass/fail, numeric score and explanation of a single-key evaluation."""
    result = record.result  # the core EvaluatorResult the evaluator gave
    passed = score = "-"
    if record.outcome == "verdict":  # else inconclusive, or failed (an error)
        passed = str(record.passed)  # a bool score, or a number against pass_threshold
        if not isinstance(result.score, bool):
            score = f"{result.score:.2f}"
        explanation = result.comment or ""
        if "label" in result.metadata:
            explanation += f" [{result.metadata['label']}]"
    elif record.outcome == "inconclusive":
        explanation = result.reason or ""
    else:
        explanation = f"[{result.error_code}] {result.reason}"
    return f"{record.outcome:<12} {passed:<6} {score:<5} {explanation}"


def main() -> None:
    print_bindings()
    deployment = os.environ.get("DEPLOYMENT", "dev")
    with tempfile.TemporaryDirectory() as folder:
        # 1. The ledger (one SQLite file) and the runtime reading the YAML configuration;
        #    the runtime starts a background worker for the evaluations.
        ledger = SqliteLedger(Path(folder) / "evals.db")
        runtime = EvaluationRuntime.from_files(
            *CONFIG_FILES[deployment], evaluators=EVALUATORS, ledger=ledger
        )
        with runtime:
            # 2. Bind the compiled graph: same input and output, every call recorded.
            agent = runtime.bind(
                support_agent(), agent_id="support-agent", roles=["customer-facing"]
            )

            # 3. Serve the customers. invoke_detailed also returns the interaction id.
            labels: dict[str, str] = {}
            for number, question in enumerate(QUESTIONS, start=1):
                reply = agent.invoke_detailed({"messages": [HumanMessage(question)]})
                labels[reply.interaction_id] = f"Q{number}"
                print(f"Q{number} customer: {question}")
                print(f"   agent:    {reply.output['messages'][-1].text}")
            print()

            # 4. The evaluations ran in the background; wait for them and read the ledger.
            print(
                f"{'':<3} {'evaluator':<18} {'outcome':<12} {'passed':<6} {'score':<5} explanation"
            )
            for interaction_id, label in labels.items():
                records = runtime.wait_for_evaluations(interaction_id, timeout=10)
                for record in sorted(records, key=lambda r: r.evaluator_id):
                    print(f"{label:<3} {record.evaluator_id:<18} {describe(record)}")
            print()

            # 5. The ledger also keeps what each interaction cost: every model call's usage.
            print("Token usage captured by the ledger (agent model calls):")
            for interaction_id, label in labels.items():
                interaction = ledger.get_interaction(interaction_id)
                usages = [r.usage for r in interaction.responses if r.usage is not None]
                print(
                    f"  {label}: model calls {len(interaction.responses)}, "
                    f"tool calls {len(interaction.tool_calls)}, tokens "
                    f"{sum(u.input_tokens for u in usages)} input + "
                    f"{sum(u.output_tokens for u in usages)} output = "
                    f"{sum(u.total_tokens for u in usages)}"
                )
        ledger.close()


if __name__ == "__main__":
    main()
