"""``run_evaluator``: the one way the package runs an evaluator on a request.

Experiments, the online runtime, ensembles, simulations and the JSON matcher all run the
evaluators they are given through it, so each gets the same results for the same request:
the result-or-list an evaluator returns becomes a list, and an exception becomes a
``failed`` result (``EvaluatorResult.of_error``: its reason code and message) — except an
``EvaluatorUsageError``, which says the evaluator was written or called wrongly (a variable
no request gives it, a misspelt keyword) and is raised, since it would fail every request
alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._evaluator import results_of
from ._result import EvaluatorResult
from .errors import EvaluatorUsageError

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from ._evaluator import Evaluator
    from ._request import EvalRequest

__all__ = ["arun_evaluator", "run_evaluator"]


def run_evaluator(
    evaluator: Evaluator, request: EvalRequest, config: RunnableConfig | None = None
) -> list[EvaluatorResult]:
    """``evaluator``'s results for ``request``; an exception is a ``failed`` result.

    Raises:
        EvaluatorUsageError: The evaluator was written or called wrongly.

    Example:
        >>> from langchain_evals_port.core import EvalRequest, evaluator
        >>> @evaluator
        ... def broken(outputs):
        ...     raise RuntimeError("no judge")
        >>> [result] = run_evaluator(broken, EvalRequest(outputs="hi"))
        >>> (result.outcome, result.error_code, result.reason)
        ('failed', 'evaluator_error', "evaluator 'broken' failed: RuntimeError: no judge")
    """
    try:
        return results_of(evaluator.invoke(request, config))
    except EvaluatorUsageError:
        raise
    except Exception as error:
        return [EvaluatorResult.of_error(evaluator.feedback_key, error)]


async def arun_evaluator(
    evaluator: Evaluator, request: EvalRequest, config: RunnableConfig | None = None
) -> list[EvaluatorResult]:
    """The async twin of ``run_evaluator``."""
    try:
        return results_of(await evaluator.ainvoke(request, config))
    except EvaluatorUsageError:
        raise
    except Exception as error:
        return [EvaluatorResult.of_error(evaluator.feedback_key, error)]
