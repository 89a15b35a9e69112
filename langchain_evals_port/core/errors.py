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

from typing import Final, Literal

FailureCode = Literal[
    "evaluator_error",
    "judge_parse_failure",
    "provider_error",
    "rate_limited",
    "sandbox_error",
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


def failure_code(error: BaseException) -> FailureCode:
    """Classify an exception raised while evaluating into a ``FailureCode``.

    Our own ``EvaluationFailure`` carries its code. Provider clients (OpenAI, Anthropic, ...)
    raise exceptions with a ``status_code`` attribute; 429 means rate limited and any other
    status a provider error. Timeouts of any library subclass ``TimeoutError`` or say so in
    their class name.
    """
    if isinstance(error, EvaluationFailure):
        return error.code
    if isinstance(error, TimeoutError) or "timeout" in type(error).__name__.lower():
        return "timeout"
    status = getattr(error, "status_code", None)
    if status == 429:
        return "rate_limited"
    if isinstance(status, int):
        return "provider_error"
    return "evaluator_error"
