"""``langchain-evals agreement``: per feedback key, the figures of the ledger's evaluations
against people's annotations, on SQLite and PostgreSQL; inconclusive and failed judge
outcomes printed apart; a bad ``--since`` exits 2 with the reason."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from _postgres_server import sql_location  # noqa: F401 (the `location` fixture)

from langchain_evals_port.cli import main
from langchain_evals_port.core import EvaluatorResult
from langchain_evals_port.runtime import (
    EvaluationRecord,
    InteractionRecord,
    PostgresLedger,
    SqliteLedger,
)
from langchain_evals_port.storage import SqlLedger

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)


def _open(location: str) -> SqlLedger:
    if location.startswith("postgresql://"):
        return PostgresLedger(location)
    return SqliteLedger(location)


def _seed(ledger: SqlLedger) -> None:
    # correctness, judge / person: pass/pass, pass/fail, fail/fail, fail/fail, and one
    # inconclusive and one failed judgement of labelled interactions.
    judged: list[tuple[str, EvaluatorResult, bool]] = [
        ("i-1", EvaluatorResult(key="correctness", score=True), True),
        ("i-2", EvaluatorResult(key="correctness", score=True), False),
        ("i-3", EvaluatorResult(key="correctness", score=False), False),
        ("i-4", EvaluatorResult(key="correctness", score=False), False),
        ("i-5", EvaluatorResult.inconclusive("correctness", "cut off"), True),
        (
            "i-6",
            EvaluatorResult(
                key="correctness", outcome="failed", reason="timeout", error_code="timeout"
            ),
            False,
        ),
    ]
    for interaction_id, result, human in judged:
        ledger.record_interaction(
            InteractionRecord(interaction_id=interaction_id, agent_id="support", started_at=T0)
        )
        ledger.record_evaluation(
            EvaluationRecord(
                evaluation_id=f"e-{interaction_id}",
                evaluator_id="judge",
                interaction_id=interaction_id,
                agent_id="support",
                results=[result],
                timestamp=T0,
            )
        )
        ledger.annotate(interaction_id, "correctness", score=human, annotator="ana")


def test_agreement_prints_each_key_s_figures(
    location: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = _open(location)
    _seed(ledger)
    ledger.close()

    assert main(["agreement", "--ledger", location, "--evaluator", "judge"]) == 0

    out = capsys.readouterr().out
    # p_o = 3/4; the judge's rates pass .5 fail .5, the person's pass .25 fail .75:
    # p_e = .5 · .25 + .5 · .75 = .5, kappa = (.75 - .5) / .5 = .5.
    assert "correctness  (pass/fail)" in out
    assert "n=4, accuracy 0.750, κ 0.500 [" in out
    assert "fail precision 1.000 recall 0.667" in out
    assert "1 inconclusive, 1 failed" in out
    assert (
        "judge \\ human  fail  pass\n  fail              2     0\n  pass              1     1"
        in out
    )


def test_filters_that_leave_nothing_say_so(
    location: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = _open(location)
    _seed(ledger)
    ledger.close()

    assert main(["agreement", "--ledger", location, "--since", "2026-04-01"]) == 0
    assert "No evaluation result has an annotation" in capsys.readouterr().out


def test_a_bad_since_exits_2_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["agreement", "--ledger", str(tmp_path / "l.db"), "--since", "last week"])

    assert status == 2
    assert "--since: expected an ISO date" in capsys.readouterr().err


def test_without_ledger_it_reads_the_default_ledger_or_says_there_is_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["agreement"]) == 2
    assert "no ledger at .langchain-evals/evals.db" in capsys.readouterr().err
    assert not (tmp_path / ".langchain-evals").exists()  # a reading command creates nothing

    # The runtime's own default is where the command looks.
    from langchain_evals_port.runtime import EvaluationRuntime

    EvaluationRuntime({}, start=False).close()
    assert (tmp_path / ".langchain-evals" / "evals.db").is_file()
    assert main(["agreement"]) == 0
