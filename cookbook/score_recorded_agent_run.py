"""Score a recorded agent run offline with the deterministic evaluators.

The run was exported as OpenAI-style messages (as a LangSmith trace export or a LangGraph
state dump would give you). No API key is needed: the embedding model is the project's
offline ``HashingEmbeddings``; swap in any LangChain ``Embeddings`` for real use.

Run it with ``.venv/bin/python cookbook/score_recorded_agent_run.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

from langchain_core.messages import AIMessage

from langchain_evals_port import (
    EmbeddingSimilarity,
    EvaluatorResult,
    ExactMatch,
    LevenshteinDistance,
    evaluator,
)
from langchain_evals_port.core import to_langchain_messages
from langchain_evals_port.testing import HashingEmbeddings

RUN = json.loads((Path(__file__).parent / "data" / "recorded_agent_run.json").read_text())


@evaluator(feedback_key="tools_in_order")
def tools_in_order(*, outputs, reference_outputs):
    """Did the agent call exactly the reference tools, in order?"""
    called = [call["name"] for m in outputs if isinstance(m, AIMessage) for call in m.tool_calls]
    return called == reference_outputs, f"called {called}"


def score(run: dict) -> list[EvaluatorResult]:
    """Every evaluator's result for one recorded run."""
    messages = to_langchain_messages(run["messages"])
    answer = messages[-1].text
    booking = next(
        call["args"]
        for m in messages
        if isinstance(m, AIMessage)
        for call in m.tool_calls
        if call["name"] == "book_flight"
    )
    reference = run["reference"]
    return [
        tools_in_order.invoke({"outputs": messages, "reference_outputs": reference["tools"]}),
        ExactMatch().invoke({"outputs": booking, "reference_outputs": reference["booking"]}),
        LevenshteinDistance().invoke({"outputs": answer, "reference_outputs": reference["answer"]}),
        EmbeddingSimilarity(embeddings=HashingEmbeddings()).invoke(
            {"outputs": answer, "reference_outputs": reference["answer"]}
        ),
    ]


def main() -> None:
    print(f"Task: {RUN['inputs']}\n")
    print(f"{'key':<22} {'outcome':<9} {'score':>6}  comment")
    for result in score(RUN):
        shown = f"{result.score:.3f}" if isinstance(result.score, float) else str(result.score)
        print(f"{result.key:<22} {result.outcome:<9} {shown:>6}  {result.comment or ''}")


if __name__ == "__main__":
    main()
