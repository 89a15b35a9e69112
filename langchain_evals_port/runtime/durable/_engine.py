"""``DurableEngine``: runs a durable evaluator's graph, one LangGraph thread per evaluation.

The graph is the user's ``StateGraph``, compiled with a checkpointer on the ledger's storage
and run with ``durability="sync"``: every node's checkpoint is committed before the next node
starts, so a process that stops resumes from the last completed node (a node that was
running starts again). Nodes read the ``EvaluationContext`` as LangGraph's run context.
What LangGraph offers is used as it is: ``RetryPolicy`` per node, ``interrupt()`` to wait for
a person (``Command(resume=...)`` answers), ``aget_state`` to tell a node's failure (recorded
as the task's error) from the storage failing.

The outcome is written to the ledger before the thread is deleted, so a crash between the two
neither loses it nor runs the graph again.

The package's own types a node may keep in the graph state (a ``Score``, an
``EvaluatorResult``, the ``InteractionRecord`` it reads) are added to the checkpointer's
msgpack allowlist (``with_allowlist``), so they read back as themselves under LangGraph's
strict deserialization (``LANGGRAPH_STRICT_MSGPACK=true``) even when the state's schema
types them loosely; the permissive default reads them back anyway.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langgraph.types import Command

from langchain_evals_port.capture._records import (
    InteractionFailure,
    InteractionRecord,
    ModelResponse,
    TokenUsage,
    ToolCallRecord,
)
from langchain_evals_port.capture._scope import evaluation_scope
from langchain_evals_port.core import EvaluatorResult, Score
from langchain_evals_port.core.errors import (
    EvaluationTimeoutError,
    EvaluatorUsageError,
    classify_failure,
)

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from langchain_evals_port.runtime._context import EvaluationContext
    from langchain_evals_port.storage import Ledger
    from langchain_evals_port.storage._records import EvaluationRecord, WorkUnit

    from ._evaluator import DurableEvaluator

__all__ = ["CHECKPOINTED_TYPES", "CheckpointKept", "DurableEngine", "Paused", "with_package_types"]

CHECKPOINTED_TYPES: tuple[type, ...] = (
    Score,
    EvaluatorResult,
    InteractionRecord,
    InteractionFailure,
    ModelResponse,
    TokenUsage,
    ToolCallRecord,
)
"""The package's types a durable evaluator's nodes may keep in the graph state; every
checkpointer the engine uses may read them back (``with_package_types``)."""


class CheckpointKept(Exception):
    """The evaluation stopped on a storage or connection error outside its nodes; its
    checkpoints were kept, so running it again continues from the last completed node."""


@dataclass(frozen=True)
class Paused:
    """A node waits for a person (``interrupt(payload)``); run the unit again after
    ``Ledger.resume`` or at ``deadline`` (epoch seconds, ``None``: no deadline)."""

    payload: Any
    deadline: float | None


def with_package_types(checkpointer: BaseCheckpointSaver[Any]) -> BaseCheckpointSaver[Any]:
    """``checkpointer``, or a shallow copy of it whose serializer may also build
    ``CHECKPOINTED_TYPES`` under strict deserialization (LangGraph's ``with_allowlist``;
    the same saver when its serializer allows every type already)."""
    if not hasattr(checkpointer, "with_allowlist"):  # an older langgraph-checkpoint
        return checkpointer
    return checkpointer.with_allowlist(
        [(kind.__module__, kind.__name__) for kind in CHECKPOINTED_TYPES]
    )


class DurableEngine:
    """Runs the evaluations of one durable evaluator on LangGraph threads.

    Args:
        evaluator: The durable evaluator (its graph builder and timeout).
        evaluator_id: Its configuration id (the results' key unless it names one).
        checkpointer: An async-capable LangGraph checkpoint saver; it decides what survives
            a restart.
        ledger: Where the outcome is recorded before the thread is deleted.
        context: The ``EvaluationContext`` of a unit, built afresh for every run (so a run
            after a redeploy sees the new configuration).
        record: The ``EvaluationRecord`` of a unit and its results.
    """

    def __init__(
        self,
        evaluator: DurableEvaluator,
        *,
        evaluator_id: str,
        checkpointer: BaseCheckpointSaver[Any],
        ledger: Ledger,
        context: Callable[[WorkUnit], EvaluationContext],
        record: Callable[[WorkUnit, list[EvaluatorResult]], EvaluationRecord],
    ) -> None:
        self._key = evaluator.feedback_key or evaluator_id
        self._timeout = evaluator.evaluation_timeout
        self._checkpointer = checkpointer
        self._ledger = ledger
        self._context = context
        self._record = record
        self.graph = evaluator.builder.compile(
            checkpointer=with_package_types(checkpointer), name=evaluator_id
        )

    async def run(self, unit: WorkUnit) -> EvaluationRecord | Paused:
        """Start, continue or resume the evaluation of ``unit`` until it ends or pauses.

        Returns its record (written to the ledger already), or ``Paused``.

        Raises:
            CheckpointKept: The storage failed outside the nodes; the thread is kept.
            EvaluationTimeoutError: The evaluation passed its timeout (also when ``unit``
                comes back still waiting: its deadline passed without a resume).
            Exception: The error of a node that exhausted its retries, or an
                ``EvaluatorUsageError`` for a graph that ends without a score.

        After the outcome is recorded, or on any error but ``CheckpointKept``, the
        evaluation's thread is deleted.
        """
        config: Any = {"configurable": {"thread_id": unit.evaluation_id}}
        try:
            recorded = await asyncio.to_thread(self._ledger.get_evaluation, unit.evaluation_id)
            if recorded is None:
                if unit.waiting:
                    raise EvaluationTimeoutError(
                        f"evaluation {unit.evaluation_id} reached its deadline while waiting "
                        "to be resumed"
                    )
                values, interrupts = await self._advance(unit, config)
                if interrupts:
                    return Paused(interrupts[0].value, self._deadline(unit))
                recorded = self._record(unit, self._results(values))
                await asyncio.to_thread(self._ledger.record_evaluation, recorded)
        except Exception as error:
            if await self._storage_failed(error, config):
                raise CheckpointKept(str(error)) from error
            await self._checkpointer.adelete_thread(unit.evaluation_id)
            raise
        await self._checkpointer.adelete_thread(unit.evaluation_id)
        return recorded

    async def _advance(self, unit: WorkUnit, config: Any) -> tuple[Mapping[str, Any], Any]:
        """Run the graph from where the thread stands; its final values and interrupts."""
        snapshot = await self.graph.aget_state(config)
        graph_input: Any
        if snapshot.created_at is None:
            graph_input = {}  # a new evaluation: nodes read the interaction from the context
        elif not snapshot.next:
            return snapshot.values, ()  # finished before the outcome was recorded
        elif unit.resumed and snapshot.interrupts:
            # Only a node waiting in ``interrupt`` takes the value: a unit resumed earlier
            # and run again after a crash must not answer a later node's question.
            graph_input = Command(resume=unit.resume_value)
        else:
            graph_input = None  # continue after the last completed node
        running = self.graph.ainvoke(
            graph_input,
            config,
            context=self._context(unit),
            durability="sync",
            version="v2",
        )
        deadline = self._deadline(unit)
        # Waiting on a task (not ``wait_for``) keeps a TimeoutError raised inside a node apart
        # from the evaluation running out of time.
        with evaluation_scope(unit.evaluation_id):
            task = asyncio.ensure_future(running)
        try:
            budget = None if deadline is None else deadline - time.time()
            if budget is not None and budget <= 0:
                raise self._timed_out(unit)
            done, _ = await asyncio.wait({task}, timeout=budget)
        finally:
            if not task.done():
                task.cancel()
        if not done:
            raise self._timed_out(unit)
        output = task.result()
        return output.value, output.interrupts

    async def _storage_failed(self, error: Exception, config: Any) -> bool:
        """Whether ``error`` came from the storage rather than a node or the evaluator.

        A node that exhausted its retries leaves its error on the thread's pending task; an
        error with no such trace, of a kind worth retrying, is the storage's (and so is one
        where the thread cannot even be read).
        """
        if isinstance(error, (EvaluationTimeoutError, EvaluatorUsageError)):
            return False
        try:
            snapshot = await self.graph.aget_state(config)
        except Exception:
            return True
        if any(task.error is not None for task in snapshot.tasks):
            return False
        return classify_failure(error).transient

    def _results(self, values: Mapping[str, Any]) -> list[EvaluatorResult]:
        score = values.get("score") if isinstance(values, Mapping) else None
        if score is None:
            raise EvaluatorUsageError(
                f"the graph of durable evaluator {self._key!r} ended without a 'score' in its "
                "state; a node must set it to a bool, a number, a Score or an EvaluatorResult"
            )
        if isinstance(score, EvaluatorResult):
            return [score]
        if isinstance(score, Score):
            return [score.to_result(self._key)]
        if isinstance(score, Mapping) and "score" in score:
            return [EvaluatorResult.model_validate({"key": self._key, **score})]
        if isinstance(score, (bool, int, float)):
            return [EvaluatorResult(key=self._key, score=score)]
        raise EvaluatorUsageError(
            f"the graph of durable evaluator {self._key!r} left score={score!r}; expected a "
            "bool, a number, a Score or an EvaluatorResult"
        )

    def _deadline(self, unit: WorkUnit) -> float | None:
        return None if self._timeout is None else unit.enqueued_at + self._timeout

    def _timed_out(self, unit: WorkUnit) -> EvaluationTimeoutError:
        return EvaluationTimeoutError(
            f"evaluation {unit.evaluation_id} took longer than its timeout of {self._timeout:g}s"
        )
