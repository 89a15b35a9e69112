"""Evaluate many cases with bounded concurrency and an optional progress counter."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import as_completed
from typing import cast

from langchain_core.runnables.config import ContextThreadPoolExecutor

from langchain_evals_port.core import EvalInput, EvalOutput, Evaluator


class _Progress:
    """A ``done/total`` counter redrawn in place on stderr, or nothing at all."""

    def __init__(self, name: str, total: int, enabled: bool | None) -> None:
        if enabled is None:
            # Carriage-return redraws only make sense on a terminal; in CI logs and pipes
            # they become one long line of noise.
            enabled = sys.stderr.isatty() and not os.environ.get("CI")
        self._enabled = enabled
        self._name = name
        self._total = total
        self._done = 0
        self._lock = threading.Lock()

    def advance(self) -> None:
        with self._lock:
            self._done += 1
            if self._enabled:
                sys.stderr.write(f"\r{self._name}: {self._done}/{self._total}")
                sys.stderr.flush()

    def close(self) -> None:
        if self._enabled and self._total:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _check(max_concurrency: int) -> None:
    if max_concurrency < 1:
        raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")


def evaluate_many(
    evaluator: Evaluator,
    cases: Sequence[EvalInput],
    *,
    max_concurrency: int = 16,
    progress: bool | None = None,
) -> list[EvalOutput]:
    """Evaluate every case with at most ``max_concurrency`` in flight; results in input order.

    Each case runs through ``evaluator.invoke`` on a worker thread that carries the caller's
    context, so an enclosing ``eval_scope`` still receives the results. The first error
    raised by a case propagates once the cases already in flight have finished; cases not
    yet started are cancelled.

    Args:
        evaluator: Any evaluator.
        cases: ``EvalRequest`` objects or mappings with its field names.
        max_concurrency: How many cases may run at once.
        progress: ``None`` shows a counter on stderr only on a terminal outside CI;
            ``False`` never shows it, ``True`` always does.

    Example:
        >>> from langchain_evals_port import ExactMatch
        >>> outputs = evaluate_many(ExactMatch(), [{"outputs": 1, "reference_outputs": 1}])
        >>> [result.score for result in outputs]
        [True]
    """
    _check(max_concurrency)
    counter = _Progress(evaluator.get_name(), len(cases), progress)
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
    progress: bool | None = None,
) -> list[EvalOutput]:
    """The async twin of ``evaluate_many``, on ``evaluator.ainvoke``.

    If a case raises, the other cases are cancelled and the error propagates.
    """
    _check(max_concurrency)
    counter = _Progress(evaluator.get_name(), len(cases), progress)
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
