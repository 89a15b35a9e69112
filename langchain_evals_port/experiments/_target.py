"""``Target``: the application an experiment runs on each case, with its trajectory captured.

Any Runnable, compiled LangGraph graph, plain or async function, or a ``"module:attr"`` string
naming one becomes a ``Target``. Each run goes through the online runtime's capture machinery
(``capture.BoundAgent``), so what the app did — its messages, tool calls and results,
token usage, timing, and the exception if it raised — is the same ``InteractionRecord`` the
runtime records in production, and trajectory evaluators and cost figures need no extra code.
A graph runs each case on its own thread (``configurable.thread_id`` = case id and trial).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias, cast

from langchain_core.callbacks import AsyncCallbackManagerForChainRun, BaseCallbackHandler
from langchain_core.load import Serializable, load
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.runnables.config import (
    ensure_config,
    get_async_callback_manager_for_config,
    patch_config,
    set_config_context,
)
from langchain_core.runnables.utils import (
    accepts_config,
    accepts_run_manager,
    coro_with_context,
    is_async_generator,
)
from pydantic import BaseModel, ConfigDict, ValidationInfo, field_serializer, field_validator
from pydantic_core import to_jsonable_python

from langchain_evals_port.capture import BoundAgent, InteractionRecord, TokenUsage
from langchain_evals_port.core._langchain_internals import (
    no_callback_handlers,
    suppress_langchain_beta_warning,
    var_child_runnable_config,
)
from langchain_evals_port.core._specs import import_spec
from langchain_evals_port.core.errors import EvaluatorUsageError

__all__ = ["Target", "TargetLike", "TargetRun"]

TargetLike: TypeAlias = "Runnable[Any, Any] | Callable[[Any], Any] | str"
"""What can be run over a dataset: a Runnable or compiled graph, a function of the case's
inputs (plain or async), or ``"module:attr"`` naming one of those."""


class TargetRun(BaseModel):
    """What the target did for one case; it stores and loads itself as JSON (the store
    keeps it so, and ``ExperimentResult`` round-trips through it).

    Attributes:
        outputs: What it returned (``None`` when it raised). In JSON, LangChain messages take
            langchain-core's serialization and come back as messages; anything else is
            written as pydantic writes it or, failing that, as its ``repr``.
        interaction: Everything captured: input and transcript messages, each model response
            with its token usage, tool calls with their results, timing, and the failure.
    """

    model_config = ConfigDict(frozen=True)

    outputs: Any = None
    interaction: InteractionRecord

    @field_serializer("outputs", when_used="json")
    def _outputs_as_json(self, outputs: Any) -> Any:
        return _jsonable(outputs)

    @field_validator("outputs", mode="before")
    @classmethod
    def _outputs_from_json(cls, outputs: Any, info: ValidationInfo) -> Any:
        return _revived(outputs) if info.mode == "json" else outputs

    @property
    def failed(self) -> bool:
        """Whether the target raised for this case."""
        return self.interaction.failed

    @property
    def latency(self) -> float:
        """Seconds from the call to its return (or exception)."""
        return (self.interaction.ended_at - self.interaction.started_at).total_seconds()

    @property
    def usage(self) -> TokenUsage:
        """The tokens all of the run's model calls consumed, added up."""
        usages = [r.usage for r in self.interaction.responses if r.usage is not None]
        return TokenUsage(
            input_tokens=sum(u.input_tokens for u in usages),
            output_tokens=sum(u.output_tokens for u in usages),
            total_tokens=sum(u.total_tokens for u in usages),
        )


class Target:
    """An application to run over a dataset's cases.

    Args:
        app: A Runnable or compiled LangGraph graph (invoked with the case's inputs), a
            function of the inputs (``def app(inputs)`` or ``async def``), or
            ``"module:attr"`` naming one of those.
        name: The name runs are recorded under, and experiments named after (default: the
            app's own name: a function's, or a graph's ``compile(name=...)``; for an app
            given as ``"module:attr"`` whose name is only its kind's default, such as
            LangGraph's ``"LangGraph"``, that ``"module:attr"``, so experiments of different
            graphs are never taken for runs of one target).

    Example:
        >>> target = Target(lambda inputs: inputs["question"].upper())
        >>> run = target.run({"question": "hi"}, case_id="c-1")
        >>> run.outputs, run.failed, run.interaction.output_text
        ('HI', False, 'HI')
    """

    def __init__(self, app: TargetLike, *, name: str | None = None) -> None:
        runnable = _runnable(import_spec(app, "target") if isinstance(app, str) else app)
        self.name = name or _name(runnable, app)
        self.runnable = runnable
        self._called = _AsyncFunction.of(runnable) or runnable

    def __repr__(self) -> str:
        return f"Target({self.name!r})"

    async def arun(self, inputs: Any, *, case_id: str, trial: int = 0) -> TargetRun:
        """Run the app on one case; an exception it raises (``SystemExit`` too) is recorded,
        never raised. A ``KeyboardInterrupt`` is recorded, then raised: it stops the run."""
        agent, collected, config = self._call(case_id, trial)
        try:
            outputs = await agent.ainvoke(inputs, config)
        except (Exception, SystemExit):  # sys.exit() in the app fails this run, no more
            outputs = None  # the record holds the failure
        return TargetRun(outputs=outputs, interaction=collected.only())

    def run(self, inputs: Any, *, case_id: str, trial: int = 0) -> TargetRun:
        """``arun`` for synchronous code (an async app needs ``arun``)."""
        agent, collected, config = self._call(case_id, trial)
        try:
            outputs = agent.invoke(inputs, config)
        except (Exception, SystemExit):
            outputs = None  # the record holds the failure
        return TargetRun(outputs=outputs, interaction=collected.only())

    def _call(
        self, case_id: str, trial: int
    ) -> tuple[BoundAgent[Any, Any], _Collected, RunnableConfig]:
        """The app bound to a sink of its own (one record per run), on the case's thread."""
        collected = _Collected()
        agent = BoundAgent(self._called, sink=collected, agent_id=self.name)
        config: RunnableConfig = {
            "configurable": {"thread_id": f"{case_id}:{trial}"},
            "run_name": self.name,
        }
        return agent, collected, config


class _Collected:
    """The interaction sink of one run: it keeps the one record the run produced."""

    def __init__(self) -> None:
        self.records: list[InteractionRecord] = []

    def record(self, record: InteractionRecord) -> None:
        self.records.append(record)

    async def arecord(self, record: InteractionRecord) -> None:
        self.records.append(record)

    def only(self) -> InteractionRecord:
        (record,) = self.records
        return record


class _AsyncFunction(Runnable[Any, Any]):
    """A ``RunnableLambda`` of a coroutine function, called as LangChain calls it — a chain
    run with the callbacks' start, end and error events, the function run in a task of its
    own with the child config as its context, ``config`` and ``run_manager`` passed when it
    takes them, a returned Runnable invoked — minus the four ``inspect.signature`` calls
    LangChain makes per call to learn what the function takes: that is read once here
    (measured: more than a third of a function target's capture CPU per run)."""

    def __init__(self, runnable: RunnableLambda[Any, Any]) -> None:
        self.runnable = runnable
        self.function = cast("Callable[..., Awaitable[Any]]", runnable.afunc)
        self.takes_config = accepts_config(self.function)
        self.takes_run_manager = accepts_run_manager(self.function)

    @classmethod
    def of(cls, runnable: Runnable[Any, Any]) -> _AsyncFunction | None:
        """The direct call of ``runnable`` when it is a plain ``RunnableLambda`` of a
        coroutine function (not a generator); ``None`` for anything else."""
        if type(runnable) is not RunnableLambda or hasattr(runnable, "func"):
            return None
        function = getattr(runnable, "afunc", None)
        if function is None or is_async_generator(function):
            return None
        return cls(runnable)

    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        """The wrapped ``RunnableLambda``'s name."""
        return self.runnable.get_name(suffix, name=name)

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """``RunnableLambda.invoke`` (which refuses a coroutine function)."""
        return self.runnable.invoke(input, config, **kwargs)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """``RunnableLambda.ainvoke`` (``Runnable._acall_with_config`` and
        ``RunnableLambda._ainvoke``), step for step. The config is the one ``BoundAgent``
        has just made with ``ensure_config`` for this call alone (``Target`` is the only
        caller), so it is used as it is instead of being copied again."""
        config = ensure_config(config) if config is None else config
        run_manager = _unheard_run(config)
        if run_manager is None:
            callback_manager = get_async_callback_manager_for_config(config)
            run_manager = await callback_manager.on_chain_start(
                None,
                input,
                name=config.get("run_name") or self.get_name(),
                run_id=config.pop("run_id", None),
            )
            heard = True
        else:
            heard = False  # no handler takes chain events: there is no one to tell
        try:
            child_config = patch_config(config, callbacks=run_manager.get_child())
            if heard:
                with set_config_context(child_config) as context:
                    call = self._call(input, child_config, run_manager, **kwargs)
                    output = await coro_with_context(call, context)
            else:
                output = await self._unheard_call(input, child_config, run_manager, **kwargs)
        except BaseException as error:
            if heard:
                await run_manager.on_chain_error(error)
            raise
        if heard:
            await run_manager.on_chain_end(output)
        return output

    async def _unheard_call(
        self, input: Any, config: RunnableConfig, run_manager: Any, **kwargs: Any
    ) -> Any:
        """``_call`` in the caller's task, for a run no handler hears of: LangChain gives the
        function a task of its own so that a tracer's parent run follows it, and with no
        tracer there is nothing to follow (measured: a task, a context copy and the
        tracing context's resets are about a twentieth of a function target's CPU per
        run). Nested runnables still find ``config`` as their parent's; a context variable
        the function sets and leaves set stays set in its run's task, where the run is scored
        (LangChain's task would drop it)."""
        token = var_child_runnable_config.set(config)
        try:
            return await self._call(input, config, run_manager, **kwargs)
        finally:
            var_child_runnable_config.reset(token)

    async def _call(
        self, input: Any, config: RunnableConfig, run_manager: Any, **kwargs: Any
    ) -> Any:
        if self.takes_config:
            kwargs["config"] = patch_config(config, callbacks=run_manager.get_child())
        if self.takes_run_manager:
            kwargs["run_manager"] = run_manager
        output = await self.function(input, **kwargs)
        if isinstance(output, Runnable):
            recursion_limit = config["recursion_limit"]
            if recursion_limit <= 0:
                raise RecursionError(
                    f"Recursion limit reached when invoking {self.runnable} with input {input}."
                )
            output = await output.ainvoke(
                input,
                patch_config(
                    config, callbacks=run_manager.get_child(), recursion_limit=recursion_limit - 1
                ),
            )
        return output


def _unheard_run(config: RunnableConfig) -> AsyncCallbackManagerForChainRun | None:
    """The run manager of a chain run no handler hears of — the config's callbacks a list of
    handlers that all ignore chain events (``BoundAgent``'s capture), and nothing else that
    LangChain's ``configure`` would add (tracing, debug, a hook) — made as ``on_chain_start``
    makes it, without the events nobody takes; ``None`` otherwise. (Measured: configuring
    the manager and its start and end events are about a sixth of a run's CPU.)"""
    handlers = config.get("callbacks")
    if not isinstance(handlers, list) or not all(
        isinstance(handler, BaseCallbackHandler) and handler.ignore_chain for handler in handlers
    ):
        return None
    if not no_callback_handlers({**config, "callbacks": None}):
        return None
    tags = list(config.get("tags") or [])
    metadata = dict(config.get("metadata") or {})
    return AsyncCallbackManagerForChainRun(
        run_id=config.pop("run_id", None) or uuid.uuid4(),
        handlers=list(handlers),
        inheritable_handlers=list(handlers),
        parent_run_id=None,
        tags=tags,
        inheritable_tags=list(tags),
        metadata=metadata,
        inheritable_metadata=dict(metadata),
    )


def _runnable(app: Any) -> Runnable[Any, Any]:
    if isinstance(app, Runnable):
        return app
    if callable(app):
        return RunnableLambda(app)
    raise EvaluatorUsageError(
        "target: expected a Runnable, a compiled graph, a function of the inputs or "
        f"'module:attr'; got {app!r}"
    )


_DEFAULT_NAMES = frozenset({"LangGraph"})
"""Names an app has when nobody named it, besides its class's name (a compiled graph's)."""


def _name(runnable: Runnable[Any, Any], app: TargetLike) -> str:
    """The app's own name, or the ``"module:attr"`` it was given as when that name is only
    the default of its kind."""
    own = runnable.get_name()
    generic = own in _DEFAULT_NAMES or own == type(runnable).__name__
    return app if isinstance(app, str) and generic else own


def _jsonable(value: Any) -> Any:
    """``value`` in a JSON form ``_revived`` reads back: LangChain objects (messages) in
    langchain-core's serialization, anything else as pydantic writes it, else its repr
    (also for a value JSON cannot hold at all, such as a dict with tuple keys)."""

    if value is None or type(value) in (str, bool, int):
        return value  # the common answer, as it is (a float may be nan: json.dumps decides)

    def default(item: Any) -> Any:
        if isinstance(item, Serializable) and item.is_lc_serializable():
            return item.to_json()
        return to_jsonable_python(item, fallback=repr)

    try:
        return json.loads(json.dumps(value, default=default))
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def _revived(value: Any) -> Any:
    with suppress_langchain_beta_warning():
        return load(value, allowed_objects="messages")
