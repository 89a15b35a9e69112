"""An offline eval suite: a support bot's answers, scored by deterministic evaluators.

Run it with the langchain_evals_port pytest plugin (see README.md here); every test of this
module reports into the run's evaluation report, and no evaluator is given a tracer.
"""

from __future__ import annotations

import pytest

from langchain_evals_port import ExactMatch, evaluator

pytestmark = pytest.mark.eval_suite

CANNED_ANSWERS = {
    "How do I reset my password?": "Open Settings, choose Security, then Reset password.",
    "Can I get a refund after 30 days?": "Refunds are available within 30 days of purchase.",
    "Which plan includes SSO?": "SSO is part of the Enterprise plan.",
}
"""The application under test: a support bot that answers from a fixed table."""

CASES = [
    ("How do I reset my password?", ["settings", "security", "reset password"], "security"),
    ("Can I get a refund after 30 days?", ["refund", "30 days"], "billing"),
    ("Which plan includes SSO?", ["sso", "enterprise"], "plans"),
]


def support_bot(question: str) -> str:
    """Answer a customer's question (a stand-in for the real chain or agent)."""
    return CANNED_ANSWERS.get(question, "Sorry, I do not know.")


def route(question: str) -> str:
    """Pick the team a question goes to, by keyword."""
    lowered = question.lower()
    if "refund" in lowered:
        return "billing"
    if "plan" in lowered:
        return "plans"
    return "security"


@evaluator(feedback_key="mentions_facts")
def mentions_facts(outputs: str, reference_outputs: list[str]) -> float:
    """The share of the expected facts the answer mentions."""
    answer = outputs.lower()
    return sum(fact in answer for fact in reference_outputs) / len(reference_outputs)


@evaluator(feedback_key="concise")
def concise(outputs: str) -> bool:
    """At most 20 words."""
    return len(outputs.split()) <= 20


@pytest.mark.parametrize(("question", "facts", "team"), CASES)
def test_answer_mentions_the_facts(question: str, facts: list[str], team: str) -> None:
    answer = support_bot(question)
    result = mentions_facts(outputs=answer, reference_outputs=facts)
    assert result["score"] >= 0.5, result
    assert concise(outputs=answer)["score"]


@pytest.mark.parametrize(("question", "facts", "team"), CASES)
def test_question_is_routed(question: str, facts: list[str], team: str) -> None:
    assert ExactMatch(feedback_key="routing")(outputs=route(question), reference_outputs=team)[
        "score"
    ]
