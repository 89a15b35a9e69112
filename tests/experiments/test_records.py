"""One record of a run from claim to report (issue 22, item 3): ``PendingRun``, ``TargetRun``,
``CaseResult`` and ``ExperimentResult`` are pydantic models that write and read themselves,
and the store keeps exactly their JSON — on a SQLite file and on PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _postgres_server import sql_location  # noqa: F401 (the `location` fixture)
from langchain_core.messages import AIMessage

from langchain_evals_port import ExactMatch, evaluator
from langchain_evals_port.experiments import (
    CaseResult,
    Dataset,
    ExperimentResult,
    ExperimentStore,
    TargetRun,
    run_experiment,
)
from langchain_evals_port.storage import SqliteLedger

CASES = Dataset.from_records(
    [{"id": f"q{n}", "inputs": {"n": n}, "reference_outputs": str(n * 2)} for n in range(4)]
)


@evaluator
def long_answer(outputs: AIMessage) -> bool:
    """Whether the answer has more than one character."""
    return len(str(outputs.content)) > 1


def _answer(inputs: dict[str, int]) -> AIMessage:
    return AIMessage(content=str(inputs["n"] * 5), id=f"answer-{inputs['n']}")


def test_what_a_run_returns_is_what_its_store_reads_back(location: str) -> None:
    result = run_experiment(_answer, CASES, [long_answer], name="records", store=location)
    with ExperimentStore(location) as store:
        loaded = store.load("records")
    # Every field of every run (the case, the target's run with its interaction, the
    # results) reads back equal to what this process held, outputs as messages again.
    assert loaded.runs == result.runs
    assert isinstance(loaded.runs[0].run.outputs, AIMessage)
    assert [r.results[0].score for r in loaded.runs] == [False, False, True, True]


def test_an_experiment_result_round_trips_through_its_own_json() -> None:
    result = run_experiment(_answer, CASES, [long_answer], store=False)
    text = result.model_dump_json()
    again = ExperimentResult.model_validate_json(text)
    assert again == result
    assert again.runs[1].run.outputs == AIMessage(content="5", id="answer-1")
    assert json.loads(text)["runs"][0]["run"]["outputs"]["kwargs"]["content"] == "0"


def test_a_case_result_stores_its_results_and_reads_back_with_its_run() -> None:
    [run] = run_experiment(_answer, CASES[:1], [ExactMatch()], store=False).runs
    stored = run.stored_results()
    assert set(json.loads(stored)) == {"results"}
    assert CaseResult.from_stored(stored, case=run.case, trial=0, run=run.run) == run


def test_a_target_run_keeps_outputs_json_cannot_hold_as_their_repr() -> None:
    [run] = run_experiment(lambda inputs: {(1, 2): "x"}, CASES[:1], [], store=False).runs
    again = TargetRun.model_validate_json(run.run.model_dump_json())
    assert again.outputs == "{(1, 2): 'x'}"
    assert again.interaction == run.run.interaction


def test_the_store_keeps_runs_in_the_row_shapes_the_previous_release_reads(tmp_path: Path) -> None:
    # The rows as the release before the records became models wrote them: the run's work
    # ({"case", "given": {"outputs", "interaction"}}) and its record ({"results"}).
    location = tmp_path / "experiments.db"
    run_experiment(_answer, CASES[:2], [ExactMatch()], name="old", store=location)
    ledger = SqliteLedger(location)
    try:
        rows = ledger.runs("old", finished_only=True)
    finally:
        ledger.close()
    work = json.loads(rows[0].work)
    assert set(work) == {"case", "given"}
    assert set(work["given"]) == {"outputs", "interaction"}
    assert set(json.loads(rows[0].record or "")) == {"results"}


def test_a_result_that_no_longer_validates_reads_back_failed_not_unreadable() -> None:
    [run] = run_experiment(_answer, CASES[:1], [ExactMatch()], store=False).runs
    stored = json.loads(run.stored_results())
    stored["results"][0]["outcome"] = "maybe"  # written by nothing that validates it
    again = CaseResult.from_stored(json.dumps(stored), case=run.case, trial=0, run=run.run)
    assert again.results[0].outcome == "failed"
    assert again.results[0].error_code == "storage_error"


def test_a_case_result_is_frozen() -> None:
    [run] = run_experiment(_answer, CASES[:1], [], store=False).runs
    with pytest.raises(ValueError, match="frozen"):
        run.trial = 2  # type: ignore[misc]
