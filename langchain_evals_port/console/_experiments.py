"""The console's experiment pages.

``/experiments`` lists the store's experiments with a form choosing two to compare;
``/experiments/{name}`` shows one (each key's figures, then a row per run: inputs, outputs or
the target's error, every evaluator's score or outcome with its reasoning; ``?show=`` keeps
the cases with a problem); ``/experiments/compare?baseline=A&candidate=B`` pairs two case by
case (``reporting.statistics``), with the cases whose score changed, worse first. A name the
store does not know is a 404 naming the closest one. What each page shows, and its template,
are ``experiments``' (``experiment_context``, ``comparison_context``): the same page is
written as one file by ``langchain-evals report`` and as an experiment's ``report.html``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from langchain_evals_port.experiments import (
    ExperimentInfo,
    ExperimentNotFoundError,
    ExperimentResult,
    ExperimentStore,
)
from langchain_evals_port.experiments._page import SHOW, comparison_context, experiment_context

__all__ = ["experiment_routes"]

Page = Callable[..., Any]
"""The console's page renderer: ``page(request, template, status=200, **context)``."""


def experiment_routes(store: ExperimentStore, page: Page) -> list[Any]:
    """The experiment pages over ``store``, rendered by the console's ``page``."""
    from starlette.routing import Route

    pages = _ExperimentPages(store, page)
    return [
        Route("/experiments", pages.listing),
        # Before /experiments/{name}: "compare" is a page, not an experiment.
        Route("/experiments/compare", pages.compare),
        Route("/experiments/{name:path}", pages.experiment),
    ]


class _ExperimentPages:
    """The page handlers; the store's reads run on a worker thread (its SQL blocks)."""

    def __init__(self, store: ExperimentStore, page: Page) -> None:
        self.store = store
        self.page = page

    async def listing(self, request: Any) -> Any:
        summaries = await asyncio.to_thread(self.store.experiments)
        names = [summary.info.name for summary in reversed(summaries)]
        return self.page(
            request,
            "experiments.html",
            summaries=list(reversed(summaries)),
            candidate=names[0] if names else None,
            baseline=names[1] if len(names) > 1 else None,
        )

    async def experiment(self, request: Any, name: str | None = None) -> Any:
        name = name or request.path_params["name"]
        show = request.query_params.get("show") or "all"
        if show not in SHOW:
            return _bad_request(f"show: expected one of {', '.join(SHOW)}, got {show!r}")
        try:
            info, result = await asyncio.to_thread(self._load, name)
        except ExperimentNotFoundError as error:
            return self.page(request, "missing.html", status=404, message=str(error))
        return self.page(request, "experiment.html", **experiment_context(result, info, show=show))

    async def compare(self, request: Any) -> Any:
        query = request.query_params
        baseline_name, candidate_name = query.get("baseline"), query.get("candidate")
        if "baseline" not in query and "candidate" not in query:
            # The list's link to an experiment named "compare" (or its filter form).
            return await self.experiment(request, "compare")
        if not baseline_name or not candidate_name:
            return _bad_request("compare: name a baseline and a candidate experiment")
        try:
            baseline = await asyncio.to_thread(self.store.load, baseline_name)
            candidate = await asyncio.to_thread(self.store.load, candidate_name)
        except ExperimentNotFoundError as error:
            return self.page(request, "missing.html", status=404, message=str(error))
        return self.page(request, "compare.html", **comparison_context(baseline, candidate))

    def _load(self, name: str) -> tuple[ExperimentInfo, ExperimentResult]:
        return self.store.info(name), self.store.load(name)


def _bad_request(message: str) -> Any:
    from starlette.responses import PlainTextResponse

    return PlainTextResponse(message, status_code=400)
