"""People's annotations of an experiment's cases: stored in the experiment store beside the
runs' results (which stay as they were) and paired with them for ``agreement``, on a SQLite
file and on PostgreSQL."""

from __future__ import annotations

import pytest
from _postgres_server import sql_location  # noqa: F401 (the `location` fixture)

from langchain_evals_port import ExactMatch
from langchain_evals_port.experiments import (
    Dataset,
    ExperimentNotFoundError,
    ExperimentStore,
    run_experiment,
)

CASES = Dataset.from_records(
    [{"id": f"q{n}", "inputs": {"n": n}, "reference_outputs": str(n * 2)} for n in range(4)]
)


def _app(inputs: dict[str, int]) -> str:
    # Right on q0 and q1, wrong on q2 and q3: exact_match passes, passes, fails, fails.
    return str(inputs["n"] * 2) if inputs["n"] < 2 else "?"


def test_case_annotations_pair_with_the_runs_results(location: str) -> None:
    run_experiment(_app, CASES, [ExactMatch()], name="exp", store=location)
    run_experiment(_app, CASES, [ExactMatch()], name="other", store=location)
    with ExperimentStore(location) as store:
        before = store.load("exp").runs
        for case_id, passed in [("q0", True), ("q1", False), ("q2", False), ("q3", False)]:
            store.annotate("exp", case_id, "exact_match", score=passed, annotator="ana")
        store.annotate("other", "q0", "exact_match", score=False)

        figures = store.agreement("exp")

        assert [a.subject_id for a in store.annotations("exp")] == [
            "exp:q0:0",
            "exp:q1:0",
            "exp:q2:0",
            "exp:q3:0",
        ]
        assert len(store.annotations()) == 5
        assert store.load("exp").runs == before  # the results stay as they were
        with pytest.raises(ExperimentNotFoundError):
            store.annotate("exq", "q0", "exact_match", score=True)

    judged = figures["exact_match"]
    # Judge pass pass fail fail, people pass fail fail fail: p_o = 3/4,
    # p_e = .5 · .25 + .5 · .75 = .5, kappa = (.75 - .5) / .5 = .5.
    assert (judged.n, judged.accuracy) == (4, 0.75)
    assert judged.kappa == pytest.approx(0.5)
    assert dict(judged.confusion) == {
        (False, False): 2,
        (False, True): 0,
        (True, False): 1,
        (True, True): 1,
    }


def test_experiments_whose_names_share_a_prefix_keep_their_annotations_apart(
    location: str,
) -> None:
    # Joined, run "a:b" / case "c" and run "a" / case "b:c" are both "a:b:c:0": matched by
    # prefix, each experiment counted the other's annotation as its own.
    cases_a = Dataset.from_records([{"id": "b:c", "inputs": {"n": 1}, "reference_outputs": "2"}])
    cases_ab = Dataset.from_records([{"id": "c", "inputs": {"n": 1}, "reference_outputs": "2"}])
    run_experiment(_app, cases_a, [ExactMatch()], name="a", store=location)
    run_experiment(_app, cases_ab, [ExactMatch()], name="a:b", store=location)
    with ExperimentStore(location) as store:
        store.annotate("a:b", "c", "exact_match", score=False, annotator="ana")

        assert store.annotations("a") == []
        [only] = store.annotations("a:b")
        assert (only.experiment, only.case_id, only.trial) == ("a:b", "c", 0)
        assert store.agreement("a") == {}
        assert store.agreement("a:b")["exact_match"].n == 1
