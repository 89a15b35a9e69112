"""``create_app``: the console as a Starlette application, rendered on the server.

Pages are Jinja2 templates (``templates/``) with autoescaping on, so every transcript, judge
reasoning and payload is shown as text. Charts are Plotly's, its JavaScript served from the
installed ``plotly`` package: nothing is fetched from elsewhere, and the page works offline.

Security: the console answers only the hosts it is served on (``LOCAL_HOSTS`` and the
``allowed_hosts`` given; Starlette's ``TrustedHostMiddleware``), so a page of another site
whose name resolves to 127.0.0.1 (DNS rebinding) reads nothing. With a ``token`` every request
must carry it (``Authorization: Bearer``, the ``langchain_evals_token`` cookie, or once as
``?token=``, which sets the cookie) or gets 401. Every change of state (resuming a waiting
evaluation, retrying a failed one, annotating an interaction or an experiment's run) is a POST
that must come from the console's own pages (its ``Origin`` is the console's, its
``Sec-Fetch-Site`` ``same-origin``, when the browser sends them) and whose form carries the
CSRF token of the ``langchain_evals_csrf`` cookie: a random token signed with a key this
process made, so a token written by a page on another port of the same machine (cookies do not
tell ports apart) is refused. A request body over ``MAX_BODY`` is refused (413) before more of
it is read; ``read_only`` removes the actions.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, get_args
from urllib.parse import quote, urlsplit

from langchain_evals_port.core import Outcome
from langchain_evals_port.reporting._charts import Chart, chart_layout
from langchain_evals_port.reporting._pages import STYLE_SHEET, moment, plotly_path
from langchain_evals_port.reporting.statistics import Interval, wilson_interval
from langchain_evals_port.storage import (
    ConsoleQueries,
    InteractionNotFoundError,
    OverviewBucket,
    OverviewSeries,
    SqlLedger,
)

from ._annotations import AnnotationForm, problem
from ._experiments import experiment_routes
from ._templates import template_environment

if TYPE_CHECKING:
    from langchain_evals_port.experiments import ExperimentStore

__all__ = ["LOCAL_HOSTS", "MAX_BODY", "create_app"]

TOKEN_COOKIE = "langchain_evals_token"
CSRF_COOKIE = "langchain_evals_csrf"
LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]")
"""The hosts the console always answers (as a ``Host`` header names them)."""
MAX_BODY = 1024 * 1024
"""The largest request body the console reads, in bytes (1 MiB): a longer one is a 413."""
OUTCOMES: tuple[str, ...] = get_args(Outcome)
RANGES = {"1h": 3600, "24h": 86400, "7d": 7 * 86400, "30d": 30 * 86400, "365d": 365 * 86400}


def create_app(
    ledger: SqlLedger,
    store: ExperimentStore | None = None,
    *,
    token: str | None = None,
    read_only: bool = False,
    allowed_hosts: Sequence[str] = (),
) -> Any:
    """The console over ``ledger`` (and, when given, an ``ExperimentStore``).

    Args:
        ledger: A ``SqliteLedger`` or ``PostgresLedger`` (``open_storage(url)``); the pages
            read it through ``ConsoleQueries``.
        store: The ``ExperimentStore`` whose experiments the console shows, or ``None``.
        token: A secret every request must carry (required when serving beyond 127.0.0.1).
        read_only: Leave out the actions that change state (resume, retry, annotate).
        allowed_hosts: Host names it answers besides ``LOCAL_HOSTS`` (the address it is
            served on, a name it is reached by); a request naming any other host is a 400.

    Returns:
        A Starlette application (serve it with uvicorn, or ``langchain-evals console``).
        Its lifespan warms it up before it serves (the first page is not slower than the
        others).

    Raises:
        TypeError: ``ledger`` is not a SQL ledger (an ``InMemoryLedger`` has no tables for
            the console's queries).
    """
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware
    from starlette.routing import Route
    from starlette.templating import Jinja2Templates

    queries = ConsoleQueries(ledger)
    templates = Jinja2Templates(env=template_environment())
    console = _Console(queries, store, templates, read_only)
    routes = [
        Route("/", console.overview),
        Route("/interactions", console.interactions),
        Route("/interactions/{interaction_id:path}", console.interaction),
        Route("/waiting", console.waiting),
        Route("/failed", console.failed),
        Route("/static/plotly.min.js", _plotly),
        Route("/static/report.css", _style_sheet),
    ]
    if store is not None:
        routes += experiment_routes(store, console.page, read_only=read_only)
    if not read_only:
        routes += [
            Route("/waiting/{evaluation_id:path}/resume", console.resume, methods=["POST"]),
            Route("/failed/{evaluation_id:path}/retry", console.retry, methods=["POST"]),
            Route(
                "/interactions/{interaction_id:path}/annotations",
                console.annotate,
                methods=["POST"],
            ),
        ]
    middleware = [
        Middleware(
            TrustedHostMiddleware,
            allowed_hosts=[*LOCAL_HOSTS, *allowed_hosts],
            www_redirect=False,
        ),
        Middleware(_Guard, token=token, key=secrets.token_bytes(32)),
    ]

    @contextlib.asynccontextmanager
    async def warmed(app: Any) -> AsyncIterator[None]:
        await _off_loop(console.warm)
        yield

    return Starlette(routes=routes, middleware=middleware, lifespan=warmed)


class _Console:
    """The page handlers."""

    def __init__(
        self, queries: ConsoleQueries, store: Any, templates: Any, read_only: bool
    ) -> None:
        self.queries = queries
        self.store = store
        self.templates = templates
        self.read_only = read_only

    def warm(self) -> None:
        """Do once what the first page would otherwise do slowly: compile every template,
        load the statistics' quantiles (SciPy's, seconds on a loaded machine) and read the
        overview, waiting reviews and experiments once."""
        for name in self.templates.env.list_templates(extensions=["html"]):
            self.templates.env.get_template(name)
        wilson_interval(1, 2)
        until = time.time()
        self.queries.overview(until - RANGES["7d"], until)
        self.queries.waiting()
        if self.store is not None:
            self.store.experiments()

    def page(self, request: Any, template: str, /, status: int = 200, **context: Any) -> Any:
        """``template`` rendered with ``context`` and what every page shows."""
        return self.templates.TemplateResponse(
            request,
            template,
            {
                "read_only": self.read_only,
                "experiments": self.store is not None,
                "csrf_token": request.state.csrf_token,
                **context,
            },
            status_code=status,
        )

    async def overview(self, request: Any) -> Any:
        chosen = request.query_params.get("range", "7d")
        if chosen not in RANGES:
            return _bad_request(f"range: expected one of {', '.join(RANGES)}, got {chosen!r}")
        span = RANGES[chosen]
        until = time.time()
        series = await _off_loop(self.queries.overview, until - span, until)
        failures = await _off_loop(self.queries.latest_failures)
        return self.page(
            request,
            "overview.html",
            series=series,
            intervals=[_interval(one.total) for one in series],
            charts=[_chart(one, until - span, until) for one in series],
            failures=failures,
            ranges=list(RANGES),
            selected=chosen,
        )

    async def interactions(self, request: Any) -> Any:
        query = request.query_params
        outcome = query.get("outcome") or None
        if outcome is not None and outcome not in OUTCOMES:
            return _bad_request(f"outcome: expected one of {', '.join(OUTCOMES)}, got {outcome!r}")
        try:
            since = _epoch(query.get("since"))
            until = _epoch(query.get("until"))
            rows, next_cursor = await _off_loop(
                lambda: self.queries.interactions(
                    agent_id=query.get("agent") or None,
                    evaluator_id=query.get("evaluator") or None,
                    outcome=outcome,
                    since=since,
                    until=until,
                    text=query.get("text") or None,
                    cursor=query.get("cursor") or None,
                )
            )
        except ValueError as error:
            return _bad_request(str(error))
        agents, evaluators = await _off_loop(self.queries.agents_and_evaluators)
        filters = {
            k: query.get(k, "") for k in ("agent", "evaluator", "outcome", "since", "until", "text")
        }
        return self.page(
            request,
            "interactions.html",
            rows=rows,
            next_cursor=next_cursor,
            filters=filters,
            agents=agents,
            evaluators=evaluators,
            outcomes=OUTCOMES,
            text_window=f"{self.queries.text_window:,}",
        )

    async def interaction(self, request: Any) -> Any:
        try:
            record, evaluations = await _off_loop(
                self.queries.interaction, request.path_params["interaction_id"]
            )
        except InteractionNotFoundError as error:
            return self.page(request, "missing.html", status=404, message=str(error))
        annotations = await _off_loop(self.queries.annotations, record.interaction_id)
        waiting = await _off_loop(self.queries.waiting, record.interaction_id)
        return self.page(
            request,
            "interaction.html",
            record=record,
            evaluations=evaluations,
            waiting=waiting,
            annotations=annotations,
            annotated=request.query_params.get("annotated"),
        )

    async def annotate(self, request: Any) -> Any:
        from pydantic import ValidationError
        from starlette.responses import RedirectResponse

        interaction_id = request.path_params["interaction_id"]
        try:
            form = AnnotationForm.read(await request.form())
            await _off_loop(
                lambda: self.queries.annotate(interaction_id, form.key, **form.values())
            )
        except InteractionNotFoundError as error:
            return self.page(request, "missing.html", status=404, message=str(error))
        except ValidationError as error:
            return _bad_request(problem(error))
        except ValueError as error:
            return _bad_request(str(error))
        return RedirectResponse(
            f"/interactions/{quote(interaction_id)}?annotated={quote(form.key)}#annotations",
            status_code=303,
        )

    async def waiting(self, request: Any) -> Any:
        units = await _off_loop(self.queries.waiting)
        done = request.query_params.get("done")
        state = None if done is None else await _off_loop(self.queries.work_state, done)
        return self.page(request, "waiting.html", units=units, done=done, state=state)

    async def resume(self, request: Any) -> Any:
        from starlette.responses import RedirectResponse

        form = await request.form()
        answer = str(form.get("answer", ""))
        try:
            value: Any = json.loads(answer)
        except ValueError:
            value = answer  # a plain-text answer
        evaluation_id = request.path_params["evaluation_id"]
        resumed = await _off_loop(self.queries.resume, evaluation_id, value)
        if not resumed:
            return _bad_request(f"evaluation {evaluation_id!r} is not waiting for a person")
        return RedirectResponse(f"/waiting?done={evaluation_id}", status_code=303)

    async def failed(self, request: Any) -> Any:
        try:
            records, next_cursor = await _off_loop(
                lambda: self.queries.failed(cursor=request.query_params.get("cursor") or None)
            )
        except ValueError as error:
            return _bad_request(str(error))
        return self.page(
            request,
            "failed.html",
            records=records,
            next_cursor=next_cursor,
            queued=request.query_params.get("queued"),
            already=request.query_params.get("already"),
        )

    async def retry(self, request: Any) -> Any:
        from starlette.responses import RedirectResponse

        evaluation_id = request.path_params["evaluation_id"]
        retried = await _off_loop(self.queries.retry, evaluation_id)
        if retried is None:
            return _bad_request(f"evaluation {evaluation_id!r} is not a failed evaluation")
        retry_id, queued = retried
        outcome = "queued" if queued else "already"
        return RedirectResponse(f"/failed?{outcome}={quote(retry_id)}", status_code=303)


class _Guard:
    """ASGI middleware: the access token (when configured), where a POST comes from, the
    size of its body and its CSRF token (signed with ``key``)."""

    def __init__(self, app: Any, token: str | None, key: bytes) -> None:
        self.app = app
        self.token = token
        self.key = key

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from starlette.exceptions import HTTPException
        from starlette.requests import Request
        from starlette.responses import PlainTextResponse, RedirectResponse

        request = Request(scope, receive)
        cookies: list[tuple[str, str]] = []
        if self.token is not None:
            given = request.query_params.get("token")
            if given is not None and _same(given, self.token):
                # Once in the address: kept in a cookie, and the address cleaned of it.
                response: Any = RedirectResponse(request.url.remove_query_params("token"), 303)
                response.set_cookie(TOKEN_COOKIE, self.token, httponly=True, samesite="strict")
                await response(scope, receive, send)
                return
            if not self._authorized(request):
                await PlainTextResponse("a token is required", status_code=401)(
                    scope, receive, send
                )
                return
        csrf = request.cookies.get(CSRF_COOKIE, "")
        if not self._signed(csrf):
            csrf = self._new_csrf()
            cookies.append((CSRF_COOKIE, csrf))
        if request.method == "POST":
            body, refused = b"", _elsewhere(request)
            if refused is None:
                body, refused = await _read_body(request, receive)
            if refused is not None:
                await refused(scope, receive, send)
                return
            # Read from the body read: the page is handed the same body.
            receive = _replay(body)
            try:
                form = await Request(scope, receive).form()
            except HTTPException as error:  # a malformed multipart body
                await PlainTextResponse(error.detail, error.status_code)(scope, receive, send)
                return
            sent = str(form.get("csrf_token", ""))
            if not (sent and _same(sent, csrf) and self._signed(sent)):
                await PlainTextResponse("the form's CSRF token is missing or wrong", 403)(
                    scope, receive, send
                )
                return
        scope.setdefault("state", {})["csrf_token"] = csrf

        async def send_with_cookies(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and cookies:
                headers = list(message.get("headers", []))
                for name, value in cookies:
                    headers.append(
                        (
                            b"set-cookie",
                            f"{name}={value}; Path=/; SameSite=Strict; HttpOnly".encode(),
                        )
                    )
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_cookies)

    def _authorized(self, request: Any) -> bool:
        assert self.token is not None
        header = request.headers.get("authorization", "")
        bearer = header[len("Bearer ") :] if header.startswith("Bearer ") else ""
        cookie = request.cookies.get(TOKEN_COOKIE, "")
        return any(_same(given, self.token) for given in (bearer, cookie) if given)

    def _new_csrf(self) -> str:
        nonce = secrets.token_urlsafe(24)
        return f"{nonce}.{self._signature(nonce)}"

    def _signed(self, csrf: str) -> bool:
        """Whether ``csrf`` is a token this console made (its signature is this key's)."""
        nonce, _, signature = csrf.rpartition(".")
        return bool(nonce) and _same(signature, self._signature(nonce))

    def _signature(self, nonce: str) -> str:
        return hmac.new(self.key, nonce.encode(), hashlib.sha256).hexdigest()


def _same(given: str, expected: str) -> bool:
    """Whether two secrets are equal, compared in constant time (as UTF-8: a header or cookie
    may hold any character)."""
    return hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode("utf-8"))


def _elsewhere(request: Any) -> Any:
    """A 403 for a POST a browser says comes from another site (its ``Origin`` is not the
    console's, or its ``Sec-Fetch-Site`` is not ``same-origin``); ``None`` otherwise (a client
    that sends neither, ``curl`` say, is left to the CSRF token)."""
    from starlette.responses import PlainTextResponse

    origin = request.headers.get("origin")
    fetched_from = request.headers.get("sec-fetch-site")
    host = request.headers.get("host", "").lower()
    if origin is not None and (origin == "null" or urlsplit(origin).netloc.lower() != host):
        source = f"origin {origin}"
    elif fetched_from is not None and fetched_from not in ("same-origin", "none"):
        source = f"Sec-Fetch-Site: {fetched_from}"
    else:
        return None
    return PlainTextResponse(
        f"refused: a form posted from another site ({source}), not from the console's pages",
        status_code=403,
    )


async def _read_body(request: Any, receive: Any) -> tuple[bytes, Any]:
    """The request's body and ``None``, or what was read and a 413 as soon as it is longer
    than ``MAX_BODY`` (from its ``Content-Length``, before any of it is read)."""
    from starlette.responses import PlainTextResponse

    too_long = PlainTextResponse(
        f"the request's body is too long: at most 1 MiB ({MAX_BODY:,} bytes)", status_code=413
    )
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > MAX_BODY:
        return b"", too_long
    chunks: list[bytes] = []
    read = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        read += len(chunk)
        if read > MAX_BODY:
            return b"", too_long
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks), None


def _replay(body: bytes) -> Callable[[], Awaitable[dict[str, Any]]]:
    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


async def _plotly(request: Any) -> Any:
    """Plotly's JavaScript, from the installed ``plotly`` package (the console extra)."""
    from starlette.responses import FileResponse, PlainTextResponse

    path = plotly_path()
    if path is None:
        return PlainTextResponse("plotly is not installed", status_code=404)
    return FileResponse(
        path, media_type="text/javascript", headers={"Cache-Control": "max-age=86400"}
    )


async def _style_sheet(request: Any) -> Any:
    """The style sheet every page shares (``reporting``'s)."""
    from starlette.responses import FileResponse

    return FileResponse(
        STYLE_SHEET, media_type="text/css", headers={"Cache-Control": "max-age=3600"}
    )


async def _off_loop(call: Callable[..., Any], *args: Any) -> Any:
    """A ledger query, on a worker thread (its SQL blocks)."""
    return await asyncio.to_thread(call, *args)


def _bad_request(message: str) -> Any:
    from starlette.responses import PlainTextResponse

    return PlainTextResponse(message, status_code=400)


def _epoch(text: str | None) -> float | None:
    """An ISO date or date-time (UTC when it names no zone) as epoch seconds."""
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"expected an ISO date such as 2026-12-01 or 2026-12-01T09:30, got {text!r}"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.timestamp()


def _interval(bucket: OverviewBucket) -> Interval | None:
    """The 95 % Wilson interval of a bucket's pass rate; ``None`` without a verdict."""
    return wilson_interval(bucket.passed, bucket.verdicts) if bucket.verdicts else None


def _chart(series: OverviewSeries, since: float, until: float) -> Chart:
    """A Plotly figure of one agent and evaluator over ``[since, until)``: the pass rate per
    bucket with its Wilson band (and error bars, which a lone bucket's band cannot show),
    and the mean score."""
    times = [moment(b.start) for b in series.buckets]
    rates = [b.pass_rate for b in series.buckets]
    intervals = [_interval(b) for b in series.buckets]
    lows = [None if i is None else i.low for i in intervals]
    highs = [None if i is None else i.high for i in intervals]
    above = [None if r is None or h is None else h - r for r, h in zip(rates, highs, strict=True)]
    below = [None if r is None or lo is None else r - lo for r, lo in zip(rates, lows, strict=True)]
    title = f"{series.agent_id} · {series.evaluator_id}"
    layout = chart_layout(title, "pass rate / score")
    layout["yaxis"]["range"] = [0, 1]
    # The whole range asked for: a lone bucket would otherwise span a millisecond.
    layout["xaxis"].update(title={"text": "time (UTC)"}, range=[moment(since), moment(until)])
    return Chart(
        id=f"chart-{series.agent_id}-{series.evaluator_id}",
        title=title,
        data=[
            {
                "x": times,
                "y": highs,
                "mode": "lines",
                "line": {"width": 0},
                "showlegend": False,
                "hoverinfo": "skip",
            },
            {
                "x": times,
                "y": lows,
                "mode": "lines",
                "line": {"width": 0},
                "fill": "tonexty",
                "fillcolor": "rgba(31,119,180,0.2)",
                "name": "95 % interval",
                "hoverinfo": "skip",
            },
            {
                "x": times,
                "y": rates,
                "mode": "lines+markers",
                "name": "pass rate",
                "error_y": {
                    "type": "data",
                    "symmetric": False,
                    "array": above,
                    "arrayminus": below,
                    "thickness": 1,
                    "width": 4,
                },
            },
            {
                "x": times,
                "y": [b.score_mean for b in series.buckets],
                "mode": "lines+markers",
                "name": "mean score",
                "line": {"dash": "dot"},
            },
        ],
        layout=layout,
    )
