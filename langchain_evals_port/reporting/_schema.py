"""The one report schema: what an experiment's ``report.json`` and the pytest plugin's
``eval-report.json`` (its pinned baseline and history too) hold, as pydantic models.

Both writers build a ``Report`` and write ``Report.to_json()``; both readers read one with
``Report.read`` / ``Report.from_json``. The figures of a key are ``KeyStatistics`` as
``summarize`` computes them, so a baseline read back compares exactly as the run that
wrote it; a row is one run of a case (an experiment's) or one test's results (the
plugin's), in one shape, the fields one writer has no value for left ``null``.

Version 2 replaced two schemas that were both version 1: an experiment's
(``schema_version: 1``), which no release read back, and the plugin's (evals4j's format,
``schema: 1``), which pinned baselines in users' repositories hold. A plugin file of version
1 is still read (its keys' figures, and its per-test scores for the test-by-test
comparison); an experiment report of version 1 is refused, naming the file, the version
found and the one expected (write it again from the experiment's store).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import to_jsonable_python

from langchain_evals_port.capture import TokenUsage
from langchain_evals_port.core import EvaluatorResult

from ._render import write_text
from ._statistics import Interval, KeyComparison, KeyStatistics, Method, Verdict, summarize

__all__ = [
    "REPORT_SCHEMA_VERSION",
    "CaseChange",
    "KeyChange",
    "Report",
    "ReportComparison",
    "ReportResult",
    "ReportRow",
    "ReportSchemaError",
    "TargetError",
    "plain_json",
]

REPORT_SCHEMA_VERSION: Literal[2] = 2
"""The ``schema_version`` of every report file; it changes only when a reader would break."""

_JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


class ReportSchemaError(ValueError):
    """A file is not a report this release reads: not a report at all, or of a schema
    version it does not read (the message names the file, the version found and the one
    expected)."""


def plain_json(value: Any) -> Any:
    """``value`` as JSON data: pydantic's rendering, ``str()`` for what it cannot render,
    and ``None`` for a non-finite number (JSON has none).

    Example:
        >>> plain_json({"n": float("inf"), "when": object}) == {"n": None, "when": str(object)}
        True
    """
    return _finite(to_jsonable_python(value, fallback=str))


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


class ReportResult(EvaluatorResult):
    """One evaluator result of a row: the core result's fields (``metadata`` as JSON data),
    and the evaluator that produced it where the writer knows it (the pytest plugin)."""

    # Readers take what they know: a later release may add fields.
    model_config = ConfigDict(extra="ignore")

    evaluator: str | None = None
    """The name of the evaluator that produced the result (the pytest plugin's); ``None``
    in an experiment's rows, where ``key`` says which evaluator it was."""

    @classmethod
    def of(cls, result: EvaluatorResult, evaluator: str | None = None) -> ReportResult:
        """``result`` as a row's result, its values made JSON data (``plain_json``)."""
        return cls.model_validate({**plain_json(result.model_dump()), "evaluator": evaluator})


class TargetError(BaseModel):
    """Why an experiment's target raised on a run: the failure's reason and summary."""

    type: str
    message: str


class ReportRow(BaseModel):
    """One row of a report: one run of a case (an experiment's), or every result of one
    test (the pytest plugin's, whose rows have only ``case_id`` and ``results``)."""

    case_id: str | None = Field(
        description="The case: a dataset case's id, or the pytest test's node id; null for "
        "the plugin's results outside any test (e.g. reported to the eval_report fixture)."
    )
    trial: int | None = Field(
        default=None,
        description="Which trial of the case the run was, from 0 (experiments); null in the "
        "plugin's rows, where a test's several results of a key are its trials.",
    )
    inputs: Any = Field(default=None, description="The case's inputs (experiments).")
    reference_outputs: Any = Field(
        default=None, description="The case's reference outputs (experiments)."
    )
    metadata: dict[str, Any] | None = Field(
        default=None, description="The case's metadata (experiments)."
    )
    outputs: Any = Field(default=None, description="What the target returned (experiments).")
    error: TargetError | None = Field(
        default=None, description="Why the target raised, when it did (experiments)."
    )
    latency_seconds: float | None = Field(
        default=None, description="How long the target took (experiments)."
    )
    usage: TokenUsage | None = Field(
        default=None, description="The tokens the target's model calls used (experiments)."
    )
    results: list[ReportResult] = Field(
        default_factory=list, description="Every evaluator result of the run or test."
    )


class CaseChange(BaseModel):
    """A case whose score changed from the baseline: candidate minus baseline."""

    case_id: str
    difference: float


class KeyChange(BaseModel):
    """One key's change from the baseline, paired case by case (``KeyComparison``)."""

    baseline_mean: float | None
    mean: float | None
    difference: float | None = Field(
        description="The mean of the per-case differences over the shared cases."
    )
    interval: Interval | None = Field(description="The 95 % interval of the difference.")
    method: Method | None = None
    verdict: Verdict
    shared: int = Field(description="How many cases have a verdict on both sides.")
    worse: list[CaseChange]
    better: list[CaseChange]
    only_in_baseline: list[str]
    not_in_baseline: list[str]

    @classmethod
    def of(cls, comparison: KeyComparison) -> KeyChange:
        """The change that ``comparison`` computed."""

        def changes(cases: tuple[str, ...]) -> list[CaseChange]:
            before, after = comparison.baseline.case_means, comparison.candidate.case_means
            return [
                CaseChange(case_id=case, difference=after[case] - before[case]) for case in cases
            ]

        return cls(
            baseline_mean=comparison.baseline.mean,
            mean=comparison.candidate.mean,
            difference=comparison.difference,
            interval=comparison.interval,
            method=comparison.method,
            verdict=comparison.verdict,
            shared=comparison.shared,
            worse=changes(comparison.worse),
            better=changes(comparison.better),
            only_in_baseline=list(comparison.only_baseline),
            not_in_baseline=list(comparison.only_candidate),
        )


class ReportComparison(BaseModel):
    """How the report's run compares with a baseline, key by key."""

    baseline: str | None = Field(
        description="The baseline: the experiment's name, or the name of the pytest "
        "plugin's baseline file (its pinned baseline, or the previous run's report)."
    )
    keys: dict[str, KeyChange] = Field(description="The keys both runs have, compared.")
    not_in_baseline: list[str] = Field(description="Keys of this run only.")
    only_in_baseline: list[str] = Field(description="Keys of the baseline only.")

    @classmethod
    def of(
        cls,
        baseline: str | None,
        comparisons: Mapping[str, KeyComparison],
        current: Mapping[str, KeyStatistics],
        before: Mapping[str, KeyStatistics],
    ) -> ReportComparison:
        """The comparison of ``current`` with ``before`` (both runs' keys), whose keys both
        have were compared as ``comparisons``."""
        return cls(
            baseline=baseline,
            keys={key: KeyChange.of(comparison) for key, comparison in comparisons.items()},
            not_in_baseline=sorted(current.keys() - before.keys()),
            only_in_baseline=sorted(before.keys() - current.keys()),
        )


def _now() -> datetime:
    """Now in UTC, to the second: a report's ``generated_at``."""
    return datetime.now(timezone.utc).replace(microsecond=0)


class Report(BaseModel):
    """A report of an evaluation run, as ``report.json`` (an experiment's) and
    ``eval-report.json`` (the pytest plugin's) hold it: schema version 2.

    Example:
        >>> from langchain_evals_port.reporting import summarize
        >>> keys = summarize({"q1": [EvaluatorResult(key="correct", score=True)]})
        >>> report = Report(source="pytest", keys=keys)
        >>> data = report.to_json()
        >>> data["schema_version"], data["keys"]["correct"]["mean"]
        (2, 1.0)
        >>> Report.from_json(data).paired()["correct"] == keys["correct"]
        True
    """

    model_config = ConfigDict(title="langchain-evals report")

    schema_version: Literal[2] = Field(
        default=REPORT_SCHEMA_VERSION,
        description="The version of this schema; it changes only when a reader would break.",
    )
    source: Literal["experiment", "pytest"] = Field(
        description="What wrote the report: an experiment (report.json) or the pytest "
        "plugin (eval-report.json, its pinned baseline and its history)."
    )
    name: str | None = Field(
        default=None, description="The experiment's name; null for the pytest plugin's."
    )
    generated_at: datetime = Field(
        default_factory=_now, description="When the report was written, in UTC."
    )
    keys: dict[str, KeyStatistics] = Field(
        description="Each feedback key's figures over verdicts only: mean or pass rate, its "
        "95 % interval and method, cases (n), verdicts, inconclusive and failed counts, each "
        "case's mean (case_means, what a later run is paired with; empty for a key of the "
        "plugin's with results outside any test, compared by its mean only) and the "
        "score's bounds."
    )
    comparison: ReportComparison | None = Field(
        default=None, description="The comparison with a baseline, when there was one."
    )
    runs: list[ReportRow] | None = Field(
        default=None,
        description="One row per run of a case (experiments) or per test (the plugin), in "
        "order; null in the entries of the plugin's history file, which keep the figures only.",
    )

    def paired(self) -> dict[str, KeyStatistics]:
        """The keys a later run can compare with case by case: those with case means."""
        return {key: figures for key, figures in self.keys.items() if figures.case_means}

    def means(self) -> dict[str, float]:
        """Each key's mean, for the keys that have one."""
        return {key: s.mean for key, s in self.keys.items() if s.mean is not None}

    def to_json(self) -> dict[str, Any]:
        """The report as JSON data (what ``dumps`` writes)."""
        return self.model_dump(mode="json")

    def dumps(self) -> str:
        """The report as the text of its file: indented JSON, ending with a line break."""
        return json.dumps(self.to_json(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"

    @classmethod
    def from_json(cls, data: Any, *, source: str = "the report") -> Report:
        """The report that ``data`` (a file's parsed JSON) holds.

        Version 2 is validated; a pytest plugin report of version 1 (``"schema": 1``, or
        no version at all) is read as far as it goes: each key's figures, and its per-test
        scores where they are well formed (a key without them is compared by its mean).

        Args:
            data: The parsed JSON.
            source: What the data is, for error messages (the file's path).

        Raises:
            ReportSchemaError: ``data`` is no report, or of a version this release does not
                read; the message names ``source``, the version found and the one expected.
        """
        if not isinstance(data, Mapping):
            raise ReportSchemaError(f"{source} is not a report's JSON (not a JSON object)")
        if "schema_version" in data:
            version = data["schema_version"]
            if version == REPORT_SCHEMA_VERSION:
                try:
                    return cls.model_validate(data)
                except ValidationError as error:
                    raise ReportSchemaError(
                        f"{source} is not a report's JSON ({_first(error)})"
                    ) from None
            what = "an experiment report" if version == 1 else "a report"
            raise ReportSchemaError(
                f"{source} is {what} of schema_version {version!r}; this release reads "
                f"schema_version {REPORT_SCHEMA_VERSION} (and the pytest plugin's reports of "
                "version 1): write it again with this release"
            )
        version = data.get("schema", 1)
        if version != 1:
            raise ReportSchemaError(
                f"{source} is a report of schema {version!r}; this release reads "
                f"schema_version {REPORT_SCHEMA_VERSION} and the pytest plugin's schema 1"
            )
        return cls._from_plugin_version_1(data, source)

    @classmethod
    def _from_plugin_version_1(cls, data: Mapping[str, Any], source: str) -> Report:
        keys = data.get("keys")
        if not isinstance(keys, Mapping):
            raise ReportSchemaError(f'{source} is not a report\'s JSON (no "keys" object)')
        figures = {
            str(key): parsed
            for key, value in keys.items()
            if (parsed := _version_1_key(str(key), value)) is not None
        }
        generated = data.get("generatedAt")
        try:
            when = datetime.fromisoformat(str(generated).replace("Z", "+00:00"))
        except ValueError:
            when = datetime(1970, 1, 1, tzinfo=timezone.utc)
        return cls(source="pytest", generated_at=when, keys=figures)

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> Report:
        """The report in the file at ``path`` (see ``from_json``).

        Raises:
            OSError: The file cannot be read.
            ReportSchemaError: It is not JSON, or not a report this release reads.
        """
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except ValueError as error:
            raise ReportSchemaError(f"{path} is not a report's JSON (not JSON: {error})") from None
        return cls.from_json(data, source=str(path))

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the report to ``path`` (``dumps``), its folder made if missing."""
        write_text(Path(path), self.dumps())

    @staticmethod
    def json_schema() -> dict[str, Any]:
        """The JSON Schema of a report file (``langchain-evals report schema``)."""
        return {"$schema": _JSON_SCHEMA_DIALECT, **Report.model_json_schema(mode="serialization")}


def _first(error: ValidationError) -> str:
    problem = error.errors()[0]
    where = ".".join(str(part) for part in problem["loc"]) or "the top level"
    more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
    return f"{where}: {problem['msg']}{more}"


def _version_1_key(key: str, figures: Any) -> KeyStatistics | None:
    """A version-1 key's figures: from its per-test scores where they are well formed,
    else its mean alone; ``None`` for figures that are not even that."""
    if not isinstance(figures, Mapping):
        return None
    mean = figures.get("mean")
    if mean is not None and (isinstance(mean, bool) or not isinstance(mean, (int, float))):
        return None
    inconclusive, failed, count = (
        value if isinstance(value := figures.get(name), int) and not isinstance(value, bool) else 0
        for name in ("inconclusive", "failed", "count")
    )
    cases = figures.get("cases")
    if isinstance(cases, Mapping) and all(map(_is_scores, cases.values())):
        by_case = {
            str(case): [EvaluatorResult(key=key, score=score) for score in scores]
            for case, scores in cases.items()
        }
        if key in (computed := summarize(by_case)):
            return replace(computed[key], inconclusive=inconclusive, failed=failed)
    return KeyStatistics(
        key=key,
        kind="mean",
        mean=None if mean is None else float(mean),
        interval=None,
        method=None,
        cases=0,
        verdicts=count,
        inconclusive=inconclusive,
        failed=failed,
    )


def _is_scores(scores: Any) -> bool:
    return isinstance(scores, list) and all(
        isinstance(score, (bool, int, float)) and math.isfinite(score) for score in scores
    )
