"""``upload_to_langsmith``: an experiment's runs and results as a LangSmith experiment.

Only langsmith's public ``Client`` is used: ``create_project`` for the experiment,
``batch_ingest_runs`` for its runs, ``create_feedback`` for every result and
``update_project`` to mark it finished. The upload runs in a worker thread watched by the
caller, so an endpoint that refuses connections, or accepts them and never answers, fails the
call within about ``timeout`` seconds, whatever the client's own retries would do.
"""

from __future__ import annotations

import datetime
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import langsmith
from langsmith.schemas import TracerSession
from langsmith.utils import LangSmithConflictError, LangSmithNotFoundError

from langchain_evals_port.core import EvaluatorResult
from langchain_evals_port.core.errors import EvalsError, EvaluatorUsageError
from langchain_evals_port.integrations.langsmith import bounded_client

from ._result import CaseResult, ExperimentResult

__all__ = ["LangSmithUploadError", "upload_to_langsmith"]

_T = TypeVar("_T")

# Runs per batch-ingest request: large enough to be quick, small enough that each request
# (and so each sign of progress the watchdog waits for) stays short.
_RUNS_PER_BATCH = 100


class LangSmithUploadError(EvalsError):
    """An experiment could not be uploaded to LangSmith: the endpoint could not be reached or
    did not answer within the timeout, it refused a request, or the cases are not examples
    of the dataset named. The message says which step failed, where and why."""


def upload_to_langsmith(
    result: ExperimentResult,
    *,
    client: langsmith.Client | None = None,
    dataset_name: str | None = None,
    timeout: float = 30.0,
) -> str:
    """Upload an experiment to LangSmith: one project, one run per case run, feedback for
    every result. Returns the experiment's URL in LangSmith (its id when the client knows no
    web address).

    * The experiment is a LangSmith project (tracing session) named ``result.name``; when a
      project of that name exists, a short random suffix is added, as ``langsmith.evaluate``
      does with its experiment prefix.
    * It is linked to its reference dataset when the cases are examples of a LangSmith
      dataset (``Dataset.from_langsmith`` keeps the example ids as case ids): the dataset
      named by ``dataset_name``, or else the one the first case's example belongs to (one
      ``read_example`` request, made only when every case id is a UUID). Cases that are not
      LangSmith examples are uploaded without a dataset link, as a plain project.
    * Each case run becomes a root run named after the target, with the case's inputs, the
      target's outputs (a value that is not a dict is wrapped as ``{"input": ...}`` /
      ``{"output": ...}``), the error when the target raised (``"ValueError: message"``),
      the start and end times of the run, the example as ``reference_example_id`` when
      linked, and ``case_id`` and ``trial`` in its metadata.
    * Every result becomes feedback on its run with its key, score and comment. A result
      that is not a verdict is sent too, so the run shows that it was not judged and why:
      no score, the comment starting with the outcome and reason (``"[inconclusive] no
      answer"``, ``"[failed: timeout] judge timed out"``; see
      ``EvaluatorResult.feedback_comment``) and both in the feedback's ``extra``; a failed
      result is also flagged ``error``, as ``langsmith.evaluate`` flags an evaluator that
      raised. LangSmith's averages leave out feedback without a score, as ours leave out
      what is not a verdict.

    Args:
        result: What ``run_experiment`` returned.
        client: The client to upload with. By default one configured from the environment
            (``LANGSMITH_ENDPOINT``, ``LANGSMITH_API_KEY``) whose every request gives up
            after ``timeout`` seconds, without retries.
        dataset_name: The LangSmith dataset the cases came from, to link the experiment to
            it (by default found from the cases' ids, see above).
        timeout: Seconds LangSmith may take to answer; when the upload makes no progress
            for that long the call fails (a larger experiment may take longer in all, as
            long as LangSmith keeps answering). A request left running in the background
            by a client of your own stops the upload as soon as it returns.

    Raises:
        LangSmithUploadError: LangSmith could not be reached, did not answer within
            ``timeout`` seconds or refused a request, or the cases are not examples of
            ``dataset_name``. Whatever was created before the failure stays in LangSmith.

    Example::

        from langchain_evals_port.experiments import Dataset, run_experiment
        from langchain_evals_port.experiments import upload_to_langsmith

        dataset = Dataset.from_langsmith("capitals")
        result = run_experiment(app, dataset, [ExactMatch()], name="capitals-gpt")
        print(upload_to_langsmith(result))  # https://smith.langchain.com/o/.../projects/p/...
    """
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise EvaluatorUsageError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if not isinstance(result, ExperimentResult):
        raise EvaluatorUsageError(
            f"expected the ExperimentResult run_experiment returns, got {type(result).__name__}"
        )
    if client is None:
        milliseconds = max(1, round(timeout * 1000))
        client = bounded_client(timeout_ms=milliseconds, retries=0, auto_batch_tracing=False)
    upload = _Upload(result, client, dataset_name)
    return _watched(upload.run, timeout=timeout, where=client.api_url)


class _IngestFailed(Exception):
    """A batch of runs the client reported as not ingested."""


class _Progress:
    """What the upload is doing and when it last made progress; the watchdog reads it, and
    cancels the upload when it stalls."""

    def __init__(self) -> None:
        self.doing = "starting"
        self.since = time.monotonic()
        self.cancelled = threading.Event()

    def step(self, doing: str) -> None:
        """Mark progress and start the next step (or stop, if the caller gave up)."""
        if self.cancelled.is_set():
            raise LangSmithUploadError("the upload was abandoned")
        self.doing = doing
        self.since = time.monotonic()


def _watched(work: Callable[[_Progress], _T], *, timeout: float, where: str) -> _T:
    """``work`` run in a worker thread; raises once it makes no progress for ``timeout``."""
    progress = _Progress()
    done = threading.Event()
    outcome: list[_T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(work(progress))
        except BaseException as error:
            failure.append(error)
        finally:
            done.set()

    # A daemon: an upload the caller gave up on must not keep the interpreter from exiting.
    threading.Thread(target=run, name="langsmith-upload", daemon=True).start()
    while not done.wait(max(0.0, progress.since + timeout - time.monotonic())):
        if time.monotonic() - progress.since >= timeout:
            progress.cancelled.set()
            raise LangSmithUploadError(
                f"LangSmith at {where} did not answer within {timeout:g}s while {progress.doing}"
            )
    if failure:
        error = failure[0]
        if isinstance(error, LangSmithUploadError):
            raise error
        first_line = (str(error).splitlines() or [type(error).__name__])[0]
        raise LangSmithUploadError(
            f"LangSmith at {where} failed while {progress.doing}: {first_line}"
        ) from error
    return outcome[0]


class _Upload:
    """The requests of one upload, in order."""

    def __init__(
        self, result: ExperimentResult, client: langsmith.Client, dataset_name: str | None
    ) -> None:
        self.result = result
        self.client = client
        self.dataset_name = dataset_name

    def run(self, progress: _Progress) -> str:
        progress.step("finding the reference dataset")
        dataset_id = self._reference_dataset()
        progress.step(f"creating the experiment {self.result.name!r}")
        project = self._create_project(dataset_id)
        runs = [(uuid.uuid4(), case_run) for case_run in self.result.runs]
        for start in range(0, len(runs), _RUNS_PER_BATCH):
            batch = runs[start : start + _RUNS_PER_BATCH]
            progress.step(f"uploading runs {start + 1}-{start + len(batch)} of {len(runs)}")
            bodies = [
                _run_body(run_id, case_run, project.id, linked=dataset_id is not None)
                for run_id, case_run in batch
            ]
            with _ingest_failures() as failures:
                self.client.batch_ingest_runs(create=bodies)
            if failures:
                raise _IngestFailed(failures[0])
        for run_id, case_run in runs:
            for evaluator_result in case_run.results:
                progress.step(f"sending feedback {evaluator_result.key!r}")
                self._send_feedback(run_id, evaluator_result, project.id)
        progress.step("marking the experiment finished")
        ended = [case_run.run.interaction.ended_at for case_run in self.result.runs]
        self.client.update_project(project.id, end_time=max(ended, default=_now()))
        return project.url or str(project.id)

    def _reference_dataset(self) -> uuid.UUID | None:
        """The id of the LangSmith dataset the cases are examples of, if any."""
        ids = [_uuid(case_run.case.id) for case_run in self.result.runs]
        example_ids = [i for i in ids if i is not None]
        linkable = bool(example_ids) and len(example_ids) == len(ids)
        found: uuid.UUID | None = None
        if linkable:
            try:
                found = self.client.read_example(example_ids[0]).dataset_id
            except LangSmithNotFoundError:
                found = None
        if self.dataset_name is None:
            return found
        try:
            dataset = self.client.read_dataset(dataset_name=self.dataset_name)
        except LangSmithNotFoundError:
            raise LangSmithUploadError(
                f"LangSmith has no dataset named {self.dataset_name!r}"
            ) from None
        if ids and found != dataset.id:
            raise LangSmithUploadError(
                f"the cases are not examples of the LangSmith dataset {self.dataset_name!r} "
                f"(the first case's id is {self.result.runs[0].case.id!r}); leave out "
                "dataset_name to upload the experiment without a dataset link"
            )
        dataset_id: uuid.UUID = dataset.id
        return dataset_id

    def _create_project(self, dataset_id: uuid.UUID | None) -> TracerSession:
        trials = max((case_run.trial for case_run in self.result.runs), default=0) + 1
        metadata = {"trials": trials, "uploaded_by": "langchain-evals-port"}
        name = self.result.name
        try:
            return self.client.create_project(
                name, reference_dataset_id=dataset_id, metadata=metadata
            )
        except LangSmithConflictError:
            return self.client.create_project(
                f"{name}-{uuid.uuid4().hex[:8]}", reference_dataset_id=dataset_id, metadata=metadata
            )

    def _send_feedback(
        self, run_id: uuid.UUID, result: EvaluatorResult, project_id: uuid.UUID
    ) -> None:
        extra = result.to_dict()["metadata"]
        self.client.create_feedback(
            run_id,
            result.key,
            score=result.score,
            comment=result.feedback_comment,
            source_run_id=result.source_run_id,
            feedback_source_type="model",
            session_id=project_id,
            extra=extra,
            error=True if result.outcome == "failed" else None,
            stop_after_attempt=1,
        )


def _run_body(
    run_id: uuid.UUID, case_run: CaseResult, project_id: uuid.UUID, *, linked: bool
) -> dict[str, Any]:
    """The run LangSmith records for one case run: a root run of its own trace."""
    interaction = case_run.run.interaction
    started, ended = _utc(interaction.started_at), _utc(interaction.ended_at)
    failure = interaction.failure
    error = None
    if case_run.run.failed:
        error = f"{failure.reason}: {failure.summary}" if failure else "the target raised"
    return {
        "id": str(run_id),
        "trace_id": str(run_id),
        "dotted_order": f"{started:%Y%m%dT%H%M%S%fZ}{run_id}",
        "name": interaction.agent_id,
        "run_type": "chain",
        "inputs": _as_dict(case_run.case.inputs, "input"),
        "outputs": None if error is not None else _as_dict(case_run.run.outputs, "output"),
        "error": error,
        "start_time": started,
        "end_time": ended,
        "session_id": str(project_id),
        "reference_example_id": case_run.case.id if linked else None,
        "extra": {"metadata": {"case_id": case_run.case.id, "trial": case_run.trial}},
    }


@contextmanager
def _ingest_failures() -> Iterator[list[str]]:
    """The failures ``batch_ingest_runs`` reports while the block runs in this thread.

    The client logs a failed batch as a warning and returns; its logger is the only public
    place that says so, for any client (``tracing_error_callback`` is set at construction).
    """
    found: list[str] = []
    thread = threading.get_ident()

    class Handler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            message = record.getMessage()
            if record.thread == thread and message.startswith("Failed to batch ingest"):
                found.append(message.splitlines()[0])

    handler = Handler(logging.WARNING)
    logger = logging.getLogger("langsmith.client")
    logger.addHandler(handler)
    try:
        yield found
    finally:
        logger.removeHandler(handler)


def _as_dict(value: Any, key: str) -> dict[str, Any]:
    """``value`` as LangSmith wants inputs and outputs: a dict, or one wrapped in one."""
    return value if isinstance(value, dict) else {key: value}


def _uuid(text: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(text)
    except ValueError:
        return None


def _utc(moment: datetime.datetime) -> datetime.datetime:
    if moment.tzinfo is None:
        return moment.replace(tzinfo=datetime.timezone.utc)
    return moment.astimezone(datetime.timezone.utc)


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)
