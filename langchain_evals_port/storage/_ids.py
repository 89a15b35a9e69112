"""Deterministic evaluation ids: a pure function of the evaluator, the interaction and the
trigger's attributes, so a redelivered trigger — in this process or another — lands on the
same record."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

__all__ = ["evaluation_id"]


def evaluation_id(
    evaluator_id: str, interaction_id: str, trigger_attributes: Mapping[str, str] | None = None
) -> str:
    """The id of the evaluation of ``interaction_id`` by ``evaluator_id``.

    Distinct ``trigger_attributes`` (e.g. a prompt version) give a distinct id, so the
    interaction is evaluated again; the same ones give the same id, so it is recorded once.

    Example:
        >>> evaluation_id("quality", "i-1") == evaluation_id("quality", "i-1", {})
        True
        >>> evaluation_id("quality", "i-1") == evaluation_id("quality", "i-1", {"v": "2"})
        False
    """
    key = json.dumps(
        [evaluator_id, interaction_id, sorted((trigger_attributes or {}).items())],
        separators=(",", ":"),
    )
    return hashlib.sha256(key.encode()).hexdigest()[:32]
