"""The console's templates: its own pages (``templates/``) over the shared ones of
``reporting`` (base, style sheet, charts, the experiment and comparison pages), in one
Jinja2 environment with autoescaping on, so the console and the report files read alike.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_evals_port.reporting._pages import environment

__all__ = ["TEMPLATES", "template_environment"]

TEMPLATES = Path(__file__).resolve().parent / "templates"


def template_environment() -> Any:
    """The shared ``jinja2.Environment`` with the console's templates searched first."""
    return environment(TEMPLATES)
