"""Unit testing durable evaluators: one evaluation in-process, with node failures, restarts and
answers to ``interrupt``.

``DurableTestKit(evaluator)`` runs a ``DurableEvaluator`` on one interaction the way the
runtime does — the runtime's own executor and ``DurableEngine``, with LangGraph's
``InMemorySaver`` as the checkpointer — and ``run`` reports what happened: the record the
runtime would store (``run.record``, ``None`` while a node waits in ``interrupt``), the
question it waits on (``run.question``) and the nodes that ran, every attempt counted
(``run.nodes_run``). ``run`` can also:

* make a node fail: ``fail={"judge": 2}`` raises ``InjectedNodeFailure`` at the start of
  the first two attempts of node ``judge``, before its code runs, so its ``RetryPolicy`` is
  exercised (or give the exceptions to raise, in turn: ``fail={"judge": [TimeoutError()]}``);
* simulate restarts between nodes: ``restart_after=["judge"]`` stops the graph once ``judge``
  has completed (LangGraph's ``interrupt_after``) and carries on with a freshly compiled graph
  and a fresh executor on the same checkpointer, as a new process would (``True``: after
  every node); from the first restart on, ``config_after_restart`` is the configuration (a
  redeploy);
* answer the nodes that wait in ``interrupt()``: ``resume=["yes"]``, or later with
  ``run.resume("yes")``.

Example:
    >>> from typing import Any, TypedDict
    >>> from langgraph.graph import START, StateGraph
    >>> from langgraph.runtime import Runtime
    >>> from langgraph.types import RetryPolicy
    >>> from langchain_evals_port import Score
    >>> from langchain_evals_port.runtime import EvaluationContext, InteractionRecord
    >>> from langchain_evals_port.runtime.durable import DurableEvaluator
    >>> class State(TypedDict, total=False):
    ...     score: object  # a Score, once the judge has run
    >>> def judge(state: State, runtime: Runtime[EvaluationContext]) -> dict[str, Any]:
    ...     reply = runtime.context.interaction().final_response_text
    ...     return {"score": Score(len(reply) >= 3, f"{len(reply)} characters")}
    >>> builder = (
    ...     StateGraph(State, context_schema=EvaluationContext)
    ...     .add_node("judge", judge, retry_policy=RetryPolicy(initial_interval=0, jitter=False))
    ...     .add_edge(START, "judge")
    ... )
    >>> kit = DurableTestKit(DurableEvaluator(builder), evaluator_id="replied")
    >>> interaction = InteractionRecord(interaction_id="i-1", agent_id="bot", output_text="Hi!")
    >>> run = kit.run(interaction, fail={"judge": 2})
    >>> run.nodes_run, run.record.passed, run.record.result.comment
    (('judge', 'judge', 'judge'), True, '3 characters')
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langgraph.checkpoint.memory import InMemorySaver

from langchain_evals_port.capture._records import InteractionRecord
from langchain_evals_port.core._calls import run_awaitable
from langchain_evals_port.runtime._config import EvaluationConfig
from langchain_evals_port.runtime._execute import Park, RetryPolicy, UnitExecutor
from langchain_evals_port.runtime._registry import Registered, Registration, registry
from langchain_evals_port.storage import InMemoryLedger
from langchain_evals_port.storage._queue import resumed_unit
from langchain_evals_port.storage._records import EvaluationRecord, WorkUnit

from ._engine import DurableEngine
from ._evaluator import DurableEvaluator

__all__ = ["DurableRun", "DurableTestKit", "InjectedNodeFailure"]


class InjectedNodeFailure(Exception):
    """The failure ``fail={node: n}`` raises at the start of a node's first ``n`` attempts
    (LangGraph's default ``RetryPolicy`` retries it)."""

    def __init__(self, node: str, number: int) -> None:
        super().__init__(f"injected failure {number} of node {node!r}")
        self.node = node


class _Restart(BaseException):
    """The graph stopped after a node named in ``restart_after``: the kit's process "stops"
    (a ``BaseException``, so the engine cleans nothing up, as in a real stop)."""


class _Probe(BaseCallbackHandler):
    """Watches the graph's runs: records each node run (a direct child of a graph run) and
    raises the failures injected into it, before the node's code runs."""

    raise_error = True
    run_inline = True

    def __init__(self, failures: Mapping[str, list[BaseException]]) -> None:
        self.failures = {node: list(errors) for node, errors in failures.items()}
        self.nodes_run: list[str] = []
        self._runs: set[UUID] = set()
        self._graph_runs: set[UUID] = set()

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        """Count a node run, and fail it when a failure is still to be injected."""
        if parent_run_id is None or parent_run_id not in self._runs:
            self._graph_runs.add(run_id)  # the graph's own run: its children are the nodes
        self._runs.add(run_id)
        if parent_run_id not in self._graph_runs or name is None or name.startswith("__"):
            return
        self.nodes_run.append(name)
        pending = self.failures.get(name)
        if pending:
            raise pending.pop(0)


class _KitEngine(DurableEngine):
    """The ``DurableEngine``, watched by the probe and stopped after the restart nodes."""

    def __init__(
        self,
        evaluator: DurableEvaluator,
        probe: _Probe,
        restart_after: Sequence[str] | bool,
        **options: Any,
    ) -> None:
        super().__init__(evaluator, **options)
        graph = self.graph
        if restart_after:
            stops: Any = "*" if restart_after is True else list(restart_after)
            graph = evaluator.builder.compile(
                checkpointer=options["checkpointer"],
                name=options["evaluator_id"],
                interrupt_after=stops,
            )
        self.graph = graph.with_config(callbacks=[probe])

    async def _advance(self, unit: WorkUnit, config: Any) -> tuple[Mapping[str, Any], Any]:
        values, interrupts = await super()._advance(unit, config)
        if not interrupts and (await self.graph.aget_state(config)).next:
            raise _Restart  # stopped by ``interrupt_after``, with nodes still to run
        return values, interrupts


class _KitExecutor(UnitExecutor):
    """The runtime's executor (outcomes, failures, thresholds) on the kit's engine."""

    def __init__(self, session: _Session) -> None:
        super().__init__(
            registry=session.registry,
            config=lambda: session.config,
            ledger=session.ledger,
            timeout=3600.0,  # plain evaluations only; a durable one has its own
            policy=RetryPolicy(max_attempts=1, retry_max_age=0.0),
            checkpointer=session.checkpointer,
        )
        self._session = session
        self._made: DurableEngine | None = None

    async def _engine(self, registered: Registered) -> DurableEngine:
        if self._made is None:
            assert registered.durable is not None
            self._made = _KitEngine(
                registered.durable,
                self._session.probe,
                self._session.restart_after,
                evaluator_id=registered.evaluator_id,
                checkpointer=self._session.checkpointer,
                ledger=self._session.ledger,
                context=self.context,
                record=lambda unit, results: self._durable_record(registered, unit, results),
            )
        return self._made


@dataclass
class _Session:
    """One evaluation the kit runs, kept for ``DurableRun.resume``."""

    unit: WorkUnit
    registry: Mapping[str, Registered]
    config: EvaluationConfig
    config_after_restart: EvaluationConfig | None
    restart_after: Sequence[str] | bool
    probe: _Probe
    ledger: InMemoryLedger
    checkpointer: InMemorySaver = field(default_factory=InMemorySaver)
    restarts: int = 0

    async def drive(self, unit: WorkUnit, answers: Sequence[Any]) -> DurableRun:
        """Run ``unit`` (restarting, and answering with ``answers``) until it is recorded or
        waits for an answer it was not given."""
        pending = list(answers)
        while True:
            executor = _KitExecutor(self)  # a fresh process: a freshly compiled graph
            try:
                record = await executor.run(unit)
            except _Restart:
                self.restarts += 1
                if self.config_after_restart is not None:
                    self.config = self.config_after_restart
                continue
            except Park as park:
                if pending:
                    unit = resumed_unit(unit, pending.pop(0))
                    continue
                return self._result(None, park.question)
            return self._result(record, None)

    def _result(self, record: EvaluationRecord | None, question: Any) -> DurableRun:
        return DurableRun(
            record=record,
            question=question,
            nodes_run=tuple(self.probe.nodes_run),
            restarts=self.restarts,
            _session=self,
        )


@dataclass(frozen=True)
class DurableRun:
    """What one durable evaluation did in the test kit, so far.

    Attributes:
        record: The evaluation record as the runtime would store it: its ``results``,
            ``outcome`` and ``passed`` (``None`` while a node waits in ``interrupt``). A node
            that exhausted its retries, or the evaluation timing out, is a ``failed`` result
            with its reason code.
        question: What the waiting node passed to ``interrupt`` (``None`` unless waiting).
        nodes_run: The nodes that ran, in order, every attempt counted (a node that waited in
            ``interrupt`` and was resumed ran twice).
        restarts: How many simulated restarts happened.
    """

    __test__ = False  # not a pytest test class

    record: EvaluationRecord | None
    question: Any
    nodes_run: tuple[str, ...]
    restarts: int
    _session: _Session = field(repr=False, compare=False)

    @property
    def waiting(self) -> bool:
        """Whether a node waits in ``interrupt`` for an answer (see ``resume``)."""
        return self.record is None

    @property
    def evaluation_id(self) -> str:
        """The evaluation's id, which is also its LangGraph thread id."""
        return self._session.unit.evaluation_id

    @property
    def thread_kept(self) -> bool:
        """Whether the checkpointer still holds the evaluation's thread (the engine deletes
        it once the outcome is recorded)."""
        config: Any = {"configurable": {"thread_id": self.evaluation_id}}
        return self._session.checkpointer.get_tuple(config) is not None

    def resume(self, value: Any) -> DurableRun:
        """Answer the waiting node with ``value`` (``interrupt``'s return value) and continue,
        as ``runtime.resume`` does."""
        return run_awaitable(
            self.aresume(value), name="resume", hint="use `await run.aresume(...)`"
        )

    async def aresume(self, value: Any) -> DurableRun:
        """``resume`` inside the running event loop."""
        if not self.waiting:
            raise ValueError("only an evaluation waiting in interrupt() can be resumed")
        if value is None:
            raise ValueError("value must not be None: LangGraph reads None as no answer")
        return await self._session.drive(resumed_unit(self._session.unit, value), ())


class DurableTestKit:
    """Runs one durable evaluator in-process, on an in-memory checkpointer.

    Args:
        evaluator: The durable evaluator under test.
        evaluator_id: Its configuration id (the key of its results unless it names one).
        config: The evaluator's properties and reserved keys as its configuration entry
            would hold them (what ``runtime.context.config`` reads; ``pass_threshold`` and
            ``control_id`` apply as in the runtime).
        pass_threshold: The registration's threshold for a numeric score.
    """

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        evaluator: DurableEvaluator,
        *,
        evaluator_id: str = "durable-evaluator",
        config: Mapping[str, Any] | None = None,
        pass_threshold: float | None = None,
    ) -> None:
        if not isinstance(evaluator, DurableEvaluator):
            raise TypeError(f"evaluator must be a DurableEvaluator, got {evaluator!r}")
        self.evaluator = evaluator
        self.evaluator_id = evaluator_id
        self.config = dict(config or {})
        self.pass_threshold = pass_threshold

    def run(
        self,
        interaction: InteractionRecord,
        *,
        fail: Mapping[str, int | Sequence[BaseException]] | None = None,
        restart_after: Collection[str] | bool = (),
        config_after_restart: Mapping[str, Any] | None = None,
        resume: Sequence[Any] = (),
        trigger_attributes: Mapping[str, str] | None = None,
    ) -> DurableRun:
        """Evaluate ``interaction`` (in a fresh event loop) until the outcome is recorded or
        a node waits for an answer.

        Args:
            interaction: The interaction under evaluation (what ``interaction()`` returns).
            fail: Node name → how many of its attempts fail with ``InjectedNodeFailure``,
                or the exceptions its attempts raise in turn, before the node's code runs.
            restart_after: Simulate a process restart after each run of these nodes
                (``True``: after every node).
            config_after_restart: The evaluator's configuration from the first restart on.
            resume: Answers, in turn, for the nodes that wait in ``interrupt``.
            trigger_attributes: The attributes identifying this evaluation.
        """
        return run_awaitable(
            self.arun(
                interaction,
                fail=fail,
                restart_after=restart_after,
                config_after_restart=config_after_restart,
                resume=resume,
                trigger_attributes=trigger_attributes,
            ),
            hint="use `await harness.arun(...)`",
            name="run",
        )

    async def arun(
        self,
        interaction: InteractionRecord,
        *,
        fail: Mapping[str, int | Sequence[BaseException]] | None = None,
        restart_after: Collection[str] | bool = (),
        config_after_restart: Mapping[str, Any] | None = None,
        resume: Sequence[Any] = (),
        trigger_attributes: Mapping[str, str] | None = None,
    ) -> DurableRun:
        """``run`` inside the running event loop."""
        if not isinstance(interaction, InteractionRecord):
            raise TypeError(f"interaction must be an InteractionRecord, got {interaction!r}")
        if isinstance(restart_after, str):
            raise TypeError(f"restart_after takes node names, e.g. [{restart_after!r}]")
        if config_after_restart is not None and not restart_after:
            raise ValueError("config_after_restart needs restart_after")
        if isinstance(resume, (str, bytes)):
            raise TypeError("resume takes a sequence of answers, one per interrupt, e.g. ['yes']")
        config = self._configuration(self.config)
        attributes = dict(trigger_attributes or {})
        unit = WorkUnit.queued(
            self.evaluator_id, interaction, trigger="manual", trigger_attributes=attributes
        )
        registration = Registration(self.evaluator, pass_threshold=self.pass_threshold)
        session = _Session(
            unit=unit,
            registry=registry({self.evaluator_id: registration}, config),
            config=config,
            config_after_restart=(
                None if config_after_restart is None else self._configuration(config_after_restart)
            ),
            restart_after=restart_after if isinstance(restart_after, bool) else [*restart_after],
            probe=_Probe(_failures(fail or {})),
            ledger=InMemoryLedger().seed(interaction),
        )
        return await session.drive(unit, resume)

    def _configuration(self, properties: Mapping[str, Any]) -> EvaluationConfig:
        entry = {self.evaluator_id: dict(properties)}
        return EvaluationConfig.from_mapping({"evaluation": {"evaluators": entry}})


def _failures(fail: Mapping[str, int | Sequence[BaseException]]) -> dict[str, list[BaseException]]:
    failures: dict[str, list[BaseException]] = {}
    for node, spec in fail.items():
        if isinstance(spec, int) and not isinstance(spec, bool) and spec >= 0:
            failures[node] = [InjectedNodeFailure(node, n) for n in range(1, spec + 1)]
        elif isinstance(spec, Sequence) and all(isinstance(e, BaseException) for e in spec):
            failures[node] = list(spec)
        else:
            raise ValueError(
                f"fail[{node!r}] must be a count of at least 0 or a list of exceptions, "
                f"got {spec!r}"
            )
    return failures
