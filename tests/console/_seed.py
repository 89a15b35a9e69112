"""Ledgers and experiment stores with known contents for the console's tests and benchmark."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage

from langchain_evals_port import ExactMatch, Score, evaluator
from langchain_evals_port.core import EvaluatorResult
from langchain_evals_port.experiments import Dataset, run_experiment
from langchain_evals_port.runtime import EvaluationRecord, InteractionRecord, WorkUnit
from langchain_evals_port.storage import SqlLedger

SCRIPT = "<script>alert(1)</script>"
"""Untrusted text in a transcript: the console shows it, never runs it."""


def interaction(
    interaction_id: str, agent_id: str, when: datetime, question: str, answer: str
) -> InteractionRecord:
    """A completed interaction of one question and one answer."""
    return InteractionRecord(
        interaction_id=interaction_id,
        agent_id=agent_id,
        input_messages=[HumanMessage(question)],
        transcript=[HumanMessage(question), AIMessage(answer)],
        output_text=answer,
        started_at=when,
        ended_at=when + timedelta(seconds=1.5),
    )


def evaluation(
    evaluation_id: str, record: InteractionRecord, evaluator_id: str, result: EvaluatorResult
) -> EvaluationRecord:
    """The evaluation of ``record`` by ``evaluator_id`` with one result."""
    return EvaluationRecord(
        evaluation_id=evaluation_id,
        evaluator_id=evaluator_id,
        interaction_id=record.interaction_id,
        agent_id=record.agent_id,
        results=[result],
        timestamp=record.ended_at + timedelta(seconds=1),
    )


def passed(key: str, ok: bool, comment: str = "") -> EvaluatorResult:
    """A pass/fail verdict."""
    return EvaluatorResult(key=key, score=ok, comment=comment or None, metadata={"passed": ok})


def seed_small(ledger: SqlLedger) -> dict[str, str]:
    """Ten interactions of ``support`` in the last hours, each judged by ``helpfulness`` (7
    pass, 3 fail); one judged by ``tone`` failed with a timeout; the first holds a script
    tag; one durable review waits for a person. The ids the tests use, by role."""
    now = datetime.now(timezone.utc)
    records = []
    for n in range(10):
        question = f"Where is my order {n}? {SCRIPT}" if n == 0 else f"Where is my order {n}?"
        record = interaction(
            f"i-{n}", "support", now - timedelta(minutes=50 - n), question, f"Order {n} shipped."
        )
        ledger.record_interaction(record)
        ledger.record_evaluation(
            evaluation(
                f"e-help-{n}", record, "helpfulness", passed("helpfulness", n < 7, f"reasoning {n}")
            )
        )
        records.append(record)
    ledger.record_evaluation(
        evaluation(
            "e-tone-failed",
            records[1],
            "tone",
            EvaluatorResult.failed("tone", "timeout", "TimeoutError: judge timed out after 30 s"),
        )
    )
    unit = WorkUnit(
        evaluation_id="e-review",
        evaluator_id="human-review",
        interaction_id=records[2].interaction_id,
        agent_id="support",
        enqueued_at=time.time(),
    )
    ledger.enqueue([unit])
    [claim] = ledger.claim("seeder", limit=1, lease_seconds=30.0)
    ledger.release(claim, waiting=True, delay=3600.0, question={"question": "Is this reply right?"})
    return {"script": "i-0", "failed": "e-tone-failed", "waiting": "e-review"}


# --- an experiment store -------------------------------------------------------------------

CASES = Dataset.from_records(
    [{"id": f"c{n}", "inputs": {"n": n}, "reference_outputs": f"ok {n}"} for n in range(8)]
    + [{"id": "xss", "inputs": {"n": 99}, "reference_outputs": SCRIPT}]
)
"""Eight cases answered ``ok N``, and one whose answer is a script tag."""


@evaluator(feedback_key="length")
def length(outputs: str) -> Score:
    return Score(len(outputs) <= 5, comment=f"{len(outputs)} characters, said the judge")


def good(inputs: dict[str, int]) -> str:
    return SCRIPT if inputs["n"] == 99 else f"ok {inputs['n']}"


def regressed(inputs: dict[str, int]) -> str:
    # The injected regression: every case from c4 on now answers wrong.
    return SCRIPT if inputs["n"] == 99 else ("ok" if inputs["n"] >= 4 else f"ok {inputs['n']}")


def seed_experiments(path: Path) -> None:
    """Two experiments of ``CASES`` scored by ``ExactMatch`` and ``length`` in the store at
    ``path``: ``baseline-run`` (``good``: all 9 match) then ``candidate-run`` (``regressed``:
    c4 to c7 no longer match)."""
    for target, name in ((good, "baseline-run"), (regressed, "candidate-run")):
        run_experiment(
            target,
            CASES,
            [ExactMatch(), length],
            name=name,
            store=path,
            cache=False,
            progress=False,
        )
