"""What the compat modules share: OpenEvals' result and evaluator types, and async wrappers
named the way LangSmith names evaluator runs."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from langchain_core.messages import BaseMessage, BaseMessageChunk
from langchain_core.runnables import Runnable
from typing_extensions import NotRequired, Protocol, TypedDict, runtime_checkable

ScoreType = float | bool
"""A verdict: a number or a boolean."""


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


class ChatCompletionMessage(TypedDict):
    """A message in OpenAI's chat format, as OpenEvals' trajectories hold them."""

    id: NotRequired[str | None]
    content: str | list[dict[str, Any]]
    role: str
    tool_calls: NotRequired[list[dict[str, Any]] | None]


class ChatCompletion(TypedDict):
    """An OpenAI chat completion response (its ``choices``)."""

    choices: list[dict[str, Any]]


class FewShotExample(TypedDict):
    """A graded example for a judge prompt, as a dict (``judge.FewShotExample`` is the class
    form; either is accepted)."""

    inputs: Any
    outputs: Any
    score: float | bool
    reasoning: str | None


Messages = ChatCompletionMessage | BaseMessage | BaseMessageChunk
"""A message in either format OpenEvals accepts."""


@runtime_checkable
class ChatCompletionsClient(Protocol):
    """The ``chat.completions`` part of an OpenAI-style client."""

    def create(self, **kwargs: Any) -> ChatCompletion: ...


@runtime_checkable
class ModelClient(Protocol):
    """An OpenAI-style client (OpenEvals accepts one as ``judge``; compat does not)."""

    @property
    def chat(self) -> type[ChatCompletionsClient]: ...


@runtime_checkable
class RunnableLike(Protocol):
    """Something with ``invoke``/``ainvoke`` (OpenEvals deprecates it for ``Runnable``)."""

    def invoke(self, inputs: Any, **kwargs: Any) -> Any: ...

    async def ainvoke(self, inputs: Any, **kwargs: Any) -> Any: ...


class MultiturnSimulationResult(TypedDict):
    """OpenEvals' simulation result: the transcript and the evaluators' result dicts."""

    evaluator_results: list[EvaluatorResult]
    trajectory: list[dict[str, Any]]


ToolArgsMatchMode = Literal["exact", "ignore", "subset", "superset"]
"""How a tool call's arguments are compared."""

ToolArgsMatchOverrides = dict[
    str, ToolArgsMatchMode | list[str] | Callable[[dict[str, Any], dict[str, Any]], bool]
]
"""Per-tool argument rules: a mode, the argument paths to compare, or a matcher."""


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
