"""The progress bar of an experiment's runs: rich's, with a count, a rate and an ETA.

Imported only when a bar is shown, so rich never costs a quiet run anything.
"""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text


class _RateColumn(ProgressColumn):
    """Cases per second (rich's own speed columns are for bytes or unknown totals)."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:,.1f}/s" if speed else "?/s", style="progress.data.speed")


class ProgressBar:
    """A bar on stderr (or in a notebook cell) for ``total`` cases of ``name``."""

    def __init__(self, name: str, total: int) -> None:
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            _RateColumn(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
        )
        self._task = self._progress.add_task(name, total=total)
        self._progress.start()

    def advance(self) -> None:
        """One more case done (safe from any thread)."""
        self._progress.advance(self._task)

    def close(self) -> None:
        """Draw the final state and release the terminal."""
        self._progress.stop()


def in_notebook() -> bool:
    """Whether output goes to a Jupyter notebook, where rich draws the bar in the cell."""
    return Console().is_jupyter
