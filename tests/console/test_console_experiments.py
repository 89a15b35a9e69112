"""The console's experiment pages over HTTP (Starlette's test client), and ``langchain-evals
report``: experiments run into a store are listed, one shows its runs with their reasoning
(untrusted outputs as text) and filters them, two compare with the right verdict and cases,
an unknown name is a 404 naming the closest, and the report file holds the figures and
nothing from elsewhere."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _seed import CASES, SCRIPT, good, seed_experiments

pytest.importorskip("starlette", reason="the console extra is not installed")
from starlette.testclient import TestClient

from langchain_evals_port.cli import main
from langchain_evals_port.console import create_app
from langchain_evals_port.storage import SqliteLedger


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("experiments") / "experiments.db"
    seed_experiments(path)
    return path


@pytest.fixture
def client(tmp_path: Path, store: Path) -> Iterator[TestClient]:
    from langchain_evals_port.experiments import ExperimentStore

    ledger = SqliteLedger(tmp_path / "ledger.db")
    experiments = ExperimentStore(store)
    yield TestClient(create_app(ledger, experiments), base_url="http://127.0.0.1")
    experiments.close()
    ledger.close()


def rows(page: str, table: str) -> list[str]:
    body = re.search(rf'<table id="{table}">(.*?)</table>', page, re.S)
    assert body is not None, f"no table {table}"
    return re.findall(r"<tr .*?</tr>", body.group(1), re.S)


def test_the_list_shows_every_experiment_and_a_compare_form(client: TestClient) -> None:
    page = client.get("/experiments")
    assert page.status_code == 200
    listed = re.findall(r'data-experiment="([^"]+)"', page.text)
    assert listed == ["candidate-run", "baseline-run"]  # newest first
    row = rows(page.text, "experiments")[1]
    cells = [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td.*?</td>", row)]
    assert cells[:6] == ["baseline-run", "good", "9", "1", "9 / 9", "exact_match, length"]
    assert 'action="/experiments/compare"' in page.text
    assert '<a href="/experiments">Experiments</a>' in page.text


def test_an_experiment_shows_its_figures_runs_and_reasoning_as_text(client: TestClient) -> None:
    page = client.get("/experiments/candidate-run")
    assert page.status_code == 200
    statistics = rows(page.text, "statistics")
    assert 'data-key="exact_match"' in statistics[0]
    # 5 of 9 cases match; Wilson's interval for 5/9.
    assert '<td class="num score">0.556</td>' in statistics[0]
    assert '<td class="num interval">[0.267, 0.811]</td>' in statistics[0]
    runs = rows(page.text, "runs")
    assert len(runs) == 9
    assert "2 characters, said the judge" in page.text
    assert SCRIPT not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    assert 'id="chart-scores"' in page.text


def test_the_filter_keeps_only_the_cases_with_a_problem(client: TestClient) -> None:
    page = client.get("/experiments/candidate-run?show=problems")
    assert page.status_code == 200
    cases = re.findall(r'<tr class="run" data-case="([^"]+)"', page.text)
    # c4..c7 answer wrong; xss's output is too long for ``length``.
    assert cases == ["c4", "c5", "c6", "c7", "xss"]
    assert client.get("/experiments/candidate-run?show=failed").text.count('class="run"') == 0
    assert client.get("/experiments/candidate-run?show=bogus").status_code == 400


def test_a_comparison_finds_the_regression_and_its_cases(client: TestClient) -> None:
    page = client.get("/experiments/compare?baseline=baseline-run&candidate=candidate-run")
    assert page.status_code == 200
    [exact] = [row for row in rows(page.text, "comparison") if 'data-key="exact_match"' in row]
    assert '<td class="verdict worse">worse</td>' in exact
    assert '<td class="num change">-0.444</td>' in exact
    assert '<td class="num">9</td>' in exact  # shared cases
    changed = re.findall(r'<tr class="(\w+)" data-key="([^"]+)" data-case="([^"]+)"', page.text)
    assert changed == [("worse", "exact_match", f"c{n}") for n in range(4, 8)]
    assert 'id="chart-change"' in page.text


def test_an_unknown_experiment_is_a_404_naming_the_closest(client: TestClient) -> None:
    page = client.get("/experiments/candidate-rnu")
    assert page.status_code == 404
    assert "did you mean &#39;candidate-run&#39;?" in page.text
    compared = client.get("/experiments/compare?baseline=baseline-rn&candidate=candidate-run")
    assert compared.status_code == 404
    assert "did you mean &#39;baseline-run&#39;?" in compared.text


def test_an_experiment_named_compare_is_reached_from_its_link(tmp_path: Path) -> None:
    from langchain_evals_port import ExactMatch
    from langchain_evals_port.experiments import ExperimentStore, run_experiment

    run_experiment(good, CASES, [ExactMatch()], name="compare", store=tmp_path / "store.db")
    ledger = SqliteLedger(tmp_path / "ledger.db")
    experiments = ExperimentStore(tmp_path / "store.db")
    try:
        client = TestClient(create_app(ledger, experiments), base_url="http://127.0.0.1")
        assert 'href="/experiments/compare"' in client.get("/experiments").text
        page = client.get("/experiments/compare")
        assert page.status_code == 200
        assert "<h1>Experiment compare</h1>" in page.text
        filtered = client.get("/experiments/compare?show=problems")
        assert filtered.status_code == 200
        assert 'class="run"' not in filtered.text  # every case matches
        assert client.get("/experiments/compare?baseline=compare").status_code == 400
    finally:
        experiments.close()
        ledger.close()


def test_without_a_store_there_are_no_experiment_pages(tmp_path: Path) -> None:
    ledger = SqliteLedger(tmp_path / "ledger.db")
    try:
        client = TestClient(create_app(ledger), base_url="http://127.0.0.1")
        assert client.get("/experiments").status_code == 404
        assert "/experiments" not in client.get("/").text
    finally:
        ledger.close()


def references(page: str) -> list[str]:
    """Every address the page's markup loads or links to (a self-contained page: none).
    Inlined scripts are left out: Plotly's own holds attribution links and map tile
    addresses, used only by map charts (none here) and by its logo (turned off)."""
    markup = re.sub(r"<script>.*?</script>", "<script></script>", page, flags=re.S)
    return re.findall(r"""\b(?:src|href)\s*=\s*["']?[^"'\s>]*""", markup, re.I)


@pytest.mark.parametrize("charts", [True, False], ids=["charts", "no-charts"])
def test_the_report_command_writes_one_self_contained_file(
    store: Path, tmp_path: Path, capsys: Any, charts: bool
) -> None:
    out = tmp_path / "report.html"
    options = ["--store", str(store), *([] if charts else ["--no-charts"])]
    status = main(
        ["report", "candidate-run", "--baseline", "baseline-run", "--html", str(out), *options]
    )
    assert status == 0, capsys.readouterr().err
    page = out.read_text(encoding="utf-8")
    assert '<td class="verdict worse">worse</td>' in page
    assert '<td class="num change">-0.444</td>' in page
    assert references(page) == []
    assert 'rel="stylesheet"' not in page
    assert "<style>" in page
    assert ("Plotly.newPlot" in page) is charts
    assert SCRIPT not in page
    # With the charts, Plotly's JavaScript is inlined (4.8 MB); without, a few kilobytes.
    assert (out.stat().st_size > 4_000_000) is charts


def test_the_report_of_one_experiment(store: Path, tmp_path: Path, capsys: Any) -> None:
    out = tmp_path / "one.html"
    args = ["report", "candidate-run", "--html", str(out), "--store", str(store), "--no-charts"]
    assert main(args) == 0
    page = out.read_text(encoding="utf-8")
    assert "<h1>Experiment candidate-run</h1>" in page
    assert '<td class="num interval">[0.267, 0.811]</td>' in page
    assert "2 characters, said the judge" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert references(page) == []
    assert main(["report", "candidate-rnu", "--html", str(out), "--store", str(store)]) == 2
    assert "did you mean 'candidate-run'?" in capsys.readouterr().err
