"""``calibrate``: run catalog prompts as judges over labelled cases and measure them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import UsageMetadataCallbackHandler
from langchain_core.runnables import Runnable

from langchain_evals_port.core import EvaluatorResult
from langchain_evals_port.core.errors import EvalsError, EvaluatorInputError, EvaluatorUsageError
from langchain_evals_port.judge import JudgeModel, LLMJudge
from langchain_evals_port.judge._model import model_name, resolve_judge
from langchain_evals_port.prompts import PromptText, catalog, get_prompt
from langchain_evals_port.reporting._display import Progress
from langchain_evals_port.trajectory import TrajectoryLLMJudge

from ._agreement import label_agreement
from ._labels import (
    SHIPPED_SETS,
    LabelledCase,
    LabelsError,
    check_variables,
    load_labels,
    shipped_labels,
)
from ._report import CalibrationReport, CaseCalibration, PromptCalibration

LabelsLike = str | Path | Sequence[LabelledCase]
"""A JSONL file of labelled cases, or the cases themselves."""


def calibrate(
    model: JudgeModel,
    prompts: Sequence[str | PromptText] | None = None,
    labels: LabelsLike | None = None,
    *,
    max_concurrency: int = 8,
    progress: bool | None = None,
) -> CalibrationReport:
    """How well catalog prompts, judged by ``model``, agree with human labels.

    Each prompt runs as an ``LLMJudge`` (a ``TrajectoryLLMJudge`` for trajectory prompts) over
    its labelled set; the report gives, per prompt, accuracy and Cohen's κ against the labels,
    the parse-failure rate, the tokens the model reported and the latency of a case. For a
    running event loop, ``await acalibrate(...)``.

    Args:
        model: A chat model or a ``"provider:model"`` string (the ``langchain`` extra).
        prompts: Catalog prompt names (``"CORRECTNESS_PROMPT"``, also ``"correctness"``) or
            prompt texts; by default every prompt with a shipped set (``SHIPPED_SETS``).
        labels: Your own labelled cases (a JSONL file or ``LabelledCase`` objects) for the
            one prompt in ``prompts``; by default the set shipped for each prompt.
        max_concurrency: Cases judged at once.
        progress: Show a progress bar (``None``: where a person watches).

    Raises:
        LabelsError: A labelled set is malformed, or does not fit its prompt.
        EvaluatorUsageError: An unknown prompt (the message names the closest), ``labels``
            with other than one prompt, or a prompt that does not judge pass/fail.
        ImportError: ``model`` is a string and the ``langchain`` extra is not installed.

    Example:
        >>> from langchain_evals_port.testing import ScriptedChatModel
        >>> judge = ScriptedChatModel(responder=lambda m: {"reasoning": "Short.", "score": True})
        >>> report = calibrate(judge, ["CONCISENESS_PROMPT"], progress=False)
        >>> calibration = report["CONCISENESS_PROMPT"]
        >>> calibration.agreement.judged == len(calibration.cases), calibration.parse_failures
        (True, 0)
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(
            acalibrate(model, prompts, labels, max_concurrency=max_concurrency, progress=progress)
        )
    raise EvaluatorUsageError(
        "calibrate was called inside a running event loop; use `await acalibrate(...)` instead"
    )


async def acalibrate(
    model: JudgeModel,
    prompts: Sequence[str | PromptText] | None = None,
    labels: LabelsLike | None = None,
    *,
    max_concurrency: int = 8,
    progress: bool | None = None,
) -> CalibrationReport:
    """The async twin of ``calibrate``."""
    if max_concurrency < 1:
        raise EvaluatorUsageError(f"max_concurrency must be at least 1, got {max_concurrency}")
    chosen = [_prompt(prompt) for prompt in (prompts or list(SHIPPED_SETS))]
    if labels is not None and len(chosen) != 1:
        raise EvaluatorUsageError(
            f"labels are for one prompt; {len(chosen)} prompts were given (name the one "
            "the labels are for: prompts=[NAME], or --prompt NAME)"
        )
    judge_model = _judge_model(model)
    plans = [(prompt, *_labelled(prompt, labels)) for prompt in chosen]
    results = []
    for prompt, cases, source in plans:
        results.append(
            await _calibrate_one(judge_model, prompt, cases, source, max_concurrency, progress)
        )
    name = model if isinstance(model, str) else model_name(judge_model)
    return CalibrationReport(model=name, prompts=tuple(results))


def _judge_model(model: JudgeModel) -> Runnable[Any, Any]:
    """The model, resolved before any case runs: a missing extra, an unknown provider or a
    client that cannot be built (no API key) stops calibration with one clear error."""
    try:
        return resolve_judge(model)
    except (EvalsError, ImportError):
        raise
    except Exception as error:
        raise EvaluatorInputError(
            f"cannot build the judge model {model!r}: {type(error).__name__}: {error}"
        ) from error


def _prompt(prompt: str | PromptText) -> PromptText:
    if isinstance(prompt, PromptText):
        text = prompt
    else:
        names = catalog()
        name = next(
            (n for n in (prompt, prompt.upper(), f"{prompt.upper()}_PROMPT") if n in names),
            prompt,
        )
        try:
            text = get_prompt(name)
        except KeyError as error:
            raise EvaluatorUsageError(str(error.args[0])) from None
    entry = text.entry
    if entry.classifies or entry.input_kind == "attachments":
        raise EvaluatorUsageError(
            f"{entry.name} cannot be calibrated: calibration compares pass/fail verdicts on "
            "text or trajectories, and this prompt "
            + ("asks for a label" if entry.classifies else "judges attachments")
        )
    return text


def _labelled(
    prompt: PromptText, labels: LabelsLike | None
) -> tuple[tuple[LabelledCase, ...], str]:
    name = prompt.entry.name
    if labels is None:
        cases, source = shipped_labels(name), f"shipped set {SHIPPED_SETS.get(name)}"
    elif isinstance(labels, (str, Path)):
        cases, source = load_labels(labels), str(labels)
    else:
        cases, source = tuple(labels), "labelled cases given"
        if not cases:
            raise LabelsError("labels holds no cases")
    check_variables(cases, prompt.entry, source)
    return cases, source


def _judge(prompt: PromptText, model: Runnable[Any, Any]) -> LLMJudge:
    if prompt.entry.input_kind == "messages":
        return TrajectoryLLMJudge(prompt=prompt, model=model, on_error="record")
    return LLMJudge(prompt=prompt, model=model, on_error="record")


async def _calibrate_one(
    model: Runnable[Any, Any],
    prompt: PromptText,
    cases: Sequence[LabelledCase],
    source: str,
    max_concurrency: int,
    progress: bool | None,
) -> PromptCalibration:
    judge = _judge(prompt, model)
    usage = UsageMetadataCallbackHandler()
    gate = asyncio.Semaphore(max_concurrency)
    bar = Progress(prompt.entry.name, len(cases), progress)

    async def one(case: LabelledCase) -> CaseCalibration:
        async with gate:
            started = time.perf_counter()
            output = await judge.ainvoke(dict(case.variables), config={"callbacks": [usage]})
            latency = (time.perf_counter() - started) * 1000
        bar.advance()
        result = output[0] if isinstance(output, list) else output
        return _case(case, result, latency)

    try:
        judged = await asyncio.gather(*(one(case) for case in cases))
    finally:
        bar.close()
    agreement = label_agreement(
        (case.label == "pass", verdict.judged == "pass")
        for case, verdict in zip(cases, judged, strict=True)
        if verdict.judged is not None
    )
    reported = list(usage.usage_metadata.values())
    return PromptCalibration(
        prompt=prompt.entry.name,
        labels=source,
        cases=tuple(judged),
        agreement=agreement,
        input_tokens=sum(counts["input_tokens"] for counts in reported),
        output_tokens=sum(counts["output_tokens"] for counts in reported),
        total_tokens=sum(counts["total_tokens"] for counts in reported),
    )


def _case(case: LabelledCase, result: EvaluatorResult, latency_ms: float) -> CaseCalibration:
    judged = None
    if result.is_verdict:
        judged = "pass" if result.score else "fail"
    return CaseCalibration(
        id=case.id,
        label=case.label,
        judged=judged,
        outcome=result.outcome,
        error_code=result.error_code,
        reasoning=result.comment if result.is_verdict else result.reason,
        rationale=case.rationale,
        latency_ms=round(latency_ms, 3),
    )
