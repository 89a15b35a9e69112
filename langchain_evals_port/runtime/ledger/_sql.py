"""What the SQL ledgers share: how a keyset-paged query filters, and how an evaluation
record is stored."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from langchain_evals_port.runtime._records import EvaluationRecord

from ._pages import decode_cursor, epoch

__all__ = ["evaluation_row", "keyset_filter"]


def keyset_filter(
    equal: Mapping[str, str | None],
    *,
    moment: str,
    key: str,
    since: datetime | None,
    until: datetime | None,
    cursor: str | None,
    placeholder: str,
) -> tuple[str, list[Any]]:
    """The ``WHERE`` clause (or ``""``) and parameters of a SQL ledger's keyset-paged query:
    columns equal to the values given (``None``: any), ``moment`` in ``[since, until)``, and
    after ``cursor`` in ``(moment, key)`` order; ``placeholder`` is the driver's (``?``, ``%s``)."""
    conditions = [
        f"{column} = {placeholder}" for column, value in equal.items() if value is not None
    ]
    parameters: list[Any] = [value for value in equal.values() if value is not None]
    if since is not None:
        conditions.append(f"{moment} >= {placeholder}")
        parameters.append(epoch(since))
    if until is not None:
        conditions.append(f"{moment} < {placeholder}")
        parameters.append(epoch(until))
    if cursor is not None:
        conditions.append(f"({moment}, {key}) > ({placeholder}, {placeholder})")
        parameters.extend(decode_cursor(cursor))
    return (f"WHERE {' AND '.join(conditions)}" if conditions else ""), parameters


def evaluation_row(record: EvaluationRecord) -> tuple[str, str, str, str, float, str]:
    """The columns a SQL ledger stores an evaluation record in: ids, time, the JSON."""
    return (
        record.evaluation_id,
        record.interaction_id,
        record.agent_id,
        record.evaluator_id,
        epoch(record.timestamp),
        record.model_dump_json(),
    )
