"""What the console's pages tell a person, over real HTTP (uvicorn on 127.0.0.1, httpx): a
review waiting for a person is listed on its interaction's page, a resumed review's page says
whether a worker is running evaluations, and score chips are coloured by whether they passed
their threshold (or say they had none), with a legend."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import pytest
from _browser import serving
from _seed import evaluation, interaction, seed_small

from langchain_evals_port.core import EvaluatorResult
from langchain_evals_port.storage import SqliteLedger

pytest.importorskip("uvicorn", reason="the console extra is not installed")

from langchain_evals_port.console import create_app


@pytest.fixture
def seeded(tmp_path: Path) -> Iterator[tuple[SqliteLedger, str]]:
    """A ``seed_small`` ledger and the base URL of the console serving it."""
    ledger = SqliteLedger(tmp_path / "ledger.db")
    seed_small(ledger)
    with serving(create_app(ledger)) as base:
        yield ledger, base
    ledger.close()


def notice(page: httpx.Response) -> str:
    found = re.search(r'<p class="notice">(.*?)</p>', page.text, re.S)
    assert found is not None, page.text
    return re.sub(r"<[^>]+>", "", found.group(1))


def test_a_waiting_review_is_listed_on_its_interaction_page(
    seeded: tuple[SqliteLedger, str],
) -> None:
    _, base = seeded
    page = httpx.get(f"{base}/interactions/i-2")
    assert page.status_code == 200
    section = page.text.split('<h2 id="waiting">', 1)[1]
    assert "human-review" in section
    assert "e-review" in section
    assert "Is this reply right?" in section
    assert '<h2 id="waiting">' not in httpx.get(f"{base}/interactions/i-3").text


def test_a_resumed_review_says_whether_a_worker_is_running(
    seeded: tuple[SqliteLedger, str],
) -> None:
    ledger, base = seeded
    with httpx.Client(base_url=base, follow_redirects=True) as client:
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', client.get("/waiting").text)
        assert csrf is not None
        resumed = client.post(
            "/waiting/e-review/resume", data={"csrf_token": csrf.group(1), "answer": "yes"}
        )
        assert resumed.status_code == 200
        assert notice(resumed) == (
            "Resumed e-review: it is queued, but no worker is running evaluations now: it goes "
            "on when one runs (the application's EvaluationRuntime, or langchain-evals worker)."
        )
        [claim] = ledger.claim("worker-7", limit=1, lease_seconds=600.0)
        assert claim.unit.evaluation_id == "e-review"
        assert notice(client.get("/waiting?done=e-review")) == (
            "Resumed e-review: worker worker-7 is running its evaluation."
        )
        ledger.complete(
            claim,
            evaluation(
                "e-review",
                ledger.get_interaction("i-2"),
                "human-review",
                EvaluatorResult(key="review", score=True, metadata={"passed": True}),
            ),
        )
        assert notice(client.get("/waiting?done=e-review")) == (
            "Resumed e-review: its evaluation is recorded."
        )


def test_score_chips_are_coloured_by_their_threshold_with_a_legend(tmp_path: Path) -> None:
    ledger = SqliteLedger(tmp_path / "ledger.db")
    when = datetime.now(timezone.utc) - timedelta(minutes=5)
    record = interaction("i-scores", "support", when, "Hello?", "Hi.")
    ledger.record_interaction(record)
    for evaluator_id, score, passed in (
        ("above", 0.9, True),
        ("below", 0.4, False),
        ("unset", 0.7, None),  # recorded with no threshold to pass (an old ledger's record)
    ):
        metadata = {} if passed is None else {"passed": passed}
        result = EvaluatorResult(key=evaluator_id, score=score, metadata=metadata)
        ledger.record_evaluation(evaluation(f"e-{evaluator_id}", record, evaluator_id, result))
    try:
        with serving(create_app(ledger)) as base:
            page = httpx.get(f"{base}/interactions/i-scores").text
            found = re.findall(r'<span class="outcome ([^"]+)"[^>]*>([0-9.]+)</span>', page)
            chips = {label: classes for classes, label in found}
            assert chips == {
                "0.9": "verdict",
                "0.4": "verdict not-passed",
                "0.7": "verdict no-threshold",
            }
            assert 'class="note legend"' in page
            listed = httpx.get(f"{base}/interactions").text
            assert 'class="note legend"' in listed
    finally:
        ledger.close()
