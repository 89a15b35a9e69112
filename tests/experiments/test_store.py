"""The experiment store: runs written as they finish, a killed run resumed with only its
unfinished cases, rescoring without the target, experiments listed and loaded — on a SQLite
file and on PostgreSQL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from _postgres_server import sql_location  # noqa: F401 (the `location` fixture)
from langchain_core.messages import AIMessage, HumanMessage

from langchain_evals_port import ExactMatch, LLMJudge, Score, evaluator
from langchain_evals_port.experiments import (
    Case,
    Dataset,
    ExperimentInfo,
    ExperimentMismatchError,
    ExperimentNotFoundError,
    ExperimentStore,
    rescore,
    run_experiment,
)
from langchain_evals_port.testing import ScriptedChatModel

CASES = Dataset.from_records(
    [{"id": f"q{n}", "inputs": {"n": n}, "reference_outputs": str(n * 2)} for n in range(30)]
)


APP = '''
"""The app of a resumable experiment: each call is logged, then it doubles a number."""
import os, time
from langchain_evals_port import ExactMatch

def target(inputs):
    with open(os.environ["CALLS_LOG"], "a") as log:
        log.write(f"{inputs['n']}\\n")
    time.sleep(0.05)
    return str(inputs["n"] * 2)

EVALUATORS = [ExactMatch()]
'''

RUN = """
import sys
from langchain_evals_port.experiments import Dataset, run_experiment
cases = Dataset.from_records(
    [{"id": f"q{n}", "inputs": {"n": n}, "reference_outputs": str(n * 2)} for n in range(30)]
)
result = run_experiment("doubling:target", cases, "doubling:EVALUATORS", name="resumable",
                        store=sys.argv[1], max_concurrency=4, progress=False)
print(len(result.runs), result.statistics()["exact_match"].mean)
"""


def _start(folder: Path, location: str) -> subprocess.Popen[str]:
    environment = {**os.environ, "CALLS_LOG": str(folder / "calls.log"), "PYTHONPATH": str(folder)}
    return subprocess.Popen(
        [sys.executable, "-c", RUN, location],
        cwd=folder,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finished(location: str) -> set[str]:
    with ExperimentStore(location) as store:
        try:
            return {run.case.id for run in store.load("resumable").runs}
        except ExperimentNotFoundError:
            return set()


@pytest.mark.processes
def test_a_run_killed_outright_resumes_with_its_unfinished_cases_only(
    tmp_path: Path, location: str
) -> None:
    (tmp_path / "doubling.py").write_text(textwrap.dedent(APP))
    first = _start(tmp_path, location)
    deadline = time.monotonic() + 60
    while len(_finished(location)) < 10:
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "the first run never got a third of the way"
        time.sleep(0.02)
    first.send_signal(signal.SIGKILL)
    first.wait()
    stored_before_the_restart = _finished(location)
    assert 10 <= len(stored_before_the_restart) < 30

    second = _start(tmp_path, location)
    out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err
    assert out.split() == ["30", "1.0"]

    calls = (tmp_path / "calls.log").read_text().split()
    for case_id in stored_before_the_restart:
        assert calls.count(case_id.removeprefix("q")) == 1, case_id
    # At most the four runs in flight at the kill ran twice, and those whose kept output
    # was not written yet (KEPT_SECONDS, 10 ms, or the records' 50 ms when they go along):
    # at most two a slot, a run taking 50 ms.
    assert 30 <= len(calls) <= 42
    assert _finished(location) == {case.id for case in CASES}


def test_rescore_scores_the_stored_outputs_again_without_running_the_target(
    location: str,
) -> None:
    calls: list[str] = []

    def app(inputs: dict[str, int]) -> list[object]:
        calls.append(str(inputs["n"]))
        return [HumanMessage(str(inputs["n"])), AIMessage(str(inputs["n"] * 2))]

    @evaluator
    def last_is_double(outputs: list[object], reference_outputs: str) -> Score:
        # The stored outputs come back as LangChain messages, not dicts.
        last = outputs[-1]
        assert isinstance(last, AIMessage)
        return Score(last.content == reference_outputs)

    @evaluator
    def strict(outputs: list[object]) -> Score:
        return Score(False)

    first = run_experiment(app, CASES, [last_is_double], name="msgs", store=location)
    assert len(calls) == 30
    again = rescore("msgs", [last_is_double, strict], store=location, progress=False)
    assert len(calls) == 30  # the target never ran
    assert again.name == "msgs-rescored-1"
    assert again.statistics()["last_is_double"].mean == first.statistics()["last_is_double"].mean
    assert again.statistics()["strict"].mean == 0.0
    assert [run.run.outputs[-1].content for run in again.runs] == [str(n * 2) for n in range(30)]


def test_an_experiment_is_written_as_it_goes_and_listed_and_loaded_later(
    location: str,
) -> None:
    def app(inputs: dict[str, int]) -> str:
        if inputs["n"] == 3:
            raise RuntimeError("three is unlucky")
        return str(inputs["n"] * 2)

    result = run_experiment(app, CASES, [ExactMatch()], trials=2, store=location)
    assert result.name == "app-1"
    with ExperimentStore(location) as store:
        [summary] = store.experiments()
        assert (summary.info.name, summary.runs, summary.finished) == ("app-1", 60, 60)
        assert (summary.info.trials, summary.info.evaluators) == (2, ["exact_match"])
        loaded = store.load("app-1")
        assert store.next_name("app") == "app-2"
    assert [(r.case.id, r.trial) for r in loaded.runs] == [
        (r.case.id, r.trial) for r in result.runs
    ]
    assert loaded.statistics() == result.statistics()
    unlucky = [r for r in loaded.runs if r.case.id == "q3"]
    assert [r.run.failed for r in unlucky] == [True, True]
    assert unlucky[0].results[0].outcome == "inconclusive"
    assert "three is unlucky" in (unlucky[0].run.interaction.failure_summary or "")


def test_a_finished_experiment_run_again_under_its_name_runs_nothing(location: str) -> None:
    calls: list[int] = []

    def app(inputs: dict[str, int]) -> str:
        calls.append(inputs["n"])
        return str(inputs["n"] * 2)

    run_experiment(app, CASES, [ExactMatch()], name="once", store=location)
    again = run_experiment(app, CASES, [ExactMatch()], name="once", store=location)
    assert len(calls) == 30
    assert len(again.runs) == 30


def test_resuming_under_a_name_with_other_cases_or_trials_is_refused(location: str) -> None:
    run_experiment(lambda inputs: "0", CASES, [ExactMatch()], name="fixed", store=location)
    with pytest.raises(ExperimentMismatchError, match=r"trials 1 \(now 2\)"):
        run_experiment(
            lambda inputs: "0", CASES, [ExactMatch()], name="fixed", trials=2, store=location
        )
    with pytest.raises(ExperimentMismatchError, match=r"cases 30 \(now 3\)"):
        run_experiment(lambda inputs: "0", CASES[:3], [ExactMatch()], name="fixed", store=location)


def test_an_unknown_experiment_names_the_closest(location: str) -> None:
    run_experiment(lambda inputs: "0", CASES, [ExactMatch()], name="baseline", store=location)
    with pytest.raises(ExperimentNotFoundError, match="did you mean 'baseline'"):
        rescore("baselin", [ExactMatch()], store=location)


def test_the_default_store_is_a_file_in_the_working_directory() -> None:
    run_experiment(lambda inputs: "0", CASES, [ExactMatch()], name="here", progress=False)
    assert Path(".langchain-evals/experiments.db").is_file()
    with ExperimentStore() as store:
        assert [s.info.name for s in store.experiments()] == ["here"]


def test_store_false_keeps_nothing() -> None:
    result = run_experiment(lambda inputs: "0", CASES, [ExactMatch()], store=False)
    assert len(result.runs) == 30
    assert not Path(".langchain-evals").exists()


def test_resuming_a_name_with_another_target_is_refused(location: str) -> None:
    def first(inputs: dict[str, int]) -> str:
        return "0"

    def second(inputs: dict[str, int]) -> str:
        return "1"

    run_experiment(first, CASES, [ExactMatch()], name="owned", store=location)
    with pytest.raises(ExperimentMismatchError, match="target 'first' \\(now 'second'\\)"):
        run_experiment(second, CASES, [ExactMatch()], name="owned", store=location)


def test_an_unfinished_experiment_is_not_rescored(location: str) -> None:
    with ExperimentStore(location) as store:
        # An experiment whose run was never run: as a process killed before it started.
        run_experiment(lambda inputs: "0", CASES[:1], [ExactMatch()], name="done", store=store)
        info = store.info("done").model_copy(update={"name": "half"})
        store.create(info, [(CASES[0], 0, None)])
    with pytest.raises(TypeError, match="'half' has 1 unfinished runs: finish it first"):
        rescore("half", [ExactMatch()], store=location)


def test_outputs_json_cannot_hold_are_kept_as_their_repr(location: str) -> None:
    result = run_experiment(
        lambda inputs: {(1, 2): "tuple key"}, CASES[:2], [], name="odd", store=location
    )
    assert result.runs[0].run.outputs == {(1, 2): "tuple key"}  # this process's own
    with ExperimentStore(location) as store:
        assert store.load("odd").runs[0].run.outputs == "{(1, 2): 'tuple key'}"


def test_a_target_gets_its_case_as_the_store_reads_it_back(tmp_path: Path) -> None:
    # A case of JSON's own values is claimed as it was created (not read back); one holding
    # a tuple is read back, as a resumed run would read it: the target sees a list either way.
    seen: list[Any] = []
    cases = Dataset.from_records(
        [{"id": "plain", "inputs": {"items": [1, 2]}}, {"id": "tuple", "inputs": {"items": (1, 2)}}]
    )
    run_experiment(lambda inputs: seen.append(inputs["items"]), cases, [], store=tmp_path / "s.db")
    assert seen == [[1, 2], [1, 2]]
    assert all(type(items) is list for items in seen)


def test_a_claimed_run_the_store_created_is_taken_as_created(tmp_path: Path) -> None:
    plain, tupled = Case(id="plain", inputs={"n": [1.5]}), Case(id="tuple", inputs=(1, 2))
    info = ExperimentInfo(name="e", target="t", evaluators=[], trials=1, cases=2, dataset="d")
    with ExperimentStore(tmp_path / "s.db") as store:
        store.create(info, [(plain, 0, None), (tupled, 0, None)])
        claimed = {run.case.id: run.case for run in store.claim("e", limit=2, lease_seconds=60)}
    assert claimed["plain"] is plain
    assert claimed["tuple"] == Case(id="tuple", inputs=[1, 2])
    assert claimed["tuple"] is not tupled


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"store": 3}, "store must be an ExperimentStore, a SQLite path"),
        ({"name": ""}, "name must be a non-empty string"),
        ({"name": 3}, "name must be a non-empty string"),
        ({"progress": "no"}, "progress must be True, False or None"),
    ],
)
def test_bad_options_are_clear_errors(options: dict[str, object], message: str) -> None:
    with pytest.raises(TypeError, match=message):
        run_experiment(lambda inputs: "0", CASES, [ExactMatch()], **options)  # type: ignore[arg-type]
    assert not Path("3").exists()


def test_two_cases_with_one_id_and_two_evaluators_with_one_key_are_refused() -> None:
    twice = [CASES[0], CASES[0]]
    with pytest.raises(ValueError, match="q0"):
        run_experiment(lambda inputs: "0", twice, [ExactMatch()], store=False)
    with pytest.raises(TypeError, match=r"evaluators\[0\] and evaluators\[1\] both report"):
        run_experiment(lambda inputs: "0", CASES, [ExactMatch(), ExactMatch()], store=False)


def test_resuming_a_name_with_a_judge_configured_otherwise_is_refused(location: str) -> None:
    def judge(prompt: str, model_name: str = "judge-a", **options: Any) -> LLMJudge:
        model = ScriptedChatModel(
            responder=lambda messages: {"reasoning": "fine", "score": True}, model_name=model_name
        )
        return LLMJudge(prompt=prompt, model=model, feedback_key="right", **options)

    prompt = "Is {outputs} right? Reference: {reference_outputs}"
    run_experiment(lambda inputs: "0", CASES, [judge(prompt)], name="judged", store=location)
    # The same configuration, built anew (another model object): resumed, nothing run.
    again = run_experiment(
        lambda inputs: "0", CASES, [judge(prompt)], name="judged", store=location
    )
    assert len(again.runs) == 30
    reworded = "Is {outputs} correct? Reference: {reference_outputs}"
    with pytest.raises(ExperimentMismatchError, match=r"evaluator 'right' changed its prompt") as e:
        run_experiment(lambda inputs: "0", CASES, [judge(reworded)], name="judged", store=location)
    assert "Is {outputs} right?" in str(e.value)
    assert "Is {outputs} correct?" in str(e.value)
    with pytest.raises(ExperimentMismatchError, match=r"evaluator 'right' changed its model"):
        run_experiment(
            lambda inputs: "0", CASES, [judge(prompt, "judge-b")], name="judged", store=location
        )
    with pytest.raises(
        ExperimentMismatchError, match=r"changed its choices \(null → \[0\.0, 1\.0\]\)"
    ):
        run_experiment(
            lambda inputs: "0",
            CASES,
            [judge(prompt, choices=[0, 1])],
            name="judged",
            store=location,
        )
    with pytest.raises(ExperimentMismatchError, match=r"changed its custom_schema"):
        run_experiment(
            lambda inputs: "0",
            CASES,
            [
                judge(
                    prompt,
                    output_schema={"type": "object", "properties": {"score": {"type": "boolean"}}},
                )
            ],
            name="judged",
            store=location,
        )
