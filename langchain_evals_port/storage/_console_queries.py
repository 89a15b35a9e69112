"""``ConsoleQueries``: the console's reads of a SQL ledger, each an indexed query, and its two
writes (resume, retry) — the SQL of ``langchain_evals_port.console``, kept with the tables it
reads.

The overview aggregates the summary columns of ``ledger_evaluations`` (``outcome``,
``passed``, ``score``: schema version 5) by agent, evaluator and time bucket, from an index
that holds them all; the lists page by keyset (time, then id), newest first, as the ledger
itself does. A text search reads a bounded window of interactions per page
(``TEXT_WINDOW``), as no index serves a substring of the records. A failed evaluation is
retried by queueing a new work unit whose id is the failed one's with ``:retry`` appended:
queueing ignores an id already queued or recorded, so a retry runs once however often it is
asked for.

The queries read the SQL tables themselves, so only a ``SqlLedger`` (SQLite, PostgreSQL) has
them; an ``InMemoryLedger`` is refused with a ``TypeError`` saying so.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from langchain_evals_port.capture._records import InteractionRecord
from langchain_evals_port.storage._annotation import Annotation
from langchain_evals_port.storage._records import EvaluationRecord, WorkUnit

from ._pages import check_limit, decode_cursor, encode_cursor
from ._sql import SqlLedger

__all__ = [
    "TEXT_WINDOW",
    "ConsoleQueries",
    "EvaluationSummary",
    "InteractionRow",
    "OverviewBucket",
    "OverviewSeries",
    "WorkState",
    "bucket_seconds",
]

TEXT_WINDOW = 20_000
"""Interactions a text search reads for one page, newest first (after the other filters):
a substring of the records' JSON has no index, and reading all of 100,000 took 200-250 ms of
SQLite's time alone, growing with the ledger. The page's cursor continues after the window
when it was read to its end, so the search still reaches every interaction, a window a page."""

# Where the dialects differ: the bucket of a time, and a case-insensitive substring match.
_BUCKET = {
    "sqlite": "CAST(evaluated_at / %s AS INTEGER)",
    "postgresql": "floor(evaluated_at / %s)::bigint",
}
_CONTAINS = {"sqlite": "i.record LIKE %s", "postgresql": "i.record::text ILIKE %s"}


def bucket_seconds(span: float) -> int:
    """The width of the overview's time buckets for a range of ``span`` seconds: an hour up
    to two days, else a day."""
    return 3600 if span <= 2 * 86400 else 86400


@dataclass(frozen=True)
class OverviewBucket:
    """One time bucket of one agent and evaluator: its evaluations by outcome, the verdicts
    that passed and the mean score."""

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


@dataclass
class OverviewSeries:
    """The buckets of one agent and evaluator, oldest first, with their totals."""

    agent_id: str
    evaluator_id: str
    buckets: list[OverviewBucket] = field(default_factory=list)

    @property
    def total(self) -> OverviewBucket:
        """All the buckets added up (its ``start`` is the first bucket's)."""
        scores = [(b.score_mean, b.verdicts) for b in self.buckets if b.score_mean is not None]
        weight = sum(n for _, n in scores)
        return OverviewBucket(
            start=self.buckets[0].start if self.buckets else 0.0,
            evaluations=sum(b.evaluations for b in self.buckets),
            verdicts=sum(b.verdicts for b in self.buckets),
            passed=sum(b.passed for b in self.buckets),
            inconclusive=sum(b.inconclusive for b in self.buckets),
            failed=sum(b.failed for b in self.buckets),
            score_mean=sum(m * n for m, n in scores) / weight if weight else None,
        )


class EvaluationSummary(NamedTuple):
    """One evaluation of an interaction in a list: its evaluator, outcome and whether its
    verdicts passed (``None``: no verdict says)."""

    evaluator_id: str
    outcome: str
    passed: bool | None


@dataclass(frozen=True)
class InteractionRow:
    """An interaction in a list: the record and its evaluations' summaries, oldest first."""

    record: InteractionRecord
    evaluations: list[EvaluationSummary]


@dataclass(frozen=True)
class WorkState:
    """Where a queued evaluation stands: ``queued`` (no worker holds it), ``running`` (held
    by ``worker``), ``recorded`` (its outcome is in the ledger) or ``unknown``; and how many
    workers hold a lease on some evaluation now."""

    state: str
    worker: str | None
    working: int


class ConsoleQueries:
    """The console's reads and its two writes (resume, retry) on one SQL ledger.

    Args:
        ledger: A ``SqliteLedger`` or ``PostgresLedger`` (any ``SqlLedger``).
        text_window: Interactions a text search reads for one page (``TEXT_WINDOW``).

    Raises:
        TypeError: ``ledger`` is not a SQL ledger (an ``InMemoryLedger`` has no tables).

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from langchain_evals_port.storage import SqliteLedger
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     ledger = SqliteLedger(Path(folder) / "ledger.db")
        ...     queries = ConsoleQueries(ledger)
        ...     print(queries.overview(0.0, time.time()), queries.agents_and_evaluators())
        ...     ledger.close()
        [] ([], [])
    """

    def __init__(self, ledger: SqlLedger, *, text_window: int = TEXT_WINDOW) -> None:
        if not isinstance(ledger, SqlLedger):
            raise TypeError(
                "the console's queries read a SQL ledger's tables: expected a SqliteLedger or "
                f"PostgresLedger, got {type(ledger).__name__}"
            )
        if isinstance(text_window, bool) or not isinstance(text_window, int) or text_window < 1:
            raise ValueError(f"text_window must be a positive int, got {text_window!r}")
        self.ledger = ledger
        self.text_window = text_window
        self._bucket = _BUCKET[ledger.dialect]
        self._contains = _CONTAINS[ledger.dialect]

    def _rows(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self.ledger.select(sql, parameters)

    # --- overview ---------------------------------------------------------------------------

    def overview(self, since: float, until: float) -> list[OverviewSeries]:
        """Every agent and evaluator with evaluations in ``[since, until)`` (epoch seconds),
        in buckets of ``bucket_seconds(until - since)``."""
        width = bucket_seconds(until - since)
        rows = self._rows(
            f"SELECT agent_id, evaluator_id, {self._bucket} AS bucket, count(*),"
            " sum(CASE WHEN outcome = 'verdict' THEN 1 ELSE 0 END), sum(passed),"
            " sum(CASE WHEN outcome = 'inconclusive' THEN 1 ELSE 0 END),"
            " sum(CASE WHEN outcome = 'failed' THEN 1 ELSE 0 END), avg(score)"
            " FROM ledger_evaluations WHERE evaluated_at >= %s AND evaluated_at < %s"
            " GROUP BY agent_id, evaluator_id, bucket ORDER BY agent_id, evaluator_id, bucket",
            (width, since, until),
        )
        series: dict[tuple[str, str], OverviewSeries] = {}
        for agent, evaluator, bucket, total, verdicts, passed, inconclusive, failed, score in rows:
            found = series.setdefault((agent, evaluator), OverviewSeries(agent, evaluator))
            found.buckets.append(
                OverviewBucket(
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
        check_limit(limit)
        rows = self._rows(
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

        ``evaluator_id`` and ``outcome`` keep the interactions with such an evaluation;
        ``since`` (inclusive) and ``until`` (exclusive) bound the start time, in epoch
        seconds. With ``text`` (a substring of the record's JSON, ASCII letters in any case)
        the page holds the matches among the next ``text_window`` interactions the other
        filters keep: it may hold fewer than ``limit`` (none, even) and still have a next
        cursor, which continues after the window. A bad cursor is a ``ValueError``."""
        check_limit(limit)
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
            rows = self._rows(
                f"SELECT i.started_at, i.interaction_id, i.record FROM ({selected}{newest}) i"
                f" WHERE {self._contains}{newest}",
                # LIKE's own % and _ in the text match loosely
                [*parameters, self.text_window, f"%{text}%", limit + 1],
            )
        else:
            rows = self._rows(selected + newest, [*parameters, limit + 1])
        page = rows[:limit]
        next_cursor = encode_cursor(page[-1][0], page[-1][1]) if len(rows) > limit else None
        if text and next_cursor is None:
            # The page is the window's last matches: continue after the window, if it was full.
            end = self._rows(
                f"SELECT i.started_at, i.interaction_id FROM ledger_interactions i {clause}"
                f"{newest} OFFSET %s",
                [*parameters, 1, self.text_window - 1],
            )
            next_cursor = encode_cursor(end[0][0], end[0][1]) if end else None
        records = [InteractionRecord.model_validate_json(text) for _, _, text in page]
        summaries = self._summaries([record.interaction_id for record in records])
        return [
            InteractionRow(record, summaries.get(record.interaction_id, [])) for record in records
        ], next_cursor

    def _summaries(self, ids: Sequence[str]) -> dict[str, list[EvaluationSummary]]:
        if not ids:
            return {}
        marks = ", ".join(["%s"] * len(ids))
        rows = self._rows(
            "SELECT interaction_id, evaluator_id, outcome, passed FROM ledger_evaluations"
            f" WHERE interaction_id IN ({marks}) ORDER BY evaluated_at, evaluation_id",
            list(ids),
        )
        found: dict[str, list[EvaluationSummary]] = {}
        for interaction_id, evaluator_id, outcome, passed in rows:
            found.setdefault(interaction_id, []).append(
                EvaluationSummary(evaluator_id, outcome, None if passed is None else bool(passed))
            )
        return found

    def failed(
        self, *, limit: int = 50, cursor: str | None = None
    ) -> tuple[list[EvaluationRecord], str | None]:
        """Failed evaluations, newest first; the page and the cursor of the next."""
        check_limit(limit)
        where, parameters = "", []
        if cursor:
            moment, key = decode_cursor(cursor)
            where = " AND (evaluated_at < %s OR (evaluated_at = %s AND evaluation_id < %s))"
            parameters = [moment, moment, key]
        rows = self._rows(
            "SELECT evaluated_at, evaluation_id, record FROM ledger_evaluations"
            f" WHERE outcome = 'failed'{where}"
            " ORDER BY evaluated_at DESC, evaluation_id DESC LIMIT %s",
            [*parameters, limit + 1],
        )
        page = rows[:limit]
        next_cursor = encode_cursor(page[-1][0], page[-1][1]) if len(rows) > limit else None
        return [EvaluationRecord.model_validate_json(text) for _, _, text in page], next_cursor

    def agents_and_evaluators(self) -> tuple[list[str], list[str]]:
        """The agent ids and evaluator ids with evaluations, in order, for the filters."""
        return self._distinct("agent_id"), self._distinct("evaluator_id")

    def _distinct(self, column: str) -> list[str]:
        """The distinct values of an indexed column of ``ledger_evaluations``, in order: one
        index lookup per value (a loose index scan), where ``DISTINCT`` reads every entry."""
        rows = self._rows(
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
        rows = self._rows(
            "SELECT worker, lease_until FROM ledger_work WHERE evaluation_id = %s",
            (evaluation_id,),
        )
        [(working,)] = self._rows(
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
        a failed evaluation. The attempt keeps the agent's roles and flow
        (``WorkUnit.queued``), so the same binding applies."""
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
