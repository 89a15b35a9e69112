"""Realistic records for runtime tests: an interaction, its evaluation and a work unit."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from langchain_evals_port import EvaluatorResult
from langchain_evals_port.runtime import (
    EvaluationRecord,
    InteractionRecord,
    ModelResponse,
    TokenUsage,
    ToolCallRecord,
    WorkUnit,
)

BASE_TIME = datetime(2025, 3, 1, 9, 30, tzinfo=timezone.utc)
"""The default start of interactions and time of evaluations."""


def make_interaction(
    interaction_id: str = "i-1", agent_id: str = "support-agent", **overrides: Any
) -> InteractionRecord:
    """A support-agent exchange: a question, one tool call, one reply with token usage."""
    started_at = overrides.pop("started_at", BASE_TIME)
    question = HumanMessage(content="Where is my order A-17?", id="msg-human")
    tool_call = {"name": "lookup_order", "args": {"order_id": "A-17"}, "id": "call-1"}
    requested = AIMessage(content="", tool_calls=[tool_call], id="msg-ai-1")
    tool_result = ToolMessage(content="shipped 2025-02-27", tool_call_id="call-1", id="msg-tool")
    reply = AIMessage(
        content="Your order A-17 shipped on 27 February.",
        id="msg-ai-2",
        usage_metadata={"input_tokens": 120, "output_tokens": 14, "total_tokens": 134},
        response_metadata={"model_name": "gpt-4o-mini", "finish_reason": "stop"},
    )
    fields: dict[str, Any] = {
        "interaction_id": interaction_id,
        "agent_id": agent_id,
        "roles": ("support",),
        "thread_id": "thread-7",
        "system_message": "You answer questions about orders.",
        "input_messages": [question],
        "responses": [
            ModelResponse(
                message=reply,
                model_name="gpt-4o-mini",
                usage=TokenUsage(input_tokens=120, output_tokens=14, total_tokens=134),
                finish_reason="stop",
                started_at=started_at + timedelta(seconds=1),
                ended_at=started_at + timedelta(seconds=2),
            )
        ],
        "tool_calls": [
            ToolCallRecord(
                id="call-1",
                name="lookup_order",
                args={"order_id": "A-17"},
                result="shipped 2025-02-27",
                status="success",
            )
        ],
        "transcript": [question, requested, tool_result, reply],
        "output_text": reply.text,
        "started_at": started_at,
        "ended_at": started_at + timedelta(seconds=2),
        "run_id": f"run-{interaction_id}",
        "metadata": {"channel": "chat"},
    }
    return InteractionRecord(**{**fields, **overrides})


def make_evaluation(
    evaluation_id: str = "e-1",
    interaction_id: str = "i-1",
    agent_id: str = "support-agent",
    evaluator_id: str = "helpfulness",
    **overrides: Any,
) -> EvaluationRecord:
    """A passing, scored verdict on ``interaction_id`` by ``evaluator_id``."""
    fields: dict[str, Any] = {
        "evaluation_id": evaluation_id,
        "evaluator_id": evaluator_id,
        "interaction_id": interaction_id,
        "agent_id": agent_id,
        "results": [
            EvaluatorResult(
                key="helpfulness",
                score=0.9,
                comment="answered the question",
                metadata={"passed": True},
            )
        ],
        "pass_threshold": 0.7,
        "duration": 0.25,
        "timestamp": BASE_TIME,
    }
    return EvaluationRecord(**{**fields, **overrides})


def make_unit(
    evaluation_id: str = "e-1",
    interaction_id: str = "i-1",
    agent_id: str = "support-agent",
    evaluator_id: str = "helpfulness",
    **overrides: Any,
) -> WorkUnit:
    """A work unit for ``evaluator_id`` on ``interaction_id``, enqueued now unless overridden."""
    fields: dict[str, Any] = {
        "evaluation_id": evaluation_id,
        "evaluator_id": evaluator_id,
        "interaction_id": interaction_id,
        "agent_id": agent_id,
        "enqueued_at": time.time(),
    }
    return WorkUnit(**{**fields, **overrides})
