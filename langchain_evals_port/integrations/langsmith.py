"""Send evaluation results to LangSmith as feedback, without ever hanging the caller.

Two tracers (see ``langchain_evals_port.core._tracing.EvalTracer``):

* ``LangSmithTestFeedback`` logs every result with the public
  ``langsmith.testing.log_feedback`` while a ``@pytest.mark.langsmith`` test runs, and does
  nothing elsewhere.
* ``LangSmithFeedbackTracer`` attaches results to the *evaluated* run with
  ``Client.create_feedback``, from a background thread, in batches.

With its defaults the langsmith client retries an unreachable endpoint for minutes per
call. Every call made here is bounded instead: ``bounded_client`` builds a client with a
short timeout and few retries, feedback is sent with a small ``stop_after_attempt``, and
the exit flush waits at most ``flush_timeout`` seconds. A failure logs one warning and
drops the batch; it never raises into an evaluation.

Example::

    from langchain_evals_port.core import eval_scope
    from langchain_evals_port.integrations.langsmith import LangSmithFeedbackTracer

    tracer = LangSmithFeedbackTracer()
    with eval_scope(tracer):
        evaluator(outputs=..., reference_outputs=...)  # results carry metadata["run_id"]
    tracer.flush(timeout=5.0)
"""

from __future__ import annotations

import atexit
import logging
import queue
import threading
from contextlib import AbstractContextManager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import langsmith
from langsmith import run_helpers
from langsmith import utils as ls_utils
from langsmith.testing import _internal as ls_testing_internal
from langsmith.testing import log_feedback, trace_feedback
from urllib3.util.retry import Retry

from langchain_evals_port.core import EvalRequest, EvaluatorResult

__all__ = [
    "LangSmithFeedbackTracer",
    "LangSmithTestFeedback",
    "bounded_client",
    "langsmith_test_active",
]

logger = logging.getLogger(__name__)

_STATUS_RETRIED = (408, 425, 429, 500, 502, 503, 504)


def bounded_client(
    *,
    timeout_ms: int | tuple[int, int] = (2_000, 10_000),
    retries: int = 1,
    **kwargs: Any,
) -> langsmith.Client:
    """A ``langsmith.Client`` whose every HTTP call gives up within seconds.

    Args:
        timeout_ms: Per-request timeout in milliseconds, or ``(connect, read)``.
        retries: How many times urllib3 retries a failed connection or a retryable status
            (the langsmith default is 3, with its own longer retry loops on top).
        **kwargs: Passed on to ``langsmith.Client`` (``api_url``, ``api_key``, ...); the
            endpoint and key default to ``LANGSMITH_ENDPOINT`` / ``LANGSMITH_API_KEY``.
    """
    retry = Retry(
        total=retries,
        backoff_factor=0.1,
        status_forcelist=_STATUS_RETRIED,
        allowed_methods=None,
        raise_on_redirect=False,
        raise_on_status=False,
        respect_retry_after_header=False,
    )
    return langsmith.Client(timeout_ms=timeout_ms, retry_config=retry, **kwargs)


def langsmith_test_active() -> bool:
    """True inside a ``@pytest.mark.langsmith`` test case where ``log_feedback`` works.

    langsmith has no public predicate for this, so it reads the test-case context variable
    ``langsmith.testing._internal._TEST_CASE`` (the one ``log_feedback`` itself checks),
    together with the public ``get_current_run_tree`` and ``test_tracking_is_disabled``.
    """
    if ls_utils.test_tracking_is_disabled():
        return False
    test_case = getattr(ls_testing_internal, "_TEST_CASE", None)
    return (
        test_case is not None
        and test_case.get() is not None
        and run_helpers.get_current_run_tree() is not None
    )


class LangSmithTestFeedback:
    """Log each result as LangSmith test feedback while a ``langsmith`` test runs.

    Inside a ``@pytest.mark.langsmith`` test each evaluation runs inside
    ``langsmith.testing.trace_feedback`` (so its judge calls are traced as the feedback's run)
    and every result goes to
    ``langsmith.testing.log_feedback(key=..., score=..., comment=...)``; a non-verdict has
    score ``None`` and its outcome and reason in the comment. Outside such a test it does
    nothing. Errors from langsmith are logged, never raised.
    """

    def __init__(self) -> None:
        # The feedback run opened by on_start, per evaluation (an evaluation's events all
        # happen in one context, and concurrent evaluations each have their own).
        self._feedback_run: ContextVar[AbstractContextManager[Any] | None] = ContextVar(
            "langsmith_feedback_run", default=None
        )

    def on_start(self, evaluator: str, request: EvalRequest) -> None:
        """Open a LangSmith feedback run, so the judge calls of this evaluation are traced
        as the feedback's own run (``langsmith.testing.trace_feedback``)."""
        if not langsmith_test_active():
            return
        try:
            run = trace_feedback(name=evaluator)
            run.__enter__()
        except Exception:
            logger.warning("LangSmith trace_feedback failed for %r", evaluator, exc_info=True)
            return
        self._feedback_run.set(run)

    def on_result(self, evaluator: str, result: EvaluatorResult) -> None:
        """Log ``result`` as feedback on the current LangSmith test case, if any."""
        if not langsmith_test_active():
            return
        try:
            log_feedback(key=result.key, score=result.score, comment=result.feedback_comment)
        except Exception:
            logger.warning("LangSmith log_feedback failed for %r", result.key, exc_info=True)
        self._close()

    def on_error(self, evaluator: str, error: BaseException) -> None:
        """Close the feedback run; the error reaches LangSmith as the failed result that
        follows, if any."""
        self._close()

    def _close(self) -> None:
        run = self._feedback_run.get()
        if run is not None:
            self._feedback_run.set(None)
            run.__exit__(None, None, None)


@dataclass(frozen=True)
class _Feedback:
    run_id: str
    session_id: str | None
    key: str
    score: bool | float | None
    comment: str | None
    source_run_id: str | None


class LangSmithFeedbackTracer:
    """Attach results to the evaluated LangSmith run with ``Client.create_feedback``.

    Feedback belongs to the run that was *evaluated*, whose id the caller puts in
    ``result.metadata[run_id_key]``; results without it are skipped. LangSmith asks for the
    run's project (session) id with run feedback (``create_feedback(session_id=...)``; without
    it langsmith warns, and deployments that cannot find the run refuse it): it is
    ``result.metadata[session_id_key]`` when the caller knows it, otherwise the id of
    ``project_name``, the project LangChain traces the application's runs to, read once (and
    created if the project does not exist yet, as tracing would). ``result.source_run_id``
    (the evaluator's own run, if traced) is sent as the feedback's source run. Results are
    queued and a daemon thread sends them in batches of up to ``batch_size``; the tracer
    never blocks or raises into an evaluation. Each tracer registers an ``atexit`` flush (and
    so lives until exit): create one per application, not one per evaluation.

    Args:
        client: The client to send with; by default ``bounded_client()``. A client of your
            own should be bounded too (see ``bounded_client``).
        run_id_key: The metadata key holding the evaluated run's id.
        session_id_key: The metadata key holding that run's project (session) id.
        project_name: The project the evaluated runs are traced to (default: LangChain's,
            ``LANGSMITH_PROJECT`` or ``"default"``), for results without a project id.
        batch_size: The most feedback sent per batch.
        flush_timeout: How long the ``atexit`` flush waits, in seconds.
        stop_after_attempt: Attempts per ``create_feedback`` call (langsmith's default is 10).
    """

    def __init__(
        self,
        client: langsmith.Client | None = None,
        *,
        run_id_key: str = "run_id",
        session_id_key: str = "session_id",
        project_name: str | None = None,
        batch_size: int = 20,
        flush_timeout: float = 5.0,
        stop_after_attempt: int = 2,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self._client = client if client is not None else bounded_client()
        self._run_id_key = run_id_key
        self._session_id_key = session_id_key
        self._project_name = project_name
        self._project_id: str | None = None  # read by the sending thread, once
        self._batch_size = batch_size
        self._flush_timeout = flush_timeout
        self._attempts = stop_after_attempt
        self._queue: queue.SimpleQueue[_Feedback] = queue.SimpleQueue()
        self._pending = 0
        self._idle = threading.Condition()
        self._warned = False
        self._worker: threading.Thread | None = None
        atexit.register(self._flush_at_exit)

    def on_start(self, evaluator: str, request: EvalRequest) -> None:
        """Nothing to send when an evaluation starts."""

    def on_result(self, evaluator: str, result: EvaluatorResult) -> None:
        """Queue ``result`` as feedback on its evaluated run; skip it without a run id."""
        run_id = result.metadata.get(self._run_id_key)
        if run_id is None:
            return
        session_id = result.metadata.get(self._session_id_key)
        feedback = _Feedback(
            run_id=str(run_id),
            session_id=None if session_id is None else str(session_id),
            key=result.key,
            score=result.score,
            comment=result.feedback_comment,
            source_run_id=result.source_run_id,
        )
        with self._idle:
            self._pending += 1
            if self._worker is None:
                self._worker = threading.Thread(
                    target=self._work, name="langsmith-feedback", daemon=True
                )
                self._worker.start()
        self._queue.put(feedback)

    def on_error(self, evaluator: str, error: BaseException) -> None:
        """Errors reach LangSmith as the failed result that follows, if any."""

    def flush(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds for queued feedback; True when all was handled.

        "Handled" includes batches dropped after a send failure.
        """
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def _flush_at_exit(self) -> None:
        if not self.flush(self._flush_timeout):
            logger.warning(
                "LangSmith feedback not sent within %.1fs at exit; dropping it",
                self._flush_timeout,
            )

    def _work(self) -> None:
        while True:
            batch = [self._queue.get()]
            while len(batch) < self._batch_size:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            self._send(batch)
            with self._idle:
                self._pending -= len(batch)
                self._idle.notify_all()

    def _project(self) -> str:
        """The id of the project the evaluated runs are traced to (read, or created as
        tracing would create it), asked of LangSmith once."""
        if self._project_id is None:
            name = self._project_name or ls_utils.get_tracer_project() or "default"
            try:
                project = self._client.read_project(project_name=name)
            except ls_utils.LangSmithNotFoundError:
                try:
                    project = self._client.create_project(name)
                except ls_utils.LangSmithConflictError:  # the app's first run created it
                    project = self._client.read_project(project_name=name)
            self._project_id = str(project.id)
        return self._project_id

    def _send(self, batch: list[_Feedback]) -> None:
        failures: list[Exception] = []
        for feedback in batch:
            try:
                session_id = feedback.session_id or self._project()
                self._client.create_feedback(
                    feedback.run_id,
                    feedback.key,
                    score=feedback.score,
                    comment=feedback.comment,
                    source_run_id=feedback.source_run_id,
                    session_id=session_id,
                    feedback_source_type="model",
                    stop_after_attempt=self._attempts,
                )
            except Exception as error:
                failures.append(error)
        if failures:
            self._warn(
                f"dropped {len(failures)} of {len(batch)} feedback item(s); the first failure: "
                f"{failures[0]!r}"
            )

    def _warn(self, message: str) -> None:
        if not self._warned:
            self._warned = True
            logger.warning("LangSmith feedback: %s", message)
        else:
            logger.debug("LangSmith feedback: %s", message)
