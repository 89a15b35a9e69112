"""``TrajectoryLLMJudge``: a judge model grades a whole agent trajectory."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field, SkipValidation

from langchain_evals_port.core import EvalRequest, OutputsKind, to_openai_messages
from langchain_evals_port.core.errors import MessageFormatError
from langchain_evals_port.judge import LLMJudge, PromptSource


def _with_reference_prompt() -> PromptSource:
    from langchain_evals_port import prompts

    return prompts.TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE


def _without_reference_prompt() -> PromptSource:
    from langchain_evals_port import prompts

    return prompts.TRAJECTORY_ACCURACY_PROMPT


class TrajectoryLLMJudge(LLMJudge):
    """An ``LLMJudge`` that grades an agent's trajectory (``outputs``: its messages).

    Without a ``prompt``, each evaluation that passes a reference trajectory uses
    ``prompts.TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE`` and each one without (``None`` or
    an empty list) uses ``prompts.TRAJECTORY_ACCURACY_PROMPT``. ``outputs`` and
    ``reference_outputs`` may be LangChain messages, OpenAI-style dicts, ``{"messages":
    [...]}`` or a LangGraph state; the judge sees the message list as readable JSON
    (OpenAI-style messages with parsed tool-call arguments). Text is passed through as it is.
    Every other argument is ``LLMJudge``'s; the key is ``trajectory_accuracy``.

    Example:
        >>> from langchain_evals_port.testing import ScriptedChatModel
        >>> model = ScriptedChatModel([{"reasoning": "Direct.", "score": True}])
        >>> judge = TrajectoryLLMJudge(model=model)
        >>> judge(outputs=[{"role": "user", "content": "Hi"},
        ...                {"role": "assistant", "content": "Hello!"}])["key"]
        'trajectory_accuracy'
        >>> "<reference_trajectory>" in model.calls[0].messages[-1].text
        False
    """

    outputs_kind: ClassVar[OutputsKind] = "messages"
    prompt: Annotated[PromptSource, SkipValidation] = Field(
        default_factory=_with_reference_prompt, exclude=True
    )
    prompt_without_reference: Annotated[PromptSource | None, SkipValidation] = Field(
        default_factory=_without_reference_prompt, exclude=True
    )
    feedback_key: str = "trajectory_accuracy"

    def model_post_init(self, context: Any, /) -> None:
        """A prompt given by the caller is used for every evaluation."""
        if "prompt" in self.model_fields_set and "prompt_without_reference" not in (
            self.model_fields_set
        ):
            self.prompt_without_reference = None
        super().model_post_init(context)

    def prepare_request(self, request: EvalRequest) -> EvalRequest:
        """Both trajectories as OpenAI-style message lists, whatever shape they came in."""
        return request.model_copy(
            update={
                "outputs": _readable(request.outputs, "outputs"),
                "reference_outputs": _readable(request.reference_outputs, "reference_outputs"),
            }
        )


def _readable(trajectory: Any, side: str) -> Any:
    """The message list as OpenAI-style dicts (from any accepted shape), so a graph state's
    other keys stay out of the prompt; None and text pass through."""
    if trajectory is None or isinstance(trajectory, str):
        return trajectory
    try:
        return to_openai_messages(trajectory)
    except MessageFormatError as error:
        raise MessageFormatError(f"{side}: {error}") from None
