"""Small real LangGraph apps for the simulation tests."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from langchain_evals_port.testing import ScriptedChatModel


def chat_app(model: ScriptedChatModel, checkpointer: Any, name: str = "support_agent") -> Any:
    """One node answering from the whole remembered conversation."""

    def respond(state: MessagesState) -> dict[str, list[AIMessage]]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("respond", respond)
    graph.add_edge(START, "respond")
    return graph.compile(checkpointer=checkpointer, name=name)


def tool_app(model: ScriptedChatModel, checkpointer: Any) -> Any:
    """An agent loop: the model may call a weather tool before answering."""

    def agent(state: MessagesState) -> dict[str, list[AIMessage]]:
        return {"messages": [model.invoke(state["messages"])]}

    def tools(state: MessagesState) -> dict[str, list[ToolMessage]]:
        last = state["messages"][-1]
        assert isinstance(last, AIMessage)
        return {
            "messages": [
                ToolMessage(f"sunny in {call['args']['city']}", tool_call_id=call["id"])
                for call in last.tool_calls
            ]
        }

    def route(state: MessagesState) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", tools)
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", route, ["tools", END])
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=checkpointer)
