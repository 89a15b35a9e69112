"""The exceptions this package raises.

Three kinds matter to a caller:

* ``EvaluatorInputError`` — the caller passed something wrong (a missing field, a value
  that cannot be compared, a malformed tool call). Always raised at the call, never recorded.
* ``EvaluatorUsageError`` — the evaluator was called or written wrongly (a misspelt keyword,
  a scoring function that returned no score). Always raised, never recorded.
* ``EvaluationFailure`` — the evaluator's own machinery failed (judge, sandbox, tool). With
  ``on_error="record"`` it becomes an ``EvaluatorResult`` whose outcome is ``failed`` and
  whose ``error_code`` is the exception's ``code``; with ``on_error="raise"`` it propagates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from pydantic import ValidationError

FailureCode = Literal[
    "evaluator_error",
    "judge_parse_failure",
    "provider_error",
    "rate_limited",
    "sandbox_error",
    "storage_error",
    "timeout",
    "tool_not_found",
]
"""Reason codes of a ``failed`` outcome. ``evaluator_error`` is any other exception."""

FAILURE_CODES: Final[frozenset[str]] = frozenset(FailureCode.__args__)  # type: ignore[attr-defined]


class EvalsError(Exception):
    """Base class of every exception raised by ``langchain_evals_port``."""


class EvaluatorInputError(EvalsError, ValueError):
    """The caller's input cannot be evaluated: a required field is missing or malformed."""


class EvaluatorUsageError(EvalsError, TypeError):
    """An evaluator was called or written wrongly: a misspelt keyword, a scoring function
    returning something that is not a score, an async evaluator called synchronously inside
    a running event loop."""


class MissingVariableError(EvaluatorInputError, EvaluatorUsageError):
    """A function evaluator asks for a variable its request does not give (such as
    ``config`` where no configuration applies): a usage error, raised by ``run_evaluator``
    rather than recorded, since every request would fail alike."""


class MessageFormatError(EvaluatorInputError):
    """A message list cannot be normalised (unknown role, malformed tool-call arguments, ...)."""


class CanonicalizationError(EvaluatorInputError, TypeError):
    """A value has no canonical JSON form, so it cannot be compared by the equality rule."""


class EvaluationFailure(EvalsError):
    """The evaluator could not reach a verdict because its own machinery failed.

    Args:
        message: What went wrong, for the result's ``reason``.
        code: The failure's reason code (see ``FailureCode``).
    """

    def __init__(self, message: str, *, code: FailureCode = "evaluator_error") -> None:
        super().__init__(message)
        self.code: FailureCode = code


class EvaluationTimeoutError(EvaluationFailure):
    """A whole evaluation ran past its own time limit. Unlike a timeout inside it (a judge
    call that timed out, worth retrying), it is final: recorded as failed with ``timeout``."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="timeout")


class StoppedInEvaluation(EvaluationFailure):
    """Code run for an evaluation (an evaluator, a target, a node of a graph) raised
    ``SystemExit`` or ``KeyboardInterrupt``: it ends that evaluation, which fails with this
    error, and never the process running the evaluations (``sys.exit(0)`` deep in a
    library would otherwise stop a worker, or end an experiment with status 0 and nothing
    done).

    Args:
        stop: What the code raised (this error's ``__cause__``).
    """

    def __init__(self, stop: SystemExit | KeyboardInterrupt) -> None:
        if isinstance(stop, SystemExit):
            raised = f"SystemExit raised inside the evaluation (sys.exit({stop.code!r}))"
        else:
            raised = "KeyboardInterrupt raised inside the evaluation"
        super().__init__(f"{raised}: it ends this evaluation, not the process running it")
        self.__cause__ = stop


class JudgeOutputError(EvaluationFailure):
    """The judge's reply could not be read as a valid score, even after one repair prompt.

    Args:
        message: What was wrong with the reply.
        raw_reply: The judge's last reply, verbatim.
    """

    def __init__(self, message: str, *, raw_reply: str) -> None:
        super().__init__(message, code="judge_parse_failure")
        self.raw_reply = raw_reply


class ToolNotFoundError(EvaluationFailure):
    """A command-line tool an evaluator needs (a type checker, a linter, bubblewrap, a
    container runtime) is not installed.

    Args:
        tool: The tool's name, as the user would install it.
        hint: How to install it.
    """

    def __init__(self, tool: str, hint: str = "") -> None:
        message = f"{tool} is not installed" + (f": {hint}" if hint else "")
        super().__init__(message, code="tool_not_found")
        self.tool = tool


@dataclass(frozen=True)
class FailureClass:
    """What an exception raised while evaluating means: its reason code, and whether the
    same evaluation is worth running again unchanged (``transient``)."""

    code: FailureCode
    transient: bool


_TRANSIENT_CODES: Final = frozenset({"rate_limited", "timeout"})


def classify_failure(error: BaseException) -> FailureClass:
    """The one classifier of evaluation errors: reason code and whether to retry.

    The exception and the ones it was raised from are read in turn; the first that says
    something decides. Our own ``EvaluationFailure`` carries its code (a rate limit or a
    timeout is transient); when it wraps an error of the same code (an evaluator's
    ``on_error="raise"`` wraps what its function raised), that error says whether it is
    transient, since a provider or connection error may be either. Timeouts of any library
    subclass ``TimeoutError`` or say so in their class name; connection errors likewise
    (``ConnectionError``, httpx's ``ConnectError``). Provider clients (OpenAI, Anthropic,
    ...) raise exceptions with a ``status_code``: 429 is rate limited, any other status a
    provider error, transient from 500 up. A database driver's ``OperationalError`` (a lock,
    a lost connection) is a transient storage error. Anything else is a permanent
    ``evaluator_error``.

    Example:
        >>> classify_failure(ConnectionResetError("peer went away"))
        FailureClass(code='provider_error', transient=True)
        >>> classify_failure(KeyError("missing"))
        FailureClass(code='evaluator_error', transient=False)
    """
    seen: set[int] = set()
    wrapper: FailureClass | None = None
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        found = _classify_one(current)
        if found is not None:
            if wrapper is not None and found.code != wrapper.code:
                return wrapper
            if found.transient or not isinstance(current, EvaluationFailure):
                return found
            wrapper = found  # our own failure: an error it wraps may know it is transient
        current = current.__cause__ or current.__context__
    return wrapper or FailureClass("evaluator_error", transient=False)


def _classify_one(error: BaseException) -> FailureClass | None:
    name = type(error).__name__.lower()
    if isinstance(error, EvaluationTimeoutError):
        return FailureClass("timeout", transient=False)  # running again would time out again
    if isinstance(error, EvaluationFailure) and error.code != "evaluator_error":
        return FailureClass(error.code, transient=error.code in _TRANSIENT_CODES)
    if isinstance(error, TimeoutError) or "timeout" in name:
        return FailureClass("timeout", transient=True)
    status = getattr(error, "status_code", None)
    if status == 429 or "ratelimit" in name:
        return FailureClass("rate_limited", transient=True)
    if isinstance(status, int):
        return FailureClass("provider_error", transient=status >= 500)
    if isinstance(error, ConnectionError) or "connect" in name:
        return FailureClass("provider_error", transient=True)
    if name == "operationalerror":
        return FailureClass("storage_error", transient=True)
    return None


def failure_reason(error: BaseException) -> str:
    """The reason a failed result gives for ``error``: our own errors' messages say what
    happened; anyone else's are told by ``error_summary``.

    Example:
        >>> failure_reason(KeyError("answer"))
        "KeyError: 'answer'"
    """
    return str(error) if isinstance(error, EvalsError) else error_summary(error)


def error_summary(error: BaseException) -> str:
    """``error`` with its type in front; a pydantic ``ValidationError`` (a result that could
    not be made, such as one with a score of NaN) on one line, each problem after its field.

    Example:
        >>> error_summary(ValueError("no rubric"))
        'ValueError: no rubric'
    """
    if isinstance(error, ValidationError):
        problems = "; ".join(
            f"{'.'.join(map(str, problem['loc'])) or 'value'}: {problem['msg']}"
            for problem in error.errors(include_url=False)
        )
        return f"ValidationError of {error.title}: {problems}"
    return f"{type(error).__name__}: {error}"


def failure_code(error: BaseException) -> FailureCode:
    """The reason code ``classify_failure`` gives ``error``."""
    return classify_failure(error).code
