"""The ``Evaluator`` base class: one LangChain Runnable, two calling conventions.

Every evaluator is a ``RunnableSerializable`` from ``EvalRequest`` (or a mapping with its
field names) to ``EvaluatorResult`` — or a list of them for evaluators that score several
keys — so ``batch``/``abatch`` with ``max_concurrency``, ``with_retry``, callbacks and
LangSmith tracing come from LangChain. On top of that, calling the evaluator with keywords
(``ev(inputs=..., outputs=..., reference_outputs=...)``) returns OpenEvals-shaped dicts,
which is what ``langsmith.evaluate(..., evaluators=[ev])`` and OpenEvals users expect.

A subclass implements ``_score`` (and ``_ascore`` when it has a native async path) and
returns any ``ScorerOutput``; the base class turns it into results, reports to tracers,
and applies ``on_error``. A ``SystemExit`` raised by scoring code is a failure like any
exception (``StoppedInEvaluation``); a ``KeyboardInterrupt`` is left to interrupt.
"""

from __future__ import annotations

import difflib
import logging
import numbers
import warnings
from abc import abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, TypeAlias

from langchain_core.runnables import RunnableConfig, RunnableSerializable
from langchain_core.runnables.config import (
    ensure_config,
    get_async_callback_manager_for_config,
    get_callback_manager_for_config,
    patch_config,
    run_in_executor,
)
from langsmith.run_helpers import tracing_context
from pydantic import ConfigDict, Field, SkipValidation, field_validator

from ._langchain_internals import (
    coro_with_context,
    langsmith_tracing_setting,
    no_callback_handlers,
    set_config_context,
    var_child_runnable_config,
)
from ._request import EvalRequest
from ._result import EvaluatorResult, Score, plain_scalar
from ._tracing import EvalTracer, current_tracer
from .errors import (
    EvalsError,
    EvaluationFailure,
    EvaluatorInputError,
    EvaluatorUsageError,
    StoppedInEvaluation,
    error_summary,
    failure_code,
)

if TYPE_CHECKING:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForChainRun,
        CallbackManagerForChainRun,
    )

    from ._function import FunctionEvaluator

EvalInput: TypeAlias = EvalRequest | Mapping[str, Any]
"""What an evaluator takes: an ``EvalRequest`` or a mapping with its field names."""
EvalOutput: TypeAlias = EvaluatorResult | list[EvaluatorResult]
"""What an evaluator returns: one result, or a list for multi-key evaluators."""
ScorerOutput: TypeAlias = Any
"""What a scoring function may return.

* a ``bool`` or a number: the score;
* ``(score, comment)`` or ``(score, comment, metadata)``;
* a ``Score`` (which can also say "no verdict, because ...") or an ``EvaluatorResult``;
* a dict with ``score`` and optionally ``comment`` (or ``reasoning``) and ``metadata``;
* a mapping of key → any of the above (or a list of them), for several results from one
  evaluation.
"""

OnError = Literal["raise", "record"]
"""``"raise"``: machinery failures raise ``EvaluationFailure``; ``"record"``: they become
``failed`` results."""

_logger = logging.getLogger(__name__)


OutputsKind: TypeAlias = Literal["text", "messages", "json", "other"]
"""What an evaluator's ``outputs`` are (see ``Evaluator.outputs_kind``)."""


class Evaluator(RunnableSerializable[EvalInput, EvalOutput]):
    """Base class of every evaluator.

    Args:
        feedback_key: The key of the results (the LangSmith feedback key).
        name: The run name shown in traces (defaults to the evaluator's own).
        on_error: ``"raise"`` (default) raises when the evaluator's machinery fails (a
            judge, a sandbox, a tool); ``"record"`` returns a result with outcome ``failed``
            and a reason code instead. Bad input from the caller always raises.
        tracer: An ``EvalTracer`` to report to; without one the ambient ``eval_scope``
            tracer is used.

    Example:
        >>> from langchain_evals_port import ExactMatch
        >>> ev = ExactMatch()
        >>> ev(outputs={"a": 1}, reference_outputs={"a": 1.0})["score"]
        True
        >>> ev.invoke({"outputs": "x", "reference_outputs": "y"}).score
        False
    """

    # Unknown fields are refused (``__init__`` names the closest valid one first).
    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    feedback_key: str
    on_error: OnError = "raise"
    tracer: Annotated[EvalTracer | None, SkipValidation] = Field(default=None, exclude=True)

    @field_validator("feedback_key")
    @classmethod
    def _check_feedback_key(cls, key: str) -> str:
        if not key.strip():
            raise ValueError(
                f"feedback_key must name the results, got {key!r}; pass a name such as "
                "'correctness' (or leave it out for the evaluator's default)"
            )
        return key

    @field_validator("tracer")
    @classmethod
    def _check_tracer(cls, tracer: Any) -> Any:
        if tracer is not None and not isinstance(tracer, EvalTracer):
            raise ValueError(
                f"tracer must have on_start, on_result and on_error methods, got {tracer!r}"
            )
        return tracer

    def __init__(self, **fields: Any) -> None:
        """Build the evaluator from its fields, refusing any keyword it does not have."""
        _reject_unknown_keywords(type(self), fields)
        super().__init__(**fields)

    # ``name`` is the run name LangSmith shows; OpenEvals names runs after the feedback key.
    default_name: ClassVar[str | None] = None

    scores_in_loop: ClassVar[bool] = False
    """Whether ``_score`` is microseconds of CPU, so the async path calls it in the event loop
    (a thread hop would cost more than the work) and never waits: a caller may await such an
    evaluator before starting the others without delaying them."""

    outputs_kind: ClassVar[OutputsKind] = "text"
    """The ``outputs`` this evaluator judges, which tells the online runtime what to pass from
    an interaction: its final response ``"text"``, its transcript as ``"messages"``, the final
    response parsed as ``"json"``, or ``"other"`` (the binding must say, with ``to_request``)."""

    @property
    def numeric_scores(self) -> bool:
        """Whether this evaluator's scores are numbers rather than true/false verdicts."""
        return False

    # --- what subclasses implement -------------------------------------------------------

    @abstractmethod
    def _score(self, request: EvalRequest, config: RunnableConfig) -> ScorerOutput:
        """Score one request (the synchronous path)."""

    async def _ascore(self, request: EvalRequest, config: RunnableConfig) -> ScorerOutput:
        """Score one request asynchronously; by default ``_score`` in LangChain's executor,
        or in the event loop itself when ``scores_in_loop``."""
        if self.scores_in_loop:
            return self._score(request, config)
        return await run_in_executor(config, self._score, request, config)

    # --- the Runnable convention ---------------------------------------------------------

    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        """The run name: ``name`` if set, else the evaluator's default, else its feedback key."""
        return super().get_name(
            suffix, name=name or self.name or self.default_name or self.feedback_key
        )

    @property
    def __name__(self) -> str:
        """The run name; LangSmith names an evaluator after its callable's ``__name__``."""
        return self.get_name()

    def invoke(
        self, input: EvalInput, config: RunnableConfig | None = None, **kwargs: Any
    ) -> EvalOutput:
        """Evaluate one request; returns a result (a list for multi-key evaluators)."""
        if _langsmith_upload_off():
            with tracing_context(enabled=False):
                return self._invoke(input, config)
        return self._invoke(input, config)

    def _invoke(self, input: EvalInput, config: RunnableConfig | None) -> EvalOutput:
        # Like Runnable._call_with_config, minus its per-call signature inspection, which
        # costs more than a whole exact match; with no callback handler at all (no tracing,
        # no callbacks) there is no run to report, so the bookkeeping is skipped too.
        config = ensure_config(config)
        if no_callback_handlers(config):
            # Nested runnables (a judge's model) still inherit the config.
            token = var_child_runnable_config.set(config)
            try:
                return self._run(input, None, config)
            finally:
                var_child_runnable_config.reset(token)
        manager = get_callback_manager_for_config(config)
        run_manager = manager.on_chain_start(
            None,
            input,
            name=config.get("run_name") or self.get_name(),
            run_id=config.pop("run_id", None),
        )
        child = patch_config(config, callbacks=run_manager.get_child())
        try:
            with set_config_context(child) as context:
                output = context.run(self._run, input, run_manager, child)
        except BaseException as error:
            run_manager.on_chain_error(error)
            raise
        run_manager.on_chain_end(output)
        return output

    async def ainvoke(
        self, input: EvalInput, config: RunnableConfig | None = None, **kwargs: Any
    ) -> EvalOutput:
        """Evaluate one request asynchronously."""
        if _langsmith_upload_off():
            with tracing_context(enabled=False):
                return await self._ainvoke(input, config)
        return await self._ainvoke(input, config)

    async def _ainvoke(self, input: EvalInput, config: RunnableConfig | None) -> EvalOutput:
        config = ensure_config(config)
        if no_callback_handlers(config):
            token = var_child_runnable_config.set(config)
            try:
                return await self._arun(input, None, config)
            finally:
                var_child_runnable_config.reset(token)
        manager = get_async_callback_manager_for_config(config)
        run_manager = await manager.on_chain_start(
            None,
            input,
            name=config.get("run_name") or self.get_name(),
            run_id=config.pop("run_id", None),
        )
        child = patch_config(config, callbacks=run_manager.get_child())
        try:
            with set_config_context(child) as context:
                output = await coro_with_context(self._arun(input, run_manager, child), context)
        except BaseException as error:
            await run_manager.on_chain_error(error)
            raise
        await run_manager.on_chain_end(output)
        return output

    def _run(
        self,
        input: EvalInput,
        run_manager: CallbackManagerForChainRun | None,
        config: RunnableConfig,
    ) -> EvalOutput:
        request = EvalRequest.coerce(input)
        tracer = self._report_start(request)
        try:
            output = self._results(self._score(request, config))
        except Exception as error:
            output = self._on_exception(error, tracer)
        except SystemExit as stop:  # sys.exit() in scoring code: this evaluation failed
            output = self._on_exception(StoppedInEvaluation(stop), tracer)
        return self._report_results(output, tracer, run_manager)

    async def _arun(
        self,
        input: EvalInput,
        run_manager: AsyncCallbackManagerForChainRun | None,
        config: RunnableConfig,
    ) -> EvalOutput:
        request = EvalRequest.coerce(input)
        tracer = self._report_start(request)
        try:
            output = self._results(await self._ascore(request, config))
        except Exception as error:
            output = self._on_exception(error, tracer)
        except SystemExit as stop:  # sys.exit() in scoring code: this evaluation failed
            output = self._on_exception(StoppedInEvaluation(stop), tracer)
        return self._report_results(output, tracer, run_manager)

    def _report_start(self, request: EvalRequest) -> EvalTracer | None:
        tracer = self.tracer if self.tracer is not None else current_tracer()
        if tracer is not None:
            self._notify(tracer.on_start, request)
        return tracer

    def _notify(self, event: Callable[[str, Any], None], payload: Any) -> None:
        # A broken tracer must not change the evaluation's outcome.
        try:
            event(self.get_name(), payload)
        except Exception:
            _logger.exception("tracer %r failed; the evaluation goes on", event)

    def _on_exception(self, error: Exception, tracer: EvalTracer | None) -> EvaluatorResult:
        if tracer is not None:
            self._notify(tracer.on_error, error)
        if isinstance(error, (EvaluatorInputError, EvaluatorUsageError)):
            raise error
        if self.on_error == "record":
            return EvaluatorResult.of_error(self.feedback_key, error)
        if isinstance(error, EvalsError):
            raise error
        raise EvaluationFailure(
            f"evaluator {self.get_name()!r} failed: {error_summary(error)}",
            code=failure_code(error),
        ) from error

    def _report_results(
        self,
        output: EvalOutput,
        tracer: EvalTracer | None,
        run_manager: CallbackManagerForChainRun | AsyncCallbackManagerForChainRun | None,
    ) -> EvalOutput:
        if run_manager is not None and _traced_to_langsmith(run_manager):
            # The feedback points at this evaluator's own trace, as LangSmith expects.
            run_id = str(run_manager.run_id)
            if isinstance(output, list):
                output = [r.model_copy(update={"source_run_id": run_id}) for r in output]
            else:
                output = output.model_copy(update={"source_run_id": run_id})
        if tracer is not None:
            for result in results_of(output):
                self._notify(tracer.on_result, result)
        return output

    def _results(self, output: ScorerOutput) -> EvalOutput:
        if isinstance(output, Mapping) and not _is_score_dict(output):
            results = [
                r for key, value in output.items() for r in _results_for_key(str(key), value)
            ]
        elif isinstance(output, list) and all(isinstance(r, EvaluatorResult) for r in output):
            results = list(output)
        else:
            return _single_result(self.feedback_key, output)
        if not results:
            raise EvaluatorUsageError(
                f"evaluator {self.get_name()!r} returned no results ({output!r}); return at "
                "least one score, or Score.unscored(reason)"
            )
        return results

    # --- the OpenEvals convention --------------------------------------------------------

    def __call__(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **variables: Any,
    ) -> dict[str, Any] | list[dict[str, Any]]:
        """Evaluate and return OpenEvals-shaped dicts (``key``, ``score``, ``comment``, ...).

        Extra keywords are prompt variables (``context=...``) or ``attachments=...``.
        """
        return _as_dicts(
            self.invoke(
                EvalRequest.of(
                    inputs=inputs, outputs=outputs, reference_outputs=reference_outputs, **variables
                )
            )
        )

    async def acall(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **variables: Any,
    ) -> dict[str, Any] | list[dict[str, Any]]:
        """The async twin of the keyword call (what OpenEvals' ``*_async`` functions return)."""
        output = await self.ainvoke(
            EvalRequest.of(
                inputs=inputs, outputs=outputs, reference_outputs=reference_outputs, **variables
            )
        )
        return _as_dicts(output)

    # --- typed helpers -------------------------------------------------------------------

    def evaluate(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **variables: Any,
    ) -> EvaluatorResult:
        """Deprecated: ``invoke({...})``. The one ``EvaluatorResult`` (an error if there are
        several)."""
        _deprecated_call("evaluate", "invoke({...})")
        output = self.invoke(
            EvalRequest.of(
                inputs=inputs, outputs=outputs, reference_outputs=reference_outputs, **variables
            )
        )
        return _only(output, self)

    def evaluate_all(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **variables: Any,
    ) -> list[EvaluatorResult]:
        """Deprecated: ``results_of(invoke({...}))``. Every result as a list."""
        _deprecated_call("evaluate_all", "invoke({...}), with core.results_of for a list")
        output = self.invoke(
            EvalRequest.of(
                inputs=inputs, outputs=outputs, reference_outputs=reference_outputs, **variables
            )
        )
        return results_of(output)

    async def aevaluate(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **variables: Any,
    ) -> EvaluatorResult:
        """Deprecated: ``ainvoke({...})``. The async twin of ``evaluate``."""
        _deprecated_call("aevaluate", "ainvoke({...})")
        output = await self.ainvoke(
            EvalRequest.of(
                inputs=inputs, outputs=outputs, reference_outputs=reference_outputs, **variables
            )
        )
        return _only(output, self)

    async def aevaluate_all(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **variables: Any,
    ) -> list[EvaluatorResult]:
        """Deprecated: ``results_of(await ainvoke({...}))``. The async twin of
        ``evaluate_all``."""
        _deprecated_call("aevaluate_all", "ainvoke({...}), with core.results_of for a list")
        output = await self.ainvoke(
            EvalRequest.of(
                inputs=inputs, outputs=outputs, reference_outputs=reference_outputs, **variables
            )
        )
        return results_of(output)

    # --- custom evaluators ---------------------------------------------------------------

    @classmethod
    def from_function(
        cls,
        run_name: str,
        feedback_key: str,
        fn: Callable[..., ScorerOutput | Awaitable[ScorerOutput]],
        *,
        on_error: OnError = "raise",
        tracer: EvalTracer | None = None,
    ) -> FunctionEvaluator:
        """Deprecated: ``evaluator(fn, run_name=..., feedback_key=...)``."""
        warnings.warn(
            "Evaluator.from_function is deprecated; use "
            "evaluator(fn, run_name=..., feedback_key=...)",
            DeprecationWarning,
            stacklevel=2,
        )
        from ._function import FunctionEvaluator

        return FunctionEvaluator(
            name=run_name, feedback_key=feedback_key, fn=fn, on_error=on_error, tracer=tracer
        )


def results_of(output: EvalOutput) -> list[EvaluatorResult]:
    """An evaluator's output as a list of results, however many keys it scored.

    Example:
        >>> [r.key for r in results_of(EvaluatorResult(key="exact_match", score=True))]
        ['exact_match']
    """
    return output if isinstance(output, list) else [output]


def _reject_unknown_keywords(cls: type[Evaluator], fields: Mapping[str, Any]) -> None:
    # A field with an alias is set by its alias (LLMJudge's ``output_schema``).
    valid = {info.alias or name for name, info in cls.model_fields.items()}
    unknown = [name for name in fields if name not in valid]
    if not unknown:
        return
    name = unknown[0]
    close = difflib.get_close_matches(name, sorted(valid), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise EvaluatorUsageError(
        f"{cls.__name__}() got an unexpected keyword argument {name!r}; {hint}"
        f"valid keywords: {', '.join(sorted(valid))}"
    )


def _single_result(key: str, output: ScorerOutput) -> EvaluatorResult:
    output = plain_scalar(output)
    if isinstance(output, EvaluatorResult):
        return output
    if isinstance(output, Score):
        return output.to_result(key)
    if isinstance(output, tuple):
        if len(output) not in (2, 3):
            raise EvaluatorUsageError(
                f"a scoring function returned a tuple of {len(output)} items; expected "
                "(score, comment) or (score, comment, metadata)"
            )
        return Score(output[0], *output[1:]).to_result(key)
    if isinstance(output, Mapping) and _is_score_dict(output):
        comment = output.get("comment", output.get("reasoning"))
        return Score(output["score"], comment, output.get("metadata") or {}).to_result(key)
    if isinstance(output, bool):
        return EvaluatorResult(key=key, score=output)
    if isinstance(output, (numbers.Real, Decimal)):
        return EvaluatorResult(key=key, score=float(output))
    if output is None:
        raise EvaluatorUsageError(
            "a scoring function returned None; return a score, or Score.unscored(reason) "
            "when there is no verdict"
        )
    raise EvaluatorUsageError(
        f"a scoring function returned a {type(output).__name__}; expected a bool, a number, "
        "a (score, comment[, metadata]) tuple, a Score, or a mapping of key to those"
    )


def _is_score_dict(output: Mapping[Any, Any]) -> bool:
    return "score" in output and output.keys() <= _SCORE_DICT_KEYS


_SCORE_DICT_KEYS = frozenset({"score", "comment", "reasoning", "metadata"})


def _results_for_key(key: str, value: Any) -> list[EvaluatorResult]:
    values = value if isinstance(value, list) else [value]
    return [_single_result(key, item) for item in values]


def _as_dicts(output: EvalOutput) -> dict[str, Any] | list[dict[str, Any]]:
    if isinstance(output, list):
        return [result.to_dict() for result in output]
    return output.to_dict()


def _deprecated_call(name: str, replacement: str) -> None:
    warnings.warn(
        f"Evaluator.{name} is deprecated; use {replacement} (or the keyword call)",
        DeprecationWarning,
        stacklevel=3,
    )


def _only(output: EvalOutput, evaluator: Evaluator) -> EvaluatorResult:
    if not isinstance(output, list):
        return output
    if len(output) != 1:
        raise ValueError(
            f"evaluator {evaluator.get_name()!r} produced {len(output)} results; "
            "use invoke(), which returns a list for evaluators that score several keys"
        )
    return output[0]


def _langsmith_upload_off() -> bool:
    """Whether LangSmith asked for runs to be kept local (``evaluate(upload_results=False)``).

    LangSmith marks that with the tracing mode ``"local"``, which its own ``@traceable``
    honours but LangChain's tracer does not: it would post this evaluator's run and its
    judge's model runs. Evaluations in that mode therefore run with tracing off.
    """
    return langsmith_tracing_setting() == "local"


def _traced_to_langsmith(
    run_manager: CallbackManagerForChainRun | AsyncCallbackManagerForChainRun,
) -> bool:
    from langchain_core.tracers.langchain import LangChainTracer

    return any(isinstance(handler, LangChainTracer) for handler in run_manager.handlers)
