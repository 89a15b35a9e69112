"""What every report file shares: figures, Markdown cells, shortened text, the HTML page and
its style, and writing a file so that a killed run never leaves half of one.

Used by ``EvalReport`` here and by the experiment reports of ``experiments``.
"""

from __future__ import annotations

import os
import tempfile
from html import escape
from pathlib import Path

PAGE_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem; color: #222; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ccc; padding: 0.3rem 0.6rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
figure { display: inline-block; margin: 0 1rem 1rem 0; }
polyline { fill: none; stroke: #3366cc; stroke-width: 2; }
circle { fill: #3366cc; }
"""
"""The style sheet of every report page."""


def figure(value: float, *, signed: bool = False) -> str:
    """A figure as every report shows it: three decimals, ``signed`` adds ``+`` to positives.

    Example:
        >>> figure(0.8204), figure(-0.0004, signed=True), figure(0.05, signed=True)
        ('0.820', '+0.000', '+0.050')
    """
    # Rounded first so that -0.0004 reads 0.000, not -0.000.
    rounded = round(value, 3) + 0.0
    return f"{rounded:+.3f}" if signed else f"{rounded:.3f}"


def html_page(title: str, body: str, *, style: str = "") -> str:
    """A self-contained HTML document: ``title`` (escaped here), the shared style sheet plus
    ``style``, and ``body`` (HTML, escaped by the caller).

    Example:
        >>> html_page("a < b", "<p>hi</p>").count("a &lt; b")
        1
    """
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8" />\n'
        f"<title>{escape(title)}</title>\n<style>{PAGE_STYLE}{style}</style>\n</head>\n"
        f"<body>\n{body}</body>\n</html>\n"
    )


def one_line(text: str) -> str:
    """``text`` with every run of whitespace, newlines included, made one space.

    A newline in a judge's reasoning would end a Markdown list item or table row early.
    """
    return " ".join(text.split())


def markdown_cell(text: str) -> str:
    """``text`` for a Markdown table cell: on one line, its ``|`` escaped.

    Example:
        >>> markdown_cell("a | b\\nc")
        'a \\\\| b c'
    """
    return one_line(text).replace("|", "\\|")


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
