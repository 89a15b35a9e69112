"""The console over HTTP (Starlette's test client): every page answers from a seeded SQLite
ledger with the right figures, escapes untrusted text, retries a failure once, resumes a
waiting review, and guards access with a token and forms with a CSRF token. The browser tests
(``test_console_browser.py``) check the same pages as a person sees them."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from _seed import SCRIPT

pytest.importorskip("starlette", reason="the console extra is not installed")
from starlette.testclient import TestClient

from langchain_evals_port.console import create_app
from langchain_evals_port.storage import ConsoleQueries, InMemoryLedger, SqliteLedger


def test_the_overview_shows_each_evaluator_s_pass_rate_with_its_interval(
    client: TestClient,
) -> None:
    page = client.get("/")
    assert page.status_code == 200
    rows = re.findall(
        r'data-agent="support" data-evaluator="([^"]+)">.*?class="num pass-rate">([^<]*)<',
        page.text,
        re.S,
    )
    # 7 of 10 passed; Wilson's interval for 7/10.
    assert rows == [("helpfulness", "0.700 [0.397, 0.892]"), ("tone", "—")]
    assert "[timeout] TimeoutError: judge timed out after 30 s" in page.text


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", 10),
        ("?outcome=failed", 1),
        ("?evaluator=tone", 1),
        ("?text=order%203", 1),
        ("?agent=nobody", 0),
    ],
)
def test_interactions_are_filtered(client: TestClient, query: str, expected: int) -> None:
    page = client.get(f"/interactions{query}")
    assert page.status_code == 200
    assert page.text.count('<a href="/interactions/i-') == expected


def test_an_unknown_range_is_a_clear_error(client: TestClient) -> None:
    page = client.get("/?range=2w")
    assert page.status_code == 400
    assert "range: expected one of 1h, 24h, 7d, 30d, 365d, got '2w'" in page.text


def test_a_bad_filter_is_a_clear_error(client: TestClient) -> None:
    page = client.get("/interactions?outcome=broken")
    assert page.status_code == 400
    assert "outcome: expected one of verdict, inconclusive, failed" in page.text


def test_an_unknown_interaction_is_a_404(client: TestClient) -> None:
    page = client.get("/interactions/i-nope")
    assert page.status_code == 404
    assert "i-nope" in page.text


def test_a_transcript_is_shown_as_text(client: TestClient) -> None:
    page = client.get("/interactions/i-0")
    assert page.status_code == 200
    assert SCRIPT not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    assert "reasoning 0" in page.text


def test_a_result_stored_unreadable_is_shown_failed_beside_its_siblings(
    client: TestClient, ledger: SqliteLedger, tmp_path: Path
) -> None:
    # As versions that accepted a score of inf stored it: a verdict whose score is null.
    with sqlite3.connect(tmp_path / "ledger.db") as db:
        db.execute(
            "UPDATE ledger_evaluations SET record = json_set(record, '$.results[0].score', NULL)"
            " WHERE evaluation_id = 'e-help-1'"
        )
    page = client.get("/interactions/i-1")
    assert page.status_code == 200
    assert "the stored result could not be read back" in page.text
    assert "judge timed out after 30 s" in page.text  # its sibling, the tone evaluation


def test_a_failed_evaluation_is_queued_again_once(client: TestClient, ledger: SqliteLedger) -> None:
    client.get("/failed")
    csrf = client.cookies["langchain_evals_csrf"]
    notices = []
    for _ in range(2):
        answer = client.post("/failed/e-tone-failed/retry", data={"csrf_token": csrf})
        assert answer.status_code == 200
        notices.append(re.search(r'<p class="notice">([^<]*)</p>', answer.text).group(1))  # type: ignore[union-attr]
    assert notices == [
        "Queued e-tone-failed:retry: a worker runs it once.",
        "e-tone-failed:retry was queued already (or has run): nothing new was queued.",
    ]
    queued = [c.unit.evaluation_id for c in ledger.claim("w", limit=10, lease_seconds=5.0)]
    assert queued == ["e-tone-failed:retry"]


def test_a_waiting_review_is_resumed_with_the_answer(
    client: TestClient, ledger: SqliteLedger
) -> None:
    client.get("/waiting")
    csrf = client.cookies["langchain_evals_csrf"]
    answer = client.post(
        "/waiting/e-review/resume",
        data={"csrf_token": csrf, "answer": '{"approved": true}'},
        follow_redirects=False,
    )
    assert answer.status_code == 303
    assert ledger.waiting_work() == []
    [claim] = ledger.claim("w", limit=1, lease_seconds=5.0)
    assert (claim.unit.resumed, claim.unit.resume_value) == (True, {"approved": True})


def test_a_post_without_the_csrf_token_is_refused(client: TestClient, ledger: SqliteLedger) -> None:
    client.get("/failed")
    refused = client.post("/failed/e-tone-failed/retry", data={"csrf_token": "forged"})
    assert refused.status_code == 403
    assert client.post("/failed/e-tone-failed/retry", data={}).status_code == 403
    assert ledger.pending_work() == 1  # only the seeded review


def test_a_token_is_required_when_configured(ledger: SqliteLedger) -> None:
    client = TestClient(create_app(ledger, token="s3cret"), base_url="http://127.0.0.1")
    assert client.get("/").status_code == 401
    assert client.get("/", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/", headers={"Authorization": "Bearer s3cret"}).status_code == 200
    # Once in the address, then a cookie.
    assert client.get("/?token=s3cret").status_code == 200
    assert client.get("/waiting").status_code == 200


def test_a_ledger_without_sql_tables_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match="expected a SqliteLedger or PostgresLedger, got InMem"):
        create_app(InMemoryLedger())  # type: ignore[arg-type]


def test_read_only_has_no_actions(ledger: SqliteLedger) -> None:
    client = TestClient(create_app(ledger, read_only=True), base_url="http://127.0.0.1")
    assert "Retry" not in client.get("/failed").text
    assert "Resume" not in client.get("/waiting").text
    assert client.post("/failed/e-tone-failed/retry", data={}).status_code in (403, 405)


def test_plotly_is_served_from_the_installed_package(client: TestClient) -> None:
    script = client.get("/static/plotly.min.js")
    assert script.status_code == 200
    assert len(script.content) > 1_000_000
    assert 'src="/static/plotly.min.js"' in client.get("/").text


def test_a_text_search_reads_a_window_a_page_and_continues_after_it(
    ledger: SqliteLedger,
) -> None:
    queries = ConsoleQueries(ledger, text_window=4)
    found: list[str] = []
    pages = 0
    cursor = None
    while True:
        rows, cursor = queries.interactions(text="order 1", limit=50, cursor=cursor)
        found += [row.record.interaction_id for row in rows]
        pages += 1
        if cursor is None:
            break
    # i-1 is the ninth newest of ten: in the third window of four, found on the third page.
    assert (found, pages) == (["i-1"], 3)


def test_a_role_bound_failure_retried_from_the_console_keeps_its_pass_threshold(
    tmp_path: Path,
) -> None:
    from langchain_core.runnables import RunnableLambda

    from langchain_evals_port import evaluator
    from langchain_evals_port.runtime import EvaluationRuntime

    runs: list[str] = []

    @evaluator(feedback_key="helpfulness")
    def helpfulness(outputs: str) -> float:
        runs.append(outputs)
        if len(runs) == 1:
            raise RuntimeError("the judge is unreachable")
        return 0.9

    # Bound through a role, the threshold with it: only the unit's roles find the binding.
    config = {
        "evaluation": {
            "evaluators": {
                "helpfulness": {"agent_roles": {"customer-facing": {"pass_threshold": 0.5}}}
            }
        }
    }
    ledger = SqliteLedger(tmp_path / "ledger.db")
    runtime = EvaluationRuntime(
        config, evaluators={"helpfulness": helpfulness}, ledger=ledger, poll_interval=0.02
    )
    try:
        agent = runtime.bind(
            RunnableLambda(lambda question: f"You asked: {question}", name="echo"),
            agent_id="support",
            roles=["customer-facing"],
        )
        interaction = agent.invoke_detailed("Where is my parcel?").interaction_id
        [failed] = runtime.wait_for_evaluations(interaction, timeout=60)
        assert failed.outcome == "failed"
        assert failed.roles == ("customer-facing",)
        client = TestClient(create_app(ledger), base_url="http://127.0.0.1")
        client.get("/failed")
        answer = client.post(
            f"/failed/{failed.evaluation_id}/retry",
            data={"csrf_token": client.cookies["langchain_evals_csrf"]},
        )
        assert answer.status_code == 200
        records = runtime.wait_for_evaluations(interaction, timeout=60)
    finally:
        runtime.close()
        ledger.close()
    retried = {record.evaluation_id: record for record in records}[f"{failed.evaluation_id}:retry"]
    assert (retried.outcome, retried.passed, retried.pass_threshold) == ("verdict", True, 0.5)
    assert (retried.roles, retried.flow_id) == (failed.roles, failed.flow_id)
