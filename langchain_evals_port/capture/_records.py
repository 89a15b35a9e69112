"""What capture records of one run of an application: the ``InteractionRecord`` (its input,
transcript, model responses with their token usage, tool calls, timing and failure) and the
``Subject`` an evaluation is of.

Records are frozen pydantic models, so they serialise to JSON (the SQL storage keeps them
that way) and messages round-trip as LangChain messages.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Literal

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage
from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "InteractionFailure",
    "InteractionRecord",
    "InteractionStatus",
    "ModelResponse",
    "Subject",
    "TokenUsage",
    "ToolCallRecord",
    "utc_now",
]


InteractionStatus = Literal["completed", "failed", "interrupted"]
"""How an interaction ended: replied, raised, or stopped by an interrupt (or an abandoned
stream)."""


def utc_now() -> datetime:
    """The current time, timezone-aware in UTC (every record timestamp is)."""
    return datetime.now(timezone.utc)


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)


class TokenUsage(_Record):
    """Tokens one model call consumed, as the provider reported them."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0


class ModelResponse(_Record):
    """One model call of an interaction: its reply, usage, finish reason and timing."""

    message: AIMessage
    model_name: str | None = None
    usage: TokenUsage | None = None
    finish_reason: str | None = None
    started_at: datetime
    ended_at: datetime

    @property
    def text(self) -> str:
        """The reply's text content (text blocks joined)."""
        return self.message.text


class ToolCallRecord(_Record):
    """A tool call the model requested and, when the tool ran, the result recorded for it.

    ``status`` is ``"success"``, ``"error"`` (the tool raised; ``result`` holds the error) or
    ``"not_run"`` (requested, but no result was recorded — e.g. the run stopped first).
    """

    id: str | None
    name: str
    args: dict[str, Any] = {}
    result: str | None = None
    status: Literal["success", "error", "not_run"] = "not_run"


class InteractionFailure(_Record):
    """Why an interaction failed: the exception type (``reason``) and its message."""

    reason: str
    summary: str


class InteractionRecord(_Record):
    """One top-level invocation of a bound agent, as the ledger keeps it.

    The conveniences evaluators use are ``input_text``, ``final_response_text``,
    ``tool_calls``, ``failed``, ``failure_summary`` and ``transcript`` (LangChain messages).
    """

    interaction_id: str
    agent_id: str
    roles: tuple[str, ...] = ()
    thread_id: str | None = None
    """The session: LangGraph's ``configurable["thread_id"]`` when the caller set one."""
    flow_id: str | None = None
    """The larger flow the agent ran in: ``configurable["flow_id"]`` or the parent run id."""
    status: InteractionStatus = "completed"
    system_message: str | None = None
    input_messages: list[AnyMessage] = []
    responses: list[ModelResponse] = []
    tool_calls: list[ToolCallRecord] = []
    transcript: list[AnyMessage] = []
    """The conversation as the model last saw it, then its reply and later tool results;
    for a LangGraph messages agent, the graph's final ``messages``."""
    output_text: str | None = None
    """The agent's output when it is text (or ends in an AI message), else ``None``."""
    failure: InteractionFailure | None = None
    started_at: datetime = Field(default_factory=utc_now)
    ended_at: datetime = Field(default_factory=utc_now)
    run_id: str | None = None
    """The root LangChain run id — the LangSmith run id when tracing is on."""
    evaluation_traffic: bool = False
    """Started from inside an evaluation (a judge agent): recorded, never evaluated."""
    metadata: dict[str, Any] = {}

    @property
    def input_text(self) -> str:
        """The text of the last human message of the input ("" when there is none)."""
        for message in reversed(self.input_messages):
            if message.type == "human":
                return message.text
        return ""

    @property
    def final_response_text(self) -> str:
        """The text of the last model response, else the output text, else ""."""
        for response in reversed(self.responses):
            if response.text:
                return response.text
        return self.output_text or ""

    @property
    def failed(self) -> bool:
        """Whether the interaction ended with an exception."""
        return self.status == "failed"

    @property
    def failure_summary(self) -> str | None:
        """The failure's message, when the interaction failed."""
        return None if self.failure is None else self.failure.summary

    @property
    def transcript_messages(self) -> list[BaseMessage]:
        """``transcript`` typed as a plain list of ``BaseMessage``."""
        return list(self.transcript)


class Subject(_Record):
    """What an evaluation is about: the interaction, its agent and the flow it ran in."""

    interaction_id: str
    agent_id: str
    flow_id: str | None = None

    @classmethod
    def interaction(cls, interaction_id: str, agent_id: str, flow_id: str | None = None) -> Subject:
        """The subject for one interaction of ``agent_id``."""
        return cls(interaction_id=interaction_id, agent_id=agent_id, flow_id=flow_id)
