"""Deterministic evaluation ids and sampling decisions.

Both are pure functions of their inputs, so a redelivered trigger — in this process or
another — makes the same choice and lands on the same record.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

__all__ = ["evaluation_id", "sampled"]


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


def sampled(interaction_id: str, evaluator_id: str, ratio: float) -> bool:
    """Whether ``evaluator_id`` evaluates ``interaction_id`` at sampling ``ratio``.

    The interaction and evaluator ids are hashed to a number in [0, 1), compared with the
    ratio: about ``ratio`` of all interactions are chosen, always the same ones.

    Example:
        >>> sampled("i-1", "quality", 1.0), sampled("i-1", "quality", 0.0)
        (True, False)
    """
    if ratio >= 1.0:
        return True
    digest = hashlib.sha256(f"{evaluator_id}\x1f{interaction_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < ratio
