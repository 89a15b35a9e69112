"""OpenEvals' trajectory functions (``openevals.trajectory``), with OpenEvals' signatures.

``create_trajectory_match_evaluator`` returns a ``TrajectoryMatch`` and
``create_trajectory_llm_as_judge`` a ``TrajectoryLLMJudge``: callable like OpenEvals'
evaluators, with the same keys and, wherever OpenEvals pairs calls correctly, the same
scores; Runnables besides. The deprecated module-level functions of
``openevals.trajectory.strict``/``unordered``/``subset``/``superset`` are here too, with
their keys and their ``DeprecationWarning``. PARITY.md lists every difference.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from langchain_core.runnables import Runnable

from langchain_evals_port.compat._shared import (
    EvaluatorResult,
    SimpleAsyncEvaluator,
    SimpleEvaluator,
    judge_model,
    named_async,
)
from langchain_evals_port.trajectory import (
    ToolArgsMatchMode,
    ToolArgsOverride,
    TrajectoryMatch,
    TrajectoryMatchMode,
)

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from langchain_evals_port.judge import FewShotExample
    from langchain_evals_port.trajectory import TrajectoryLLMJudge

__all__ = [
    "create_async_trajectory_llm_as_judge",
    "create_async_trajectory_match_evaluator",
    "create_trajectory_llm_as_judge",
    "create_trajectory_match_evaluator",
    "trajectory_strict_match",
    "trajectory_strict_match_async",
    "trajectory_subset",
    "trajectory_subset_async",
    "trajectory_superset",
    "trajectory_superset_async",
    "trajectory_unordered_match",
    "trajectory_unordered_match_async",
]

_MATCH_MODES = ("strict", "unordered", "subset", "superset", "in_order")
_ARGS_MODES = ("exact", "ignore", "subset", "superset")


def create_trajectory_match_evaluator(
    *,
    trajectory_match_mode: TrajectoryMatchMode = "strict",
    tool_args_match_mode: ToolArgsMatchMode = "exact",
    tool_args_match_overrides: dict[str, ToolArgsOverride] | None = None,
    explain: bool = False,
) -> SimpleEvaluator:
    """OpenEvals' ``create_trajectory_match_evaluator``, returning a ``TrajectoryMatch``
    (keyword-callable like OpenEvals' evaluator, and a Runnable besides).

    ``trajectory_match_mode`` may also be ``"in_order"`` (see ``TrajectoryMatch``). Results
    are OpenEvals' own (``comment`` and ``metadata`` are None); ``explain=True`` adds
    ``TrajectoryMatch``'s comment and metadata (which calls differ, precision and recall).
    """
    return cast(
        SimpleEvaluator,
        _match_evaluator(
            trajectory_match_mode, tool_args_match_mode, tool_args_match_overrides, explain
        ),
    )


def create_async_trajectory_match_evaluator(
    *,
    trajectory_match_mode: TrajectoryMatchMode = "strict",
    tool_args_match_mode: ToolArgsMatchMode = "exact",
    tool_args_match_overrides: dict[str, ToolArgsOverride] | None = None,
    explain: bool = False,
) -> SimpleAsyncEvaluator:
    """OpenEvals' ``create_async_trajectory_match_evaluator`` (``explain`` as in the sync
    factory)."""
    evaluator = _match_evaluator(
        trajectory_match_mode, tool_args_match_mode, tool_args_match_overrides, explain
    )
    return cast(SimpleAsyncEvaluator, named_async(evaluator.acall, evaluator.get_name()))


def _match_evaluator(
    mode: str, args_mode: str, overrides: dict[str, ToolArgsOverride] | None, explain: bool
) -> TrajectoryMatch:
    # OpenEvals' own messages, so code that matched on them keeps working.
    if mode not in _MATCH_MODES:
        raise ValueError(
            f"Invalid trajectory match type: `{mode}`. Must be one of `strict`, `unordered`, "
            "`subset`, `superset`, or `in_order`."
        )
    if args_mode not in _ARGS_MODES:
        raise ValueError(
            f"Invalid tool args match mode: `{args_mode}`. Must be either `exact`, `ignore`, "
            "`subset`, or `superset`."
        )
    return TrajectoryMatch(
        mode=cast("TrajectoryMatchMode", mode),
        tool_args_match_mode=cast("ToolArgsMatchMode", args_mode),
        tool_args_match_overrides=overrides,
        explain=explain,
    )


# --- the deprecated module-level functions ------------------------------------------------

_STRICT_EXACT = TrajectoryMatch(
    mode="strict", feedback_key="trajectory_strict_match", explain=False
)
_STRICT_IGNORE = TrajectoryMatch(
    mode="strict",
    tool_args_match_mode="ignore",
    feedback_key="trajectory_strict_match",
    explain=False,
)
# OpenEvals' deprecated unordered/subset/superset functions ignore arguments.
_UNORDERED = TrajectoryMatch(mode="unordered", tool_args_match_mode="ignore", explain=False)
_SUBSET = TrajectoryMatch(
    mode="subset",
    tool_args_match_mode="ignore",
    feedback_key="trajectory_subset",
    explain=False,
)
_SUPERSET = TrajectoryMatch(
    mode="superset",
    tool_args_match_mode="ignore",
    feedback_key="trajectory_superset",
    explain=False,
)


def _deprecated(name: str, mode: str) -> None:
    warnings.warn(
        f"{name}() is deprecated. Use create_trajectory_match_evaluator("
        f"trajectory_match_mode='{mode}') instead.",
        DeprecationWarning,
        stacklevel=3,
    )


def trajectory_strict_match(
    *,
    outputs: Any,
    reference_outputs: Any,
    tool_call_args_exact_match: bool = True,
    **kwargs: Any,
) -> EvaluatorResult:
    """OpenEvals' deprecated ``trajectory_strict_match``."""
    _deprecated("trajectory_strict_match", "strict")
    evaluator = _STRICT_EXACT if tool_call_args_exact_match else _STRICT_IGNORE
    return cast(
        EvaluatorResult, evaluator(outputs=outputs, reference_outputs=reference_outputs, **kwargs)
    )


async def trajectory_strict_match_async(
    *,
    outputs: Any,
    reference_outputs: Any,
    tool_call_args_exact_match: bool = True,
    **kwargs: Any,
) -> EvaluatorResult:
    """OpenEvals' deprecated ``trajectory_strict_match_async``."""
    _deprecated("trajectory_strict_match_async", "strict")
    evaluator = _STRICT_EXACT if tool_call_args_exact_match else _STRICT_IGNORE
    return cast(
        EvaluatorResult,
        await evaluator.acall(outputs=outputs, reference_outputs=reference_outputs, **kwargs),
    )


def trajectory_unordered_match(
    *, outputs: Any, reference_outputs: Any, **kwargs: Any
) -> EvaluatorResult:
    """OpenEvals' deprecated ``trajectory_unordered_match`` (arguments are ignored)."""
    _deprecated("trajectory_unordered_match", "unordered")
    return cast(
        EvaluatorResult,
        _UNORDERED(outputs=outputs, reference_outputs=reference_outputs, **kwargs),
    )


async def trajectory_unordered_match_async(
    *, outputs: Any, reference_outputs: Any, **kwargs: Any
) -> EvaluatorResult:
    """OpenEvals' deprecated ``trajectory_unordered_match_async`` (arguments are ignored)."""
    _deprecated("trajectory_unordered_match_async", "unordered")
    return cast(
        EvaluatorResult,
        await _UNORDERED.acall(outputs=outputs, reference_outputs=reference_outputs, **kwargs),
    )


def trajectory_subset(*, outputs: Any, reference_outputs: Any, **kwargs: Any) -> EvaluatorResult:
    """OpenEvals' deprecated ``trajectory_subset`` (key ``trajectory_subset``; arguments
    are ignored)."""
    _deprecated("trajectory_subset", "subset")
    return cast(
        EvaluatorResult, _SUBSET(outputs=outputs, reference_outputs=reference_outputs, **kwargs)
    )


async def trajectory_subset_async(
    *, outputs: Any, reference_outputs: Any, **kwargs: Any
) -> EvaluatorResult:
    """OpenEvals' deprecated ``trajectory_subset_async``."""
    _deprecated("trajectory_subset_async", "subset")
    return cast(
        EvaluatorResult,
        await _SUBSET.acall(outputs=outputs, reference_outputs=reference_outputs, **kwargs),
    )


def trajectory_superset(*, outputs: Any, reference_outputs: Any, **kwargs: Any) -> EvaluatorResult:
    """OpenEvals' deprecated ``trajectory_superset`` (key ``trajectory_superset``;
    arguments are ignored)."""
    _deprecated("trajectory_superset", "superset")
    return cast(
        EvaluatorResult,
        _SUPERSET(outputs=outputs, reference_outputs=reference_outputs, **kwargs),
    )


async def trajectory_superset_async(
    *, outputs: Any, reference_outputs: Any, **kwargs: Any
) -> EvaluatorResult:
    """OpenEvals' deprecated ``trajectory_superset_async``."""
    _deprecated("trajectory_superset_async", "superset")
    return cast(
        EvaluatorResult,
        await _SUPERSET.acall(outputs=outputs, reference_outputs=reference_outputs, **kwargs),
    )


# --- the LLM judge --------------------------------------------------------------------------


def create_trajectory_llm_as_judge(
    *,
    prompt: Any = None,
    model: str | None = None,
    feedback_key: str = "trajectory_accuracy",
    judge: BaseChatModel | Runnable[Any, Any] | None = None,
    continuous: bool = False,
    choices: list[float] | None = None,
    use_reasoning: bool = True,
    few_shot_examples: Sequence[FewShotExample | dict[str, Any]] | None = None,
    system: str | None = None,
) -> SimpleEvaluator:
    """OpenEvals' ``create_trajectory_llm_as_judge``, returning a ``TrajectoryLLMJudge``.

    ``prompt=None`` (the default) grades with ``TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE``
    (OpenEvals' default) when a reference trajectory is passed and with
    ``TRAJECTORY_ACCURACY_PROMPT`` when none is. ``judge`` must be a LangChain chat model;
    a raw OpenAI client is not supported (wrap the model in ``langchain_openai.ChatOpenAI``).
    """
    return cast(SimpleEvaluator, _trajectory_judge(locals()))


def create_async_trajectory_llm_as_judge(
    *,
    prompt: Any = None,
    model: str | None = None,
    feedback_key: str = "trajectory_accuracy",
    judge: BaseChatModel | Runnable[Any, Any] | None = None,
    continuous: bool = False,
    choices: list[float] | None = None,
    use_reasoning: bool = True,
    few_shot_examples: Sequence[FewShotExample | dict[str, Any]] | None = None,
    system: str | None = None,
) -> SimpleAsyncEvaluator:
    """OpenEvals' ``create_async_trajectory_llm_as_judge``: the judge's calls go through
    the model's own async path."""
    llm_judge = _trajectory_judge(locals())
    return cast(SimpleAsyncEvaluator, named_async(llm_judge.acall, llm_judge.get_name()))


def _trajectory_judge(arguments: dict[str, Any]) -> TrajectoryLLMJudge:
    from langchain_evals_port.trajectory import TrajectoryLLMJudge

    judge = judge_model(arguments["judge"], arguments["model"])
    options: dict[str, Any] = {
        "model": judge,
        "feedback_key": arguments["feedback_key"],
        "continuous": arguments["continuous"],
        "choices": arguments["choices"],
        "use_reasoning": arguments["use_reasoning"],
        "few_shot_examples": tuple(arguments["few_shot_examples"] or ()),
        "system": arguments["system"],
    }
    if arguments["prompt"] is not None:
        options["prompt"] = arguments["prompt"]
    return TrajectoryLLMJudge(**options)
