"""OpenEvals' code evaluators (``openevals.code``), with OpenEvals' signatures.

``create_mypy_evaluator`` returns a ``MypyCheck``, ``create_pyright_evaluator`` a
``PyrightCheck`` and ``create_code_llm_as_judge`` a ``CodeLLMJudge``: keyword-callable like
OpenEvals' evaluators, with the same keys (``mypy_succeeded``, ``pyright_succeeded``,
``code_correctness``) and run names; Runnables besides. The async factories return
coroutine functions. Differences (PARITY.md): the comment lists the diagnostics as
``file:line:column: severity: message [code]`` and ``metadata["errors"]`` holds them
structured; a missing mypy or pyright raises ``ToolNotFoundError`` instead of scoring the code
as failing; ``code_extractor`` may return None for "no code".
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

from langchain_core.runnables import Runnable

from langchain_evals_port.code import CodeExtractor, MypyCheck, PyrightCheck
from langchain_evals_port.compat._shared import (
    SimpleAsyncEvaluator,
    SimpleEvaluator,
    judge_model,
    named_async,
)

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from langchain_evals_port.code import CodeLLMJudge
    from langchain_evals_port.judge import FewShotExample

__all__ = [
    "create_async_code_llm_as_judge",
    "create_async_mypy_evaluator",
    "create_async_pyright_evaluator",
    "create_code_llm_as_judge",
    "create_mypy_evaluator",
    "create_pyright_evaluator",
]

Strategy = Literal["none", "llm", "markdown_code_blocks"]

_EXTRACTING = ("llm", "markdown_code_blocks")


def _strategy(strategy: Any) -> Strategy:
    # As in OpenEvals, every value but "llm" and "markdown_code_blocks" (its own tests pass
    # "all") means no extraction.
    return cast("Strategy", strategy if strategy in _EXTRACTING else "none")


_MYPY_DEFAULT_ARGS = (
    "--no-incremental",
    "--disallow-untyped-calls",
    "--disallow-incomplete-defs",
    "--ignore-missing-imports",
)


def _extraction(
    strategy: Strategy,
    code_extractor: Callable[[Any], Any] | None,
    extraction_model: Any,
    language: str | None,
) -> CodeExtractor:
    if code_extractor is not None and strategy != "none":
        raise ValueError("pass either code_extractor or code_extraction_strategy, not both")
    if code_extractor is not None:
        # OpenEvals hands its extractor the outputs as given, not their text.
        return CodeExtractor(code_extractor, language=language, callable_input="outputs")
    return CodeExtractor(_strategy(strategy), language=language, model=extraction_model)


def _checker_model(strategy: Strategy, client: Any, model: str | None) -> Any:
    if _strategy(strategy) != "llm":
        if client is not None or model is not None:
            raise ValueError(
                "client and model are only used by code_extraction_strategy='llm'; "
                f"the strategy here is {strategy!r}"
            )
        return None
    if client is None and model is None:
        raise ValueError("code_extraction_strategy='llm' needs a model string or a client")
    return judge_model(client, model)


def create_mypy_evaluator(
    *,
    mypy_cli_args: list[str] = list(_MYPY_DEFAULT_ARGS),  # noqa: B006 - OpenEvals' default
    code_extraction_strategy: Strategy = "none",
    code_extractor: Callable[[Any], str] | None = None,
    client: BaseChatModel | Runnable[Any, Any] | None = None,
    model: str | None = None,
) -> SimpleEvaluator:
    """OpenEvals' ``create_mypy_evaluator``, returning a ``MypyCheck`` (key
    ``mypy_succeeded``, run name ``mypy_evaluator``)."""
    return cast(
        SimpleEvaluator,
        _mypy(mypy_cli_args, code_extraction_strategy, code_extractor, client, model, "sync"),
    )


def create_async_mypy_evaluator(
    *,
    mypy_cli_args: list[str] = list(_MYPY_DEFAULT_ARGS),  # noqa: B006 - OpenEvals' default
    code_extraction_strategy: Strategy = "none",
    code_extractor: Callable[[Any], str | Awaitable[str]] | None = None,
    client: BaseChatModel | Runnable[Any, Any] | None = None,
    model: str | None = None,
) -> SimpleAsyncEvaluator:
    """OpenEvals' ``create_async_mypy_evaluator``: mypy runs as an asyncio subprocess (run
    name ``mypy_check``)."""
    check = _mypy(mypy_cli_args, code_extraction_strategy, code_extractor, client, model, "async")
    return cast(SimpleAsyncEvaluator, named_async(check.acall, check.get_name()))


def _mypy(
    args: Sequence[str],
    strategy: Strategy,
    extractor: Callable[[Any], Any] | None,
    client: Any,
    model: str | None,
    flavour: str,
) -> MypyCheck:
    extraction_model = _checker_model(strategy, client, model)
    return MypyCheck(
        name="mypy_evaluator" if flavour == "sync" else "mypy_check",
        args=tuple(args),
        code_extraction=_extraction(strategy, extractor, extraction_model, "python"),
    )


def create_pyright_evaluator(
    *,
    pyright_cli_args: list[str] = [],  # noqa: B006 - OpenEvals' default
    code_extraction_strategy: Strategy = "none",
    code_extractor: Callable[[Any], str] | None = None,
    client: BaseChatModel | Runnable[Any, Any] | None = None,
    model: str | None = None,
) -> SimpleEvaluator:
    """OpenEvals' ``create_pyright_evaluator``, returning a ``PyrightCheck`` (key
    ``pyright_succeeded``, run name ``pyright_evaluator``). As in OpenEvals only errors fail
    the check and unresolved imports are ignored."""
    return cast(
        SimpleEvaluator,
        _pyright(pyright_cli_args, code_extraction_strategy, code_extractor, client, model, "sync"),
    )


def create_async_pyright_evaluator(
    *,
    pyright_cli_args: list[str] = [],  # noqa: B006 - OpenEvals' default
    code_extraction_strategy: Strategy = "none",
    code_extractor: Callable[[Any], str | Awaitable[str]] | None = None,
    client: BaseChatModel | Runnable[Any, Any] | None = None,
    model: str | None = None,
) -> SimpleAsyncEvaluator:
    """OpenEvals' ``create_async_pyright_evaluator`` (run name ``pyright_check``)."""
    check = _pyright(
        pyright_cli_args, code_extraction_strategy, code_extractor, client, model, "async"
    )
    return cast(SimpleAsyncEvaluator, named_async(check.acall, check.get_name()))


def _pyright(
    args: Sequence[str],
    strategy: Strategy,
    extractor: Callable[[Any], Any] | None,
    client: Any,
    model: str | None,
    flavour: str,
) -> PyrightCheck:
    extraction_model = _checker_model(strategy, client, model)
    return PyrightCheck(
        name="pyright_evaluator" if flavour == "sync" else "pyright_check",
        args=tuple(args),
        code_extraction=_extraction(strategy, extractor, extraction_model, "python"),
    )


def create_code_llm_as_judge(
    *,
    prompt: Any,
    feedback_key: str = "code_correctness",
    code_extraction_strategy: Strategy = "none",
    code_extractor: Callable[[Any], str] | None = None,
    judge: BaseChatModel | Runnable[Any, Any] | None = None,
    model: str | None = None,
    system: str | None = None,
    continuous: bool = False,
    choices: list[float] | None = None,
    use_reasoning: bool = True,
    few_shot_examples: Sequence[FewShotExample | dict[str, Any]] | None = None,
) -> SimpleEvaluator:
    """OpenEvals' ``create_code_llm_as_judge``, returning a ``CodeLLMJudge`` (run name
    ``code_llm_as_judge``). The judge model also extracts the code with
    ``code_extraction_strategy="llm"``, as in OpenEvals."""
    return cast(SimpleEvaluator, _code_judge(locals()))


def create_async_code_llm_as_judge(
    *,
    prompt: Any,
    feedback_key: str = "code_correctness",
    code_extraction_strategy: Strategy = "none",
    code_extractor: Callable[[Any], str | Awaitable[str]] | None = None,
    judge: BaseChatModel | Runnable[Any, Any] | None = None,
    model: str | None = None,
    system: str | None = None,
    continuous: bool = False,
    choices: list[float] | None = None,
    use_reasoning: bool = True,
    few_shot_examples: Sequence[FewShotExample | dict[str, Any]] | None = None,
) -> SimpleAsyncEvaluator:
    """OpenEvals' ``create_async_code_llm_as_judge``: judge and extraction calls use the
    model's async path."""
    code_judge = _code_judge(locals())
    return cast(SimpleAsyncEvaluator, named_async(code_judge.acall, code_judge.get_name()))


def _code_judge(arguments: dict[str, Any]) -> CodeLLMJudge:
    from langchain_evals_port.code import CodeLLMJudge

    chosen = judge_model(arguments["judge"], arguments["model"])
    strategy: Strategy = arguments["code_extraction_strategy"]
    if strategy == "llm" and chosen is None:
        raise ValueError("code_extraction_strategy='llm' needs a model string or a judge")
    extraction = _extraction(strategy, arguments["code_extractor"], chosen, None)
    return CodeLLMJudge(
        prompt=arguments["prompt"],
        model=chosen,
        feedback_key=arguments["feedback_key"] or "code_correctness",
        system=arguments["system"],
        continuous=arguments["continuous"],
        choices=arguments["choices"],
        use_reasoning=arguments["use_reasoning"],
        few_shot_examples=tuple(arguments["few_shot_examples"] or ()),
        code_extraction=extraction,
    )
