"""OpenEvals' JSON match factories, running ``JsonMatch``.

Re-exported by ``langchain_evals_port.compat.openevals``; PARITY.md lists where results
differ from OpenEvals' and why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable

from langchain_evals_port.json_match import JsonMatch

from ._shared import judge_model, named_async

if TYPE_CHECKING:
    from ._shared import SimpleAsyncEvaluator, SimpleEvaluator

__all__ = ["create_async_json_match_evaluator", "create_json_match_evaluator"]

# OpenEvals' defaults are a shared ``{}`` and ``[]``; immutable empties behave the same.
_NO_RUBRIC: Mapping[str, str] = MappingProxyType({})


def create_json_match_evaluator(
    *,
    aggregator: Literal["average", "all"] | None = None,
    list_aggregator: Literal["average", "all"] = "all",
    rubric: Mapping[str, str] = _NO_RUBRIC,
    exclude_keys: Sequence[str] = (),
    judge: BaseChatModel | Runnable[Any, Any] | None = None,
    model: str | None = None,
    use_reasoning: bool = True,
    list_match_mode: Literal["superset", "subset", "same_elements", "ordered"] = "same_elements",
) -> SimpleEvaluator:
    """OpenEvals' ``create_json_match_evaluator``, returning a ``JsonMatch`` (callable like
    OpenEvals' evaluator: a list of result dicts; and a Runnable besides).

    ``judge`` must be a LangChain chat model (wrap a raw OpenAI client in
    ``langchain_openai.ChatOpenAI``); it wins over ``model``. A rubric with neither uses
    the default judge when one is configured (``set_default_judge`` or
    ``LANGCHAIN_EVALS_JUDGE``), and is a ``ValueError`` otherwise, as in OpenEvals.
    """
    return cast("SimpleEvaluator", _json_match(locals()))


def create_async_json_match_evaluator(
    *,
    aggregator: Literal["average", "all"] | None = None,
    list_aggregator: Literal["average", "all"] = "all",
    rubric: Mapping[str, str] = _NO_RUBRIC,
    exclude_keys: Sequence[str] = (),
    judge: BaseChatModel | Runnable[Any, Any] | None = None,
    model: str | None = None,
    use_reasoning: bool = True,
    list_match_mode: Literal["superset", "subset", "same_elements", "ordered"] = "same_elements",
) -> SimpleAsyncEvaluator:
    """OpenEvals' ``create_async_json_match_evaluator``: the judge's calls for separate
    rubric keys run concurrently, through the model's own async path."""
    evaluator = _json_match(locals())
    return cast("SimpleAsyncEvaluator", named_async(evaluator.acall, evaluator.get_name()))


def _json_match(arguments: dict[str, Any]) -> JsonMatch:
    judge = judge_model(arguments["judge"], arguments["model"])
    return JsonMatch(
        aggregator=arguments["aggregator"],
        list_aggregator=arguments["list_aggregator"],
        rubric=dict(arguments["rubric"]),
        exclude_keys=list(arguments["exclude_keys"]),
        model=judge,
        use_reasoning=arguments["use_reasoning"],
        list_match_mode=arguments["list_match_mode"],
    )
