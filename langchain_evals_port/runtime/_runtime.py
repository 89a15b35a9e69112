"""``EvaluationRuntime``: binds agents, records their interactions, runs evaluations.

    runtime = EvaluationRuntime.from_files("evals.yaml", evaluators={"quality": LLMJudge(...)})
    agent = runtime.bind(graph, agent_id="support-agent", roles=["customer-facing"])
    agent.invoke({"messages": [("user", "hi")]})   # recorded; evaluations run afterwards

Every interaction of a bound agent is recorded, sampled or not. Before the call returns, the
record and the work units of the evaluators bound to the agent (by configuration: agent entry,
else role entry, else ``"*"``; sampling deterministic per interaction and evaluator) are
committed to the ledger in one transaction, so a reply the caller received never loses its
evaluations. A background worker then runs them and records each outcome.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import warnings
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from langchain_core.runnables import Runnable

from langchain_evals_port._locations import DEFAULT_LEDGER
from langchain_evals_port.capture import BoundAgent, InteractionCallbackHandler
from langchain_evals_port.capture._records import InteractionRecord
from langchain_evals_port.core import EvalRequest, EvalTracer, current_tracer
from langchain_evals_port.core._tracing import reported_by_caller
from langchain_evals_port.core.errors import EvaluatorUsageError
from langchain_evals_port.storage import Holder, Ledger, SqliteLedger
from langchain_evals_port.storage._records import EvaluationRecord, WorkUnit

from ._config import EvaluationConfig
from ._dispatch import FOREVER, Dispatcher, DispatchSettings
from ._execute import RetryPolicy, UnitExecutor
from ._ids import sampled
from ._registry import RegistrationTarget, registry

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

__all__ = ["EvaluationRuntime", "WaitingEvaluation"]

Input = TypeVar("Input")
Output = TypeVar("Output")

logger = logging.getLogger("langchain_evals_port.runtime")

_OLD_DEFAULT_LEDGER = Path("evals.db")
"""Where earlier releases kept the default ledger."""


class EvaluationRuntime:
    """Online evaluation for bound agents: configuration, ledger, background evaluations.

    Args:
        config: The configuration (an ``EvaluationConfig``, or a mapping with an
            ``evaluation`` section, see RUNTIME-SPEC in the README); ``None`` binds nothing.
        evaluators: The evaluators by configuration id: any evaluator of the package
            (reused: evaluators are stateless), a zero-argument factory returning a fresh
            one per evaluation, a ``DurableEvaluator``, or a ``Registration`` of one of
            those with a ``pass_threshold`` or ``to_request``.
        ledger: Where interactions, evaluations and the work queue live; by default a
            ``SqliteLedger`` on ``.langchain-evals/evals.db`` in the working directory
            (beside the experiment store; ``evals.db`` where an earlier release made one).
        redact: Called on every interaction record before anything is stored; returns the
            record to store (e.g. with personal data masked).
        concurrency: Evaluations running at once in this process.
        evaluation_timeout: Seconds one evaluation may take before it is recorded as failed
            (a durable evaluator sets its own).
        max_attempts: Attempts for evaluations that raise a non-transient error.
        retry_max_age: Seconds during which transient errors (timeouts, connection errors,
            HTTP 429/5xx) are retried with backoff, without using up attempts.
        retry_backoff: The shortest delay before a retry, in seconds (delays grow to half
            the evaluation's age, at most 30 s).
        lease_seconds: Lease on a claimed evaluation; a dead process's evaluations resume
            this long after it died.
        poll_interval: Seconds between looks for work queued by other processes.
        tracer: Reports each recorded evaluation (``on_start``, then ``on_result`` for each
            of its results, named by the evaluator id); by default the ambient tracer at
            construction (OpenTelemetry metrics when configured).
        langsmith_feedback: Also send each recorded outcome as LangSmith feedback on the
            agent's run (``True`` for a bounded default client, or a
            ``LangSmithFeedbackTracer``): a verdict with its score and explanation; an
            inconclusive or failed outcome without a score, its comment saying why
            (``[inconclusive] reason``, ``[failed: code] message``).
        worker_id: Names this process's claims (default: host, pid, a random instance id
            and where and when the process runs: a ``storage.Holder``, as experiments name
            theirs).
        checkpointer: Where durable evaluators keep their steps (an async LangGraph
            checkpointer); by default one on the ledger's storage (the SQLite file, the
            PostgreSQL database, or memory).
        start: Start the background worker now (``False`` records and queues only).

    Raises:
        ConfigurationError: The configuration is invalid or binds an evaluator id that is
            not among ``evaluators`` (the message names the key path).
        EvaluatorUsageError: An entry of ``evaluators`` is not an evaluator, a factory of
            one or a durable evaluator, or a numeric evaluator has no ``pass_threshold``.
        CheckpointerUnavailableError: A durable evaluator is registered, no ``checkpointer``
            is given, and the ledger keeps no checkpoints (it is not ``SupportsCheckpoints``).
    """

    def __init__(
        self,
        config: EvaluationConfig | Mapping[str, Any] | None = None,
        *,
        evaluators: Mapping[str, RegistrationTarget] | None = None,
        ledger: Ledger | None = None,
        redact: Callable[[InteractionRecord], InteractionRecord] | None = None,
        concurrency: int = 8,
        evaluation_timeout: float = 120.0,
        max_attempts: int = 1,
        retry_max_age: float = 600.0,
        retry_backoff: float = 0.5,
        lease_seconds: float = 5.0,
        poll_interval: float = 0.25,
        tracer: EvalTracer | None = None,
        langsmith_feedback: bool | EvalTracer = False,
        worker_id: str | None = None,
        checkpointer: BaseCheckpointSaver[str] | None = None,
        start: bool = True,
    ) -> None:
        self._config = (
            config
            if isinstance(config, EvaluationConfig)
            else EvaluationConfig.from_mapping(config)
        )
        self._registry = registry(evaluators or {}, self._config)
        if evaluation_timeout <= 0:
            raise ValueError(f"evaluation_timeout must be positive, got {evaluation_timeout!r}")
        if redact is not None and not callable(redact):
            raise TypeError(f"redact must be callable, got {redact!r}")
        self._owns_ledger = ledger is None
        self._ledger: Ledger = ledger if ledger is not None else _default_ledger()
        self._redact = redact
        self._tracers = _tracers(tracer, langsmith_feedback)
        self._recent = _RecentInteractions()
        self._executor = UnitExecutor(
            registry=self._registry,
            checkpointer=checkpointer,
            config=lambda: self._config,
            ledger=self._ledger,
            timeout=evaluation_timeout,
            recent=self._recent.get,
            policy=RetryPolicy(
                max_attempts=max_attempts, retry_max_age=retry_max_age, backoff_base=retry_backoff
            ),
        )
        self._dispatcher = Dispatcher(
            self._ledger,
            self._execute,
            self._report,
            self._executor.aclose,
            settings=DispatchSettings(
                concurrency=concurrency, lease_seconds=lease_seconds, poll_interval=poll_interval
            ),
            worker_id=worker_id or _worker_id(),
        )
        self._sink = _RuntimeSink(self)
        self._closed = False
        if start:
            self._dispatcher.start()

    @classmethod
    def from_files(cls, *paths: str | Path, **options: Any) -> EvaluationRuntime:
        """A runtime configured from YAML or TOML files, each layered over the ones before
        (e.g. ``"evals.yaml", "evals.prod.yaml"``); ``options`` as for the constructor."""
        return cls(EvaluationConfig.from_files(*paths), **options)

    # --- accessors ---------------------------------------------------------------------------

    @property
    def ledger(self) -> Ledger:
        """The ledger interactions and evaluations are recorded in."""
        return self._ledger

    @property
    def config(self) -> EvaluationConfig:
        """The validated configuration."""
        return self._config

    # --- binding -------------------------------------------------------------------------

    def bind(
        self, runnable: Runnable[Input, Output], *, agent_id: str, roles: Sequence[str] = ()
    ) -> BoundAgent[Input, Output]:
        """Wrap ``runnable`` (a compiled graph or any Runnable) as agent ``agent_id``.

        The result has the same input and output and records each invoke, ainvoke, stream,
        astream and batch item as one interaction; everything else is delegated.
        """
        return BoundAgent(runnable, sink=self._sink, agent_id=agent_id, roles=_roles(roles))

    def callback_handler(
        self, *, agent_id: str, roles: Sequence[str] = ()
    ) -> InteractionCallbackHandler:
        """A LangChain callback handler recording each root run it sees as an interaction,
        for code that cannot wrap its agent: pass it in ``config={"callbacks": [...]}``."""
        return InteractionCallbackHandler(self._sink, agent_id=agent_id, roles=_roles(roles))

    # --- recording -----------------------------------------------------------------------

    def _record(self, record: InteractionRecord) -> None:
        if self._redact is not None:
            record = self._redact(record)
            if not isinstance(record, InteractionRecord):
                raise EvaluatorUsageError(
                    f"redact must return an InteractionRecord, got {record!r}"
                )
        units = self._units_for(record)
        self._ledger.record_interaction(record, units)
        if units:
            self._recent.put(record)
            self._dispatcher.notify()

    def _units_for(self, record: InteractionRecord) -> list[WorkUnit]:
        if record.evaluation_traffic:
            return []
        now = time.time()
        units = []
        for binding in self._config.bindings_for(record.agent_id, record.roles):
            if record.status == "failed" and not binding.trigger_on_failure:
                continue
            if record.status == "interrupted" and not binding.trigger_on_interrupt:
                continue
            if not sampled(record.interaction_id, binding.evaluator_id, binding.sampling_ratio):
                continue
            units.append(
                WorkUnit.queued(
                    binding.evaluator_id, record, trigger="on_interaction", enqueued_at=now
                )
            )
        return units

    # --- evaluations ---------------------------------------------------------------------

    def evaluate_now(
        self,
        evaluator_id: str,
        interaction_id: str,
        trigger_attributes: Mapping[str, str] | None = None,
    ) -> str:
        """Queue an evaluation of a recorded interaction by hand (trigger ``manual``).

        Sampling and bindings do not apply. The same evaluator, interaction and trigger
        attributes give the same evaluation id, recorded once; pass distinct
        ``trigger_attributes`` (e.g. a prompt version) to evaluate again.

        Returns:
            The evaluation id, for ``ledger.get_evaluation``.

        Raises:
            EvaluatorUsageError: No evaluator with this id is registered.
            InteractionNotFoundError: The ledger holds no such interaction.
        """
        if evaluator_id not in self._registry:
            raise EvaluatorUsageError(
                f"evaluator_id: no evaluator {evaluator_id!r} is registered "
                f"(registered: {sorted(self._registry)})"
            )
        attributes = dict(trigger_attributes or {})
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in attributes.items()):
            raise EvaluatorUsageError(
                f"trigger_attributes must map str to str, got {trigger_attributes!r}"
            )
        record = self._ledger.get_interaction(interaction_id)
        unit = WorkUnit.queued(
            evaluator_id, record, trigger="manual", trigger_attributes=attributes
        )
        self._ledger.enqueue([unit])
        self._dispatcher.notify()
        return unit.evaluation_id

    def waiting_evaluations(self, interaction_id: str | None = None) -> list[WaitingEvaluation]:
        """Durable evaluations waiting for a person (of one interaction, or all), each with
        the question its step asked; answer one with ``resume``."""
        return [
            WaitingEvaluation(
                evaluation_id=unit.evaluation_id,
                evaluator_id=unit.evaluator_id,
                interaction_id=unit.interaction_id,
                agent_id=unit.agent_id,
                question=unit.question,
                deadline=_deadline(unit),
            )
            for unit in self._ledger.waiting_work(interaction_id)
        ]

    def resume(self, evaluation_id: str, value: Any) -> None:
        """Continue a durable evaluation that waits for a person (a step that called
        LangGraph's ``interrupt``), handing ``value`` to that step.

        Raises:
            EvaluatorUsageError: No evaluation with this id is waiting, or ``value`` is
                ``None`` (which LangGraph reads as "no answer"; send e.g. ``{"skip": True}``).
        """
        if value is None:
            raise EvaluatorUsageError(
                "value must not be None: LangGraph cannot resume an interrupt with None"
            )
        if not self._ledger.resume(evaluation_id, value):
            raise EvaluatorUsageError(
                f"evaluation_id: no evaluation {evaluation_id!r} is waiting to be resumed"
            )
        self._dispatcher.notify()

    def wait_for_evaluations(
        self, interaction_id: str, timeout: float = 30.0
    ) -> list[EvaluationRecord]:
        """Wait until no evaluation of ``interaction_id`` is queued or running; its records.

        Raises:
            TimeoutError: Evaluations were still pending after ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        while self._ledger.pending_work(interaction_id):
            if time.monotonic() >= deadline:
                raise _still_pending(self._ledger, interaction_id, timeout)
            time.sleep(0.01)
        return self._ledger.get_evaluations(interaction_id)

    async def await_evaluations(
        self, interaction_id: str, timeout: float = 30.0
    ) -> list[EvaluationRecord]:
        """The async twin of ``wait_for_evaluations``."""
        deadline = time.monotonic() + timeout
        while await asyncio.to_thread(self._ledger.pending_work, interaction_id):
            if time.monotonic() >= deadline:
                raise _still_pending(self._ledger, interaction_id, timeout)
            await asyncio.sleep(0.01)
        return await asyncio.to_thread(self._ledger.get_evaluations, interaction_id)

    def start(self) -> None:
        """Start the background worker (done by the constructor unless ``start=False``)."""
        self._dispatcher.start()

    def close(self, timeout: float = 10.0, *, drain: bool = True) -> None:
        """Stop the background worker within about ``timeout`` seconds.

        With ``drain`` (the default) it first finishes the evaluations that are due; without
        (a worker shutting down while others carry on) it claims nothing more and lets the
        running ones finish. Evaluations still running at the deadline are handed back to
        the ledger, where the next runtime on it (or another process) picks them up. A
        ledger the runtime made itself is closed.
        """
        if self._closed:
            return
        self._closed = True
        deadline = time.monotonic() + timeout
        if drain:
            self._dispatcher.drain(timeout)
        self._dispatcher.stop(grace=max(0.0, deadline - time.monotonic()))
        for tracer in self._tracers:
            flush = getattr(tracer, "flush", None)
            if callable(flush):
                flush(timeout)
        if self._owns_ledger:
            self._ledger.close()

    def __enter__(self) -> EvaluationRuntime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the worker's side ---------------------------------------------------------------

    async def _execute(self, unit: WorkUnit) -> EvaluationRecord:
        if self._tracers:
            request = EvalRequest.of(
                inputs={"interaction_id": unit.interaction_id, "agent_id": unit.agent_id}
            )
            for tracer in self._tracers:
                try:
                    tracer.on_start(unit.evaluator_id, request)
                except Exception:  # a broken tracer never changes an evaluation
                    logger.exception("tracer %r failed on start", tracer)
        # ``_report`` publishes the recorded outcome, once and tagged with the agent; an
        # offline evaluator or judge called inside must not add its own measurement.
        with reported_by_caller():
            return await self._executor.run(unit)

    async def _report(self, record: EvaluationRecord) -> None:
        if not self._tracers:
            return
        run_id = await asyncio.to_thread(self._run_id, record.interaction_id)
        ids: dict[str, Any] = {
            "agent": record.agent_id,
            "evaluation_id": record.evaluation_id,
            "interaction_id": record.interaction_id,
        }
        if record.control_id is not None:
            ids["control_id"] = record.control_id
        if run_id is not None:
            ids["run_id"] = run_id
        for result in record.results:
            # The record keeps the result as the evaluator gave it; tracers also see ids.
            reported = result.model_copy(update={"metadata": {**result.metadata, **ids}})
            for tracer in self._tracers:
                try:
                    tracer.on_result(record.evaluator_id, reported)
                except Exception:  # a broken tracer never holds up the worker
                    logger.exception("tracer %r failed on a result", tracer)

    def _run_id(self, interaction_id: str) -> str | None:
        recent = self._recent.get(interaction_id)
        record = recent if recent is not None else self._ledger.get_interaction(interaction_id)
        return record.run_id


@dataclass(frozen=True)
class WaitingEvaluation:
    """A durable evaluation waiting for a person: what it asked, and until when."""

    evaluation_id: str
    evaluator_id: str
    interaction_id: str
    agent_id: str
    question: Any
    deadline: float | None
    """Epoch seconds at which it times out unanswered (``None``: never)."""


class _RecentInteractions:
    """The interactions this process recorded last, for its own evaluators to read without
    going back to the ledger (records are immutable, so sharing them is safe)."""

    def __init__(self, size: int = 1024) -> None:
        self._size = size
        self._records: OrderedDict[str, InteractionRecord] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, record: InteractionRecord) -> None:
        with self._lock:
            self._records[record.interaction_id] = record
            if len(self._records) > self._size:
                self._records.popitem(last=False)

    def get(self, interaction_id: str) -> InteractionRecord | None:
        with self._lock:
            return self._records.get(interaction_id)


class _RuntimeSink:
    """The runtime as the ``InteractionSink`` its bound agents record into."""

    def __init__(self, runtime: EvaluationRuntime) -> None:
        self._runtime = runtime

    def record(self, record: InteractionRecord) -> None:
        self._runtime._record(record)

    async def arecord(self, record: InteractionRecord) -> None:
        await asyncio.to_thread(self._runtime._record, record)


def _deadline(unit: WorkUnit) -> float | None:
    """When a parked unit times out; ``None`` for one parked without a deadline (the
    dispatcher parks those for a century)."""
    return None if unit.not_before - time.time() > FOREVER / 2 else unit.not_before


def _roles(roles: Sequence[str]) -> tuple[str, ...]:
    if isinstance(roles, str) or not all(isinstance(role, str) for role in roles):
        raise EvaluatorUsageError(f"roles must be a list of str, got {roles!r}")
    return tuple(roles)


def _tracers(tracer: EvalTracer | None, langsmith_feedback: bool | EvalTracer) -> list[EvalTracer]:
    tracers = [t for t in (tracer or current_tracer(),) if t is not None]
    if langsmith_feedback is True:
        # Here, not at the top: it loads langsmith.testing, which imports pytest.
        from langchain_evals_port.integrations.langsmith import LangSmithFeedbackTracer

        tracers.append(LangSmithFeedbackTracer())
    elif langsmith_feedback is not False:
        tracers.append(langsmith_feedback)
    return tracers


def _default_ledger() -> Ledger:
    """The ledger in the one default folder; an ``evals.db`` an earlier release made in the
    working directory is kept on, with a warning, rather than left behind."""
    if _OLD_DEFAULT_LEDGER.is_file() and not DEFAULT_LEDGER.exists():
        warnings.warn(
            f"using the ledger {_OLD_DEFAULT_LEDGER} that an earlier release made; the default "
            f"is now {DEFAULT_LEDGER} (move the file there to keep it)",
            DeprecationWarning,
            stacklevel=3,
        )
        return SqliteLedger(_OLD_DEFAULT_LEDGER)
    DEFAULT_LEDGER.parent.mkdir(parents=True, exist_ok=True)
    return SqliteLedger(DEFAULT_LEDGER)


def _worker_id() -> str:
    return str(Holder.current())


def _still_pending(ledger: Ledger, interaction_id: str, timeout: float) -> TimeoutError:
    pending = ledger.pending_work(interaction_id)
    return TimeoutError(
        f"{pending} evaluation(s) of interaction {interaction_id!r} still pending after {timeout}s"
    )
