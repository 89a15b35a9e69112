"""People's annotations in the SQL ledgers: written beside the evaluations (never over them),
read back by kind, key and time, kept by a ledger made at the previous schema version once
this release migrates it, imported from CSV and JSONL (a bad row named by file and line, and
nothing stored), and paired with the stored judge results per key. SQLite and PostgreSQL."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from _postgres_server import fresh_schema, postgres_server_dsn
from pydantic import ValidationError

from langchain_evals_port.core import EvaluatorResult
from langchain_evals_port.runtime import (
    AnnotationConflictError,
    EvaluationRecord,
    InteractionNotFoundError,
    InteractionRecord,
    PostgresLedger,
    SqliteLedger,
)
from langchain_evals_port.storage import SqlLedger
from langchain_evals_port.trust import AnnotationImportError, import_annotations, ledger_agreement

ANNOTATIONS = 6
"""The schema version that made the annotations table."""

PREVIOUS = ANNOTATIONS - 1
"""The schema version before annotations."""

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)

Opener = Callable[..., SqlLedger]


@pytest.fixture(params=["sqlite", "postgres"])
def open_ledger(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens a ledger on one storage; ``version=`` opens it as the release that made that
    schema version did (its migrations alone)."""
    opened: list[SqlLedger] = []

    def opener(base: type[SqlLedger], *args: Any) -> Opener:
        def open_at(version: int | None = None) -> SqlLedger:
            cls = base
            if version is not None:
                cls = type(base.__name__, (base,), {"MIGRATIONS": base.MIGRATIONS[: version + 1]})
            ledger = cls(*args)
            opened.append(ledger)
            return ledger

        return open_at

    if request.param == "sqlite":
        yield opener(SqliteLedger, tmp_path / "ledger.db")
        for ledger in opened:
            ledger.close()
        return
    with fresh_schema(postgres_server_dsn()) as dsn:
        yield opener(PostgresLedger, dsn)
        for ledger in opened:
            ledger.close()  # before the schema is dropped


def _interaction(ledger: SqlLedger, interaction_id: str) -> None:
    ledger.record_interaction(
        InteractionRecord(interaction_id=interaction_id, agent_id="support", started_at=T0)
    )


def _evaluation(ledger: SqlLedger, interaction_id: str, result: EvaluatorResult) -> None:
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


def _verdict(passed: bool) -> EvaluatorResult:
    return EvaluatorResult(key="correctness", score=passed, metadata={"passed": passed})


def test_an_annotation_is_stored_beside_the_evaluation(open_ledger: Opener) -> None:
    ledger = open_ledger()
    _interaction(ledger, "i-1")
    _evaluation(ledger, "i-1", _verdict(True))
    before = ledger.get_evaluations("i-1")

    stored = ledger.annotate(
        "i-1", "correctness", score=False, note="the date is wrong", annotator="ana"
    )

    assert ledger.get_evaluations("i-1") == before  # the judge's result is untouched
    [read] = ledger.annotations()
    assert read == stored
    assert (read.subject_kind, read.subject_id, read.key, read.value) == (
        "interaction",
        "i-1",
        "correctness",
        False,
    )
    assert (read.note, read.annotator) == ("the date is wrong", "ana")


def test_annotations_are_read_by_kind_subject_key_and_time(open_ledger: Opener) -> None:
    ledger = open_ledger()
    _interaction(ledger, "i-1")
    ledger.annotate("i-1", "correctness", score=True, created_at=T0)
    ledger.annotate("i-1", "tone", label="curt", created_at=T0 + timedelta(hours=1))
    ledger.annotate(
        None,
        "correctness",
        score=4,
        subject_kind="case",
        experiment="exp-1",
        case_id="c-1",
        created_at=T0 + timedelta(hours=2),
    )

    def keys(**filters: Any) -> list[tuple[str, str]]:
        return [(a.subject_id, a.key) for a in ledger.annotations(**filters)]

    assert keys() == [("i-1", "correctness"), ("i-1", "tone"), ("exp-1:c-1:0", "correctness")]
    assert keys(subject_kind="case") == [("exp-1:c-1:0", "correctness")]
    assert keys(key="correctness", subject_kind="interaction") == [("i-1", "correctness")]
    assert keys(subject_id="i-1", key="tone") == [("i-1", "tone")]
    assert keys(since=T0 + timedelta(minutes=30)) == [
        ("i-1", "tone"),
        ("exp-1:c-1:0", "correctness"),
    ]
    assert ledger.annotations(subject_kind="case")[0].score == 4.0


def test_a_bad_annotation_is_refused(open_ledger: Opener) -> None:
    ledger = open_ledger()
    _interaction(ledger, "i-1")

    with pytest.raises(InteractionNotFoundError):
        ledger.annotate("i-nope", "correctness", score=True)
    with pytest.raises(ValidationError, match="the feedback key is empty"):
        ledger.annotate("i-1", "  ", score=True)
    with pytest.raises(ValidationError, match="a score is a bool or a number"):
        ledger.annotate("i-1", "correctness", score="good")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="needs a score"):
        ledger.annotate("i-1", "correctness")
    assert ledger.annotations() == []


def test_annotations_survive_the_migration_from_the_previous_schema(open_ledger: Opener) -> None:
    old = open_ledger(version=PREVIOUS)
    _interaction(old, "i-1")
    _evaluation(old, "i-1", _verdict(True))
    old.create_experiment("exp-1", '{"name": "exp-1"}', [("c-1", 0, "{}")])
    assert old.select("SELECT max(version) FROM ledger_schema") == [(PREVIOUS,)]
    old.close()

    ledger = open_ledger()

    assert ledger.get_interaction("i-1").agent_id == "support"
    [evaluation] = ledger.get_evaluations("i-1")
    assert evaluation.result.score is True
    assert [row.name for row in ledger.experiments()] == ["exp-1"]
    assert ledger.annotations() == []  # the table is there, empty
    ledger.annotate("i-1", "correctness", score=False)
    assert [a.value for a in ledger.annotations()] == [False]
    [(latest,)] = ledger.select("SELECT max(version) FROM ledger_schema")
    assert latest == len(SqlLedger.MIGRATIONS) - 1


def test_case_annotations_made_before_the_run_columns_are_given_them_by_their_run(
    open_ledger: Opener,
) -> None:
    """A ledger of the schema that stored a case annotation as one joined subject id: the
    migration finds each one's run among the experiment runs by the whole id (never by
    splitting it); one that two runs would both join to, or none, is left without a run."""
    old = open_ledger(version=ANNOTATIONS)
    for name, case_id in [("exp", "c-1"), ("a", "b:c"), ("a:b", "c")]:
        old.create_experiment(name, json.dumps({"name": name}), [(case_id, 0, "{}")])
    rows = [
        ("n-1", "case", "exp:c-1:0"),  # one run: exp / c-1 / 0
        ("n-2", "case", "a:b:c:0"),  # two runs join to this: a / b:c and a:b / c
        ("n-3", "case", "gone:c-9:0"),  # no run
        ("n-4", "interaction", "i-1"),
    ]
    for annotation_id, kind, subject in rows:
        record = {
            "annotation_id": annotation_id,
            "subject_kind": kind,
            "subject_id": subject,
            "key": "correctness",
            "score": True,
            "created_at": T0.isoformat(),
        }
        old._change(
            "INSERT INTO ledger_annotations (annotation_id, subject_kind, subject_id, "
            "feedback_key, score, created_at, record) VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (annotation_id, kind, subject, "correctness", 1.0, T0.timestamp(), json.dumps(record)),
        )
    old.close()

    ledger = open_ledger()

    runs = {a.annotation_id: (a.experiment, a.case_id, a.trial) for a in ledger.annotations()}
    assert runs == {
        "n-1": ("exp", "c-1", 0),
        "n-2": (None, None, None),
        "n-3": (None, None, None),
        "n-4": (None, None, None),
    }
    assert [a.annotation_id for a in ledger.annotations(experiment="exp")] == ["n-1"]
    assert ledger.annotations(experiment="a") == ledger.annotations(experiment="a:b") == []


def test_a_csv_file_is_imported_and_a_second_import_adds_nothing(
    open_ledger: Opener, tmp_path: Path
) -> None:
    ledger = open_ledger()
    path = tmp_path / "labels.csv"
    path.write_text(
        "subject_id,key,score,label,note,annotator,subject_kind,experiment,case_id,trial\n"
        "i-1,correctness,fail,,wrong date,ana,,,,\n"
        "i-2,correctness,true,,,ana,,,,\n"
        "i-2,tone,,curt,,bo,,,,\n"
        ",rating,4,,,bo,case,exp-1,c-1,0\n",
        encoding="utf-8",
    )

    assert import_annotations(ledger, path) == 4
    assert import_annotations(ledger, path) == 0

    read = {(a.subject_kind, a.subject_id, a.key): a.value for a in ledger.annotations()}
    assert read == {
        ("interaction", "i-1", "correctness"): False,
        ("interaction", "i-2", "correctness"): True,
        ("interaction", "i-2", "tone"): "curt",
        ("case", "exp-1:c-1:0", "rating"): 4.0,
    }


def test_a_bad_csv_row_is_reported_with_its_line_and_nothing_is_stored(
    open_ledger: Opener, tmp_path: Path
) -> None:
    ledger = open_ledger()
    path = tmp_path / "labels.csv"
    path.write_text(
        "subject_id,key,score\ni-1,correctness,pass\ni-2,correctness,maybe\n", encoding="utf-8"
    )

    with pytest.raises(AnnotationImportError) as raised:
        import_annotations(ledger, path)

    assert str(raised.value) == (
        f"{path}, line 3: score: expected true, false, pass, fail or a number, got 'maybe'"
    )
    assert (raised.value.path, raised.value.line, raised.value.field) == (str(path), 3, "score")
    assert ledger.annotations() == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "subject_id,key,scroe\ni-1,k,1\n",
            "line 1: scroe: unknown column (did you mean 'score'?)",
        ),
        ("subject_id,key,score\ni-1,,1\n", "line 2: key: Field required"),
        ("subject_id,key,score\ni-1,k,\n", "line 2: an annotation needs a score"),
    ],
)
def test_csv_problems_are_named(
    open_ledger: Opener, tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "labels.csv"
    path.write_text(text, encoding="utf-8")

    with pytest.raises(AnnotationImportError) as raised:
        import_annotations(open_ledger(), path)

    assert message in str(raised.value)


def test_a_jsonl_file_is_imported_and_a_bad_line_is_named(
    open_ledger: Opener, tmp_path: Path
) -> None:
    ledger = open_ledger()
    good = tmp_path / "labels.jsonl"
    rows = [
        {"subject_id": "i-1", "key": "correctness", "score": False, "annotator": "ana"},
        {"subject_id": "i-2", "key": "helpfulness", "score": 3},
    ]
    good.write_text("\n".join(json.dumps(row) for row in rows) + "\n\n", encoding="utf-8")
    assert import_annotations(ledger, good) == 2

    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(rows[0]) + '\n{"subject_id": "i-3", "key": "k", "score": "yes"}\n')
    with pytest.raises(
        AnnotationImportError, match=r"bad.jsonl, line 2: score: .*bool or a number"
    ):
        import_annotations(ledger, bad)
    assert len(ledger.annotations()) == 2


@pytest.mark.parametrize(
    ("name", "content", "line", "field", "problem"),
    [
        (
            "labels.jsonl",
            b'{"subject_id": "i-1", "key": "k", "score": true, "score": false}\n',
            1,
            "score",
            "key 'score' given twice in one object",
        ),
        (
            "labels.jsonl",
            b'{"subject_id": "i-1", "key": "k", "score": 1}\n'
            b'{"subject_id": "i-1", "key": "k", "score": NaN}\n',
            2,
            "score",
            "NaN is not a JSON number",
        ),
        (
            "labels.jsonl",
            b'{"subject_id": "i-1", "key": "k", "label": ' + b"[" * 990 + b"]" * 990 + b"}\n",
            1,
            "label[0][0][0]…[0][0][0]",
            "nested more than 100 levels deep",
        ),
        (
            "labels.jsonl",
            b'{"subject_id": "i-1", "key": "k", "score": 1}\n{"note": "caf\xe9"}\n',
            2,
            None,
            "not UTF-8 text (byte 59); save the file as UTF-8",
        ),
        (
            "labels.csv",
            b"subject_id,key,score\ni-1,k,1\ni-1,k\xff,0\n",
            3,
            None,
            "not UTF-8 text",
        ),
        (
            "labels.csv",
            b"subject_id,key,score\ni-1,k,1,extra\n",
            2,
            None,
            "4 cells, but the header (line 1) has 3 columns",
        ),
        (
            "labels.csv",
            b"subject_id,key,score,key\ni-1,k,1,j\n",
            1,
            "key",
            "column given twice",
        ),
        (
            "labels.csv",
            b'subject_id,key,note,score\ni-1,k,"' + b"x" * 131_073 + b'",1\n',
            2,
            "note",
            "a cell of more than 131,072 characters",
        ),
    ],
)
def test_a_malformed_annotation_file_is_named_by_line_and_field(
    open_ledger: Opener,
    tmp_path: Path,
    name: str,
    content: bytes,
    line: int,
    field: str | None,
    problem: str,
) -> None:
    ledger = open_ledger()
    path = tmp_path / name
    path.write_bytes(content)

    with pytest.raises(AnnotationImportError) as raised:
        import_annotations(ledger, path)

    assert (raised.value.path, raised.value.line, raised.value.field) == (str(path), line, field)
    assert problem in raised.value.problem
    assert ledger.annotations() == []


def test_an_annotation_id_with_other_content_is_refused_and_a_repeat_is_not(
    open_ledger: Opener, tmp_path: Path
) -> None:
    ledger = open_ledger()
    first = tmp_path / "first.csv"
    first.write_text(
        "annotation_id,subject_id,key,score\na-1,i-1,correctness,pass\na-2,i-2,correctness,0.5\n"
    )
    assert import_annotations(ledger, first) == 2
    assert import_annotations(ledger, first) == 0  # the same file again: a repeat

    changed = tmp_path / "changed.csv"
    changed.write_text(
        "annotation_id,subject_id,key,score\na-3,i-3,correctness,1\na-1,i-1,correctness,fail\n"
    )
    with pytest.raises(AnnotationImportError) as raised:
        import_annotations(ledger, changed)
    assert (raised.value.line, raised.value.field) == (3, "annotation_id")
    assert "'a-1' is stored already with other content (score True -> False)" in str(raised.value)

    twice = tmp_path / "twice.jsonl"
    twice.write_text(
        '{"annotation_id": "b-1", "subject_id": "i-1", "key": "k", "score": 1}\n'
        '{"annotation_id": "b-1", "subject_id": "i-1", "key": "k", "score": 1}\n'
        '{"annotation_id": "b-1", "subject_id": "i-1", "key": "k", "score": 2}\n'
    )
    with pytest.raises(AnnotationImportError, match="'b-1' is on line 1 already") as raised:
        import_annotations(ledger, twice)
    assert raised.value.line == 3
    assert sorted(a.annotation_id for a in ledger.annotations()) == ["a-1", "a-2"]

    _interaction(ledger, "i-1")
    with pytest.raises(AnnotationConflictError, match="note None -> 'changed my mind'"):
        ledger.annotate(
            "i-1", "correctness", score=True, note="changed my mind", annotation_id="a-1"
        )


def test_stored_results_pair_with_annotations_by_interaction_and_key(
    open_ledger: Opener,
) -> None:
    ledger = open_ledger()
    # Judge / person: pass/pass, pass/fail, fail/fail, inconclusive/pass, and an unlabelled one.
    verdicts: dict[str, EvaluatorResult] = {
        "i-1": _verdict(True),
        "i-2": _verdict(True),
        "i-3": _verdict(False),
        "i-4": EvaluatorResult.inconclusive("correctness", "cut off"),
        "i-5": _verdict(False),
    }
    for interaction_id, result in verdicts.items():
        _interaction(ledger, interaction_id)
        _evaluation(ledger, interaction_id, result)
    for interaction_id, passed in [("i-1", True), ("i-2", False), ("i-3", False), ("i-4", True)]:
        ledger.annotate(interaction_id, "correctness", score=passed)
    ledger.annotate("i-1", "tone", label="curt")  # no judge result for this key

    figures = ledger_agreement(ledger)

    assert list(figures) == ["correctness"]
    judged = figures["correctness"]
    assert (judged.n, judged.inconclusive, judged.failed) == (3, 1, 0)
    assert judged.accuracy == pytest.approx(2 / 3)
    assert ledger_agreement(ledger, evaluator_id="someone-else") == {}
    assert ledger_agreement(ledger, since=T0 + timedelta(days=1)) == {}


def test_a_case_row_is_given_its_run_by_columns_or_by_the_one_run_its_subject_id_names(
    open_ledger: Opener, tmp_path: Path
) -> None:
    ledger = open_ledger()
    for name, case_id in [("exp", "c-1"), ("a", "b:c"), ("a:b", "c")]:
        ledger.create_experiment(name, json.dumps({"name": name}), [(case_id, 0, "{}")])
    path = tmp_path / "labels.csv"
    path.write_text(
        "subject_kind,subject_id,experiment,case_id,trial,key,score\n"
        "case,exp:c-1:0,,,,correctness,pass\n"  # one run joins to it
        "case,,a,b:c,0,correctness,fail\n"  # named by its run
    )
    assert import_annotations(ledger, path) == 2
    runs = [(a.experiment, a.case_id, a.trial) for a in ledger.annotations()]
    assert runs == [("exp", "c-1", 0), ("a", "b:c", 0)]
    assert [a.case_id for a in ledger.annotations(experiment="a")] == ["b:c"]
    assert ledger.annotations(experiment="a:b") == []

    for subject, found in [
        ("a:b:c:0", "it is the run of 'a' / 'b:c' / 0 and of 'a:b' / 'c' / 0"),
        ("gone:c:0", "no run of this ledger has it"),
    ]:
        path.write_text(f"subject_kind,subject_id,key,score\ncase,{subject},correctness,1\n")
        with pytest.raises(AnnotationImportError) as raised:
            import_annotations(ledger, path)
        assert (raised.value.line, raised.value.field) == (2, "subject_id")
        assert found in str(raised.value)
    with pytest.raises(ValueError, match="names no single run"):
        ledger.annotate("a:b:c:0", "correctness", score=True, subject_kind="case")


def test_a_sqlite_ledger_of_the_previous_release_gives_its_case_annotations_their_runs(
    tmp_path: Path,
) -> None:
    """The snapshot: a file that release wrote, its case annotations under joined ids only."""
    path = tmp_path / "ledger.db"
    snapshot = Path(__file__).parent / "ledger_snapshots" / "sqlite_annotations_v6.sql"
    with closing(sqlite3.connect(path)) as db:
        db.executescript(snapshot.read_text(encoding="utf-8"))

    ledger = SqliteLedger(path)
    try:
        read = {
            a.annotation_id: (a.experiment, a.case_id, a.trial, a.value)
            for a in ledger.annotations()
        }
        assert read == {
            "n-1": ("exp", "c-1", 0, True),  # one run is 'exp:c-1:0'
            "n-2": (None, None, None, False),  # 'a:b:c:0' is the run of 'a' and of 'a:b'
            "n-3": (None, None, None, "unclear"),  # no run
            "n-4": (None, None, None, False),  # an interaction's
        }
        assert [a.annotation_id for a in ledger.annotations(experiment="exp")] == ["n-1"]
        assert ledger.annotations(experiment="a") == []
        [(version,)] = ledger.select("SELECT max(version) FROM ledger_schema")
        assert version == len(SqlLedger.MIGRATIONS) - 1
        # Annotated again now, by its run, each experiment keeps its own.
        ledger.annotate(
            None, "correctness", score=True, subject_kind="case", experiment="a", case_id="b:c"
        )
        assert [a.case_id for a in ledger.annotations(experiment="a")] == ["b:c"]
        assert ledger.annotations(experiment="a:b") == []
    finally:
        ledger.close()
