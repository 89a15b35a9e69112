"""The application and evaluators ``bench_experiments.py`` runs, importable as ``module:attr``
(so an experiment can be started in a subprocess, killed and resumed).

The app answers "What is N plus N?" with one call of a scripted chat model that takes 20 ms
(``asyncio.sleep`` on the async path), so the capture machinery sees a model call; the judge
is ``CORRECTNESS_PROMPT`` on a scripted model that takes 20 ms and always says true. With
``BENCH_TARGET_CALLS`` set to a file, every call of the app appends a line to it when it
starts (calls from several processes add up; a started call is a paid call).
"""

from __future__ import annotations

import os
import re
from typing import Any

from langchain_core.caches import BaseCache
from langchain_core.messages import BaseMessage

from langchain_evals_port import ExactMatch, prompts
from langchain_evals_port.experiments import Dataset
from langchain_evals_port.judge import LLMJudge
from langchain_evals_port.testing import ScriptedChatModel

LATENCY = 0.020
VERDICT = {
    "reasoning": "The output gives the same number as the reference. Thus, the score should "
    "be: true.",
    "score": True,
}


def question(n: int) -> str:
    return f"What is {n} plus {n}?"


def dataset(cases: int) -> Dataset:
    return Dataset.from_records(
        [
            {"inputs": {"question": question(n)}, "reference_outputs": str(2 * n)}
            for n in range(cases)
        ]
    )


def _sum(messages: list[BaseMessage]) -> str:
    n = int(re.search(r"What is (\d+) plus", str(messages[-1].content)).group(1))  # type: ignore[union-attr]
    return str(2 * n)


def app_model(cache: BaseCache | None = None) -> ScriptedChatModel:
    """The app's model: 20 ms, answers the sum; ``cache`` makes it a LangChain-cached one."""
    return ScriptedChatModel(responder=_sum, latency=LATENCY, cache=cache)


def judge_model() -> ScriptedChatModel:
    return ScriptedChatModel(responder=lambda messages: VERDICT, latency=LATENCY)


def make_app(model: ScriptedChatModel) -> Any:
    """An async app of one model call, counting its calls in ``BENCH_TARGET_CALLS``."""
    calls_file = os.environ.get("BENCH_TARGET_CALLS")

    async def answer(inputs: dict[str, str]) -> str:
        if calls_file:
            with open(calls_file, "a") as calls:
                calls.write(f"{os.getpid()}\n")
        reply = await model.ainvoke(inputs["question"])
        return str(reply.content)

    return answer


def make_evaluators(judge: ScriptedChatModel) -> list[Any]:
    return [
        ExactMatch(),
        LLMJudge(prompt=prompts.CORRECTNESS_PROMPT, model=judge, feedback_key="correctness"),
    ]


# What a subprocess imports: "_experiment_app:answer" and "_experiment_app:EVALUATORS".
answer = make_app(app_model())
EVALUATORS = make_evaluators(judge_model())
