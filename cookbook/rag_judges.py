"""Judge a small RAG application for groundedness, correctness and retrieval relevance.

The application retrieves passages from an in-memory corpus and answers with a chat model;
four OpenEvals catalog prompts grade it. Offline (no API key) both the application's model
and the judge are ``ScriptedChatModel``s: the judge's replies come from a crude word-overlap
rule, so the grades are real functions of the inputs, not constants. With ``OPENAI_API_KEY``
set, the judge is ``openai:gpt-4o-mini`` instead (needs the ``langchain`` extra).

Run: ``.venv/bin/python cookbook/rag_judges.py``
"""

from __future__ import annotations

import json
import os
import re

from langchain_core.messages import BaseMessage

from langchain_evals_port import LLMJudge, prompts, set_default_judge
from langchain_evals_port.testing import ScriptedChatModel

CORPUS = [
    "The Eiffel Tower was completed in 1889 for the Exposition Universelle in Paris.",
    "The Eiffel Tower is 330 metres tall including its antennas.",
    "The Louvre is the world's most-visited museum and houses the Mona Lisa.",
]
QUESTIONS = [
    ("When was the Eiffel Tower completed?", "It was completed in 1889.", "1889"),
    (
        "How tall is the Eiffel Tower?",
        "It is 330 metres tall and was painted gold in 2020.",
        "330 metres",
    ),
]


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2}


def retrieve(question: str) -> list[str]:
    """The two passages sharing the most words with the question."""
    return sorted(CORPUS, key=lambda p: -len(words(p) & words(question)))[:2]


def offline_judge(messages: list[BaseMessage]) -> dict[str, object]:
    """A stand-in judge: grounded/correct when the answer's words appear in the evidence."""
    prompt = messages[0].text
    sections = dict(re.findall(r"<(\w+)>\s*(.*?)\s*</\1>", prompt, re.S))
    answer = words(sections.get("output", sections.get("outputs", "")))
    evidence_tags = ("context", "reference_outputs", "input", "inputs")
    evidence = words(" ".join(sections.get(tag, "") for tag in evidence_tags))
    unsupported = sorted(answer - evidence - {"the", "and", "was", "its", "for"})
    score = len(unsupported) <= 2
    reason = f"Unsupported words: {unsupported}." if unsupported else "Every claim is supported."
    verdict = f"{reason} Thus, the score should be: {json.dumps(score)}."
    return {"reasoning": verdict, "score": score}


def main() -> None:
    if os.environ.get("OPENAI_API_KEY"):
        set_default_judge("openai:gpt-4o-mini")
    else:
        set_default_judge(ScriptedChatModel(responder=offline_judge))
    judges = [
        LLMJudge(prompt=prompts.RAG_GROUNDEDNESS_PROMPT, feedback_key="groundedness"),
        LLMJudge(prompt=prompts.CORRECTNESS_PROMPT, feedback_key="correctness"),
        LLMJudge(prompt=prompts.RAG_HELPFULNESS_PROMPT, feedback_key="helpfulness"),
        LLMJudge(prompt=prompts.RAG_RETRIEVAL_RELEVANCE_PROMPT, feedback_key="retrieval_relevance"),
    ]
    for question, answer, reference in QUESTIONS:
        context = "\n".join(retrieve(question))
        print(f"Q: {question}\nA: {answer}")
        for judge in judges:
            result = judge.invoke(
                {
                    "inputs": question,
                    "outputs": answer,
                    "reference_outputs": reference,
                    "context": context,
                }
            )
            print(f"  {result.key:<20} {result.score!s:<5}  {result.comment}")
        print()


if __name__ == "__main__":
    main()
