"""How every ledger orders, filters and pages its records: by time, then id, with opaque
keyset cursors."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import TypeVar

from langchain_evals_port.capture._records import InteractionRecord
from langchain_evals_port.storage._records import EvaluationRecord, Page

__all__ = [
    "check_limit",
    "decode_cursor",
    "encode_cursor",
    "epoch",
    "evaluation_key",
    "interaction_key",
    "page_of",
]

T = TypeVar("T")


def encode_cursor(timestamp: float, key: str) -> str:
    """The opaque cursor of a keyset page that continues after ``(timestamp, key)``."""
    raw = json.dumps([timestamp, key], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode()


def decode_cursor(cursor: str) -> tuple[float, str]:
    """The ``(timestamp, key)`` a cursor continues after; ``ValueError`` names a bad cursor."""
    try:
        timestamp, key = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        return float(timestamp), str(key)
    except (ValueError, TypeError) as error:
        raise ValueError(f"cursor: not a cursor this ledger returned: {cursor!r}") from error


def check_limit(limit: int) -> None:
    """Reject a page size below 1, naming the argument."""
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ValueError(f"limit must be a positive int, got {limit!r}")


def epoch(moment: datetime) -> float:
    """Seconds since the epoch of ``moment``; a naive datetime is taken to be in UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def interaction_key(record: InteractionRecord) -> tuple[float, str]:
    """The order of interactions in queries and cursors: start time, then id."""
    return epoch(record.started_at), record.interaction_id


def evaluation_key(record: EvaluationRecord) -> tuple[float, str]:
    """The order of evaluation records in queries and cursors: timestamp, then id."""
    return epoch(record.timestamp), record.evaluation_id


def page_of(items: Sequence[T], limit: int, key: Callable[[T], tuple[float, str]]) -> Page[T]:
    """The page of the first ``limit`` of ``items`` (fetched as ``limit + 1`` in key order).

    An item beyond ``limit`` means there is more, so the page's cursor continues after its
    last item; otherwise this is the last page.
    """
    if len(items) <= limit:
        return Page(items=list(items))
    return Page(items=list(items[:limit]), next_cursor=encode_cursor(*key(items[limit - 1])))
