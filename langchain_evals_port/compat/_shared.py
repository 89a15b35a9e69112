"""What the compat modules share: OpenEvals' result and evaluator types, and async wrappers
named the way LangSmith names evaluator runs."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.runnables import Runnable
from typing_extensions import NotRequired, Protocol, TypedDict


class EvaluatorResult(TypedDict):
    """OpenEvals' result dict; a non-verdict outcome is described inside ``metadata``."""

    key: str
    score: float | bool | None
    comment: str | None
    metadata: dict[str, Any] | None
    source_run_id: NotRequired[str]


class SimpleEvaluator(Protocol):
    """An OpenEvals-style synchronous evaluator."""

    def __call__(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **kwargs: Any,
    ) -> EvaluatorResult | list[EvaluatorResult]: ...


class SimpleAsyncEvaluator(Protocol):
    """An OpenEvals-style asynchronous evaluator."""

    async def __call__(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **kwargs: Any,
    ) -> EvaluatorResult | list[EvaluatorResult]: ...


def named_async(call: Callable[..., Awaitable[Any]], name: str) -> Callable[..., Awaitable[Any]]:
    # LangSmith names an evaluator's run after the function's __name__.
    async def evaluate(
        *, inputs: Any = None, outputs: Any = None, reference_outputs: Any = None, **kwargs: Any
    ) -> Any:
        return await call(
            inputs=inputs, outputs=outputs, reference_outputs=reference_outputs, **kwargs
        )

    evaluate.__name__ = evaluate.__qualname__ = name
    return evaluate


def judge_model(judge: Any, model: str | None) -> Any:
    """The model an OpenEvals-style factory's ``judge=``/``model=`` arguments name: ``judge``
    (a LangChain chat model) when given, else the ``model`` string (or None)."""
    if judge is None:
        return model
    if not isinstance(judge, Runnable):
        raise ValueError(
            "judge must be a LangChain chat model; a raw OpenAI client is not supported here, "
            "wrap the model in langchain_openai.ChatOpenAI instead"
        )
    return judge
