"""Annotating an experiment's run from its console page (Starlette's test client): each run's
row has a form posting with the CSRF token, keyed by the experiment's evaluators; the
annotation is stored for that case and trial beside the evaluators' results (which stay as
they are) and listed in its row as text; a bad form is a 400 naming the problem (an unknown
key names the valid ones); a read-only console lists annotations but has no form and no
route, and the report files show neither."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from _seed import SCRIPT, seed_experiments

pytest.importorskip("starlette", reason="the console extra is not installed")
from starlette.testclient import TestClient

from langchain_evals_port.console import create_app
from langchain_evals_port.experiments import ExperimentStore, report_html, write_report
from langchain_evals_port.runtime import case_subject
from langchain_evals_port.storage import SqliteLedger

PAGE = "/experiments/candidate-run"
POST = "/experiments/candidate-run/annotations"


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("experiments") / "experiments.db"
    seed_experiments(path)
    return path


@pytest.fixture
def store(tmp_path: Path, seeded: Path) -> Iterator[ExperimentStore]:
    """A copy of the seeded store, so each test starts without annotations."""
    shutil.copy(seeded, tmp_path / "experiments.db")
    experiments = ExperimentStore(tmp_path / "experiments.db")
    yield experiments
    experiments.close()


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[SqliteLedger]:
    ledger = SqliteLedger(tmp_path / "ledger.db")
    yield ledger
    ledger.close()


@pytest.fixture
def client(ledger: SqliteLedger, store: ExperimentStore) -> TestClient:
    return TestClient(create_app(ledger, store), base_url="http://127.0.0.1")


def row(page: str, case: str, trial: int = 0) -> str:
    """The markup of one run's row."""
    found = re.search(
        rf'<tr class="run" data-case="{case}" data-trial="{trial}".*?</tr>', page, re.S
    )
    assert found is not None, f"no row of {case}, trial {trial}"
    return found.group(0)


def csrf(client: TestClient) -> str:
    """The CSRF token, checked to be in the c4 row's form as a hidden field."""
    page = client.get(PAGE)
    token = client.cookies["langchain_evals_csrf"]
    form = re.search(r'<form method="post".*?</form>', row(page.text, "c4"), re.S)
    assert form is not None
    assert f'<input type="hidden" name="csrf_token" value="{token}">' in form.group(0)
    assert f'action="{POST}"' in form.group(0)
    return token


def test_a_case_annotation_is_added_from_its_row_and_listed_there(
    client: TestClient, store: ExperimentStore
) -> None:
    before = store.load("candidate-run")
    token = csrf(client)
    form = re.search(r'<select name="key">(.*?)</select>', row(client.get(PAGE).text, "c4"))
    assert form is not None
    # The key is chosen from the experiment's evaluators.
    assert re.findall(r'<option value="([^"]+)"', form.group(1)) == ["exact_match", "length"]

    answer = client.post(
        POST,
        data={
            "csrf_token": token,
            "case_id": "c4",
            "trial": "0",
            "key": "exact_match",
            "verdict": "fail",
            "note": f"{SCRIPT} wrong total",
            "annotator": "ana",
        },
        follow_redirects=False,
    )

    assert answer.status_code == 303
    assert answer.headers["location"] == (f"{PAGE}?annotated=exact_match&case=c4&trial=0#run-c4-0")
    page = client.get(answer.headers["location"]).text
    assert '<p class="notice">Annotated exact_match of case c4, trial 0.</p>' in page
    listed = re.findall(r'<li class="annotation".*?</li>', row(page, "c4"))
    assert listed == [
        '<li class="annotation" data-key="exact_match"><span class="key">exact_match</span>: '
        '<span class="value">fail</span> <span class="note">'
        "&lt;script&gt;alert(1)&lt;/script&gt; wrong total</span> "
        '<span class="annotator">(ana)</span></li>'
    ]
    assert SCRIPT not in page
    assert 'class="annotation"' not in row(page, "c3")  # only the annotated run lists it
    [stored] = store.annotations("candidate-run")
    assert stored.subject_id == case_subject("candidate-run", "c4", 0)
    assert stored.subject_kind == "case"
    assert (stored.key, stored.score, stored.note, stored.annotator) == (
        "exact_match",
        False,
        f"{SCRIPT} wrong total",
        "ana",
    )
    assert store.load("candidate-run").runs == before.runs  # the evaluators' results kept


def test_a_numeric_score_keeps_the_page_filter(client: TestClient, store: ExperimentStore) -> None:
    token = csrf(client)
    data = {"csrf_token": token, "case_id": "xss", "trial": "0", "key": "length"}

    answer = client.post(
        POST, data={**data, "score": "0.25", "show": "problems"}, follow_redirects=False
    )

    assert answer.status_code == 303
    assert answer.headers["location"].startswith(f"{PAGE}?show=problems&annotated=length&")
    page = client.get(answer.headers["location"]).text
    assert '<span class="value">0.25</span>' in row(page, "xss")
    assert [a.value for a in store.annotations("candidate-run")] == [0.25]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"key": "tone", "verdict": "pass"},
            "key: expected one of exact_match, length, got 'tone'",
        ),
        ({"key": "length", "score": "high"}, "score: expected a number, got 'high'"),
        ({"key": "length", "score": "nan"}, "score: expected a finite number, got 'nan'"),
        ({"key": "length", "verdict": "pass", "score": "1"}, "give a verdict or a score, not both"),
        ({"key": "length", "verdict": "maybe"}, "verdict: expected pass or fail, got 'maybe'"),
        ({"key": "length"}, "an annotation needs a score (pass/fail or a number) or a label"),
        (
            {"key": "length", "verdict": "pass", "case_id": "c99"},
            "case_id: experiment 'candidate-run' has no finished run of case 'c99', trial 0",
        ),
        (
            {"key": "length", "verdict": "pass", "trial": "1"},
            "case_id: experiment 'candidate-run' has no finished run of case 'c4', trial 1",
        ),
        ({"key": "length", "verdict": "pass", "trial": "first"}, "trial: expected a whole number"),
    ],
)
def test_a_bad_form_is_a_400_naming_the_problem(
    client: TestClient, store: ExperimentStore, data: dict[str, str], message: str
) -> None:
    token = csrf(client)

    answer = client.post(POST, data={"csrf_token": token, "case_id": "c4", "trial": "0", **data})

    assert answer.status_code == 400
    assert message in answer.text
    assert store.annotations() == []


def test_an_unknown_experiment_is_a_404_and_a_forged_form_a_403(
    client: TestClient, store: ExperimentStore
) -> None:
    token = csrf(client)
    data = {"case_id": "c4", "trial": "0", "key": "length", "verdict": "pass"}

    unknown = client.post(
        "/experiments/candidate-rnu/annotations", data={"csrf_token": token, **data}
    )
    forged = client.post(POST, data={"csrf_token": "forged", **data})

    assert unknown.status_code == 404
    assert "did you mean &#39;candidate-run&#39;?" in unknown.text
    assert forged.status_code == 403
    assert store.annotations() == []


def test_a_read_only_console_lists_case_annotations_but_takes_none(
    ledger: SqliteLedger, store: ExperimentStore
) -> None:
    store.annotate("candidate-run", "c5", "length", score=True, annotator="bo")
    client = TestClient(create_app(ledger, store, read_only=True), base_url="http://127.0.0.1")

    page = client.get(PAGE).text
    assert '<span class="value">pass</span>' in row(page, "c5")
    assert '<form method="post"' not in page
    assert 'class="annotate"' not in page
    answer = client.post(
        POST,
        data={
            "csrf_token": client.cookies["langchain_evals_csrf"],
            "case_id": "c5",
            "key": "length",
            "verdict": "fail",
        },
    )
    assert answer.status_code == 405
    assert len(store.annotations()) == 1


def test_the_report_files_show_no_annotation_and_no_form(
    store: ExperimentStore, tmp_path: Path
) -> None:
    store.annotate("candidate-run", "c4", "exact_match", score=False, note="seen by ana")
    result = store.load("candidate-run")

    pages = [
        report_html(result, info=store.info("candidate-run"), plotly=False),
        write_report(result, tmp_path / "report", plotly=False)[2].read_text("utf-8"),
    ]

    for page in pages:
        assert "<h1>Experiment candidate-run</h1>" in page
        assert "<form" not in page
        assert "csrf_token" not in page
        assert "<th>annotations</th>" not in page
        assert "seen by ana" not in page
