"""``LevenshteinDistance``: normalised edit similarity, computed by rapidfuzz."""

from __future__ import annotations

from typing import ClassVar

from langchain_core.runnables import RunnableConfig

from langchain_evals_port.core import EvalRequest, Evaluator, canonical_text


class LevenshteinDistance(Evaluator):
    """Scores ``1 - distance / max(len)``: 1.0 for identical texts, 0.0 for nothing shared.

    Non-string values are compared as their canonical JSON text, so values that are equal
    under ``ExactMatch`` always score 1.0. Key ``levenshtein_distance`` (as in OpenEvals,
    although the score is a similarity).

    Example:
        >>> LevenshteinDistance()(outputs="kitten", reference_outputs="sitting")["score"]
        0.5714285714285714
    """

    feedback_key: str = "levenshtein_distance"
    default_name: ClassVar[str | None] = "levenshtein_distance"
    scores_in_loop: ClassVar[bool] = True  # rapidfuzz: microseconds even on long texts

    @property
    def numeric_scores(self) -> bool:
        """Scores are numbers (a similarity from 0 to 1)."""
        return True

    def _score(self, request: EvalRequest, config: RunnableConfig) -> float:
        from rapidfuzz.distance import Levenshtein

        outputs, reference = request.require(
            "outputs", "reference_outputs", evaluator=self.get_name()
        )
        return float(
            Levenshtein.normalized_similarity(
                canonical_text(outputs, name="outputs"),
                canonical_text(reference, name="reference_outputs"),
            )
        )
