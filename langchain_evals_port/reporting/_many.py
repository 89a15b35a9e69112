"""Evaluate many cases with bounded concurrency, every failure kept as a result, and a
progress bar where someone is watching."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import as_completed
from typing import cast

from langchain_core.runnables.config import ContextThreadPoolExecutor

from langchain_evals_port.core import EvalInput, EvalOutput, Evaluator, OnError

from ._display import Progress


def _with_on_error(evaluator: Evaluator, on_error: OnError, max_concurrency: int) -> Evaluator:
    """Check the arguments; ``evaluator`` with ``on_error``, the one place failures are kept."""
    if max_concurrency < 1:
        raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
    if on_error not in ("record", "raise"):
        raise ValueError(f"on_error must be 'record' or 'raise', got {on_error!r}")
    if evaluator.on_error == on_error:
        return evaluator
    return evaluator.model_copy(update={"on_error": on_error})


def evaluate_many(
    evaluator: Evaluator,
    cases: Sequence[EvalInput],
    *,
    max_concurrency: int = 16,
    on_error: OnError = "record",
    progress: bool | None = None,
) -> list[EvalOutput]:
    """Evaluate every case with at most ``max_concurrency`` in flight; results in input order.

    Each case runs through ``evaluator.invoke`` on a worker thread that carries the caller's
    context, so an enclosing ``eval_scope`` (an ``EvalReport``) receives every result.

    Args:
        evaluator: Any evaluator.
        cases: ``EvalRequest`` objects or mappings with its field names.
        max_concurrency: How many cases may run at once.
        on_error: ``"record"`` (default): a case whose evaluator fails (a judge timeout, a
            sandbox error) gives a ``failed`` result with its reason code, which reports
            count, and every case's result is returned. ``"raise"``: the first failure
            propagates once the cases in flight have finished; cases not yet started are
            cancelled. It overrides the evaluator's own ``on_error``. Bad input from the
            caller (``EvaluatorInputError``, ``EvaluatorUsageError``) always raises.
        progress: ``None`` shows a progress bar (count, rate, elapsed time, ETA) on a
            terminal or in a notebook, never under ``CI`` or in a pipe; ``False`` never
            shows it, ``True`` always does.

    Example:
        >>> from langchain_evals_port import ExactMatch
        >>> outputs = evaluate_many(ExactMatch(), [{"outputs": 1, "reference_outputs": 1}])
        >>> [result.score for result in outputs]
        [True]
    """
    evaluator = _with_on_error(evaluator, on_error, max_concurrency)
    counter = Progress(evaluator.get_name(), len(cases), progress)
    results: list[EvalOutput | None] = [None] * len(cases)
    try:
        with ContextThreadPoolExecutor(max_workers=max_concurrency) as pool:
            futures = {
                pool.submit(evaluator.invoke, case): index for index, case in enumerate(cases)
            }
            try:
                for future in as_completed(futures):
                    results[futures[future]] = future.result()
                    counter.advance()
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
    finally:
        counter.close()
    # Every slot is filled: a case that raised has propagated its error above.
    return cast("list[EvalOutput]", results)


async def aevaluate_many(
    evaluator: Evaluator,
    cases: Sequence[EvalInput],
    *,
    max_concurrency: int = 16,
    on_error: OnError = "record",
    progress: bool | None = None,
) -> list[EvalOutput]:
    """The async twin of ``evaluate_many``, on ``evaluator.ainvoke``.

    With ``on_error="raise"``, the first failure cancels the other cases and propagates.
    """
    evaluator = _with_on_error(evaluator, on_error, max_concurrency)
    counter = Progress(evaluator.get_name(), len(cases), progress)
    limit = asyncio.Semaphore(max_concurrency)

    async def one(case: EvalInput) -> EvalOutput:
        async with limit:
            output = await evaluator.ainvoke(case)
        counter.advance()
        return output

    tasks = [asyncio.ensure_future(one(case)) for case in cases]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        raise
    finally:
        counter.close()
