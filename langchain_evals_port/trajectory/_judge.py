"""``TrajectoryLLMJudge``: a judge model grades a whole agent trajectory."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field, PrivateAttr, SkipValidation

from langchain_evals_port.core import EvalRequest, to_openai_messages
from langchain_evals_port.core.errors import MessageFormatError
from langchain_evals_port.judge import LLMJudge, PromptSource

if TYPE_CHECKING:
    from langchain_evals_port.judge._structured import Conversation


def _with_reference_prompt() -> PromptSource:
    from langchain_evals_port import prompts

    return prompts.TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE


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

    prompt: Annotated[PromptSource, SkipValidation] = Field(
        default_factory=_with_reference_prompt, exclude=True
    )
    feedback_key: str = "trajectory_accuracy"

    _without_reference: LLMJudge | None = PrivateAttr(default=None)

    def model_post_init(self, context: Any, /) -> None:
        """Prepare the judge that grades without a reference when no prompt was given."""
        super().model_post_init(context)
        if "prompt" not in self.model_fields_set:
            from langchain_evals_port import prompts

            # The same configuration; only the prompt differs.
            fields = {name: getattr(self, name) for name in LLMJudge.model_fields}
            fields["prompt"] = prompts.TRAJECTORY_ACCURACY_PROMPT
            self._without_reference = LLMJudge(**fields)

    # ``LLMJudge._conversation`` is where a judge turns a request into the model's messages
    # (for ``invoke``, ``ainvoke`` and ``evaluate_raw`` alike): the one hook needed to read
    # the trajectories and pick the prompt per call.
    def _conversation(self, request: EvalRequest) -> tuple[Conversation, Any]:
        request = request.model_copy(
            update={
                "outputs": _readable(request.outputs, "outputs"),
                "reference_outputs": _readable(request.reference_outputs, "reference_outputs"),
            }
        )
        if self._without_reference is not None and not request.reference_outputs:
            return self._without_reference._conversation(request)
        return super()._conversation(request)


def _readable(trajectory: Any, side: str) -> Any:
    """The message list as OpenAI-style dicts (from any accepted shape), so a graph state's
    other keys stay out of the prompt; None and text pass through."""
    if trajectory is None or isinstance(trajectory, str):
        return trajectory
    try:
        return to_openai_messages(trajectory)
    except MessageFormatError as error:
        raise MessageFormatError(f"{side}: {error}") from None
