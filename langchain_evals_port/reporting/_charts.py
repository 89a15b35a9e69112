"""The charts of the result pages, each as Plotly draws it and as a page without Plotly does.

A ``Chart`` holds a Plotly figure (``data`` and ``layout``) and what the shared chart macro
(``templates/_charts.html``) shows instead in a file without Plotly's JavaScript: a small SVG
line for a series of values (``line``), a table of the figures for anything else (``table``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._render import figure
from ._statistics import KeyComparison, KeyStatistics

__all__ = [
    "Chart",
    "ChartLine",
    "ChartTable",
    "change_chart",
    "chart_layout",
    "interval_bars",
    "plotly_text",
    "trend_chart",
]

_WIDTH = 320
_HEIGHT = 120
_PAD = 12


@dataclass(frozen=True)
class ChartTable:
    """A chart's figures as a table: its column headers and rows of text."""

    headers: Sequence[str]
    rows: Sequence[Sequence[str]]


@dataclass(frozen=True)
class ChartLine:
    """A series drawn as an SVG polyline: each point's ``(x, y)`` and its value's text."""

    width: int
    height: int
    points: Sequence[tuple[float, float, str]]

    @property
    def polyline(self) -> str:
        """The ``points`` attribute of the polyline."""
        return " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in self.points)


@dataclass(frozen=True)
class Chart:
    """One chart of a page.

    Args:
        id: The element id of the chart (unique in its page).
        title: What it shows, in words.
        data: Plotly's traces.
        layout: Plotly's layout.
        key: The feedback key it is about, when it is about one.
        table: Its figures as a table, for a page without Plotly.
        line: Its values as an SVG line, for a page without Plotly (before ``table``).
    """

    id: str
    title: str
    data: Sequence[Mapping[str, Any]]
    layout: Mapping[str, Any]
    key: str | None = None
    table: ChartTable | None = None
    line: ChartLine | None = field(default=None)

    @property
    def plotly(self) -> dict[str, Any]:
        """What ``Plotly.newPlot`` draws: ``{"id", "data", "layout"}``, every label (titles,
        trace names, categories, hover texts) escaped to show as the text it is."""
        return {
            "id": self.id,
            "data": [
                {k: _literal(v) if k in _LABELS else v for k, v in trace.items()}
                for trace in self.data
            ],
            "layout": {
                k: _literal_title(v) if k == "title" or k in ("xaxis", "yaxis") else v
                for k, v in self.layout.items()
            },
        }


def plotly_text(text: str) -> str:
    """``text`` as Plotly shows it literally: Plotly reads tags (``<b>``, ``<a href>``,
    ``<br>``) and entities in its labels, so ``&``, ``<`` and ``>`` are written as entities."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_LABELS = ("name", "text", "x")
"""The fields of a trace Plotly reads as labels (``x``: the categories of a bar chart)."""


def _literal(value: Any) -> Any:
    if isinstance(value, str):
        return plotly_text(value)
    if isinstance(value, list):
        return [_literal(one) for one in value]
    return value


def _literal_title(value: Any) -> Any:
    """A layout's title (or an axis holding one) with its text escaped."""
    if not isinstance(value, Mapping):
        return value
    return {
        k: _literal(v) if k == "text" else _literal_title(v) if k == "title" else v
        for k, v in value.items()
    }


def interval_bars(
    id: str, title: str, series: Sequence[tuple[str, Sequence[KeyStatistics]]]
) -> Chart:
    """Bars of each key's mean or pass rate with its 95 % interval, one bar per series.

    Args:
        id: The chart's element id.
        title: Its title.
        series: ``(name, figures)``: a name (``score``, ``baseline: A``) and each key's
            statistics.
    """
    rows = [
        [name, s.key, s.kind, "—" if s.mean is None else figure(s.mean), _interval(s), str(s.cases)]
        for name, figures in series
        for s in figures
    ]
    layout = chart_layout(title, "pass rate / mean")
    if len(series) > 1:
        layout["barmode"] = "group"
    return Chart(
        id=id,
        title=title,
        data=[_bars(name, figures) for name, figures in series],
        layout=layout,
        table=ChartTable(["series", "key", "measure", "score", "95 % interval", "n"], rows),
    )


def change_chart(id: str, comparisons: Mapping[str, KeyComparison]) -> Chart | None:
    """Each key's paired change (candidate - baseline) with its 95 % interval; ``None`` when
    no key has a shared case."""
    paired = [c for c in comparisons.values() if c.difference is not None]
    if not paired:
        return None
    title = "Paired change per key (candidate - baseline), 95 % interval"
    layout = chart_layout(title, "change")
    layout["yaxis"] = {
        "title": {"text": "change"},
        "zeroline": True,
        "zerolinewidth": 2,
        "automargin": True,
    }
    rows = [
        [
            c.key,
            figure(c.difference or 0.0, signed=True),
            "—" if c.interval is None else c.interval.format(signed=True),
            str(c.shared),
        ]
        for c in paired
    ]
    return Chart(
        id=id,
        title=title,
        data=[
            {
                "type": "scatter",
                "mode": "markers",
                "name": "change",
                "x": [c.key for c in paired],
                "y": [c.difference for c in paired],
                "error_y": _error_y(
                    [_span(c.difference, c.interval, above=True) for c in paired],
                    [_span(c.difference, c.interval, above=False) for c in paired],
                ),
                "text": [f"{c} ({c.shared} shared cases)" for c in paired],
                "hoverinfo": "text",
                "marker": {"size": 10},
            }
        ],
        layout=layout,
        table=ChartTable(["key", "change", "95 % interval", "shared cases"], rows),
    )


def trend_chart(id: str, key: str, means: Sequence[float]) -> Chart:
    """``key``'s mean in each run, oldest first (this run last)."""
    runs = [f"run {index + 1}" for index in range(len(means))]
    if runs:
        runs[-1] = "this run"
    layout = chart_layout(key, "mean")
    layout["height"] = 260
    return Chart(
        id=id,
        title=key,
        key=key,
        data=[
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": key,
                "x": runs,
                "y": list(means),
                "hovertemplate": "%{x}: %{y:.3f}<extra></extra>",
            }
        ],
        layout=layout,
        line=_line(means) if means else None,
    )


def _line(means: Sequence[float]) -> ChartLine:
    # Scores are usually in [0, 1]; the axis keeps that range and stretches for other scales.
    low, high = min(0.0, *means), max(1.0, *means)
    step = (_WIDTH - 2 * _PAD) / max(len(means) - 1, 1)
    points = [
        (
            _PAD + (index * step if len(means) > 1 else (_WIDTH - 2 * _PAD) / 2),
            _HEIGHT - _PAD - (mean - low) / (high - low) * (_HEIGHT - 2 * _PAD),
            f"{mean:.3f}",
        )
        for index, mean in enumerate(means)
    ]
    return ChartLine(_WIDTH, _HEIGHT, points)


def _interval(s: KeyStatistics) -> str:
    return "—" if s.interval is None else str(s.interval)


def _span(center: float | None, interval: Any, *, above: bool) -> float:
    if interval is None or center is None:
        return 0.0
    return float(interval.high - center if above else center - interval.low)


def _error_y(above: list[float], below: list[float]) -> dict[str, Any]:
    return {"type": "data", "symmetric": False, "array": above, "arrayminus": below}


def _bars(name: str, figures: Sequence[KeyStatistics]) -> dict[str, Any]:
    return {
        "type": "bar",
        "name": name,
        "x": [s.key for s in figures],
        "y": [s.mean for s in figures],
        "error_y": _error_y(
            [_span(s.mean, s.interval, above=True) for s in figures],
            [_span(s.mean, s.interval, above=False) for s in figures],
        ),
        "text": [f"{s.kind} {s} (n={s.cases})" for s in figures],
        "hoverinfo": "text",
        "textposition": "none",
    }


def chart_layout(title: str, y_title: str) -> dict[str, Any]:
    """The layout every chart starts from: the title at the top left of the plot, below
    Plotly's mode bar (which shows on hover at the top right), and margins that grow to fit
    the axes' labels."""
    return {
        "title": {
            "text": title,
            "x": 0,
            "xref": "paper",
            "xanchor": "left",
            "y": 1,
            "yref": "paper",
            "yanchor": "bottom",
            "pad": {"b": 12},
        },
        "xaxis": {"automargin": True},
        "yaxis": {"title": {"text": y_title}, "rangemode": "tozero", "automargin": True},
        "height": 340,
        "margin": {"l": 60, "r": 10, "t": 72, "b": 40},
    }
