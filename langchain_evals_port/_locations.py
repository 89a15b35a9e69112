"""The one place everything is kept when no location is named: ``.langchain-evals/`` in the
working directory. Standard library only, so the command line reads it without loading the
package."""

from __future__ import annotations

from pathlib import Path

__all__ = ["DEFAULT_FOLDER", "DEFAULT_LEDGER", "DEFAULT_STORE"]

DEFAULT_FOLDER = Path(".langchain-evals")
"""Where everything is kept when no location is named, relative to the working directory:
the online ledger, the experiment store and the judge cache beside them."""

DEFAULT_LEDGER = DEFAULT_FOLDER / "evals.db"
"""The online runtime's ledger when none is given (``EvaluationRuntime``, ``--ledger``)."""

DEFAULT_STORE = DEFAULT_FOLDER / "experiments.db"
"""The experiment store when none is named (``run_experiment``, ``--store``)."""
