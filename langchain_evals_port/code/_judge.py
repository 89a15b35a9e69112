"""``CodeLLMJudge``: a judge model grades generated code for correctness."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from langchain_core.runnables import RunnableConfig
from pydantic import Field, PrivateAttr, SkipValidation

from langchain_evals_port.core import EvalRequest, Score
from langchain_evals_port.judge import LLMJudge, PromptSource

from ._extract import CodeExtractor, coerce_extractor, extraction_failed, has_code

__all__ = ["CodeLLMJudge"]


def _with_reference_prompt() -> PromptSource:
    from langchain_evals_port import prompts

    return prompts.CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS


def _without_reference_prompt() -> PromptSource:
    from langchain_evals_port import prompts

    return prompts.CODE_CORRECTNESS_PROMPT


class CodeLLMJudge(LLMJudge):
    """An ``LLMJudge`` that grades the code in ``outputs`` (key ``code_correctness``).

    The code is extracted first (``code_extraction``, as for the checks; nothing to extract
    is a ``False`` verdict with ``metadata["code_extraction_failed"]``), and the judge sees
    only the code as ``{outputs}``. Without a ``prompt``, an evaluation with
    ``reference_outputs`` uses ``prompts.CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS`` and
    one without uses ``prompts.CODE_CORRECTNESS_PROMPT``; a prompt given is used for both.
    Every other argument is ``LLMJudge``'s.

    Args:
        code_extraction: ``"none"`` (default), ``"markdown_code_blocks"``, ``"llm"``, a
            callable ``(text) -> str | None``, or a ``CodeExtractor``.
        extraction_model: The model of the ``"llm"`` strategy (None: the judge's own model).
        code_language: The language wanted from markdown blocks (None: any code block).
        multiple_blocks: ``"join"`` several markdown blocks or take the ``"largest"``.

    Example:
        >>> from langchain_evals_port.testing import ScriptedChatModel
        >>> model = ScriptedChatModel([{"reasoning": "Adds the numbers.", "score": True}])
        >>> judge = CodeLLMJudge(model=model, code_extraction="markdown_code_blocks")
        >>> answer = "```python\\ndef add(a, b):\\n    return a + b\\n```"
        >>> judge(inputs="Add a and b", outputs=answer)["score"]
        True
        >>> result = judge(inputs="Add a and b", outputs="I cannot help.")
        >>> result["score"], result["metadata"]["code_extraction_failed"]
        (False, True)
    """

    prompt: Annotated[PromptSource, SkipValidation] = Field(
        default_factory=_with_reference_prompt, exclude=True
    )
    prompt_without_reference: Annotated[PromptSource | None, SkipValidation] = Field(
        default_factory=_without_reference_prompt, exclude=True
    )
    feedback_key: str = "code_correctness"
    code_extraction: Annotated[Any, SkipValidation] = "none"
    extraction_model: Annotated[Any, SkipValidation] = Field(default=None, exclude=True)
    code_language: str | None = None
    multiple_blocks: Literal["join", "largest"] = "join"

    _extractor: CodeExtractor = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        """A prompt given by the caller is used for every evaluation; build the extractor."""
        if "prompt" in self.model_fields_set and "prompt_without_reference" not in (
            self.model_fields_set
        ):
            self.prompt_without_reference = None
        if self.name is None:
            self.name = "code_llm_as_judge"
        super().model_post_init(context)
        model = self.extraction_model if self.extraction_model is not None else self.model
        self._extractor = coerce_extractor(
            self.code_extraction,
            language=self.code_language,
            model=model,
            multiple_blocks=self.multiple_blocks,
        )

    @property
    def extractor(self) -> CodeExtractor:
        """How this judge finds the code in ``outputs``."""
        return self._extractor

    def _score(self, request: EvalRequest, config: RunnableConfig) -> Score:
        (outputs,) = request.require("outputs", evaluator=self.get_name())
        code = self._extractor.extract(outputs, config)
        if code is None or not has_code(code):
            return extraction_failed(self._extractor.name)
        return super()._score(request.model_copy(update={"outputs": code}), config)

    async def _ascore(self, request: EvalRequest, config: RunnableConfig) -> Score:
        (outputs,) = request.require("outputs", evaluator=self.get_name())
        code = await self._extractor.aextract(outputs, config)
        if code is None or not has_code(code):
            return extraction_failed(self._extractor.name)
        return await super()._ascore(request.model_copy(update={"outputs": code}), config)
