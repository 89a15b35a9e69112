"""Realistic records for runtime tests: an interaction, its evaluation and a work unit —
the ones the shipped ledger contract stores."""

from langchain_evals_port.storage.contract import (
    BASE_TIME,
    make_evaluation,
    make_interaction,
    make_unit,
)

__all__ = ["BASE_TIME", "make_evaluation", "make_interaction", "make_unit"]
