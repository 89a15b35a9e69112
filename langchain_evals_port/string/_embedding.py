"""``EmbeddingSimilarity``: cosine or dot-product similarity of two embedded texts."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated, Any, ClassVar, Literal

from langchain_core.embeddings import Embeddings
from langchain_core.runnables import RunnableConfig
from pydantic import Field, PrivateAttr, SkipValidation, field_validator

from langchain_evals_port.core import EvalRequest, Evaluator, Score, canonical_text
from langchain_evals_port.core.errors import EvaluationFailure, EvaluatorInputError


class EmbeddingSimilarity(Evaluator):
    """Scores the similarity of the embeddings of ``outputs`` and ``reference_outputs``.

    Both texts are embedded in one ``embed_documents`` call (``aembed_documents`` on the
    async path). Non-string values are embedded as their canonical JSON text.

    Args:
        embeddings: Any LangChain ``Embeddings``, or a ``"provider:model"`` string resolved
            with ``langchain.embeddings.init_embeddings`` on first use (needs the
            ``langchain`` extra).
        algorithm: ``"cosine"`` (default) or ``"dot_product"``.

    A zero vector has no direction, so its cosine similarity is undefined: the score is
    0.0 and the comment says which side was the zero vector.

    Example:
        >>> from langchain_evals_port.testing import HashingEmbeddings
        >>> ev = EmbeddingSimilarity(embeddings=HashingEmbeddings())
        >>> round(ev(outputs="a red cat", reference_outputs="a red dog")["score"], 3)
        0.667
    """

    feedback_key: str = "embedding_similarity"
    default_name: ClassVar[str | None] = "embedding_similarity"

    @property
    def numeric_scores(self) -> bool:
        """Scores are numbers (a similarity from 0 to 1)."""
        return True

    embeddings: Annotated[Embeddings | str, SkipValidation] = Field(exclude=True)
    algorithm: Literal["cosine", "dot_product"] = "cosine"
    _resolved: Embeddings | None = PrivateAttr(default=None)

    @field_validator("embeddings", mode="before")
    @classmethod
    def _check_embeddings(cls, value: Any) -> Any:
        if not isinstance(value, (Embeddings, str)):
            raise ValueError(
                "embeddings must be a LangChain Embeddings instance or a 'provider:model' "
                f"string, got {type(value).__name__}"
            )
        return value

    def _model(self) -> Embeddings:
        if self._resolved is None:
            if isinstance(self.embeddings, str):
                self._resolved = _init_embeddings(self.embeddings)
            else:
                self._resolved = self.embeddings
        return self._resolved

    def _texts(self, request: EvalRequest) -> list[str]:
        outputs, reference = request.require(
            "outputs", "reference_outputs", evaluator=self.get_name()
        )
        return [
            canonical_text(outputs, name="outputs"),
            canonical_text(reference, name="reference_outputs"),
        ]

    def _score(self, request: EvalRequest, config: RunnableConfig) -> Score:
        return self._similarity(self._model().embed_documents(self._texts(request)))

    async def _ascore(self, request: EvalRequest, config: RunnableConfig) -> Score:
        return self._similarity(await self._model().aembed_documents(self._texts(request)))

    def _similarity(self, vectors: Sequence[Sequence[float]]) -> Score:
        if len(vectors) != 2 or len(vectors[0]) != len(vectors[1]) or not vectors[0]:
            shapes = [len(vector) for vector in vectors]
            raise EvaluationFailure(
                f"the embeddings model returned vectors of lengths {shapes} for 2 texts; "
                "expected two non-empty vectors of equal length",
                code="provider_error",
            )
        received, expected = vectors
        dot = math.fsum(a * b for a, b in zip(received, expected, strict=True))
        if self.algorithm == "dot_product":
            return Score(dot)
        norms = (
            math.sqrt(math.fsum(a * a for a in received)),
            math.sqrt(math.fsum(b * b for b in expected)),
        )
        zero = [
            name
            for name, norm in zip(("outputs", "reference_outputs"), norms, strict=True)
            if norm == 0.0
        ]
        if zero:
            return Score(
                0.0,
                comment=f"the embedding of {' and '.join(zero)} is a zero vector, which has no "
                "direction; cosine similarity is undefined, so the score is 0.0",
                metadata={"zero_vector": zero},
            )
        return Score(dot / (norms[0] * norms[1]))


def _init_embeddings(model: str) -> Embeddings:
    try:
        from langchain.embeddings import init_embeddings
    except ImportError as error:
        raise ImportError(
            f"resolving the embeddings model {model!r} from a string needs the 'langchain' "
            "package: pip install 'langchain-evals-port[langchain]' (or pass an Embeddings "
            "instance)"
        ) from error
    try:
        return init_embeddings(model)
    except ValueError as error:
        raise EvaluatorInputError(
            f"cannot resolve the embeddings model {model!r}: {error}"
        ) from error
