"""Whether and how progress is shown: a rich bar where a person watches, nothing elsewhere;
and the console tables are printed on (``terminal``).

rich itself is imported only when a bar or a table is shown (``_progress.py``).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from ._progress import ProgressBar

__all__ = ["Progress", "terminal"]


class Progress:
    """A progress bar where a person watches, or nothing at all.

    Args:
        name: What is counted, shown before the bar.
        total: How many items there are.
        enabled: ``None`` shows the bar on a terminal or in a notebook, never under ``CI`` or
            in a pipe; ``False`` never, ``True`` always.
    """

    def __init__(self, name: str, total: int, enabled: bool | None) -> None:
        if enabled is None:
            enabled = _watched()
        self._bar: ProgressBar | None = None
        if enabled and total:
            from ._progress import ProgressBar

            self._bar = ProgressBar(name, total)

    def advance(self) -> None:
        """One more item done (safe from any thread)."""
        if self._bar is not None:
            self._bar.advance()

    def close(self) -> None:
        """Draw the final state and release the terminal."""
        if self._bar is not None:
            self._bar.close()


def terminal() -> Console:
    """A rich console on standard output: the terminal's width, or 160 columns where the
    output is not a terminal (a log, a pipe) and ``COLUMNS`` does not say."""
    from rich.console import Console

    if sys.stdout.isatty() or os.environ.get("COLUMNS"):
        return Console()
    return Console(width=160)


def _watched() -> bool:
    """A terminal or a notebook, outside CI: redrawn bars in logs and pipes are noise."""
    if os.environ.get("CI"):
        return False
    if sys.stderr.isatty():
        return True
    if "ipykernel" not in sys.modules:
        return False
    from ._progress import in_notebook

    return in_notebook()
