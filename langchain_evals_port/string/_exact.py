"""``ExactMatch``: equality under the canonical rule."""

from __future__ import annotations

from typing import ClassVar

from langchain_core.runnables import RunnableConfig

from langchain_evals_port.core import EvalRequest, Evaluator, canonical_equal


class ExactMatch(Evaluator):
    """Scores ``True`` when ``outputs`` equals ``reference_outputs`` under the canonical rule.

    Map key order is ignored, ``1`` equals ``1.0``, and dates, sets and pydantic models
    compare by their JSON form (see ``canonical_json``). Key ``exact_match``.

    Example:
        >>> ExactMatch()(outputs={"n": 1, "id": "a"}, reference_outputs={"id": "a", "n": 1.0})
        {'key': 'exact_match', 'score': True, 'comment': None, 'metadata': None}
    """

    feedback_key: str = "exact_match"
    default_name: ClassVar[str | None] = "exact_match"

    def _score(self, request: EvalRequest, config: RunnableConfig) -> bool:
        outputs, reference = request.require(
            "outputs", "reference_outputs", evaluator=self.get_name()
        )
        return canonical_equal(outputs, reference, names=("outputs", "reference_outputs"))

    async def _ascore(self, request: EvalRequest, config: RunnableConfig) -> bool:
        # Microseconds of CPU: a thread hop would cost more than the work.
        return self._score(request, config)
