"""The evaluators of the support experiment: ``EVALUATORS``, one list of three.

* ``correctness``: an ``LLMJudge`` with the catalog's correctness prompt, comparing the
  agent's answer with the reference answer. Its model is a ``ScriptedChatModel`` standing in
  for a real judge, so the example runs offline: it says correct when the answer states every
  number (order ids, dates, days) the reference answer states.
* ``trajectory_unordered_match``: a ``TrajectoryMatch`` of the agent's tool calls against the
  reference's, in any order. The experiment runner gives it the captured transcript (its
  ``outputs_kind`` is ``"messages"``), and it reads the expected calls from the case's
  ``reference_outputs["messages"]``.
* ``intent``: ``ExactMatch`` on one field, the intent the agent read in the question. The
  runner hands every evaluator the whole outputs and reference outputs, so a small function
  evaluator picks the field for it.

Each case's ``reference_outputs`` therefore holds ``answer``, ``intent`` and ``messages``
(see ``cases.jsonl``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from langchain_core.messages import BaseMessage

from langchain_evals_port import (
    EvaluatorResult,
    ExactMatch,
    LLMJudge,
    TrajectoryMatch,
    evaluator,
    prompts,
)
from langchain_evals_port.testing import ScriptedChatModel


def offline_judge(messages: list[BaseMessage]) -> dict[str, Any]:
    """A stand-in for a real judge model: reads the answers out of the correctness prompt
    and checks that the agent's answer states every number the reference answer states."""
    prompt = messages[-1].text

    def answer(tag: str) -> str:
        block = re.search(rf"<{tag}>(.*?)</{tag}>", prompt, re.S)
        return str(json.loads(block.group(1))["answer"]) if block else ""

    expected = set(re.findall(r"\d+", answer("reference_outputs")))
    missing = sorted(expected - set(re.findall(r"\d+", answer("output"))))
    if missing:
        return {
            "reasoning": f"The reference states {', '.join(missing)}; it does not.",
            "score": False,
        }
    return {"reasoning": "It states the facts of the reference answer.", "score": True}


JUDGE_MODEL = ScriptedChatModel(responder=offline_judge, model_name="judge-model")

_same_intent = ExactMatch(feedback_key="intent")


@evaluator(feedback_key="intent")
def intent(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> EvaluatorResult:
    """``ExactMatch`` on the ``intent`` field of the outputs and reference outputs."""
    return _same_intent.invoke(
        {"outputs": outputs["intent"], "reference_outputs": reference_outputs["intent"]}
    )


EVALUATORS = [
    LLMJudge(prompt=prompts.CORRECTNESS_PROMPT, model=JUDGE_MODEL),
    TrajectoryMatch(mode="unordered"),
    intent,
]
