"""What the console reads from a SQL ledger, each an indexed query.

The overview aggregates the summary columns of ``ledger_evaluations`` (``outcome``,
``passed``, ``score``: schema version 5) by agent, evaluator and time bucket, from an index
that holds them all; the lists page by keyset (time, then id), newest first, as the ledger
itself does. A text search reads a bounded window of interactions per page
(``TEXT_WINDOW``), as no index serves a substring of the records. A failed evaluation is
retried by queueing a new work unit whose id is the failed one's with ``:retry`` appended:
queueing ignores an id already queued or recorded, so a retry runs once however often it is
asked for.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_evals_port.capture import InteractionRecord
from langchain_evals_port.reporting.statistics import Interval, wilson_interval
from langchain_evals_port.storage import Annotation, EvaluationRecord, SqlLedger, WorkUnit
from langchain_evals_port.storage._pages import decode_cursor, encode_cursor

__all__ = [
    "Bucket",
    "ConsoleQueries",
    "InteractionRow",
    "Series",
    "WorkState",
    "bucket_seconds",
]

OUTCOMES = ("verdict", "inconclusive", "failed")

TEXT_WINDOW = 20_000
"""Interactions a text search reads for one page, newest first (after the other filters):
a substring of the records' JSON has no index, and reading all of 100,000 took 200-250 ms of
SQLite's time alone, growing with the ledger. The page's cursor continues after the window
when it was read to its end, so the search still reaches every interaction, a window a page."""


def bucket_seconds(span: float) -> int:
    """The width of the overview's time buckets for a range of ``span`` seconds: an hour up
    to two days, else a day."""
    return 3600 if span <= 2 * 86400 else 86400


@dataclass(frozen=True)
class Bucket:
    """One time bucket of one agent and evaluator: its evaluations by outcome, the verdicts
    that passed (with the pass rate's Wilson interval) and the mean score."""

    start: float
    evaluations: int
    verdicts: int
    passed: int
    inconclusive: int
    failed: int
    score_mean: float | None

    @property
    def pass_rate(self) -> float | None:
        """Passed verdicts over verdicts; ``None`` without a verdict."""
        return self.passed / self.verdicts if self.verdicts else None

    @property
    def interval(self) -> Interval | None:
        """The pass rate's 95 % Wilson interval; ``None`` without a verdict."""
        return wilson_interval(self.passed, self.verdicts) if self.verdicts else None


@dataclass
class Series:
    """The buckets of one agent and evaluator, oldest first, with their totals."""

    agent_id: str
    evaluator_id: str
    buckets: list[Bucket] = field(default_factory=list)

    @property
    def total(self) -> Bucket:
        """All the buckets added up (its ``start`` is the first bucket's)."""
        scores = [(b.score_mean, b.verdicts) for b in self.buckets if b.score_mean is not None]
        weight = sum(n for _, n in scores)
        return Bucket(
            start=self.buckets[0].start if self.buckets else 0.0,
            evaluations=sum(b.evaluations for b in self.buckets),
            verdicts=sum(b.verdicts for b in self.buckets),
            passed=sum(b.passed for b in self.buckets),
            inconclusive=sum(b.inconclusive for b in self.buckets),
            failed=sum(b.failed for b in self.buckets),
            score_mean=sum(m * n for m, n in scores) / weight if weight else None,
        )


@dataclass(frozen=True)
class WorkState:
    """Where a queued evaluation stands: ``queued`` (no worker holds it), ``running`` (held
    by ``worker``), ``recorded`` (its outcome is in the ledger) or ``unknown``; and how many
    workers hold a lease on some evaluation now."""

    state: str
    worker: str | None
    working: int


@dataclass(frozen=True)
class InteractionRow:
    """An interaction in a list: the record and its evaluations' summaries
    (evaluator id, outcome, passed)."""

    record: InteractionRecord
    evaluations: list[tuple[str, str, bool | None]]


class ConsoleQueries:
    """The console's reads and its two writes (resume, retry) on one SQL ledger."""

    def __init__(self, ledger: SqlLedger) -> None:
        self.ledger = ledger
        postgres = ledger.dialect == "postgresql"
        self._bucket = (
            "floor(evaluated_at / %s)::bigint" if postgres else "CAST(evaluated_at / %s AS INTEGER)"
        )
        self._contains = "i.record::text ILIKE %s" if postgres else "i.record LIKE %s"

    # --- overview ---------------------------------------------------------------------------

    def overview(self, since: float, until: float) -> list[Series]:
        """Every agent and evaluator with evaluations in ``[since, until)``, in buckets."""
        width = bucket_seconds(until - since)
        rows = self.ledger.select(
            f"SELECT agent_id, evaluator_id, {self._bucket} AS bucket, count(*),"
            " sum(CASE WHEN outcome = 'verdict' THEN 1 ELSE 0 END), sum(passed),"
            " sum(CASE WHEN outcome = 'inconclusive' THEN 1 ELSE 0 END),"
            " sum(CASE WHEN outcome = 'failed' THEN 1 ELSE 0 END), avg(score)"
            " FROM ledger_evaluations WHERE evaluated_at >= %s AND evaluated_at < %s"
            " GROUP BY agent_id, evaluator_id, bucket ORDER BY agent_id, evaluator_id, bucket",
            (width, since, until),
        )
        series: dict[tuple[str, str], Series] = {}
        for agent, evaluator, bucket, total, verdicts, passed, inconclusive, failed, score in rows:
            found = series.setdefault((agent, evaluator), Series(agent, evaluator))
            found.buckets.append(
                Bucket(
                    start=float(bucket) * width,
                    evaluations=int(total),
                    verdicts=int(verdicts or 0),
                    passed=int(passed or 0),
                    inconclusive=int(inconclusive or 0),
                    failed=int(failed or 0),
                    score_mean=None if score is None else float(score),
                )
            )
        return list(series.values())

    def latest_failures(self, limit: int = 10) -> list[EvaluationRecord]:
        """The newest failed evaluations."""
        rows = self.ledger.select(
            "SELECT record FROM ledger_evaluations WHERE outcome = 'failed'"
            " ORDER BY evaluated_at DESC, evaluation_id DESC LIMIT %s",
            (limit,),
        )
        return [EvaluationRecord.model_validate_json(text) for (text,) in rows]

    # --- lists ------------------------------------------------------------------------------

    def interactions(
        self,
        *,
        agent_id: str | None = None,
        evaluator_id: str | None = None,
        outcome: str | None = None,
        since: float | None = None,
        until: float | None = None,
        text: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> tuple[list[InteractionRow], str | None]:
        """Interactions newest first, filtered; the page and the cursor of the next.

        With ``text`` (a substring of the record's JSON, ASCII letters in any case) the page
        holds the matches among the next ``TEXT_WINDOW`` interactions the other filters
        keep: it may hold fewer than ``limit`` (none, even) and still have a next cursor,
        which continues after the window."""
        where: list[str] = []
        parameters: list[Any] = []
        if agent_id:
            where.append("i.agent_id = %s")
            parameters.append(agent_id)
        if since is not None:
            where.append("i.started_at >= %s")
            parameters.append(since)
        if until is not None:
            where.append("i.started_at < %s")
            parameters.append(until)
        if evaluator_id or outcome:
            conditions = ["e.interaction_id = i.interaction_id"]
            if evaluator_id:
                conditions.append("e.evaluator_id = %s")
                parameters.append(evaluator_id)
            if outcome:
                conditions.append("e.outcome = %s")
                parameters.append(outcome)
            where.append(
                f"EXISTS (SELECT 1 FROM ledger_evaluations e WHERE {' AND '.join(conditions)})"
            )
        if cursor:
            moment, key = decode_cursor(cursor)
            where.append("(i.started_at < %s OR (i.started_at = %s AND i.interaction_id < %s))")
            parameters.extend([moment, moment, key])
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        newest = " ORDER BY i.started_at DESC, i.interaction_id DESC LIMIT %s"
        selected = (
            f"SELECT i.started_at, i.interaction_id, i.record FROM ledger_interactions i {clause}"
        )
        if text:
            rows = self.ledger.select(
                f"SELECT i.started_at, i.interaction_id, i.record FROM ({selected}{newest}) i"
                f" WHERE {self._contains}{newest}",
                # LIKE's own % and _ in the text match loosely
                [*parameters, TEXT_WINDOW, f"%{text}%", limit + 1],
            )
        else:
            rows = self.ledger.select(selected + newest, [*parameters, limit + 1])
        page = rows[:limit]
        next_cursor = encode_cursor(page[-1][0], page[-1][1]) if len(rows) > limit else None
        if text and next_cursor is None:
            # The page is the window's last matches: continue after the window, if it was full.
            end = self.ledger.select(
                f"SELECT i.started_at, i.interaction_id FROM ledger_interactions i {clause}"
                f"{newest} OFFSET %s",
                [*parameters, 1, TEXT_WINDOW - 1],
            )
            next_cursor = encode_cursor(end[0][0], end[0][1]) if end else None
        records = [InteractionRecord.model_validate_json(text) for _, _, text in page]
        summaries = self._summaries([record.interaction_id for record in records])
        return [
            InteractionRow(record, summaries.get(record.interaction_id, [])) for record in records
        ], next_cursor

    def _summaries(self, ids: Sequence[str]) -> dict[str, list[tuple[str, str, bool | None]]]:
        if not ids:
            return {}
        marks = ", ".join(["%s"] * len(ids))
        rows = self.ledger.select(
            "SELECT interaction_id, evaluator_id, outcome, passed FROM ledger_evaluations"
            f" WHERE interaction_id IN ({marks}) ORDER BY evaluated_at, evaluation_id",
            list(ids),
        )
        found: dict[str, list[tuple[str, str, bool | None]]] = {}
        for interaction_id, evaluator_id, outcome, passed in rows:
            found.setdefault(interaction_id, []).append(
                (evaluator_id, outcome, None if passed is None else bool(passed))
            )
        return found

    def failed(
        self, *, limit: int = 50, cursor: str | None = None
    ) -> tuple[list[EvaluationRecord], str | None]:
        """Failed evaluations, newest first; the page and the cursor of the next."""
        where, parameters = "", []
        if cursor:
            moment, key = decode_cursor(cursor)
            where = " AND (evaluated_at < %s OR (evaluated_at = %s AND evaluation_id < %s))"
            parameters = [moment, moment, key]
        rows = self.ledger.select(
            "SELECT evaluated_at, evaluation_id, record FROM ledger_evaluations"
            f" WHERE outcome = 'failed'{where}"
            " ORDER BY evaluated_at DESC, evaluation_id DESC LIMIT %s",
            [*parameters, limit + 1],
        )
        page = rows[:limit]
        next_cursor = encode_cursor(page[-1][0], page[-1][1]) if len(rows) > limit else None
        return [EvaluationRecord.model_validate_json(text) for _, _, text in page], next_cursor

    def agents_and_evaluators(self) -> tuple[list[str], list[str]]:
        """The agent ids and evaluator ids with evaluations, for the filters."""
        return self._distinct("agent_id"), self._distinct("evaluator_id")

    def _distinct(self, column: str) -> list[str]:
        """The distinct values of an indexed column of ``ledger_evaluations``, in order: one
        index lookup per value (a loose index scan), where ``DISTINCT`` reads every entry."""
        rows = self.ledger.select(
            f"WITH RECURSIVE found (value) AS ("
            f" SELECT min({column}) FROM ledger_evaluations"
            f" UNION ALL SELECT (SELECT min({column}) FROM ledger_evaluations"
            f" WHERE {column} > found.value) FROM found WHERE found.value IS NOT NULL)"
            " SELECT value FROM found WHERE value IS NOT NULL"
        )
        return [value for (value,) in rows]

    # --- one interaction, waiting reviews, retries ------------------------------------------

    def interaction(self, interaction_id: str) -> tuple[InteractionRecord, list[EvaluationRecord]]:
        """The interaction and every evaluation of it (``InteractionNotFoundError``)."""
        record = self.ledger.get_interaction(interaction_id)
        return record, self.ledger.get_evaluations(interaction_id)

    def annotations(self, interaction_id: str) -> list[Annotation]:
        """People's annotations of one interaction, oldest first."""
        return self.ledger.annotations(subject_kind="interaction", subject_id=interaction_id)

    def annotate(self, interaction_id: str, key: str, **fields: Any) -> Annotation:
        """Store a person's annotation of one interaction (``SqlLedger.annotate``)."""
        return self.ledger.annotate(interaction_id, key, **fields)

    def waiting(self, interaction_id: str | None = None) -> list[WorkUnit]:
        """The durable evaluations waiting for a person (of one interaction, or all), oldest
        first."""
        return self.ledger.waiting_work(interaction_id)

    def work_state(self, evaluation_id: str) -> WorkState:
        """Where a queued evaluation stands, and whether any worker is running evaluations
        now (holds an unexpired lease on one: an idle worker holds none)."""
        now = time.time()
        rows = self.ledger.select(
            "SELECT worker, lease_until FROM ledger_work WHERE evaluation_id = %s",
            (evaluation_id,),
        )
        [(working,)] = self.ledger.select(
            "SELECT count(DISTINCT worker) FROM ledger_work"
            " WHERE worker IS NOT NULL AND lease_until > %s",
            (now,),
        )
        if not rows:
            recorded = self.ledger.get_evaluation(evaluation_id) is not None
            return WorkState("recorded" if recorded else "unknown", None, int(working))
        worker, lease_until = rows[0]
        if worker is not None and lease_until is not None and lease_until > now:
            return WorkState("running", str(worker), int(working))
        return WorkState("queued", None, int(working))

    def resume(self, evaluation_id: str, value: Any) -> bool:
        """Resume a waiting evaluation with the reviewer's ``value``; False when none waits."""
        return self.ledger.resume(evaluation_id, value)

    def retry(self, evaluation_id: str) -> tuple[str, bool] | None:
        """Queue a new attempt of a failed evaluation: its id, and whether this call queued
        it (False: it was queued or has run already); ``None`` when ``evaluation_id`` is not
        a failed evaluation."""
        record = self.ledger.get_evaluation(evaluation_id)
        if record is None or record.outcome != "failed":
            return None
        retry_id = f"{evaluation_id}:retry"
        queued = self.ledger.enqueue(
            [
                WorkUnit.queued(
                    record.evaluator_id,
                    record,
                    trigger=record.trigger,
                    trigger_attributes=record.trigger_attributes,
                    evaluation_id=retry_id,
                )
            ]
        )
        return retry_id, queued == 1
