"""Run the support agent over its dataset and score it: an experiment with the Python API.

``cases.jsonl`` holds six support questions with reference answers, intents and tool calls;
``agent.py`` the LangGraph agent under test; ``evaluators.py`` the three evaluators (an LLM
judge of correctness, a trajectory match of the tool calls, an exact match of the intent).
``run_experiment`` runs the agent on every case, four at a time, captures what it did, scores
each run, and ``statistics()`` gives each feedback key's pass rate with its 95 % interval.
Everything is scripted, so it runs offline; one case is answered wrong on purpose.

Run: ``.venv/bin/python cookbook/support_experiment/run.py``. The same experiment from the
command line, in this folder: ``langchain-evals run cases.jsonl --target agent:target
--evaluators evaluators:EVALUATORS``.
"""

from __future__ import annotations

from pathlib import Path

from agent import target
from evaluators import EVALUATORS

from langchain_evals_port.experiments import Dataset, run_experiment

HERE = Path(__file__).resolve().parent


def main() -> None:
    dataset = Dataset.load(HERE / "cases.jsonl")
    result = run_experiment(target, dataset, EVALUATORS, max_concurrency=4, progress=False)

    print(f"{'case':<14} {'correctness':<12} {'trajectory':<11} {'intent':<7} answer")
    for run in result.runs:
        scores = {r.key: r.score for r in run.results}
        print(
            f"{run.case.id:<14} {scores['correctness']!s:<12} "
            f"{scores['trajectory_unordered_match']!s:<11} {scores['intent']!s:<7} "
            f"{run.run.outputs['answer']}"
        )
    print()

    print(f"{'feedback key':<28} {'pass rate [95% interval]':<26} verdicts")
    for key, stats in result.statistics().items():
        print(f"{key:<28} {stats!s:<26} {stats.verdicts}")
    print()

    # Why the wrong case failed, in each evaluator's words.
    for run in result.runs:
        for r in run.results:
            if r.score is False and r.comment:
                print(f"{run.case.id} / {r.key}: {r.comment}")


if __name__ == "__main__":
    main()
