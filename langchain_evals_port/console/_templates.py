"""The console's Jinja2 environment: its templates, with autoescaping on, and their filters.

One environment serves the web pages and the self-contained report files, so both read alike.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from langchain_evals_port.reporting._render import figure

__all__ = ["HERE", "moment", "plotly_path", "pretty", "template_environment"]

HERE = Path(__file__).resolve().parent


def template_environment() -> Any:
    """A ``jinja2.Environment`` over ``templates/`` that escapes everything it renders."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(HERE / "templates")), autoescape=True
    )
    env.filters["moment"] = moment
    env.filters["pretty"] = pretty
    env.filters["figure"] = _figure
    return env


def plotly_path() -> Path:
    """Plotly's JavaScript in the installed ``plotly`` package."""
    import plotly  # type: ignore[import-untyped]

    return Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


def moment(value: Any) -> str:
    """A time as ``YYYY-MM-DD HH:MM`` UTC (epoch seconds or a datetime)."""
    when = (
        datetime.fromtimestamp(value, tz=timezone.utc)
        if isinstance(value, (int, float))
        else value.astimezone(timezone.utc)
    )
    return str(when.strftime("%Y-%m-%d %H:%M"))


def pretty(value: Any) -> str:
    """A value as indented JSON (its ``repr`` where JSON cannot hold it)."""
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        return repr(value)


def _figure(value: float | None, signed: bool = False) -> str:
    """A figure as every report shows it (three decimals), ``—`` for none."""
    return "—" if value is None else figure(value, signed=signed)
