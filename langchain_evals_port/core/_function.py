"""Evaluators from plain scoring functions: ``FunctionEvaluator`` and the ``@evaluator``
decorator (``Evaluator.from_function`` builds the same)."""

from __future__ import annotations

import functools
import inspect
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, overload

from langchain_core.runnables import RunnableConfig
from pydantic import Field, PrivateAttr, SkipValidation

from ._calls import call_async, call_sync, is_async
from ._evaluator import Evaluator, OnError, ScorerOutput
from ._request import CALL_FIELDS, EvalRequest
from ._tracing import EvalTracer
from .errors import EvaluatorUsageError, MissingVariableError

_USE_ASYNC = "use `await evaluator.ainvoke(...)` or `await evaluator.acall(...)`"


class FunctionEvaluator(Evaluator):
    """An evaluator whose score comes from a user function (see ``Evaluator.from_function``)."""

    fn: Annotated[Callable[..., Any], SkipValidation] = Field(exclude=True)
    # One private attribute read per call: pydantic looks each up through __getattr__.
    _signature: _Signature = PrivateAttr()

    @property
    def numeric_scores(self) -> bool:
        """Whether ``fn`` is annotated to return a number (``-> float``, ``-> int``, or a
        ``(score, comment)`` tuple whose score is one): the online runtime then asks for a
        ``pass_threshold`` at startup."""
        return self._signature.numeric

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
            close = _NEAR_MISSES.get(parameter.name)
            if close is not None and parameter.default is parameter.empty:
                raise EvaluatorUsageError(
                    f"evaluator function {_named(self.fn)} takes {parameter.name!r}, which no "
                    f"evaluation passes: did you mean `{close}`? (evaluator functions take "
                    "inputs, outputs, reference_outputs, attachments, request, or variable "
                    "names; give a variable of that name a default to keep it)"
                )
        self._signature = _Signature(
            takes_all=any(p.kind is p.VAR_KEYWORD for p in parameters),
            wanted=tuple(
                (p.name, p.default is p.empty) for p in parameters if p.kind is not p.VAR_KEYWORD
            ),
            numeric=_returns_number(self.fn),
            is_async=is_async(self.fn),
        )

    def _arguments(self, request: EvalRequest, signature: _Signature) -> dict[str, Any]:
        if signature.takes_all:
            return {
                "inputs": request.inputs,
                "outputs": request.outputs,
                "reference_outputs": request.reference_outputs,
                "attachments": request.attachments,
                **request.variables,
            }
        # Only what the function takes (a request's variables never shadow its fields).
        variables = request.variables
        arguments: dict[str, Any] = {}
        for name, required in signature.wanted:
            if name in _REQUEST_FIELDS:
                arguments[name] = request if name == "request" else getattr(request, name)
            elif name in variables:
                arguments[name] = variables[name]
            elif required:
                raise MissingVariableError(
                    f"evaluator {self.get_name()!r} needs variable {name!r}, which was not "
                    f"given; pass it as a keyword ({name}=...) or in variables"
                )
        return arguments

    def _score(self, request: EvalRequest, config: RunnableConfig) -> ScorerOutput:
        # Decorated or wrapped async functions are only recognisable by what they return.
        arguments = self._arguments(request, self._signature)
        return call_sync(functools.partial(self.fn, **arguments), hint=_USE_ASYNC)

    async def _ascore(self, request: EvalRequest, config: RunnableConfig) -> ScorerOutput:
        signature = self._signature
        if signature.is_async:  # known once: a coroutine function is awaited in the loop
            return await self.fn(**self._arguments(request, signature))
        scoring = functools.partial(self.fn, **self._arguments(request, signature))
        return await call_async(scoring, blocking=True, config=config)


@dataclass(frozen=True)
class _Signature:
    """What a scoring function takes, read once: every keyword (``**kwargs``), or the
    parameters it names (and whether each is required); whether it returns a number, and
    whether it is a coroutine function."""

    takes_all: bool
    wanted: tuple[tuple[str, bool], ...]
    numeric: bool
    is_async: bool


_REQUEST_FIELDS = frozenset({*CALL_FIELDS, "request"})
"""The parameters a scoring function is given from the request itself (``request``: all of it)."""

_NEAR_MISSES = {
    "output": "outputs",
    "input": "inputs",
    "reference": "reference_outputs",
    "reference_output": "reference_outputs",
    "attachment": "attachments",
}
"""Parameter names that are the standard ones misspelt, and the name meant."""


def _named(fn: Callable[..., Any]) -> str:
    return repr(getattr(fn, "__qualname__", None) or fn)


def _returns_number(fn: Callable[..., Any]) -> bool:
    """Whether ``fn``'s return annotation is a number, or a tuple or union led by one."""
    try:
        annotation = inspect.signature(fn, eval_str=True).return_annotation
    except Exception:  # an annotation naming what is not importable here: read the text
        annotation = inspect.signature(fn).return_annotation
    if isinstance(annotation, str):
        return re.match(r"\s*(float|int)\b", annotation.removeprefix("tuple[")) is not None
    if typing.get_origin(annotation) is tuple:
        annotation = next(iter(typing.get_args(annotation)), None)
    members = typing.get_args(annotation) if _is_union(annotation) else (annotation,)
    kinds = [member for member in members if member is not type(None)]
    return bool(kinds) and all(kind in (int, float) for kind in kinds)


def _is_union(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (typing.Union, types.UnionType)


@overload
def evaluator(
    fn: Callable[..., Any],
    /,
    *,
    feedback_key: str | None = None,
    run_name: str | None = None,
    on_error: OnError = "raise",
    tracer: EvalTracer | None = None,
) -> FunctionEvaluator: ...


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
    """An evaluator from a plain (sync or async) scoring function: the one way to make one,
    as a decorator (``@evaluator``, ``@evaluator(feedback_key=...)``) or a call
    (``evaluator(fn, feedback_key=...)``). Names default to the function's.

    ``fn`` takes keyword parameters named after what it needs — ``inputs``, ``outputs``,
    ``reference_outputs``, ``attachments``, any variable name, or ``request`` for the whole
    ``EvalRequest`` — and returns a ``ScorerOutput``.

    Example:
        >>> @evaluator(feedback_key="mentions_paris")
        ... def mentions_paris(*, outputs):
        ...     return "paris" in outputs.lower()
        >>> mentions_paris(outputs="Paris, of course")["score"]
        True
    """

    def wrap(function: Callable[..., Any]) -> FunctionEvaluator:
        name = getattr(function, "__name__", "evaluator")
        return FunctionEvaluator(
            name=run_name or name,
            feedback_key=name if feedback_key is None else feedback_key,
            fn=function,
            on_error=on_error,
            tracer=tracer,
        )

    return wrap(fn) if fn is not None else wrap
