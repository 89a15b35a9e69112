"""Evaluators from plain scoring functions: ``FunctionEvaluator`` and the ``@evaluator``
decorator (``Evaluator.from_function`` builds the same)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, cast, overload

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import run_in_executor
from pydantic import Field, PrivateAttr, SkipValidation

from ._evaluator import Evaluator, OnError, ScorerOutput
from ._request import EvalRequest
from ._tracing import EvalTracer
from .errors import EvaluatorInputError, EvaluatorUsageError


class FunctionEvaluator(Evaluator):
    """An evaluator whose score comes from a user function (see ``Evaluator.from_function``)."""

    fn: Annotated[Callable[..., Any], SkipValidation] = Field(exclude=True)
    _takes_all: bool = PrivateAttr(default=False)
    _wanted: list[tuple[str, bool]] = PrivateAttr(default_factory=list)
    _is_async: bool = PrivateAttr(default=False)

    def model_post_init(self, context: Any, /) -> None:
        """Read ``fn``'s signature once, so each call only looks up the values it needs."""
        parameters = inspect.signature(self.fn).parameters.values()
        for parameter in parameters:
            if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.VAR_POSITIONAL):
                raise EvaluatorUsageError(
                    f"evaluator function {self.fn!r} takes positional parameter "
                    f"{parameter.name!r}; evaluator functions take keyword parameters "
                    "(inputs, outputs, reference_outputs, attachments, request, or variable names)"
                )
        self._takes_all = any(p.kind is p.VAR_KEYWORD for p in parameters)
        self._wanted = [
            (p.name, p.default is p.empty) for p in parameters if p.kind is not p.VAR_KEYWORD
        ]
        self._is_async = inspect.iscoroutinefunction(self.fn) or inspect.iscoroutinefunction(
            getattr(self.fn, "__call__", None)  # noqa: B004 - async callable objects too
        )

    def _arguments(self, request: EvalRequest) -> dict[str, Any]:
        available: dict[str, Any] = {
            "inputs": request.inputs,
            "outputs": request.outputs,
            "reference_outputs": request.reference_outputs,
            "attachments": request.attachments,
            "request": request,
            **request.variables,
        }
        if self._takes_all:
            available.pop("request")
            return available
        arguments: dict[str, Any] = {}
        for name, required in self._wanted:
            if name in available:
                arguments[name] = available[name]
            elif required:
                raise EvaluatorInputError(
                    f"evaluator {self.get_name()!r} needs variable {name!r}, which was not "
                    f"given; pass it as a keyword ({name}=...) or in variables"
                )
        return arguments

    def _score(self, request: EvalRequest, config: RunnableConfig) -> ScorerOutput:
        output = self.fn(**self._arguments(request))
        # Decorated or wrapped async functions are only recognisable by what they return.
        if inspect.isawaitable(output):
            return _run_coroutine(output, self.get_name())
        return output

    async def _ascore(self, request: EvalRequest, config: RunnableConfig) -> ScorerOutput:
        arguments = self._arguments(request)
        output = (
            self.fn(**arguments)
            if self._is_async
            else await run_in_executor(config, self.fn, **arguments)
        )
        return await output if inspect.isawaitable(output) else output


@overload
def evaluator(fn: Callable[..., Any], /) -> FunctionEvaluator: ...


@overload
def evaluator(
    *,
    feedback_key: str | None = None,
    run_name: str | None = None,
    on_error: OnError = "raise",
    tracer: EvalTracer | None = None,
) -> Callable[[Callable[..., Any]], FunctionEvaluator]: ...


def evaluator(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    feedback_key: str | None = None,
    run_name: str | None = None,
    on_error: OnError = "raise",
    tracer: EvalTracer | None = None,
) -> FunctionEvaluator | Callable[[Callable[..., Any]], FunctionEvaluator]:
    """Decorator form of ``Evaluator.from_function``; names default to the function's.

    Example:
        >>> @evaluator(feedback_key="mentions_paris")
        ... def mentions_paris(*, outputs):
        ...     return "paris" in outputs.lower()
        >>> mentions_paris(outputs="Paris, of course")["score"]
        True
    """

    def wrap(function: Callable[..., Any]) -> FunctionEvaluator:
        key = feedback_key or function.__name__
        return Evaluator.from_function(
            run_name or function.__name__, key, function, on_error=on_error, tracer=tracer
        )

    return wrap(fn) if fn is not None else wrap


def _run_coroutine(coroutine: Awaitable[Any], name: str) -> Any:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(cast(Any, coroutine))
    cast(Any, coroutine).close()
    raise EvaluatorUsageError(
        f"evaluator {name!r} wraps an async function and was called synchronously inside a "
        "running event loop; use `await evaluator.ainvoke(...)` or `await evaluator.acall(...)`"
    )
