"""agentevals' public functions, with agentevals' (0.0.9) signatures and dict results: the
graph trajectory functions, and the trajectory match and LLM judge functions of
``agentevals.trajectory`` (the same as OpenEvals', as in agentevals).

Migrating is an import change::

    # from agentevals.graph_trajectory.utils import extract_langgraph_trajectory_from_thread
    # from agentevals.graph_trajectory.strict import graph_trajectory_strict_match
    from langchain_evals_port.compat.agentevals import (
        extract_langgraph_trajectory_from_thread,
        graph_trajectory_strict_match,
    )

The functions run this package's ``extract_graph_trajectory``, ``GraphTrajectoryMatch`` and
``GraphTrajectoryLLMJudge``, so the extracted data follows their rules where agentevals reads
a thread wrongly (a subgraph no longer adds a phantom turn, nested subgraphs keep their full
path, a resumed turn has its answer as input), and the judge's default prompt is this
package's own text, not agentevals'. PARITY.md lists every difference.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from langchain_core.runnables import Runnable, RunnableConfig

from langchain_evals_port.compat._openevals_trajectory import (
    create_async_trajectory_llm_as_judge,
    create_async_trajectory_match_evaluator,
    create_trajectory_llm_as_judge,
    create_trajectory_match_evaluator,
    trajectory_strict_match,
    trajectory_strict_match_async,
    trajectory_subset,
    trajectory_subset_async,
    trajectory_superset,
    trajectory_superset_async,
    trajectory_unordered_match,
    trajectory_unordered_match_async,
)
from langchain_evals_port.compat._shared import (
    EvaluatorResult,
    SimpleAsyncEvaluator,
    SimpleEvaluator,
    judge_model,
    named_async,
)
from langchain_evals_port.compat.agentevals.types import (
    ExtractedLangGraphThreadTrajectory,
    GraphTrajectory,
)
from langchain_evals_port.trajectory._graph import GraphTrajectoryMatch
from langchain_evals_port.trajectory._graph_extract import (
    aextract_graph_trajectory,
    extract_graph_trajectory,
)
from langchain_evals_port.trajectory._graph_judge import (
    GRAPH_TRAJECTORY_PROMPT,
    GraphTrajectoryLLMJudge,
)

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langgraph.pregel import Pregel

    from langchain_evals_port.judge import FewShotExample
    from langchain_evals_port.prompts import PromptText

    TRAJECTORY_ACCURACY_PROMPT: PromptText
    TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE: PromptText

__all__ = [
    "DEFAULT_REF_COMPARE_PROMPT",
    "TRAJECTORY_ACCURACY_PROMPT",
    "TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE",
    "ExtractedLangGraphThreadTrajectory",
    "GraphTrajectory",
    "aextract_langgraph_trajectory_from_thread",
    "create_async_graph_trajectory_llm_as_judge",
    "create_async_trajectory_llm_as_judge",
    "create_async_trajectory_match_evaluator",
    "create_graph_trajectory_llm_as_judge",
    "create_trajectory_llm_as_judge",
    "create_trajectory_match_evaluator",
    "extract_langgraph_trajectory_from_thread",
    "graph_trajectory_strict_match",
    "graph_trajectory_strict_match_async",
    "trajectory_strict_match",
    "trajectory_strict_match_async",
    "trajectory_subset",
    "trajectory_subset_async",
    "trajectory_superset",
    "trajectory_superset_async",
    "trajectory_unordered_match",
    "trajectory_unordered_match_async",
]

DEFAULT_REF_COMPARE_PROMPT = GRAPH_TRAJECTORY_PROMPT
"""The judge's default prompt: this package's own text (agentevals' is not copied)."""

_PROMPTS = frozenset({"TRAJECTORY_ACCURACY_PROMPT", "TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE"})


_STRICT = GraphTrajectoryMatch(mode="strict")


def extract_langgraph_trajectory_from_thread(
    graph: Pregel[Any, Any, Any, Any], config: RunnableConfig
) -> ExtractedLangGraphThreadTrajectory:
    """agentevals' extraction: ``{"inputs": [...], "outputs": {"inputs", "results",
    "steps"}}`` of the thread ``config`` names, read from the graph's checkpointer."""
    return cast(
        ExtractedLangGraphThreadTrajectory, extract_graph_trajectory(graph, config).to_dict()
    )


async def aextract_langgraph_trajectory_from_thread(
    graph: Pregel[Any, Any, Any, Any], config: RunnableConfig
) -> ExtractedLangGraphThreadTrajectory:
    """The async twin: reads the history with ``aget_state_history``."""
    trajectory = await aextract_graph_trajectory(graph, config)
    return cast(ExtractedLangGraphThreadTrajectory, trajectory.to_dict())


def graph_trajectory_strict_match(
    *, outputs: GraphTrajectory, reference_outputs: GraphTrajectory, **kwargs: Any
) -> EvaluatorResult:
    """agentevals' ``graph_trajectory_strict_match``: ``True`` when every turn ran the same
    nodes in the same order as the reference (key ``graph_trajectory_strict_match``).

    A failing result's comment and metadata say which turns differ."""
    return cast(
        EvaluatorResult, _STRICT(outputs=outputs, reference_outputs=reference_outputs, **kwargs)
    )


async def graph_trajectory_strict_match_async(
    *, outputs: GraphTrajectory, reference_outputs: GraphTrajectory, **kwargs: Any
) -> EvaluatorResult:
    """The async twin of ``graph_trajectory_strict_match``."""
    return cast(
        EvaluatorResult,
        await _STRICT.acall(outputs=outputs, reference_outputs=reference_outputs, **kwargs),
    )


def create_graph_trajectory_llm_as_judge(
    *,
    prompt: str | Runnable[Any, Any] | Callable[..., Any] = DEFAULT_REF_COMPARE_PROMPT,
    model: str | None = None,
    feedback_key: str = "graph_trajectory_accuracy",
    judge: BaseChatModel | Runnable[Any, Any] | None = None,
    continuous: bool = False,
    choices: list[float] | None = None,
    use_reasoning: bool = True,
    few_shot_examples: Sequence[FewShotExample | dict[str, Any]] | None = None,
) -> SimpleEvaluator:
    """agentevals' factory, returning a ``GraphTrajectoryLLMJudge`` (callable like
    agentevals' evaluator, and a Runnable besides).

    The default prompt is this package's own (``DEFAULT_REF_COMPARE_PROMPT``); a custom
    prompt gets agentevals' variables: ``thread``, ``reference_outputs`` (a rendered block,
    empty without a reference), ``inputs`` and ``outputs``. ``judge`` must be a LangChain
    chat model; a raw OpenAI client is not supported.
    """
    return cast(SimpleEvaluator, _graph_judge(locals()))


def create_async_graph_trajectory_llm_as_judge(
    *,
    prompt: str | Runnable[Any, Any] | Callable[..., Any] = DEFAULT_REF_COMPARE_PROMPT,
    model: str | None = None,
    feedback_key: str = "graph_trajectory_accuracy",
    judge: BaseChatModel | Runnable[Any, Any] | None = None,
    continuous: bool = False,
    choices: list[float] | None = None,
    use_reasoning: bool = True,
    few_shot_examples: Sequence[FewShotExample | dict[str, Any]] | None = None,
) -> SimpleAsyncEvaluator:
    """agentevals' async factory: the judge's calls go through the model's async path."""
    graph_judge = _graph_judge(locals())
    return cast(SimpleAsyncEvaluator, named_async(graph_judge.acall, graph_judge.get_name()))


def _graph_judge(arguments: dict[str, Any]) -> GraphTrajectoryLLMJudge:
    judge = judge_model(arguments["judge"], arguments["model"])
    return GraphTrajectoryLLMJudge(
        prompt=arguments["prompt"],
        model=judge,
        feedback_key=arguments["feedback_key"],
        continuous=arguments["continuous"],
        choices=arguments["choices"],
        use_reasoning=arguments["use_reasoning"],
        few_shot_examples=tuple(arguments["few_shot_examples"] or ()),
    )


def __getattr__(name: str) -> Any:
    # agentevals' trajectory prompts are OpenEvals' texts: the catalog's, read on first use.
    if name in _PROMPTS:
        from langchain_evals_port import prompts

        return getattr(prompts, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
