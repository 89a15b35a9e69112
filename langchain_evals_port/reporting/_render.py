"""What every report file shares: figures, Markdown cells, shortened text, and writing a file
so that a killed run never leaves half of one (the HTML pages are ``_pages``'s templates).

Used by ``EvalReport`` here and by the experiment reports of ``experiments``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def figure(value: float, *, signed: bool = False) -> str:
    """A figure as every report shows it: three decimals, ``signed`` adds ``+`` to positives.

    Example:
        >>> figure(0.8204), figure(-0.0004, signed=True), figure(0.05, signed=True)
        ('0.820', '+0.000', '+0.050')
    """
    # Rounded first so that -0.0004 reads 0.000, not -0.000.
    rounded = round(value, 3) + 0.0
    return f"{rounded:+.3f}" if signed else f"{rounded:.3f}"


def one_line(text: str) -> str:
    """``text`` with every run of whitespace, newlines included, made one space.

    A newline in a judge's reasoning would end a Markdown list item or table row early.
    """
    return " ".join(text.split())


def markdown_cell(text: str) -> str:
    """``text`` for a Markdown table cell: its line breaks made spaces (a row is one line),
    its ``|`` escaped, and its other white space kept as it is.

    Example:
        >>> markdown_cell("a | b\\nc  d")
        'a \\\\| b c  d'
    """
    return " ".join(text.splitlines()).replace("|", "\\|")


def shorten(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, ending in ``…`` when it was cut.

    Example:
        >>> shorten("abcdef", 4), shorten("abc", 4)
        ('abc…', 'abc')
    """
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (its directory created if missing) all at once.

    Write-then-rename, so a run killed mid-write leaves the previous file intact rather than
    a truncated baseline or history for the next run to trip over.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", delete=False
    ) as handle:
        handle.write(text)
    # Temporary files are private (0600); a report is an ordinary file, readable as the
    # umask allows.
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(handle.name, 0o666 & ~umask)
    os.replace(handle.name, path)
