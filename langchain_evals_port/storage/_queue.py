"""The work queue's rules every ledger applies the same way: the check of a completion, and
how ``release`` and ``resume`` change a unit. (The lease and its fence, shared with the
experiments' runs, are ``_leased``'s.)"""

from __future__ import annotations

from typing import Any

from langchain_evals_port.storage._records import Claim, EvaluationRecord, WorkUnit

__all__ = ["check_completion", "released_unit", "resumed_unit"]


def check_completion(claim: Claim, record: EvaluationRecord) -> None:
    """Reject completing ``claim`` with the record of another evaluation."""
    if record.evaluation_id != claim.unit.evaluation_id:
        raise ValueError(
            f"record {record.evaluation_id!r} does not belong to the claimed unit "
            f"{claim.unit.evaluation_id!r}"
        )


def released_unit(
    unit: WorkUnit,
    *,
    now: float,
    delay: float,
    attempts: int | None,
    waiting: bool = False,
    question: Any = None,
) -> WorkUnit:
    """``unit`` as ``release`` puts it back: due after ``delay``, with ``attempts`` if given,
    waiting for ``resume`` with ``question`` if asked (a value delivered earlier is used up)."""
    update: dict[str, object] = {
        "not_before": now + delay,
        "waiting": waiting,
        "question": question if waiting else None,
        "resumed": False,
        "resume_value": None,
    }
    if attempts is not None:
        update["attempts"] = attempts
    return unit.model_copy(update=update)


def resumed_unit(unit: WorkUnit, value: Any) -> WorkUnit:
    """``unit`` as ``resume`` makes it: due now, no longer waiting, carrying ``value``."""
    return unit.model_copy(
        update={"not_before": 0.0, "waiting": False, "resumed": True, "resume_value": value}
    )
