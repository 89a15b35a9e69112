"""``DurableEvaluator``: a ``StateGraph`` builder registered as an evaluator."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from langgraph.graph import StateGraph

from langchain_evals_port.core.errors import EvaluatorUsageError

__all__ = ["DurableEvaluator"]


class DurableEvaluator:
    """An evaluation in several steps, written as a LangGraph graph, that survives restarts.

    Args:
        builder: The graph, not compiled: the runtime compiles it with a checkpointer on the
            ledger's storage and runs one thread per evaluation (thread id = evaluation id).
            Nodes receive the ``EvaluationContext`` as LangGraph's run context
            (``runtime.context``); the final state's ``score`` (a bool, a number, a
            ``Score`` or an ``EvaluatorResult``) is the outcome.
        evaluation_timeout: Seconds (or a ``timedelta``) from queueing after which the
            evaluation is failed with reason ``timeout`` and its thread deleted (``None``:
            no limit).
        feedback_key: The key of the results (default: the evaluator's configuration id).
    """

    def __init__(
        self,
        builder: StateGraph[Any, Any, Any, Any],
        *,
        evaluation_timeout: float | timedelta | None = None,
        feedback_key: str | None = None,
    ) -> None:
        if not isinstance(builder, StateGraph):
            raise EvaluatorUsageError(
                f"builder must be a langgraph StateGraph (not compiled), got {builder!r}"
            )
        try:
            builder.compile()  # a graph that cannot run fails here, at startup
        except Exception as error:
            raise EvaluatorUsageError(
                f"the durable evaluator's graph is invalid: {error}"
            ) from error
        self.builder = builder
        self.evaluation_timeout = _seconds(evaluation_timeout)
        self.feedback_key = feedback_key

    def __repr__(self) -> str:
        return (
            f"DurableEvaluator(nodes={sorted(self.builder.nodes)!r}, "
            f"evaluation_timeout={self.evaluation_timeout!r})"
        )


def _seconds(value: float | timedelta | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, timedelta):
        value = value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise EvaluatorUsageError(
            f"evaluation_timeout must be seconds or a timedelta, got {value!r}"
        )
    if not (value > 0 and math.isfinite(value)):
        raise EvaluatorUsageError(f"evaluation_timeout must be positive, got {value!r}")
    return float(value)
