"""Running trajectory evaluators over a finished conversation, never losing an error.

Our ``Evaluator``s receive the transcript as LangChain messages; any other callable is
called OpenEvals-style, ``ev(outputs=..., reference_outputs=...)`` with OpenAI-style message
dicts, and may return a result dict, a list of them or an ``EvaluatorResult``. Whatever an
evaluator raises becomes a ``failed`` result naming the error, so one broken evaluator
neither hides the others nor disappears from the report.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, TypeAlias

from langchain_core.messages import BaseMessage

from langchain_evals_port.core import Evaluator, EvaluatorResult, to_openai_messages
from langchain_evals_port.core.errors import FAILURE_CODES, FailureCode

from ._calls import RUN_ASYNC, call_async, call_sync

TrajectoryEvaluator: TypeAlias = "Evaluator | Callable[..., Any]"
"""An ``Evaluator``, or an OpenEvals-style ``(*, outputs, reference_outputs)`` callable."""


def evaluate(
    evaluators: Sequence[TrajectoryEvaluator],
    trajectory: list[BaseMessage],
    reference_outputs: Any,
) -> list[EvaluatorResult]:
    """Run ``evaluators`` one after the other."""
    results: list[EvaluatorResult] = []
    for ev in evaluators:
        try:
            results += _results(
                call_sync(_call(ev, trajectory, reference_outputs), hint=RUN_ASYNC), ev
            )
        except Exception as error:
            results.append(EvaluatorResult.of_error(_key(ev), error))
    return results


async def aevaluate(
    evaluators: Sequence[TrajectoryEvaluator],
    trajectory: list[BaseMessage],
    reference_outputs: Any,
) -> list[EvaluatorResult]:
    """Run ``evaluators`` concurrently; results keep the evaluators' order."""

    async def one(ev: TrajectoryEvaluator) -> list[EvaluatorResult]:
        try:
            call = _acall(ev, trajectory, reference_outputs)
            # A sync evaluator (a judge call) runs in the executor so the others overlap it.
            return _results(await call_async(call, blocking=True), ev)
        except Exception as error:
            return [EvaluatorResult.of_error(_key(ev), error)]

    return [result for batch in await asyncio.gather(*map(one, evaluators)) for result in batch]


def _call(ev: TrajectoryEvaluator, trajectory: list[BaseMessage], reference: Any) -> Any:
    if isinstance(ev, Evaluator):
        return partial(ev.invoke, {"outputs": trajectory, "reference_outputs": reference})
    return partial(ev, outputs=to_openai_messages(trajectory), reference_outputs=reference)


def _acall(ev: TrajectoryEvaluator, trajectory: list[BaseMessage], reference: Any) -> Any:
    if isinstance(ev, Evaluator):
        return partial(ev.ainvoke, {"outputs": trajectory, "reference_outputs": reference})
    return _call(ev, trajectory, reference)


def _results(output: Any, ev: TrajectoryEvaluator) -> list[EvaluatorResult]:
    items = output if isinstance(output, list) else [output]
    return [_result(item, ev) for item in items]


def _result(item: Any, ev: TrajectoryEvaluator) -> EvaluatorResult:
    if isinstance(item, EvaluatorResult):
        return item
    if not isinstance(item, Mapping) or "key" not in item:
        raise TypeError(
            f"evaluator {_key(ev)} returned {type(item).__name__}; expected a result dict "
            "with 'key' and 'score' (or a list of them)"
        )
    metadata = dict(item.get("metadata") or {})
    # Our own results travel as dicts with their outcome in metadata (see to_dict).
    outcome = metadata.pop("outcome", None)
    reason = metadata.pop("reason", None)
    error_code = metadata.pop("error_code", None)
    fields = {
        "comment": item.get("comment"),
        "metadata": metadata,
        "source_run_id": _optional_str(item.get("source_run_id")),
    }
    if outcome == "failed":
        code: FailureCode = error_code if error_code in FAILURE_CODES else "evaluator_error"
        return EvaluatorResult.failed(item["key"], code, reason or "failed", **fields)
    if outcome == "inconclusive" or item.get("score") is None:
        return EvaluatorResult.inconclusive(
            item["key"], reason or "the evaluator returned no score", **fields
        )
    return EvaluatorResult(key=item["key"], score=item["score"], **fields)


def _key(ev: TrajectoryEvaluator) -> str:
    if isinstance(ev, Evaluator):
        return ev.feedback_key
    return str(getattr(ev, "__name__", None) or type(ev).__name__)


def _optional_str(value: Any) -> str | None:
    return None if value is None else str(value)
