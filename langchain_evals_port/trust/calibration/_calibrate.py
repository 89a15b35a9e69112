"""``calibrate``: run catalog prompts (or your own judge) over labelled cases and measure
them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import UsageMetadataCallbackHandler
from langchain_core.runnables import Runnable

from langchain_evals_port.core import Evaluator, EvaluatorResult
from langchain_evals_port.core._calls import run_awaitable
from langchain_evals_port.core.errors import EvalsError, EvaluatorInputError, EvaluatorUsageError
from langchain_evals_port.judge import JudgeModel, LLMJudge
from langchain_evals_port.judge._model import model_name, resolve_judge
from langchain_evals_port.prompts import PromptText, catalog, get_prompt
from langchain_evals_port.reporting._display import Progress
from langchain_evals_port.trajectory import TrajectoryLLMJudge
from langchain_evals_port.trust import agreement

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
    model: JudgeModel | None = None,
    prompts: Sequence[str | PromptText] | None = None,
    labels: LabelsLike | None = None,
    *,
    judge: Evaluator | None = None,
    max_concurrency: int = 8,
    progress: bool | None = None,
) -> CalibrationReport:
    """How well catalog prompts judged by ``model``, or your own ``judge``, agree with human
    labels.

    Each prompt runs as an ``LLMJudge`` (a ``TrajectoryLLMJudge`` for trajectory prompts) over
    its labelled set; the report gives, per prompt, accuracy and Cohen's κ with their 95 %
    intervals, precision and recall of "fail" (``reporting.agreement``), the parse-failure
    rate, the tokens the model reported and the latency of a case. Calibrate a judge of your
    own (an ``LLMJudge`` with your prompt, or any evaluator that gives pass/fail verdicts) with
    ``judge=`` and its ``labels``: it is reported the same way, under its feedback key. For a
    running event loop, ``await acalibrate(...)``.

    Args:
        model: A chat model or a ``"provider:model"`` string (the ``langchain`` extra) to
            judge catalog prompts with; not with ``judge``, which brings its own.
        prompts: Catalog prompt names (``"CORRECTNESS_PROMPT"``, also ``"correctness"``) or
            prompt texts; by default every prompt with a shipped set (``SHIPPED_SETS``).
        labels: Your own labelled cases (a JSONL file or ``LabelledCase`` objects) for the
            one prompt in ``prompts``, or for ``judge``; by default the set shipped for each
            prompt. Each case's variables are what the judge is invoked with.
        judge: Your own judge to calibrate instead of catalog prompts. A failure of its
            machinery (an unreadable reply, a provider error) is counted apart, as for the
            catalog's judges, whatever its ``on_error``.
        max_concurrency: Cases judged at once.
        progress: Show a progress bar (``None``: where a person watches).

    Raises:
        LabelsError: A labelled set is malformed, or does not fit its prompt.
        EvaluatorUsageError: An unknown prompt (the message names the closest), ``labels``
            with other than one prompt, a prompt that does not judge pass/fail, neither or
            both of ``model`` and ``judge``, ``judge`` without ``labels`` or with ``prompts``,
            or a ``judge`` whose scores are numbers.
        ImportError: ``model`` is a string and the ``langchain`` extra is not installed.

    Example:
        >>> from langchain_evals_port.testing import ScriptedChatModel
        >>> judge = ScriptedChatModel(responder=lambda m: {"reasoning": "Short.", "score": True})
        >>> report = calibrate(judge, ["CONCISENESS_PROMPT"], progress=False)
        >>> calibration = report["CONCISENESS_PROMPT"]
        >>> calibration.agreement.n == len(calibration.cases), calibration.parse_failures
        (True, 0)

        Your own judge, over your own labels:

        >>> mine = LLMJudge(
        ...     prompt="Does this answer the question {inputs} in one sentence? {outputs}",
        ...     feedback_key="one_sentence",
        ...     model=ScriptedChatModel(responder=lambda m: {"reasoning": "Yes.", "score": True}),
        ... )
        >>> labelled = [
        ...     LabelledCase(id="a", variables={"inputs": "Why?", "outputs": "Because."},
        ...                  passed=True),
        ...     LabelledCase(id="b", variables={"inputs": "Why?", "outputs": "Well. So."},
        ...                  passed=False),
        ... ]
        >>> calibrate(judge=mine, labels=labelled, progress=False)["one_sentence"].agreed
        1
    """
    return run_awaitable(
        acalibrate(
            model,
            prompts,
            labels,
            judge=judge,
            max_concurrency=max_concurrency,
            progress=progress,
        ),
        hint="use `await acalibrate(...)` instead",
        name="calibrate",
    )


async def acalibrate(
    model: JudgeModel | None = None,
    prompts: Sequence[str | PromptText] | None = None,
    labels: LabelsLike | None = None,
    *,
    judge: Evaluator | None = None,
    max_concurrency: int = 8,
    progress: bool | None = None,
) -> CalibrationReport:
    """The async twin of ``calibrate``."""
    if max_concurrency < 1:
        raise EvaluatorUsageError(f"max_concurrency must be at least 1, got {max_concurrency}")
    if judge is not None:
        return await _calibrate_judge(judge, model, prompts, labels, max_concurrency, progress)
    if model is None:
        raise EvaluatorUsageError(
            "calibrate needs a model to judge catalog prompts with (model=..., or --model "
            "provider:model), or your own judge (judge=..., or --judge module:attr)"
        )
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
            await _calibrate_one(
                _catalog_judge(prompt, judge_model),
                prompt.entry.name,
                cases,
                source,
                max_concurrency,
                progress,
            )
        )
    name = model if isinstance(model, str) else model_name(judge_model)
    return CalibrationReport(model=name, prompts=tuple(results))


async def _calibrate_judge(
    judge: Evaluator,
    model: JudgeModel | None,
    prompts: Sequence[str | PromptText] | None,
    labels: LabelsLike | None,
    max_concurrency: int,
    progress: bool | None,
) -> CalibrationReport:
    if not isinstance(judge, Evaluator):
        raise EvaluatorUsageError(
            f"judge must be an evaluator (an LLMJudge, say), got {type(judge).__name__}"
        )
    if model is not None or prompts:
        raise EvaluatorUsageError(
            "a judge of your own is calibrated alone: it brings its own model and prompt "
            "(drop model= and prompts=, or --model and --prompt)"
        )
    if labels is None:
        raise EvaluatorUsageError(
            "a judge of your own needs labelled cases: labels=FILE, or --labels FILE"
        )
    name = judge.feedback_key
    if judge.numeric_scores:
        raise EvaluatorUsageError(
            f"{name} cannot be calibrated: calibration compares pass/fail "
            "verdicts, and this judge gives numeric scores"
        )
    cases, source = _cases(labels)
    recording = judge.model_copy(update={"on_error": "record"})
    calibration = await _calibrate_one(recording, name, cases, source, max_concurrency, progress)
    return CalibrationReport(model=_model_of(judge), prompts=(calibration,))


def _model_of(judge: Evaluator) -> str:
    """The name of the model a judge of your own asks, as far as it says."""
    model = getattr(judge, "model", None)
    if isinstance(model, str):
        return model
    if isinstance(model, Runnable):
        return model_name(model)
    return type(judge).__qualname__


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
    else:
        cases, source = _cases(labels)
    check_variables(cases, prompt.entry, source)
    return cases, source


def _cases(labels: LabelsLike) -> tuple[tuple[LabelledCase, ...], str]:
    if isinstance(labels, (str, Path)):
        return load_labels(labels), str(labels)
    cases = tuple(labels)
    if not cases:
        raise LabelsError("labels holds no cases")
    return cases, "labelled cases given"


def _catalog_judge(prompt: PromptText, model: Runnable[Any, Any]) -> LLMJudge:
    if prompt.entry.input_kind == "messages":
        return TrajectoryLLMJudge(prompt=prompt, model=model, on_error="record")
    return LLMJudge(prompt=prompt, model=model, on_error="record")


async def _calibrate_one(
    judge: Evaluator,
    name: str,
    cases: Sequence[LabelledCase],
    source: str,
    max_concurrency: int,
    progress: bool | None,
) -> PromptCalibration:
    usage = UsageMetadataCallbackHandler()
    gate = asyncio.Semaphore(max_concurrency)
    bar = Progress(name, len(cases), progress)

    async def one(case: LabelledCase) -> tuple[CaseCalibration, EvaluatorResult]:
        async with gate:
            started = time.perf_counter()
            output = await judge.ainvoke(dict(case.variables), config={"callbacks": [usage]})
            latency = (time.perf_counter() - started) * 1000
        bar.advance()
        result = output[0] if isinstance(output, list) else output
        return _case(case, result, latency), result

    try:
        judged = await asyncio.gather(*(one(case) for case in cases))
    finally:
        bar.close()
    # A verdict counts as pass or fail as the case reads it; a non-verdict goes to
    # ``agreement`` as it is, to be counted as failed or inconclusive, never as disagreement.
    figures = agreement(
        [
            result if verdict.judged is None else verdict.judged == "pass"
            for verdict, result in judged
        ],
        [case.passed for case in cases],
    )
    reported = list(usage.usage_metadata.values())
    return PromptCalibration(
        prompt=name,
        labels=source,
        cases=tuple(verdict for verdict, _ in judged),
        agreement=figures,
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
