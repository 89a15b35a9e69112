"""The SQL ledgers' schema, version by version: ``MIGRATIONS[v]`` makes version ``v``.

A migration is history: it stays as it was released, and a change of the schema is a new
migration at the end of the list. ``SqlLedger.setup()`` applies those a ledger has not had
yet, in one transaction, and records each version in the ``ledger_schema`` table. Where the
dialects differ a migration says what each runs; a dialect it names no statement for has
nothing to do. A migration may also give the stored evaluation records a new shape: a
pure function from the old JSON to the new, applied to every row.

Release 0.1.0 made versions 0 and 1 (PostgreSQL recorded 1 in ``ledger_schema``, SQLite in
the file's ``user_version`` alone).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_evals_port.core.errors import FAILURE_CODES

__all__ = ["MIGRATIONS", "Migration", "evaluation_summary", "outcome_to_results"]


@dataclass(frozen=True)
class Migration:
    """The step to one schema version: what it does, its statements (``;``-separated; one
    text for every dialect, or one per dialect name), then the new shape of every stored
    evaluation record's JSON, from the old one (``None``: unchanged), and the values of
    columns it added, from each record."""

    summary: str
    sql: str | Mapping[str, str] = field(default="")
    rewrite_evaluations: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    fill_evaluation_columns: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    """Values of columns the migration added to ``ledger_evaluations``, from each stored
    record's JSON (``None``: none to fill)."""

    def statements(self, dialect: str) -> list[str]:
        """The statements ``dialect`` (``"sqlite"``, ``"postgresql"``) runs, one by one."""
        text = self.sql if isinstance(self.sql, str) else self.sql.get(dialect, "")
        return [statement.strip() for statement in text.split(";") if statement.strip()]


def outcome_to_results(record: dict[str, Any]) -> dict[str, Any]:
    """An evaluation record's JSON as release 0.1.0 stored it — one ``outcome`` — in the
    shape that replaced it: ``results``, a list of core ``EvaluatorResult`` JSON (here one,
    keyed by the evaluator id), and ``pass_threshold`` (unknown then: ``None``).

    A verdict's score is its number, else whether it passed; its explanation becomes the
    comment, and ``passed``, the label (when set) and the attributes the metadata. An
    inconclusive outcome keeps its reason; a failure its code (``evaluator_error`` for one
    the core does not know) and ``"type: message"`` as the reason.

    Example:
        >>> old = {"evaluation_id": "e-1", "evaluator_id": "tone",
        ...        "outcome": {"kind": "inconclusive", "reason": "nothing to judge"}}
        >>> new = outcome_to_results(old)
        >>> new["results"]
        [{'key': 'tone', 'outcome': 'inconclusive', 'reason': 'nothing to judge', 'score': None}]
        >>> "outcome" in new, new["pass_threshold"]
        (False, None)
    """
    key = record["evaluator_id"]
    outcome = record["outcome"]
    result: dict[str, Any]
    if outcome["kind"] == "verdict":
        verdict = outcome["evaluation"]
        metadata: dict[str, Any] = {"passed": verdict["passed"]}
        if verdict["label"] is not None:
            metadata["label"] = verdict["label"]
        result = {
            "key": key,
            "score": verdict["passed"] if verdict["score"] is None else verdict["score"],
            "comment": verdict["explanation"],
            "metadata": {**metadata, **verdict["attributes"]},
            "outcome": "verdict",
        }
    elif outcome["kind"] == "inconclusive":
        result = {"key": key, "outcome": "inconclusive", "reason": outcome["reason"], "score": None}
    elif outcome["kind"] == "failed":
        error = outcome["error"]
        result = {
            "key": key,
            "outcome": "failed",
            "error_code": error["code"] if error["code"] in FAILURE_CODES else "evaluator_error",
            "reason": f"{error['type']}: {error['message']}",
            "score": None,
        }
    else:
        raise ValueError(
            f"evaluation record {record.get('evaluation_id')!r}: outcome kind "
            f"{outcome['kind']!r} is none of verdict, inconclusive, failed"
        )
    # The same fields in the same order, the results where the outcome was.
    rewritten: dict[str, Any] = {}
    for name, value in record.items():
        if name == "outcome":
            rewritten["results"] = [result]
            rewritten["pass_threshold"] = None
        else:
            rewritten[name] = value
    return rewritten


_SQLITE_TABLES = """
CREATE TABLE IF NOT EXISTS interactions (
    interaction_id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL,
    started_at REAL NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS interactions_by_time ON interactions (started_at, interaction_id);
CREATE INDEX IF NOT EXISTS interactions_by_agent
    ON interactions (agent_id, started_at, interaction_id);

CREATE TABLE IF NOT EXISTS evaluations (
    evaluation_id TEXT PRIMARY KEY,
    interaction_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    evaluator_id TEXT NOT NULL,
    timestamp REAL NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS evaluations_by_interaction ON evaluations (interaction_id);
CREATE INDEX IF NOT EXISTS evaluations_by_time ON evaluations (timestamp, evaluation_id);
CREATE INDEX IF NOT EXISTS evaluations_by_agent
    ON evaluations (agent_id, timestamp, evaluation_id);
CREATE INDEX IF NOT EXISTS evaluations_by_evaluator
    ON evaluations (evaluator_id, timestamp, evaluation_id);

CREATE TABLE IF NOT EXISTS work (
    evaluation_id TEXT PRIMARY KEY,
    interaction_id TEXT NOT NULL,
    enqueued_at REAL NOT NULL,
    not_before REAL NOT NULL,
    worker TEXT,
    token INTEGER NOT NULL DEFAULT 0,
    lease_until REAL,
    unit TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS work_by_age ON work (enqueued_at, evaluation_id);
CREATE INDEX IF NOT EXISTS work_by_interaction ON work (interaction_id);
"""

# Ids sort in the "C" collation (code point order), as the other ledgers sort them in Python.
# Records are JSON text in ``json`` columns: kept byte for byte, readable with ``->``/``->>``.
_POSTGRES_TABLES = """
CREATE TABLE IF NOT EXISTS ledger_interactions (
    interaction_id text COLLATE "C" PRIMARY KEY,
    agent_id text COLLATE "C" NOT NULL,
    started_at double precision NOT NULL,
    record json NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_interactions_by_time
    ON ledger_interactions (started_at, interaction_id);
CREATE INDEX IF NOT EXISTS ledger_interactions_by_agent
    ON ledger_interactions (agent_id, started_at, interaction_id);

CREATE TABLE IF NOT EXISTS ledger_evaluations (
    evaluation_id text COLLATE "C" PRIMARY KEY,
    interaction_id text COLLATE "C" NOT NULL,
    agent_id text COLLATE "C" NOT NULL,
    evaluator_id text COLLATE "C" NOT NULL,
    evaluated_at double precision NOT NULL,
    record json NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_evaluations_by_interaction
    ON ledger_evaluations (interaction_id);
CREATE INDEX IF NOT EXISTS ledger_evaluations_by_time
    ON ledger_evaluations (evaluated_at, evaluation_id);
CREATE INDEX IF NOT EXISTS ledger_evaluations_by_agent
    ON ledger_evaluations (agent_id, evaluated_at, evaluation_id);
CREATE INDEX IF NOT EXISTS ledger_evaluations_by_evaluator
    ON ledger_evaluations (evaluator_id, evaluated_at, evaluation_id);

CREATE TABLE IF NOT EXISTS ledger_work (
    evaluation_id text COLLATE "C" PRIMARY KEY,
    interaction_id text COLLATE "C" NOT NULL,
    enqueued_at double precision NOT NULL,
    not_before double precision NOT NULL,
    worker text,
    token bigint NOT NULL DEFAULT 0,
    lease_until double precision,
    unit json NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_work_by_age ON ledger_work (enqueued_at, evaluation_id);
CREATE INDEX IF NOT EXISTS ledger_work_by_interaction ON ledger_work (interaction_id);
"""

# SQLite's tables take the names they have on PostgreSQL (the evaluations' time column too),
# so both dialects run the same statements. Indexes keep their names: they follow their
# tables, and renaming one means building it again.
_SQLITE_NAMES = """
ALTER TABLE interactions RENAME TO ledger_interactions;
ALTER TABLE evaluations RENAME TO ledger_evaluations;
ALTER TABLE ledger_evaluations RENAME COLUMN timestamp TO evaluated_at;
ALTER TABLE work RENAME TO ledger_work
"""

# Experiments (``langchain_evals_port.experiments``): one row per experiment, one per run of
# a case (a case and a trial). A run is claimed like a work unit (a worker, a fencing token, a
# lease) until its record is written; ``work`` is what the run needs (its case, and its
# output once the target returned or, for a rescore, the stored one), ``record`` its results.
# Claims read the unfinished runs in order from an index of those alone.
_EXPERIMENT_TABLES = """
CREATE TABLE IF NOT EXISTS ledger_experiments (
    name text PRIMARY KEY,
    created_at double precision NOT NULL,
    record json NOT NULL
);
CREATE TABLE IF NOT EXISTS ledger_experiment_runs (
    experiment text NOT NULL,
    case_id text NOT NULL,
    trial integer NOT NULL,
    position integer NOT NULL,
    work json NOT NULL,
    worker text,
    token bigint NOT NULL DEFAULT 0,
    lease_until double precision,
    finished_at double precision,
    record json,
    PRIMARY KEY (experiment, case_id, trial)
);
CREATE INDEX IF NOT EXISTS ledger_experiment_runs_in_order
    ON ledger_experiment_runs (experiment, position, trial);
CREATE INDEX IF NOT EXISTS ledger_experiment_runs_unfinished
    ON ledger_experiment_runs (experiment, position, trial) WHERE finished_at IS NULL
"""


def evaluation_summary(record: dict[str, Any]) -> dict[str, Any]:
    """The columns that sum up an evaluation record (its JSON) for queries that aggregate:
    ``outcome`` (``failed`` when any result failed, else ``inconclusive`` when any reached no
    verdict, else ``verdict``), ``passed`` (1 or 0 for a verdict: every result passed, by its
    ``passed``, in earlier records its ``metadata["passed"]``; else null) and ``score``
    (the mean of the verdicts' scores, a bool as 1 or 0; null when none is a number).

    Example:
        >>> evaluation_summary({"results": [
        ...     {"outcome": "verdict", "score": 0.5, "metadata": {"passed": False}},
        ...     {"outcome": "verdict", "score": True, "metadata": {"passed": True}}]})
        {'outcome': 'verdict', 'passed': 0, 'score': 0.75}
    """
    results = record["results"]
    outcomes = {result["outcome"] for result in results}
    outcome = next((o for o in ("failed", "inconclusive") if o in outcomes), "verdict")
    passed = None
    if outcome == "verdict":
        passed = int(all(_passed(result) is True for result in results))
    scores = [
        float(result["score"])
        for result in results
        if result["outcome"] == "verdict" and isinstance(result.get("score"), (bool, int, float))
    ]
    score = sum(scores) / len(scores) if scores else None
    return {"outcome": outcome, "passed": passed, "score": score}


def _passed(result: dict[str, Any]) -> Any:
    if "passed" in result:
        return result["passed"]
    return (result.get("metadata") or {}).get("passed")


# What the console aggregates (pass rates and scores per agent and evaluator over time, the
# failures) as columns of their own, indexed, rather than inside each record's JSON. The
# overview reads a time range of every column it sums from one index alone: read through the
# time index instead, 200,000 evaluations took 220 ms of table lookups on SQLite.
_EVALUATION_SUMMARY = """
ALTER TABLE ledger_evaluations ADD COLUMN outcome text;
ALTER TABLE ledger_evaluations ADD COLUMN passed integer;
ALTER TABLE ledger_evaluations ADD COLUMN score double precision;
CREATE INDEX IF NOT EXISTS ledger_evaluations_by_agent_evaluator
    ON ledger_evaluations (agent_id, evaluator_id, evaluated_at);
CREATE INDEX IF NOT EXISTS ledger_evaluations_summary_by_time
    ON ledger_evaluations (evaluated_at, agent_id, evaluator_id, outcome, passed, score);
CREATE INDEX IF NOT EXISTS ledger_evaluations_by_outcome
    ON ledger_evaluations (outcome, evaluated_at, evaluation_id)
"""

# People's labels and scores (``runtime.Annotation``), beside the evaluators' results and never
# in their place: of an interaction (its id) or of an experiment's run of a case
# (``experiment:case_id:trial``). The columns are what queries filter on; ``record`` is the
# annotation itself.
_ANNOTATIONS = """
CREATE TABLE IF NOT EXISTS ledger_annotations (
    annotation_id text PRIMARY KEY,
    subject_kind text NOT NULL,
    subject_id text NOT NULL,
    feedback_key text NOT NULL,
    label text,
    score double precision,
    note text,
    annotator text,
    created_at double precision NOT NULL,
    record json NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_annotations_by_subject
    ON ledger_annotations (subject_kind, subject_id, feedback_key);
CREATE INDEX IF NOT EXISTS ledger_annotations_by_key
    ON ledger_annotations (feedback_key, created_at, annotation_id);
CREATE INDEX IF NOT EXISTS ledger_annotations_by_time
    ON ledger_annotations (created_at, annotation_id)
"""

# A case annotation names its run by experiment, case id and trial, each a column: joined
# into one subject id ("a:b:c:0"), run a:b / c and run a / b:c were the same, and a prefix
# match for experiment "a" found the annotations of "a:b". An annotation stored before gets
# the run whose whole joined id is its subject id, when exactly one run has it (the id is
# never split); otherwise it has no run.
_JOINED = "r.experiment || ':' || r.case_id || ':' || r.trial"
_THE_RUN = f"FROM ledger_experiment_runs r WHERE {_JOINED} = ledger_annotations.subject_id"
_ANNOTATION_RUNS = f"""
ALTER TABLE ledger_annotations ADD COLUMN experiment text;
ALTER TABLE ledger_annotations ADD COLUMN case_id text;
ALTER TABLE ledger_annotations ADD COLUMN trial integer;
UPDATE ledger_annotations SET
    experiment = (SELECT r.experiment {_THE_RUN}),
    case_id = (SELECT r.case_id {_THE_RUN}),
    trial = (SELECT r.trial {_THE_RUN})
WHERE subject_kind = 'case' AND (SELECT count(*) {_THE_RUN}) = 1;
CREATE INDEX IF NOT EXISTS ledger_annotations_by_run
    ON ledger_annotations (experiment, case_id, trial, feedback_key)
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        "the table of applied versions",
        "CREATE TABLE IF NOT EXISTS ledger_schema (version integer NOT NULL)",
    ),
    Migration(
        "interactions, evaluation records and the work queue, as release 0.1.0 made them",
        {"sqlite": _SQLITE_TABLES, "postgresql": _POSTGRES_TABLES},
    ),
    Migration("one set of table names: SQLite's take PostgreSQL's", {"sqlite": _SQLITE_NAMES}),
    Migration(
        "an evaluation record holds a list of core results instead of one outcome",
        rewrite_evaluations=outcome_to_results,
    ),
    Migration("experiments and their runs", _EXPERIMENT_TABLES),
    Migration(
        "each evaluation's outcome, passed and score as columns, for aggregates",
        _EVALUATION_SUMMARY,
        fill_evaluation_columns=evaluation_summary,
    ),
    Migration("people's annotations of interactions and experiment cases", _ANNOTATIONS),
    Migration("a case annotation's run as columns: experiment, case_id, trial", _ANNOTATION_RUNS),
)
