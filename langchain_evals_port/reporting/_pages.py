"""Every HTML page of a result: one Jinja2 environment, one base template, one style sheet and
one set of chart macros (``templates/``), shared by the pytest plugin's report, an
experiment's ``report.html``, ``langchain-evals report`` and the console's pages.

``render`` gives a template's page as the console serves it (its style sheet and Plotly's
JavaScript linked); ``standalone`` gives it as one file that needs nothing else: the style
sheet inlined and, when ``plotly`` is installed and wanted, its JavaScript too (about
4.8 MB). Without Plotly every chart is drawn without scripts instead: a line of values as a
small SVG, anything else as a table of its figures, with a note saying so.

Jinja2 is imported on the first render, not with this module: the pytest plugin imports
``reporting`` on every run and pays for templates only when it writes a report.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Sequence
from datetime import datetime, timezone
from functools import cache
from pathlib import Path
from typing import Any

from ._render import figure

__all__ = [
    "STYLE_SHEET",
    "TEMPLATES",
    "environment",
    "moment",
    "plotly_path",
    "pretty",
    "render",
    "standalone",
]

TEMPLATES = Path(__file__).resolve().parent / "templates"
"""The shared templates and style sheet (package data)."""

STYLE_SHEET = TEMPLATES / "report.css"
"""The style sheet of every page; the console serves it as ``/static/report.css``."""


@cache
def environment(*folders: Path) -> Any:
    """A ``jinja2.Environment`` over ``folders`` then the shared templates, escaping
    everything it renders, with the filters every page uses (``moment``, ``pretty``,
    ``figure``). A folder's template shadows a shared one of the same name (the console's
    ``_nav.html`` fills the base template's navigation)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader([*map(str, folders), str(TEMPLATES)]),
        autoescape=True,
    )
    env.filters["moment"] = moment
    env.filters["pretty"] = pretty
    env.filters["figure"] = _figure
    return env


def render(template: str, /, **context: Any) -> str:
    """``template`` (a shared one) rendered with ``context``, as the console serves it."""
    return str(environment().get_template(template).render(context))


def standalone(template: str, /, *, plotly: bool = True, **context: Any) -> str:
    """``template`` rendered with ``context`` as one self-contained HTML document.

    Args:
        template: A shared template's name (``experiment.html``, ``run_report.html``...).
        plotly: Inline Plotly's JavaScript for the charts when ``plotly`` is installed;
            otherwise (or when it is not installed) the charts are drawn without scripts.
        **context: What the template shows.

    Returns:
        The HTML document.

    Example:
        >>> page = standalone("base.html", plotly=False, title="a < b")
        >>> page.startswith("<!DOCTYPE html>"), "<title>a &lt; b</title>" in page
        (True, True)
    """
    from markupsafe import Markup

    script = plotly_path() if plotly else None
    # Trusted text of this package and of plotly's, inlined as it is: neither holds the end
    # tag of its element, which is all that could end it early once "</" is escaped.
    values: dict[str, Any] = {
        "standalone": True,
        "read_only": True,
        "generated": datetime.now(timezone.utc),
        "inline_css": Markup(_inline(STYLE_SHEET.read_text("utf-8"))),
        "plotly_js": Markup(_inline(script.read_text("utf-8"))) if script else None,
        **context,
    }
    return str(environment().get_template(template).render(values))


def plotly_path() -> Path | None:
    """Plotly's JavaScript in the installed ``plotly`` package; ``None`` without one.

    Found without importing ``plotly`` (its Python side is not needed, only the file).
    """
    spec = importlib.util.find_spec("plotly")
    folders: Sequence[str] = (spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        path = Path(folder) / "package_data" / "plotly.min.js"
        if path.is_file():
            return path
    return None


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


def _inline(text: str) -> str:
    return text.replace("</", "<\\/")
