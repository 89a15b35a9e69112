"""Sampling decisions: a pure function of the interaction, the evaluator and the ratio, so a
redelivered trigger — in this process or another — makes the same choice (the evaluation ids
it lands on are ``storage``'s)."""

from __future__ import annotations

import hashlib

__all__ = ["sampled"]


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
