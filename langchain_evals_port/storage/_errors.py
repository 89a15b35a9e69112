"""What the ledgers raise besides the ``ValueError``s that name a bad argument."""

from __future__ import annotations

from langchain_evals_port.core.errors import EvalsError

__all__ = [
    "CheckpointerUnavailableError",
    "InteractionNotFoundError",
    "LedgerSchemaError",
    "WouldWait",
]


class InteractionNotFoundError(EvalsError, KeyError):
    """The ledger holds no interaction with the requested id."""

    def __init__(self, interaction_id: str) -> None:
        super().__init__(f"no interaction {interaction_id!r} in the ledger")
        self.interaction_id = interaction_id

    def __str__(self) -> str:
        return str(self.args[0])


class CheckpointerUnavailableError(EvalsError, TypeError):
    """Durable evaluators need a LangGraph checkpointer: none was given, and the ledger keeps
    no checkpoints (it is not ``SupportsCheckpoints``)."""


class LedgerSchemaError(EvalsError, ValueError):
    """The ledger's tables are at a schema version this release cannot use: a newer one than
    it knows, or (opened with ``setup=False``) an older one than it needs.

    Attributes:
        found: The version the storage holds (-1: no ledger tables at all).
        expected: The version this release reads and writes.
    """

    def __init__(self, message: str, *, found: int, expected: int) -> None:
        super().__init__(message)
        self.found = found
        self.expected = expected


class WouldWait(EvalsError):
    """``without_waiting`` could not begin its transaction at once: another connection (or
    thread of this process) holds the storage's write lock, or the backend answers over a
    network. Nothing was done; the caller makes its writes the usual way, off its event loop."""
