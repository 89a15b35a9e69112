"""``redact_text``: a ready-made ``redact`` hook that rewrites every text of an interaction."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_evals_port.capture._records import InteractionRecord

__all__ = ["redact_text"]

# Fields holding identifiers or bookkeeping, not text the agent or its user wrote.
_KEPT = frozenset(
    {
        "agent_id",
        "ended_at",
        "evaluation_id",
        "finish_reason",
        "flow_id",
        "id",
        "interaction_id",
        "model_name",
        "name",
        "reason",
        "roles",
        "run_id",
        "started_at",
        "status",
        "thread_id",
        "tool_call_id",
        "type",
    }
)


def redact_text(replace: Callable[[str], str]) -> Callable[[InteractionRecord], InteractionRecord]:
    """A ``redact`` hook applying ``replace`` to every text of the record before it is stored.

    Message contents, tool-call arguments and results, the system message, the output and
    the failure summary are rewritten; ids, names, roles, statuses and timestamps are not.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> hook = redact_text(lambda text: text.replace("4111", "****"))
        >>> record = InteractionRecord(
        ...     interaction_id="i-1", agent_id="a", input_messages=[HumanMessage("card 4111")]
        ... )
        >>> hook(record).input_text
        'card ****'
    """

    def rewrite(value: Any, key: str | None = None) -> Any:
        if key in _KEPT:
            return value
        if isinstance(value, str):
            return replace(value)
        if isinstance(value, dict):
            return {k: rewrite(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [rewrite(item, key) for item in value]
        return value

    def redact(record: InteractionRecord) -> InteractionRecord:
        return InteractionRecord.model_validate(rewrite(record.model_dump(mode="json")))

    return redact
