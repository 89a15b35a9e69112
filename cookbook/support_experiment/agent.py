"""The application under test: a LangGraph customer-support agent with three tools.

A hand-built ``StateGraph``: a triage step reads what the customer wants (the model's
structured output), then the model and the tools (look up, cancel, refund an order) take
turns until the model answers. The model is a ``ScriptedChatModel`` whose replies are a
function of the customer's question, so the example runs offline, the same every time, and
cases running concurrently each get their own replies. One case goes wrong on purpose: the
model takes the refund request for order A-1005 for a status question, looks the order up
and never refunds it.

``app`` is the compiled graph. ``target`` is what an experiment runs: it takes a case's
``inputs`` (``{"question": ...}``) and returns ``{"answer": ..., "intent": ...}``; the
experiment runner captures the graph's messages and tool calls on its own.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import BaseModel

from langchain_evals_port.testing import ScriptedChatModel, ScriptedReply, ToolCallReply

# --- the tools --------------------------------------------------------------------------

ORDERS = {
    "A-1001": "shipped on 3 March, arriving 6 March",
    "A-1002": "delayed at the warehouse, shipping on 10 March",
    "A-1003": "being packed, not shipped yet",
    "A-1004": "delivered on 1 March",
    "A-1005": "delivered on 2 March",
}


@tool
def lookup_order(order_id: str) -> str:
    """Look up the shipping status of an order by its id (e.g. A-1001)."""
    return ORDERS.get(order_id, "no order with this id")


@tool
def cancel_order(order_id: str) -> str:
    """Cancel an order that has not shipped yet."""
    return f"order {order_id} is cancelled"


@tool
def refund_order(order_id: str) -> str:
    """Refund an order in full to the customer's card."""
    return f"full refund issued for order {order_id}; it reaches the card in 3-5 business days"


TOOLS = [lookup_order, cancel_order, refund_order]

# --- the model's script -------------------------------------------------------------------


class Script(NamedTuple):
    """What the model says to one question: the intent it reads in it, then its replies in
    the tool loop (tool calls, then the answer)."""

    intent: str
    replies: list[ScriptedReply]


SCRIPTS = {
    "Where is my order A-1001?": Script(
        "order_status",
        [
            ToolCallReply("lookup_order", {"order_id": "A-1001"}),
            "Good news: order A-1001 shipped on 3 March and should arrive on 6 March.",
        ],
    ),
    "Why hasn't A-1002 arrived yet?": Script(
        "order_status",
        [
            ToolCallReply("lookup_order", {"order_id": "A-1002"}),
            "Sorry for the wait: A-1002 is delayed at our warehouse and ships on 10 March.",
        ],
    ),
    "Please cancel order A-1003, I ordered the wrong size.": Script(
        "cancellation",
        [
            ToolCallReply("lookup_order", {"order_id": "A-1003"}),
            ToolCallReply("cancel_order", {"order_id": "A-1003"}),
            "Done: order A-1003 had not shipped yet, so I have cancelled it.",
        ],
    ),
    "Order A-1004 arrived broken. Can I get my money back?": Script(
        "refund",
        [
            ToolCallReply("refund_order", {"order_id": "A-1004"}),
            "I'm sorry it arrived broken. A full refund for A-1004 is on its way; "
            "it reaches your card in 3-5 business days.",
        ],
    ),
    "My parcel never came, what now?": Script(
        "order_status",
        ["I'm sorry it hasn't arrived! Could you tell me your order number so I can check?"],
    ),
    # The wrong one: the model takes a refund request for a status question, so it only
    # looks the order up.
    "Order A-1005 came damaged, please refund it.": Script(
        "order_status",
        [
            ToolCallReply("lookup_order", {"order_id": "A-1005"}),
            "Order A-1005 was delivered on 2 March.",
        ],
    ),
}

TRIAGE = "Which of order_status, cancellation or refund does the customer want?"


def scripted_reply(messages: list[BaseMessage]) -> ScriptedReply:
    """The model's next reply to a call: read from the question's script, so it does not
    depend on the order in which concurrent cases call the model."""
    question = next(m.text for m in messages if isinstance(m, HumanMessage))
    if question not in SCRIPTS:
        raise ValueError(f"the scripted model has no replies for {question!r}; add them to SCRIPTS")
    script = SCRIPTS[question]
    if messages[0].text == TRIAGE:
        return {"intent": script.intent}
    return script.replies[sum(isinstance(m, AIMessage) for m in messages)]


MODEL = ScriptedChatModel(responder=scripted_reply, model_name="support-model")

# --- the graph ----------------------------------------------------------------------------


class Triage(BaseModel):
    """What the customer wants."""

    intent: Literal["order_status", "cancellation", "refund"]


class SupportState(MessagesState):
    intent: str


def triage(state: SupportState) -> dict[str, Any]:
    triaged = MODEL.with_structured_output(Triage).invoke(
        [SystemMessage(TRIAGE), *state["messages"]]
    )
    assert isinstance(triaged, Triage)
    return {"intent": triaged.intent}


def call_model(state: SupportState) -> dict[str, Any]:
    system = (
        "You are the support agent of an online shop; use the tools to help the customer. "
        f"They want: {state['intent']}."
    )
    reply = MODEL.bind_tools(TOOLS).invoke([SystemMessage(system), *state["messages"]])
    return {"messages": [reply]}


def build_graph() -> Any:
    """triage, then model -> tools -> model ... until the model answers."""
    graph = StateGraph(SupportState)
    graph.add_node("triage", triage)
    graph.add_node("model", call_model)
    graph.add_node("tools", ToolNode(TOOLS))
    graph.add_edge(START, "triage")
    graph.add_edge("triage", "model")
    graph.add_conditional_edges("model", tools_condition)  # tool calls -> "tools", else end
    graph.add_edge("tools", "model")
    return graph.compile(name="support-agent")


app = build_graph()


def target(inputs: dict[str, str]) -> dict[str, str]:
    """One support conversation: the agent's answer to the question, and the intent it
    read in it."""
    state = app.invoke({"messages": [HumanMessage(inputs["question"])]})
    return {"answer": state["messages"][-1].text, "intent": state["intent"]}
