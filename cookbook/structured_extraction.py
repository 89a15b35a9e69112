"""Check structured extraction with JsonMatch: exact keys by equality, a free-text key by a judge.

An extraction chain turned support emails into ticket objects. ``JsonMatch`` compares them
with reviewed references: ``customer`` and ``priority`` must be equal, ``id`` is ignored, and
``summary`` is free text, so a judge grades it against a criterion. Offline the judge is a
``ScriptedChatModel`` whose replies come from a word-overlap rule; set ``OPENAI_API_KEY`` to
use ``openai:gpt-4o-mini`` instead (needs the ``langchain`` extra).

Run: ``.venv/bin/python cookbook/structured_extraction.py``
"""

from __future__ import annotations

import os
import re

from langchain_core.messages import BaseMessage

from langchain_evals_port.core import results_of
from langchain_evals_port.json_match import JsonMatch
from langchain_evals_port.testing import ScriptedChatModel

EXTRACTED = [
    {
        "id": "t-91",
        "customer": "Acme GmbH",
        "priority": "high",
        "summary": "Invoice 4411 paid twice",
    },
    {"id": "t-92", "customer": "Globex", "priority": "low", "summary": "Asks for dark mode"},
]
REFERENCE = [
    {"id": "r-1", "customer": "Globex", "priority": "low", "summary": "Request: dark mode"},
    {
        "id": "r-2",
        "customer": "Acme GmbH",
        "priority": "urgent",
        "summary": "Invoice 4411 charged twice",
    },
]


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def fields(text: str, tag: str) -> dict[str, str]:
    """The ``name: value`` lines of one block of the judge's prompt."""
    block = text.split(f"<{tag}>")[1].split(f"</{tag}>")[0]
    return dict(re.findall(r"^(\S+): (.*)$", block, re.M))


def offline_judge(messages: list[BaseMessage]) -> dict[str, object]:
    """Grades each summary field: it passes when it shares half the reference's words."""
    output, reference = fields(messages[-1].text, "output"), fields(messages[-1].text, "reference")
    verdicts = {}
    for name, value in output.items():
        got, want = words(value), words(reference.get(name, ""))
        overlap = len(got & want) / max(len(want), 1)
        reason = f"shares {overlap:.0%} of the reference's words"
        verdicts[name] = {"reasoning": reason, "score": overlap >= 0.5}
    return verdicts


def main() -> None:
    offline = ScriptedChatModel(responder=offline_judge)
    judge = "openai:gpt-4o-mini" if os.environ.get("OPENAI_API_KEY") else offline
    matcher = JsonMatch(
        exclude_keys=["id"],
        rubric={"summary": "Does the summary state the same problem as the reference?"},
        model=judge,
        list_match_mode="same_elements",
        list_aggregator="average",
    )
    request = {"outputs": EXTRACTED, "reference_outputs": REFERENCE}
    for result in results_of(matcher.invoke(request)):
        print(f"{result.key:<22} {result.score:.2f}  {result.metadata.get('reasoning', '')}")


if __name__ == "__main__":
    main()
