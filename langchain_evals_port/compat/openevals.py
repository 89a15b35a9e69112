"""OpenEvals' public functions, with OpenEvals' signatures and dict results.

Migrating is an import change::

    # from openevals.exact import exact_match
    from langchain_evals_port.compat.openevals import exact_match

The functions run this package's evaluators, so results follow its rules where they differ
from OpenEvals' (the canonical equality rule, full-precision embedding scores, typed
errors); PARITY.md lists every difference.
"""

from __future__ import annotations

from typing import Any, Literal, cast

from langchain_core.embeddings import Embeddings
from typing_extensions import NotRequired, Protocol, TypedDict

from langchain_evals_port.string import EmbeddingSimilarity, ExactMatch, LevenshteinDistance

__all__ = [
    "EvaluatorResult",
    "SimpleAsyncEvaluator",
    "SimpleEvaluator",
    "create_async_embedding_similarity_evaluator",
    "create_embedding_similarity_evaluator",
    "exact_match",
    "exact_match_async",
    "levenshtein_distance",
    "levenshtein_distance_async",
]


class EvaluatorResult(TypedDict):
    """OpenEvals' result dict; a non-verdict outcome is described inside ``metadata``."""

    key: str
    score: float | bool | None
    comment: str | None
    metadata: dict[str, Any] | None
    source_run_id: NotRequired[str]


class SimpleEvaluator(Protocol):
    """An OpenEvals-style synchronous evaluator."""

    def __call__(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **kwargs: Any,
    ) -> EvaluatorResult | list[EvaluatorResult]: ...


class SimpleAsyncEvaluator(Protocol):
    """An OpenEvals-style asynchronous evaluator."""

    async def __call__(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **kwargs: Any,
    ) -> EvaluatorResult | list[EvaluatorResult]: ...


_EXACT_MATCH = ExactMatch()
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
    return cast(SimpleAsyncEvaluator, _embedding_evaluator(model, algorithm).acall)


def _embedding_evaluator(model: str | Embeddings, algorithm: str) -> EmbeddingSimilarity:
    if algorithm not in ("cosine", "dot_product"):
        raise ValueError(
            f"Unsupported algorithm: {algorithm}. Only 'cosine' and 'dot_product' are supported."
        )
    return EmbeddingSimilarity(embeddings=model, algorithm=algorithm)
