"""OpenEvals' public functions, with OpenEvals' signatures and dict results.

Migrating is an import change::

    # from openevals.exact import exact_match
    from langchain_evals_port.compat.openevals import exact_match

The functions run this package's evaluators, so results follow its rules where they differ
from OpenEvals' (the canonical equality rule, full-precision embedding scores, typed
errors); PARITY.md lists every difference.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable

from langchain_evals_port.compat._openevals_code import (
    create_async_code_llm_as_judge,
    create_async_mypy_evaluator,
    create_async_pyright_evaluator,
    create_code_llm_as_judge,
    create_mypy_evaluator,
    create_pyright_evaluator,
)
from langchain_evals_port.compat._openevals_json import (
    create_async_json_match_evaluator,
    create_json_match_evaluator,
)
from langchain_evals_port.compat._openevals_trajectory import (
    create_async_trajectory_llm_as_judge,
    create_async_trajectory_match_evaluator,
    create_trajectory_llm_as_judge,
    create_trajectory_match_evaluator,
    trajectory_strict_match,
    trajectory_strict_match_async,
    trajectory_subset,
    trajectory_subset_async,
    trajectory_superset,
    trajectory_superset_async,
    trajectory_unordered_match,
    trajectory_unordered_match_async,
)
from langchain_evals_port.compat._shared import (
    EvaluatorResult,
    SimpleAsyncEvaluator,
    SimpleEvaluator,
    judge_model,
    named_async,
)
from langchain_evals_port.string import EmbeddingSimilarity, ExactMatch, LevenshteinDistance

if TYPE_CHECKING:
    from langchain_evals_port.judge import FewShotExample, LLMJudge
    from langchain_evals_port.prompts import PromptText

    # The prompts OpenEvals' function modules export (openevals.code.llm,
    # openevals.trajectory.llm): the catalog's texts, read on first use.
    CODE_CORRECTNESS_PROMPT: PromptText
    CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS: PromptText
    TRAJECTORY_ACCURACY_PROMPT: PromptText
    TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE: PromptText

    from langchain_evals_port.compat._openevals_simulation import (
        create_async_llm_simulated_user,
        create_llm_simulated_user,
        run_multiturn_simulation,
        run_multiturn_simulation_async,
    )

__all__ = [
    "CODE_CORRECTNESS_PROMPT",
    "CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS",
    "TRAJECTORY_ACCURACY_PROMPT",
    "TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE",
    "EvaluatorResult",
    "SimpleAsyncEvaluator",
    "SimpleEvaluator",
    "create_async_code_llm_as_judge",
    "create_async_embedding_similarity_evaluator",
    "create_async_json_match_evaluator",
    "create_async_llm_as_judge",
    "create_async_llm_simulated_user",
    "create_async_mypy_evaluator",
    "create_async_pyright_evaluator",
    "create_async_trajectory_llm_as_judge",
    "create_async_trajectory_match_evaluator",
    "create_code_llm_as_judge",
    "create_embedding_similarity_evaluator",
    "create_json_match_evaluator",
    "create_llm_as_judge",
    "create_llm_simulated_user",
    "create_mypy_evaluator",
    "create_pyright_evaluator",
    "create_trajectory_llm_as_judge",
    "create_trajectory_match_evaluator",
    "exact_match",
    "exact_match_async",
    "levenshtein_distance",
    "levenshtein_distance_async",
    "run_multiturn_simulation",
    "run_multiturn_simulation_async",
    "trajectory_strict_match",
    "trajectory_strict_match_async",
    "trajectory_subset",
    "trajectory_subset_async",
    "trajectory_superset",
    "trajectory_superset_async",
    "trajectory_unordered_match",
    "trajectory_unordered_match_async",
]


_EXACT_MATCH = ExactMatch(explain=False)  # OpenEvals' result has no comment
_LEVENSHTEIN = LevenshteinDistance()


def exact_match(*, outputs: Any, reference_outputs: Any, **kwargs: Any) -> EvaluatorResult:
    """OpenEvals' ``exact_match``: ``True`` when the values are canonically equal."""
    return cast(
        EvaluatorResult,
        _EXACT_MATCH(outputs=outputs, reference_outputs=reference_outputs, **kwargs),
    )


async def exact_match_async(
    *, outputs: Any, reference_outputs: Any, **kwargs: Any
) -> EvaluatorResult:
    """OpenEvals' ``exact_match_async``."""
    return cast(
        EvaluatorResult,
        await _EXACT_MATCH.acall(outputs=outputs, reference_outputs=reference_outputs, **kwargs),
    )


def levenshtein_distance(*, outputs: Any, reference_outputs: Any, **kwargs: Any) -> EvaluatorResult:
    """OpenEvals' ``levenshtein_distance``: normalised edit similarity in [0, 1]."""
    return cast(
        EvaluatorResult,
        _LEVENSHTEIN(outputs=outputs, reference_outputs=reference_outputs, **kwargs),
    )


async def levenshtein_distance_async(
    *, outputs: Any, reference_outputs: Any, **kwargs: Any
) -> EvaluatorResult:
    """OpenEvals' ``levenshtein_distance_async``."""
    return cast(
        EvaluatorResult,
        await _LEVENSHTEIN.acall(outputs=outputs, reference_outputs=reference_outputs, **kwargs),
    )


def create_embedding_similarity_evaluator(
    *,
    model: str | Embeddings = "openai:text-embedding-3-small",
    algorithm: Literal["cosine", "dot_product"] = "cosine",
) -> SimpleEvaluator:
    """OpenEvals' factory; ``model`` may also be an ``Embeddings`` instance.

    A model string is resolved with ``init_embeddings`` on the first evaluation, as in
    OpenEvals, and needs the ``langchain`` extra.
    """
    return cast(SimpleEvaluator, _embedding_evaluator(model, algorithm))


def create_async_embedding_similarity_evaluator(
    *,
    model: str | Embeddings = "openai:text-embedding-3-small",
    algorithm: Literal["cosine", "dot_product"] = "cosine",
) -> SimpleAsyncEvaluator:
    """OpenEvals' async factory; the evaluator awaits ``aembed_documents``."""
    evaluator = _embedding_evaluator(model, algorithm)
    return cast(SimpleAsyncEvaluator, named_async(evaluator.acall, evaluator.get_name()))


def _embedding_evaluator(model: str | Embeddings, algorithm: str) -> EmbeddingSimilarity:
    if algorithm not in ("cosine", "dot_product"):
        raise ValueError(
            f"Unsupported algorithm: {algorithm}. Only 'cosine' and 'dot_product' are supported."
        )
    return EmbeddingSimilarity(embeddings=model, algorithm=algorithm)


def create_llm_as_judge(
    *,
    prompt: Any,
    feedback_key: str = "score",
    judge: BaseChatModel | Runnable[Any, Any] | None = None,
    model: str | None = None,
    system: str | None = None,
    continuous: bool = False,
    choices: list[float] | None = None,
    use_reasoning: bool = True,
    few_shot_examples: Sequence[FewShotExample | dict[str, Any]] | None = None,
    output_schema: dict[str, Any] | type | None = None,
    structured_output_kwargs: dict[str, Any] | None = None,
) -> SimpleEvaluator | Callable[..., dict[str, Any]]:
    """OpenEvals' ``create_llm_as_judge``, returning an ``LLMJudge`` (callable like
    OpenEvals' evaluator, and a Runnable besides).

    ``judge`` must be a LangChain chat model; a raw OpenAI client is not supported (wrap the
    model in ``langchain_openai.ChatOpenAI``). ``structured_output_kwargs`` may set ``method``.
    With ``output_schema`` (or a ``StructuredPrompt``) the evaluator returns the judge's
    object itself, as in OpenEvals.
    """
    llm_judge = _llm_judge(locals())
    if llm_judge.has_output_schema:
        return llm_judge.evaluate_raw
    return cast(SimpleEvaluator, llm_judge)


def create_async_llm_as_judge(
    *,
    prompt: Any,
    feedback_key: str = "score",
    judge: BaseChatModel | Runnable[Any, Any] | None = None,
    model: str | None = None,
    system: str | None = None,
    continuous: bool = False,
    choices: list[float] | None = None,
    use_reasoning: bool = True,
    few_shot_examples: Sequence[FewShotExample | dict[str, Any]] | None = None,
    output_schema: dict[str, Any] | type | None = None,
    structured_output_kwargs: dict[str, Any] | None = None,
) -> SimpleAsyncEvaluator | Callable[..., Awaitable[dict[str, Any]]]:
    """OpenEvals' ``create_async_llm_as_judge``: the judge's calls go through the model's
    own async path."""
    llm_judge = _llm_judge(locals())
    if llm_judge.has_output_schema:
        return named_async(llm_judge.aevaluate_raw, llm_judge.get_name())
    return cast(SimpleAsyncEvaluator, named_async(llm_judge.acall, llm_judge.get_name()))


def _llm_judge(arguments: dict[str, Any]) -> LLMJudge:
    from langchain_evals_port.judge import LLMJudge

    judge = judge_model(arguments["judge"], arguments["model"])
    extra = dict(arguments["structured_output_kwargs"] or {})
    method = extra.pop("method", None)
    if extra:
        raise ValueError(f"structured_output_kwargs supports only 'method', got {sorted(extra)}")
    return LLMJudge(
        prompt=arguments["prompt"],
        model=judge,
        feedback_key=arguments["feedback_key"],
        system=arguments["system"],
        continuous=arguments["continuous"],
        choices=arguments["choices"],
        use_reasoning=arguments["use_reasoning"],
        few_shot_examples=tuple(arguments["few_shot_examples"] or ()),
        output_schema=arguments["output_schema"],
        structured_output_method=method,
    )


_SIMULATION = frozenset(
    {
        "create_async_llm_simulated_user",
        "create_llm_simulated_user",
        "run_multiturn_simulation",
        "run_multiturn_simulation_async",
    }
)
_PROMPTS = frozenset(
    {
        "CODE_CORRECTNESS_PROMPT",
        "CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS",
        "TRAJECTORY_ACCURACY_PROMPT",
        "TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE",
    }
)


def __getattr__(name: str) -> Any:
    # The simulator is a LangGraph graph; langgraph loads only when it is asked for.
    if name in _SIMULATION:
        from langchain_evals_port.compat import _openevals_simulation

        return getattr(_openevals_simulation, name)
    if name in _PROMPTS:
        from langchain_evals_port import prompts

        return getattr(prompts, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
