"""The console's experiment pages.

``/experiments`` lists the store's experiments with a form choosing two to compare;
``/experiments/{name}`` shows one (each key's figures, then a row per run: inputs, outputs or
the target's error, every evaluator's score or outcome with its reasoning; ``?show=`` keeps
the cases with a problem); ``/experiments/compare?baseline=A&candidate=B`` pairs two case by
case (``reporting.statistics``), with the cases whose score changed, worse first. A name the
store does not know is a 404 naming the closest one. What each page shows, and its template,
are ``experiments``' (``experiment_context``, ``comparison_context``): the same page is
written as one file by ``langchain-evals report`` and as an experiment's ``report.html``.

The console's experiment page also lists each run's annotations and, unless read-only, has a
form per run adding one (``POST /experiments/{name}/annotations``, the case and trial in the
form: case ids and experiment names may hold a ``/``); the report files have neither.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urlencode

from pydantic import ValidationError

from langchain_evals_port.experiments import (
    ExperimentInfo,
    ExperimentNotFoundError,
    ExperimentResult,
    ExperimentStore,
)
from langchain_evals_port.experiments._page import SHOW, comparison_context, experiment_context
from langchain_evals_port.storage import Annotation

from ._annotations import AnnotationForm, problem

__all__ = ["experiment_routes"]

Page = Callable[..., Any]
"""The console's page renderer: ``page(request, template, status=200, **context)``."""


def experiment_routes(store: ExperimentStore, page: Page, *, read_only: bool) -> list[Any]:
    """The experiment pages over ``store``, rendered by the console's ``page``; without
    ``read_only``, the annotation of a run too."""
    from starlette.routing import Route

    pages = _ExperimentPages(store, page, read_only)
    annotate = (
        []
        if read_only
        else [Route("/experiments/{name:path}/annotations", pages.annotate, methods=["POST"])]
    )
    return [
        Route("/experiments", pages.listing),
        # Before /experiments/{name}: "compare" is a page, not an experiment.
        Route("/experiments/compare", pages.compare),
        *annotate,
        Route("/experiments/{name:path}", pages.experiment),
    ]


class _ExperimentPages:
    """The page handlers; the store's reads run on a worker thread (its SQL blocks)."""

    def __init__(self, store: ExperimentStore, page: Page, read_only: bool) -> None:
        self.store = store
        self.page = page
        self.read_only = read_only

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
            annotations = await asyncio.to_thread(self.store.annotations, name)
        except ExperimentNotFoundError as error:
            return self.page(request, "missing.html", status=404, message=str(error))
        query = request.query_params
        return self.page(
            request,
            "experiment.html",
            **experiment_context(result, info, show=show),
            # The console's alone: the report files show no annotation and no form.
            case_annotations=_by_run(result, annotations),
            annotating=not self.read_only,
            annotation_keys=_annotation_keys(info, result),
            annotated=(
                {"key": query["annotated"], "case": query.get("case"), "trial": query.get("trial")}
                if query.get("annotated")
                else None
            ),
        )

    async def annotate(self, request: Any) -> Any:
        """Store a person's annotation of one run, then show the experiment again (303)."""
        from starlette.responses import RedirectResponse

        name = request.path_params["name"]
        posted = await request.form()
        try:
            info, result = await asyncio.to_thread(self._load, name)
        except ExperimentNotFoundError as error:
            return self.page(request, "missing.html", status=404, message=str(error))
        case_id = str(posted.get("case_id", ""))
        try:
            trial = _trial(str(posted.get("trial", "0")))
            if not any(run.case.id == case_id and run.trial == trial for run in result.runs):
                raise ValueError(
                    f"case_id: experiment {name!r} has no finished run of case {case_id!r}, "
                    f"trial {trial}"
                )
            form = AnnotationForm.read(posted)
            keys = _annotation_keys(info, result)
            if form.key not in keys:
                raise ValueError(f"key: expected one of {', '.join(keys)}, got {form.key!r}")
            await asyncio.to_thread(
                lambda: self.store.annotate(name, case_id, form.key, trial=trial, **form.values())
            )
        except ValidationError as error:
            return _bad_request(problem(error))
        except ValueError as error:
            return _bad_request(str(error))
        show = str(posted.get("show", "all"))
        query = {
            **({"show": show} if show in SHOW and show != "all" else {}),
            "annotated": form.key,
            "case": case_id,
            "trial": trial,
        }
        return RedirectResponse(
            f"/experiments/{quote(name)}?{urlencode(query)}#run-{quote(case_id)}-{trial}",
            status_code=303,
        )

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


def _annotation_keys(info: ExperimentInfo, result: ExperimentResult) -> list[str]:
    """The feedback keys a run may be annotated with: its evaluators' (and any other key
    their results carry)."""
    scored = (one.key for run in result.runs for one in run.results)
    return list(dict.fromkeys([*info.evaluators, *scored]))


def _by_run(
    result: ExperimentResult, annotations: list[Annotation]
) -> dict[tuple[str, int], list[Annotation]]:
    """``annotations`` by the run they annotate (its case id and trial)."""
    runs = {(run.case.id, run.trial) for run in result.runs}
    found: dict[tuple[str, int], list[Annotation]] = {}
    for annotation in annotations:
        if annotation.experiment != result.name or annotation.case_id is None:
            continue
        run = (annotation.case_id, annotation.trial or 0)
        if run in runs:
            found.setdefault(run, []).append(annotation)
    return found


def _trial(text: str) -> int:
    try:
        trial = int(text)
    except ValueError:
        raise ValueError(f"trial: expected a whole number, got {text!r}") from None
    if trial < 0:
        raise ValueError(f"trial: expected a whole number, got {text!r}")
    return trial


def _bad_request(message: str) -> Any:
    from starlette.responses import PlainTextResponse

    return PlainTextResponse(message, status_code=400)
