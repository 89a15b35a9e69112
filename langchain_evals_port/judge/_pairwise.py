"""``PairwiseLLMJudge``: a chat model says which of two outputs is better, asked both ways."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Annotated, Any, ClassVar, Literal

from langchain_core.caches import BaseCache
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableConfig
from pydantic import Field, PrivateAttr, SkipValidation

from langchain_evals_port.core import (
    EvalRequest,
    Evaluator,
    EvaluatorResult,
    OutputsKind,
    Score,
    results_of,
)
from langchain_evals_port.core.errors import EvaluatorInputError

from ._judge import LLMJudge
from ._model import JudgeModel
from ._render import PromptSource, Template
from ._structured import JudgeReply, StructuredOutputMode, run_async, run_sync

Preference = Literal["A", "B", "tie"]
"""Which output a pairwise judge prefers: ``"A"`` (``outputs[0]``), ``"B"`` or ``"tie"``."""

_PROMPT_HEAD = """\
Two assistants answered the same request. Decide which answer serves the person who made \
the request better.

<request>
{inputs}
</request>

<answer_a>
{output_a}
</answer_a>

<answer_b>
{output_b}
</answer_b>
"""

_PROMPT_TAIL = """
Weigh what matters for this request: whether each answer is correct{reference_clause}, \
whether it does what was asked, and whether it is clear without padding. The order in which \
the answers appear and their length are no reason to prefer either. Reason about both \
answers first, then give your preference: "A" when answer A is better, "B" when answer B is \
better, "tie" only when neither is meaningfully better than the other."""

DEFAULT_PROMPT = (
    _PROMPT_HEAD
    + "\n<reference>\n{reference_outputs}\n</reference>\n"
    + _PROMPT_TAIL.replace("{reference_clause}", " (agreeing with the reference)")
)
"""The pairwise prompt used when a reference is given (written for this project)."""

DEFAULT_PROMPT_WITHOUT_REFERENCE = _PROMPT_HEAD + _PROMPT_TAIL.replace("{reference_clause}", "")
"""The pairwise prompt used when no reference is given."""

_SCHEMA: dict[str, Any] = {
    "title": "pairwise_preference",
    "description": "Which of two answers to the same request is better.",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "reasoning": {
            "type": "string",
            "description": (
                "Your comparison of the two answers, written before you decide, ending with "
                "a sentence that states your preference."
            ),
        },
        "preferred": {
            "type": "string",
            "enum": ["A", "B", "tie"],
            "description": '"A" or "B" for the better answer, "tie" when neither is better.',
        },
    },
    "required": ["reasoning", "preferred"],
}

# The score of output A (``outputs[0]``) for each preference; output B's is one minus it.
_SCORE_OF_A: dict[str, float] = {"A": 1.0, "B": 0.0, "tie": 0.5}
_UNSWAPPED: dict[str, Preference] = {"A": "B", "B": "A", "tie": "tie"}


class PairwiseLLMJudge(Evaluator):
    """Says which of two outputs for the same input is better, asking the model twice.

    Called the way LangSmith calls comparative evaluators: ``inputs``, ``outputs=[a, b]``
    (exactly two) and optionally ``reference_outputs``. The model sees the two outputs as
    answer A and answer B and replies ``{"reasoning": ..., "preferred": "A" | "B" | "tie"}``
    (structured output with one repair, as ``LLMJudge``). It is asked twice, the second time
    with the outputs swapped (both at once on the async path); when the two answers disagree
    once the swap is undone, the judge was swayed by position and the result is
    ``inconclusive`` with a reason that starts ``position-inconsistent`` and names both
    answers. A judge that cannot answer fails (``on_error="record"``: a ``failed`` result),
    never a low score.

    The result is one ``EvaluatorResult`` whose score is output A's preference: 1.0 when
    ``outputs[0]`` is better, 0.0 when ``outputs[1]`` is, 0.5 for a tie (so a mean over
    cases is output A's win rate with ties counted half). Its metadata holds ``preferred``,
    ``scores`` (one per output), and each ordering's answer and reasoning under ``orders``;
    the comment holds both reasonings.

    For ``langsmith.evaluate_comparative(experiments, evaluators=[judge])`` pass the judge
    as it is: LangSmith calls it with ``runs=`` besides the outputs, and the judge then
    returns LangSmith's comparative shape, ``{"key", "scores": {run id: score}, "comment"}``
    (scores ``None`` when there is no verdict, the comment saying why). For two experiments
    of this package, ``experiments.pairwise_compare`` gives per-case preferences and the
    win rate with its interval.

    Args:
        prompt: A template string, ``ChatPromptTemplate`` or callable, with the variables
            ``{inputs}``, ``{output_a}``, ``{output_b}`` and ``{reference_outputs}`` (and any
            other variable passed as a keyword); ``{outputs}`` is the two outputs in the order
            shown. A template must show ``{output_a}`` and ``{output_b}``. None: the project's
            prompt (``DEFAULT_PROMPT``, or ``DEFAULT_PROMPT_WITHOUT_REFERENCE`` for requests
            without ``reference_outputs``).
        model: A chat model, a ``"provider:model"`` string, or None for the default judge.
        feedback_key: The result key.
        system: A system message, for template-string prompts.
        structured_output_mode: ``"auto"``, ``"native"`` or ``"prompted"`` (as ``LLMJudge``).
        structured_output_method: Force the ``with_structured_output`` method.
        cache: A LangChain cache the judge's model calls answer from (as ``LLMJudge``).

    Example:
        >>> from langchain_evals_port.testing import ScriptedChatModel
        >>> model = ScriptedChatModel(
        ...     [
        ...         {"reasoning": "A names the city.", "preferred": "A"},
        ...         {"reasoning": "B names the city.", "preferred": "B"},
        ...     ]
        ... )
        >>> judge = PairwiseLLMJudge(model=model)
        >>> result = judge.invoke({"inputs": "Capital of France?", "outputs": ["Paris", "A city."]})
        >>> result.score, result.metadata["preferred"], result.metadata["scores"]
        (1.0, 'A', [1.0, 0.0])
    """

    DEFAULT_PROMPT: ClassVar[str] = DEFAULT_PROMPT
    DEFAULT_PROMPT_WITHOUT_REFERENCE: ClassVar[str] = DEFAULT_PROMPT_WITHOUT_REFERENCE

    prompt: Annotated[PromptSource | None, SkipValidation] = Field(default=None, exclude=True)
    model: Annotated[JudgeModel | None, SkipValidation] = Field(default=None, exclude=True)
    feedback_key: str = "preference"
    system: str | None = None
    structured_output_mode: StructuredOutputMode = "auto"
    structured_output_method: str | None = None
    cache: Annotated[BaseCache | None, SkipValidation] = Field(default=None, exclude=True)

    default_name: ClassVar[str | None] = "pairwise_llm_judge"
    outputs_kind: ClassVar[OutputsKind] = "other"

    # The conversation (prompt rendering, structured output, repair, cache, rate limiter)
    # is LLMJudge's, asked for the preference schema instead of a score.
    _asker: LLMJudge = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        """Check the prompt shows both outputs and build the judge that asks the model."""
        if self.prompt is not None:
            _check_shows_both(self.prompt)
        self._asker = LLMJudge(
            prompt=DEFAULT_PROMPT if self.prompt is None else self.prompt,
            prompt_without_reference=(
                DEFAULT_PROMPT_WITHOUT_REFERENCE if self.prompt is None else None
            ),
            model=self.model,
            feedback_key=self.feedback_key,
            system=self.system,
            output_schema=_SCHEMA,
            structured_output_mode=self.structured_output_mode,
            structured_output_method=self.structured_output_method,
            cache=self.cache,
        )

    @property
    def numeric_scores(self) -> bool:
        """Scores are numbers: output A's preference, 1.0, 0.5 or 0.0."""
        return True

    # --- scoring ---------------------------------------------------------------------------

    def _score(self, request: EvalRequest, config: RunnableConfig) -> Score:
        started = time.perf_counter()
        replies = [self._ask(shown, config) for shown in _orderings(request)]
        return self._decide(replies, started)

    async def _ascore(self, request: EvalRequest, config: RunnableConfig) -> Score:
        started = time.perf_counter()
        answers = await asyncio.gather(
            *(self._aask(shown, config) for shown in _orderings(request)),
            return_exceptions=True,
        )
        replies: list[tuple[JudgeReply, str]] = []
        for answer in answers:
            if isinstance(answer, BaseException):
                raise answer
            replies.append(answer)
        return self._decide(replies, started)

    def _ask(self, shown: EvalRequest, config: RunnableConfig) -> tuple[JudgeReply, str]:
        conversation, judge, labels = self._asker._conversation(shown)
        return run_sync(conversation, config, labels), judge.name

    async def _aask(self, shown: EvalRequest, config: RunnableConfig) -> tuple[JudgeReply, str]:
        conversation, judge, labels = self._asker._conversation(shown)
        return await run_async(conversation, config, labels), judge.name

    def _decide(self, replies: list[tuple[JudgeReply, str]], started: float) -> Score:
        (given, model_name), (swapped, _) = replies
        first: Preference = given.parsed["preferred"]
        second = _UNSWAPPED[swapped.parsed["preferred"]]
        usage: dict[str, int] = {}
        for reply, _ in replies:
            for key, count in reply.usage.items():
                usage[key] = usage.get(key, 0) + count
        metadata: dict[str, Any] = {
            "orders": [
                {
                    "shown": "given",
                    "preferred": first,
                    "answered": given.parsed["preferred"],
                    "reasoning": given.parsed["reasoning"],
                },
                {
                    "shown": "swapped",
                    "preferred": second,
                    "answered": swapped.parsed["preferred"],
                    "reasoning": swapped.parsed["reasoning"],
                },
            ],
            "judge_model": model_name,
            "structured_output": given.path,
            "repairs": given.repairs + swapped.repairs,
            "latency_ms": round((time.perf_counter() - started) * 1000, 3),
        }
        if usage:
            metadata["token_usage"] = usage
        comment = (
            f"In the given order (A = outputs[0]): {given.parsed['reasoning']}\n\n"
            f"Swapped (A = outputs[1]): {swapped.parsed['reasoning']}"
        )
        if first != second:
            return Score(
                None,
                comment,
                metadata,
                inconclusive=(
                    f"position-inconsistent: the judge preferred {_named(first)} with the "
                    f"outputs in the given order and {_named(second)} with them swapped"
                ),
            )
        score = _SCORE_OF_A[first]
        metadata["preferred"] = first
        metadata["scores"] = [score, 1.0 - score]
        return Score(score, comment, metadata)

    # --- LangSmith's comparative convention ------------------------------------------------

    def __call__(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        runs: Sequence[Any] | None = None,
        **variables: Any,
    ) -> dict[str, Any] | list[dict[str, Any]]:
        """Compare ``outputs=[a, b]``; an OpenEvals-shaped dict, or LangSmith's comparative
        result (``key``, ``scores`` by run id, ``comment``) when ``runs`` are given, as
        ``langsmith.evaluate_comparative`` gives them."""
        if runs is None:
            return super().__call__(
                inputs=inputs, outputs=outputs, reference_outputs=reference_outputs, **variables
            )
        [result] = results_of(
            self.invoke(
                EvalRequest.of(
                    inputs=inputs, outputs=outputs, reference_outputs=reference_outputs, **variables
                )
            )
        )
        return _comparative_result(result, runs)

    async def acall(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        runs: Sequence[Any] | None = None,
        **variables: Any,
    ) -> dict[str, Any] | list[dict[str, Any]]:
        """The async twin of the keyword call."""
        if runs is None:
            return await super().acall(
                inputs=inputs, outputs=outputs, reference_outputs=reference_outputs, **variables
            )
        [result] = results_of(
            await self.ainvoke(
                EvalRequest.of(
                    inputs=inputs, outputs=outputs, reference_outputs=reference_outputs, **variables
                )
            )
        )
        return _comparative_result(result, runs)


def _comparative_result(result: EvaluatorResult, runs: Sequence[Any]) -> dict[str, Any]:
    """A pairwise result in LangSmith's comparative shape: the score of each of the two
    ``runs`` (objects with an ``id``, in the order of the outputs) by run id, ``None`` for
    both when there is no verdict, and one comment for both."""
    if len(runs) != 2:
        raise EvaluatorInputError(f"a pairwise judge compares two runs, got {len(runs)}")
    scores: list[float | None] = (
        list(result.metadata["scores"]) if result.is_verdict else [None, None]
    )
    return {
        "key": result.key,
        "scores": {run.id: score for run, score in zip(runs, scores, strict=True)},
        "comment": result.feedback_comment,
    }


def _orderings(request: EvalRequest) -> tuple[EvalRequest, EvalRequest]:
    """The request as the model sees it in the given order and swapped."""
    outputs = request.outputs
    if not isinstance(outputs, (list, tuple)) or len(outputs) != 2:
        raise EvaluatorInputError(
            "a pairwise judge compares two outputs: pass outputs=[output_a, output_b], got "
            f"{type(outputs).__name__}"
            + (f" of {len(outputs)}" if isinstance(outputs, (list, tuple)) else "")
        )
    first, second = outputs
    return _shown(request, first, second), _shown(request, second, first)


def _shown(request: EvalRequest, a: Any, b: Any) -> EvalRequest:
    return request.model_copy(
        update={"outputs": [a, b], "variables": {**request.variables, "output_a": a, "output_b": b}}
    )


def _named(preference: Preference) -> str:
    return {"A": "A (outputs[0])", "B": "B (outputs[1])", "tie": "a tie"}[preference]


def _check_shows_both(prompt: PromptSource) -> None:
    if isinstance(prompt, str):
        variables = set(Template.parse(prompt).variables)
    elif isinstance(prompt, ChatPromptTemplate):
        variables = {*prompt.input_variables, *prompt.optional_variables}
    else:
        return
    missing = [name for name in ("output_a", "output_b") if name not in variables]
    if missing:
        raise ValueError(
            f"a pairwise prompt must show both outputs; it has no "
            f"{' or '.join('{' + name + '}' for name in missing)}"
        )
