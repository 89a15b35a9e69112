"""``export_jsonl``: a ledger's records as JSON Lines, read page by page."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import IO, Literal

from langchain_evals_port.capture._records import InteractionRecord
from langchain_evals_port.storage._records import EvaluationRecord, Page

from ._protocol import Ledger

__all__ = ["export_jsonl"]


def export_jsonl(
    ledger: Ledger,
    destination: str | Path | IO[str],
    *,
    what: Literal["interactions", "evaluations"] = "evaluations",
    agent_id: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> int:
    """Write the ledger's records as JSON Lines (one record per line); the number written.

    Args:
        ledger: The ledger to read.
        destination: A path, or a text file open for writing.
        what: ``"evaluations"`` or ``"interactions"``.
        agent_id: Only this agent's records.
        since: Only records from this time on.
        until: Only records before this time.
    """
    if what not in ("interactions", "evaluations"):
        raise ValueError(f"what must be 'interactions' or 'evaluations', got {what!r}")
    filters = {"agent_id": agent_id, "since": since, "until": until}
    if isinstance(destination, (str, Path)):
        with open(destination, "w", encoding="utf-8") as out:
            return _write_lines(_all_pages(ledger, what, **filters), out)
    return _write_lines(_all_pages(ledger, what, **filters), destination)


def _all_pages(
    ledger: Ledger, what: Literal["interactions", "evaluations"], **filters: object
) -> Iterator[InteractionRecord | EvaluationRecord]:
    cursor: str | None = None
    while True:
        page: Page[InteractionRecord] | Page[EvaluationRecord]
        if what == "interactions":
            page = ledger.query_interactions(cursor=cursor, limit=500, **filters)  # type: ignore[arg-type]
        else:
            page = ledger.query_evaluations(cursor=cursor, limit=500, **filters)  # type: ignore[arg-type]
        yield from page.items
        if page.next_cursor is None:
            return
        cursor = page.next_cursor


def _write_lines(records: Iterator[InteractionRecord | EvaluationRecord], out: IO[str]) -> int:
    count = 0
    for record in records:
        out.write(record.model_dump_json())
        out.write("\n")
        count += 1
    return count
