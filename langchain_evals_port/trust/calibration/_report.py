"""What calibration found: ``CalibrationReport`` of one ``PromptCalibration`` per prompt,
printed as a table and written as JSON and Markdown."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_evals_port.reporting import Interval, wilson_interval
from langchain_evals_port.reporting._display import terminal
from langchain_evals_port.reporting._render import figure
from langchain_evals_port.trust import Agreement

if TYPE_CHECKING:
    from rich.table import Table

REPORT_SCHEMA_VERSION = 1

_COLUMNS = (
    "prompt",
    "cases",
    "accuracy [95% CI]",
    "κ [95% CI]",
    "fail precision / recall",
    "parse failures",
    "other failures",
    "tokens in / out",
    "latency p50 / p95",
)
"""The columns of the calibration table, on the terminal and in Markdown."""


@dataclass(frozen=True)
class CaseCalibration:
    """One labelled case as the judge saw it.

    Attributes:
        id: The case's id in its set.
        label: The human label, ``"pass"`` or ``"fail"``.
        judged: The judge's verdict, ``"pass"`` or ``"fail"``; ``None`` when it reached none.
        outcome: The judge result's outcome: ``verdict``, ``inconclusive`` or ``failed``.
        error_code: A failure's reason code (``judge_parse_failure``, ``provider_error``, ...).
        reasoning: The judge's reasoning, or a non-verdict's reason.
        rationale: Why the person chose the label.
        latency_ms: Wall time of the judge's evaluation, repairs included.
    """

    id: str
    label: str
    judged: str | None
    outcome: str
    error_code: str | None
    reasoning: str | None
    rationale: str
    latency_ms: float

    @property
    def agrees(self) -> bool | None:
        """Whether the judge said what the person said; ``None`` without a verdict."""
        return None if self.judged is None else self.judged == self.label


@dataclass(frozen=True)
class PromptCalibration:
    """One judge over its labelled set: a catalog prompt's, or your own.

    Attributes:
        prompt: The catalog prompt's name, or your judge's name.
        labels: Where the labels came from (a shipped set or the user's file).
        cases: Each case's outcome, in the set's order.
        agreement: ``reporting.agreement`` of the judge's verdicts with the labels: accuracy,
            Cohen's κ with its 95 % interval, the confusion counts keyed ``(judge, human)``
            (``True`` for pass), precision and recall of "fail"; failed and inconclusive
            cases are counted apart (``agreement.failed``, ``agreement.inconclusive``),
            never as disagreement.
        input_tokens, output_tokens, total_tokens: Summed over every judge model call,
            repair prompts included, as the model reported them.
    """

    prompt: str
    labels: str
    cases: tuple[CaseCalibration, ...]
    agreement: Agreement
    input_tokens: int
    output_tokens: int
    total_tokens: int

    @property
    def agreed(self) -> int:
        """Cases where the judge said what the person said."""
        agreement = self.agreement
        return sum(agreement.confusion[(label, label)] for label in agreement.classes)

    @property
    def parse_failures(self) -> int:
        """Cases whose judge reply could not be read as a verdict, even after a repair."""
        return sum(case.error_code == "judge_parse_failure" for case in self.cases)

    @property
    def other_failures(self) -> int:
        """Cases that failed for another reason (provider errors, timeouts) or were
        inconclusive."""
        return sum(case.judged is None for case in self.cases) - self.parse_failures

    @property
    def parse_failure_rate(self) -> float:
        """Parse failures out of all cases."""
        return self.parse_failures / len(self.cases) if self.cases else 0.0

    @property
    def accuracy_interval(self) -> Interval | None:
        """The 95 % Wilson interval of the accuracy; ``None`` when nothing was judged."""
        judged = self.agreement.n
        return wilson_interval(self.agreed, judged) if judged else None

    @property
    def latency_median_ms(self) -> float:
        """The median wall time of one case's evaluation."""
        return percentile([case.latency_ms for case in self.cases], 50)

    @property
    def latency_p95_ms(self) -> float:
        """The 95th percentile of one case's evaluation time."""
        return percentile([case.latency_ms for case in self.cases], 95)

    def to_dict(self) -> dict[str, Any]:
        """The figures and the cases, as JSON-ready data."""
        agreement = self.agreement
        return {
            "prompt": self.prompt,
            "labels": self.labels,
            "cases": len(self.cases),
            "judged": agreement.n,
            "agreed": self.agreed,
            "accuracy": agreement.accuracy,
            "accuracy_interval": _bounds(self.accuracy_interval),
            "kappa": agreement.kappa,
            "kappa_interval": _bounds(agreement.kappa_interval),
            "kappa_undefined": agreement.kappa_undefined,
            "fail_precision": agreement.fail_precision,
            "fail_recall": agreement.fail_recall,
            "confusion": {
                f"human_{_label(human)}_judge_{_label(judge)}": agreement.confusion.get(
                    (judge, human), 0
                )
                for human in (True, False)
                for judge in (True, False)
            },
            "parse_failures": self.parse_failures,
            "parse_failure_rate": self.parse_failure_rate,
            "other_failures": self.other_failures,
            "tokens": {
                "input": self.input_tokens,
                "output": self.output_tokens,
                "total": self.total_tokens,
            },
            "latency_ms": {"median": self.latency_median_ms, "p95": self.latency_p95_ms},
            "results": [
                {
                    "id": case.id,
                    "label": case.label,
                    "judged": case.judged,
                    "outcome": case.outcome,
                    "error_code": case.error_code,
                    "reasoning": case.reasoning,
                    "rationale": case.rationale,
                    "latency_ms": case.latency_ms,
                }
                for case in self.cases
            ],
        }


@dataclass(frozen=True)
class CalibrationReport:
    """How well each prompt's judge, on one model, agrees with labelled cases.

    Attributes:
        model: The judge model's name.
        prompts: One ``PromptCalibration`` per prompt (or for your own judge), in the order
            asked for.
    """

    model: str
    prompts: tuple[PromptCalibration, ...]

    def __getitem__(self, prompt: str) -> PromptCalibration:
        for calibration in self.prompts:
            if calibration.prompt == prompt:
                return calibration
        raise KeyError(prompt)

    def to_dict(self) -> dict[str, Any]:
        """The whole report as JSON-ready data."""
        return {
            "schema_version": REPORT_SCHEMA_VERSION,
            "model": self.model,
            "prompts": [calibration.to_dict() for calibration in self.prompts],
        }

    def table(self) -> Table:
        """One row per prompt: agreement, failures, tokens and latency.

        κ's cell is ``undefined`` when judge and labels gave every case one class (nothing to
        disagree on), and has no interval when only one side did (``reporting.agreement``).
        """
        from rich.table import Table

        table = Table(*_COLUMNS, title=f"Judge calibration: {self.model}")
        for row in self._rows():
            table.add_row(*row)
        return table

    def print(self) -> None:
        """Print the table on the terminal."""
        terminal().print(self.table())

    def markdown(self) -> str:
        """The table and each prompt's disagreements, as Markdown."""
        header = list(_COLUMNS)
        lines = [
            f"# Judge calibration: {self.model}",
            "",
            "| " + " | ".join(header) + " |",
            "|" + "---|" * len(header),
            *("| " + " | ".join(row) + " |" for row in self._rows()),
        ]
        for calibration in self.prompts:
            missed = [case for case in calibration.cases if case.agrees is not True]
            lines += ["", f"## {calibration.prompt}", "", f"Labels: {calibration.labels}.", ""]
            if not missed:
                lines.append("The judge agreed with every label.")
                continue
            lines += [
                "| case | label | judge | why the label | judge said |",
                "|---|---|---|---|---|",
            ]
            for case in missed:
                judged = case.judged or f"{case.outcome}: {case.error_code or '-'}"
                lines.append(
                    f"| {case.id} | {case.label} | {judged} | {_cell(case.rationale)} "
                    f"| {_cell(case.reasoning or '')} |"
                )
        return "\n".join(lines) + "\n"

    def write(self, directory: str | Path) -> list[Path]:
        """Write ``calibration.json`` and ``calibration.md`` into ``directory``; their paths."""
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        data = folder / "calibration.json"
        data.write_text(json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n")
        page = folder / "calibration.md"
        page.write_text(self.markdown(), encoding="utf-8")
        return [data, page]

    def _rows(self) -> list[tuple[str, ...]]:
        rows: list[tuple[str, ...]] = []
        for calibration in self.prompts:
            agreement = calibration.agreement
            interval = calibration.accuracy_interval
            accuracy = (
                "-"
                if agreement.accuracy is None or interval is None
                else f"{agreement.accuracy:.3f} {interval}"
            )
            rows.append(
                (
                    calibration.prompt,
                    str(len(calibration.cases)),
                    accuracy,
                    _kappa(agreement),
                    f"{_share(agreement.fail_precision)} / {_share(agreement.fail_recall)}",
                    f"{calibration.parse_failures} ({calibration.parse_failure_rate:.0%})",
                    str(calibration.other_failures),
                    f"{calibration.input_tokens} / {calibration.output_tokens}",
                    f"{_ms(calibration.latency_median_ms)} / {_ms(calibration.latency_p95_ms)}",
                )
            )
        return rows


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile of ``values``, interpolating between ranks (0.0 for none).

    Example:
        >>> percentile([1.0, 2.0, 3.0, 4.0], 50), percentile([1.0, 2.0, 3.0, 4.0], 95)
        (2.5, 3.85)
    """
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _kappa(agreement: Agreement) -> str:
    if agreement.kappa is None:
        return "-" if agreement.n == 0 else "undefined"
    interval = agreement.kappa_interval
    return figure(agreement.kappa) + ("" if interval is None else f" {interval}")


def _share(value: float | None) -> str:
    return "-" if value is None else figure(value)


def _bounds(interval: Interval | None) -> list[float] | None:
    return None if interval is None else [interval.low, interval.high]


def _label(passed: bool) -> str:
    return "pass" if passed else "fail"


def _ms(value: float) -> str:
    return f"{value / 1000:.2f} s" if value >= 1000 else f"{value:.0f} ms"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")
