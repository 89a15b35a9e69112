"""The HTML page of a report: one self-contained file, no scripts and no external assets, so it
opens from a CI artifact store or a mail attachment exactly as it was written."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from ._render import html_page
from ._summary import KeySummary, format_mean

_WIDTH = 320
_HEIGHT = 120
_PAD = 12


def render_html(
    summaries: Sequence[KeySummary],
    trends: Mapping[str, Sequence[float]],
    listing: Sequence[str],
    changes: Mapping[str, str],
    case_changes: Sequence[str],
) -> str:
    """The page: the summary table, the cases that changed, one trend chart per key, and the
    listing of results.

    Args:
        summaries: The figures of each key, in display order.
        trends: Each key's mean over past runs and this one, oldest first.
        listing: One line per result, in words.
        changes: Each key's ``change`` cell.
        case_changes: One line per key whose cases changed, in words.
    """
    rows = "".join(
        f"<tr><td>{escape(s.key)}</td><td>{format_mean(s.mean)}</td><td>{s.count}</td>"
        f"<td>{escape(changes.get(s.key, ''))}</td>"
        f"<td>{s.inconclusive}</td><td>{s.failed}</td></tr>\n"
        for s in summaries
    )
    charts = "".join(_chart(s.key, trends.get(s.key, ())) for s in summaries)
    items = "".join(f"<li>{escape(line)}</li>\n" for line in listing)
    by_case = (
        "<h2>Changes by case</h2>\n<ul>\n"
        + "".join(f"<li>{escape(line)}</li>\n" for line in case_changes)
        + "</ul>\n"
        if case_changes
        else ""
    )
    return html_page(
        "Evaluation report",
        "<h1>Evaluation report</h1>\n<table>\n"
        "<tr><th>evaluator</th><th>mean score</th><th>n</th><th>change</th>"
        "<th>inconclusive</th><th>failed</th></tr>\n"
        f"{rows}</table>\n{by_case}<h2>Trends</h2>\n{charts}\n<h2>Results</h2>\n<ul>\n{items}</ul>\n",
    )


def _chart(key: str, means: Sequence[float]) -> str:
    """An SVG line chart of ``means``, one circle per run, each titled with its value."""
    label = escape(key)
    if not means:
        return (
            f'<figure data-key="{label}"><figcaption>{label}: no verdicts</figcaption></figure>\n'
        )
    # Scores are usually in [0, 1]; the axis keeps that range and stretches for other scales.
    low, high = min(0.0, *means), max(1.0, *means)
    step = (_WIDTH - 2 * _PAD) / max(len(means) - 1, 1)
    points = [
        (
            _PAD + (index * step if len(means) > 1 else (_WIDTH - 2 * _PAD) / 2),
            _HEIGHT - _PAD - (mean - low) / (high - low) * (_HEIGHT - 2 * _PAD),
        )
        for index, mean in enumerate(means)
    ]
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    dots = "".join(
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3"><title>{mean:.3f}</title></circle>'
        for (x, y), mean in zip(points, means, strict=True)
    )
    return (
        f'<figure data-key="{label}">\n'
        f'<svg width="{_WIDTH}" height="{_HEIGHT}" viewBox="0 0 {_WIDTH} {_HEIGHT}" role="img" '
        f'aria-label="{label} mean per run">'
        f'<polyline points="{line}" />{dots}</svg>\n'
        f"<figcaption>{label}</figcaption>\n</figure>\n"
    )
