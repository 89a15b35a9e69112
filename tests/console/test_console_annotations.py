"""Annotating an interaction from its console page (Starlette's test client): the form posts
with the CSRF token, the annotation is listed beside the evaluations (as text) and stored
without touching them; a bad form is a 400 naming the field; read-only consoles have no form
and no route."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("starlette", reason="the console extra is not installed")
from starlette.testclient import TestClient

from langchain_evals_port.console import create_app
from langchain_evals_port.storage import SqliteLedger


def _csrf(client: TestClient) -> str:
    page = client.get("/interactions/i-0")
    token = client.cookies["langchain_evals_csrf"]
    # The form carries the same token as the cookie, in a hidden field.
    form = re.search(r'<form id="annotate".*?</form>', page.text, re.S)
    assert form is not None
    assert f'<input type="hidden" name="csrf_token" value="{token}">' in form.group(0)
    return token


def test_an_annotation_is_added_and_listed_beside_the_evaluations(
    client: TestClient, ledger: SqliteLedger
) -> None:
    evaluations = ledger.get_evaluations("i-0")
    assert "No one has annotated this interaction." in client.get("/interactions/i-0").text
    token = _csrf(client)

    answer = client.post(
        "/interactions/i-0/annotations",
        data={
            "csrf_token": token,
            "key": "helpfulness",
            "verdict": "fail",
            "note": "<script>alert(1)</script> misses the refund",
            "annotator": "ana",
        },
        follow_redirects=False,
    )

    assert answer.status_code == 303
    assert answer.headers["location"] == "/interactions/i-0?annotated=helpfulness#annotations"
    page = client.get(answer.headers["location"])
    listed = re.search(r'<table id="annotation-list">.*?</table>', page.text, re.S)
    assert listed is not None
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", listed.group(0))
    assert cells[:4] == [
        "helpfulness",
        "fail",
        "&lt;script&gt;alert(1)&lt;/script&gt; misses the refund",
        "ana",
    ]
    [stored] = ledger.annotations(subject_id="i-0")
    assert (stored.key, stored.score, stored.annotator) == ("helpfulness", False, "ana")
    assert ledger.get_evaluations("i-0") == evaluations  # the judge's results untouched


def test_a_numeric_score_and_a_label(client: TestClient, ledger: SqliteLedger) -> None:
    token = _csrf(client)
    for data in ({"key": "tone", "score": "0.25"}, {"key": "tone", "label": "curt"}):
        answer = client.post("/interactions/i-0/annotations", data={"csrf_token": token, **data})
        assert answer.status_code == 200

    assert [a.value for a in ledger.annotations(subject_id="i-0")] == [0.25, "curt"]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"key": "tone", "score": "high"}, "score: expected a number, got 'high'"),
        ({"key": "tone", "verdict": "pass", "score": "1"}, "give a verdict or a score, not both"),
        ({"key": "", "verdict": "pass"}, "key: the feedback key is empty"),
        ({"key": "tone"}, "an annotation needs a score (pass/fail or a number) or a label"),
    ],
)
def test_a_bad_form_is_a_400_naming_the_problem(
    client: TestClient, ledger: SqliteLedger, data: dict[str, str], message: str
) -> None:
    token = _csrf(client)

    answer = client.post("/interactions/i-0/annotations", data={"csrf_token": token, **data})

    assert answer.status_code == 400
    assert message in answer.text
    assert ledger.annotations() == []


def test_an_unknown_interaction_is_a_404(client: TestClient) -> None:
    token = _csrf(client)
    answer = client.post(
        "/interactions/i-nope/annotations",
        data={"csrf_token": token, "key": "tone", "verdict": "pass"},
    )
    assert answer.status_code == 404


def test_an_annotation_without_the_csrf_token_is_refused(
    client: TestClient, ledger: SqliteLedger
) -> None:
    client.get("/interactions/i-0")
    answer = client.post(
        "/interactions/i-0/annotations",
        data={"csrf_token": "forged", "key": "tone", "verdict": "pass"},
    )
    assert answer.status_code == 403
    assert ledger.annotations() == []


def test_a_read_only_console_lists_annotations_but_takes_none(ledger: SqliteLedger) -> None:
    ledger.annotate("i-0", "tone", label="curt", annotator="bo")
    client = TestClient(create_app(ledger, read_only=True), base_url="http://127.0.0.1")

    page = client.get("/interactions/i-0")
    assert 'id="annotate"' not in page.text
    assert "curt" in page.text
    client.get("/")
    answer = client.post(
        "/interactions/i-0/annotations",
        data={"csrf_token": client.cookies["langchain_evals_csrf"], "key": "t", "label": "x"},
    )
    assert answer.status_code in (404, 405)
    assert len(ledger.annotations()) == 1
