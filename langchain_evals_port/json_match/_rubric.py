"""Asking the judge about rubric keys: prompts, narrowed output schemas, and reading replies.

With an aggregator every pending key goes to the judge in one call; without one, each rubric
key gets its own call whose output schema holds only that key's entries (one per list row).
The prompts are this project's own wording (OpenEvals' are not copied); values are shown as
JSON, and the reasoning comes before the score in the schema so the model reasons before it
commits.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_evals_port.core import canonical_text
from langchain_evals_port.core.errors import EvaluatorInputError, EvaluatorUsageError

from ._plan import Entry, Verdict

SYSTEM_PROMPT = """You grade fields of a structured output against a reference, one field at a time.
Each field has its own criterion: judge it by that criterion alone, and do not let one field's
grade influence another's. Differences the criterion does not mention do not count. A field
that is missing or null where the reference has a value fails its criterion.
"""
"""The system prompt for grading rubric keys (this project's own wording)."""

USER_PROMPT = """Grade these fields of the output, each by its criterion:
{rubric}

<output>
{outputs}
</output>

<reference>
{reference_outputs}
</reference>"""
"""The user prompt for grading rubric keys (this project's own wording)."""


@dataclass(frozen=True)
class JudgeCall:
    """One request to the judge: the entries it grades, its output schema and the prompt's
    variables."""

    names: tuple[str, ...]
    entries: tuple[Entry, ...]
    schema: dict[str, Any]
    variables: dict[str, str]

    def read(self, reply: Mapping[str, Any]) -> dict[str, Verdict]:
        """The verdicts in a reply already validated against ``schema``."""
        verdicts = {}
        for entry in self.entries:
            grade = reply[entry.raw_key]
            if isinstance(grade, Mapping):
                verdicts[entry.raw_key] = Verdict(grade["score"], grade.get("reasoning"))
            else:
                verdicts[entry.raw_key] = Verdict(grade, None)
        return verdicts


def judge_calls(
    entries: Iterable[Entry], rubric: Mapping[str, str], *, use_reasoning: bool, together: bool
) -> list[JudgeCall]:
    """The calls that grade every pending entry: one in all when ``together``, else one per
    rubric key (in key order)."""
    pending = [entry for entry in entries if entry.score is None]
    if not pending:
        return []
    if together:
        return [_call(pending, rubric, use_reasoning)]
    names = sorted({entry.name for entry in pending})
    return [
        _call([entry for entry in pending if entry.name == name], rubric, use_reasoning)
        for name in names
    ]


def _call(entries: Sequence[Entry], rubric: Mapping[str, str], use_reasoning: bool) -> JudgeCall:
    names = tuple(dict.fromkeys(entry.name for entry in entries))
    properties = {
        entry.raw_key: _grade_schema(entry.name, rubric[entry.name], use_reasoning)
        for entry in entries
    }
    schema = {
        "type": "object",
        "title": "field_grades",
        "description": "A grade for each field of the output, by its criterion.",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }
    variables = {
        "rubric": "".join(f"- {name}: {rubric[name]}\n" for name in names),
        "outputs": "\n".join(
            f"{entry.raw_key}: {canonical_text(entry.output, name=entry.raw_key)}"
            for entry in entries
        ),
        "reference_outputs": "\n".join(
            f"{entry.raw_key}: {canonical_text(entry.reference, name=entry.raw_key)}"
            for entry in entries
        ),
    }
    return JudgeCall(names, tuple(entries), schema, variables)


def _grade_schema(name: str, criterion: str, use_reasoning: bool) -> dict[str, Any]:
    score = {
        "type": "boolean",
        "description": f"True when field {name} meets its criterion: {criterion}",
    }
    if not use_reasoning:
        return score
    return {
        "type": "object",
        "properties": {
            "reasoning": {
                "type": "string",
                "description": f"Why field {name} does or does not meet its criterion.",
            },
            "score": score,
        },
        "required": ["reasoning", "score"],
        "additionalProperties": False,
    }


def collect(
    calls: Sequence[JudgeCall],
    replies: Iterable[Mapping[str, Any] | Exception],
    *,
    record_failures: bool,
) -> tuple[dict[str, Verdict], dict[str, Exception]]:
    """Verdicts by raw key and failures by key name, from the replies of ``calls`` (a reply
    is the judge's object or the exception it raised).

    A failure is raised unless ``record_failures``; a caller's mistake (no judge model, a
    value with no JSON form) is always raised. ``replies`` is read lazily, so a synchronous
    caller that raises stops asking the judge at the first failure.
    """
    verdicts: dict[str, Verdict] = {}
    failures: dict[str, Exception] = {}
    for call, reply in zip(calls, replies, strict=True):
        if isinstance(reply, Exception):
            if not record_failures or isinstance(reply, (EvaluatorInputError, EvaluatorUsageError)):
                raise reply
            failures.update(dict.fromkeys(call.names, reply))
        else:
            verdicts.update(call.read(reply))
    return verdicts, failures
