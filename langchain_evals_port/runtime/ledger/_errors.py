"""What the ledgers raise besides the ``ValueError``s that name a bad argument."""

from __future__ import annotations

from langchain_evals_port.core.errors import EvalsError

__all__ = ["InteractionNotFoundError"]


class InteractionNotFoundError(EvalsError, KeyError):
    """The ledger holds no interaction with the requested id."""

    def __init__(self, interaction_id: str) -> None:
        super().__init__(f"no interaction {interaction_id!r} in the ledger")
        self.interaction_id = interaction_id

    def __str__(self) -> str:
        return str(self.args[0])
