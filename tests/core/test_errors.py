"""``classify_failure``: the one classifier of evaluation errors (reason code and whether to
retry), on the exceptions real provider clients, HTTP libraries and database drivers raise."""

from __future__ import annotations

import asyncio
import sqlite3

import httpx
import openai
import psycopg
import pytest
import requests

from langchain_evals_port import evaluator
from langchain_evals_port.core.errors import (
    FAILURE_CODES,
    EvaluationFailure,
    FailureClass,
    JudgeOutputError,
    ToolNotFoundError,
    classify_failure,
    failure_code,
)
from langchain_evals_port.testing import ScriptedProviderError

REQUEST = httpx.Request("POST", "https://api.openai.com/v1/chat/completions")


def status_error(kind: type[openai.APIStatusError], status: int) -> openai.APIStatusError:
    """An OpenAI client error for an HTTP ``status`` answer."""
    return kind("provider says no", response=httpx.Response(status, request=REQUEST), body=None)


def raised_from(error: BaseException, cause: BaseException) -> BaseException:
    """``error`` as ``raise error from cause`` leaves it."""
    try:
        raise error from cause
    except BaseException as raised:
        return raised


def raised_during(error: BaseException, handled: BaseException) -> BaseException:
    """``error`` raised while ``handled`` was being handled (its implicit context)."""
    try:
        try:
            raise handled
        except BaseException:
            raise error  # noqa: B904 - the implicit context is the point
    except BaseException as raised:
        return raised


TRANSIENT = [
    pytest.param(TimeoutError("read timed out"), "timeout", id="TimeoutError"),
    pytest.param(asyncio.TimeoutError(), "timeout", id="asyncio.TimeoutError"),
    pytest.param(httpx.ReadTimeout("late"), "timeout", id="httpx.ReadTimeout"),
    pytest.param(requests.exceptions.ReadTimeout("late"), "timeout", id="requests.ReadTimeout"),
    pytest.param(openai.APITimeoutError(request=REQUEST), "timeout", id="openai.APITimeoutError"),
    pytest.param(ScriptedProviderError.rate_limited(), "rate_limited", id="429"),
    pytest.param(status_error(openai.RateLimitError, 429), "rate_limited", id="openai-429"),
    pytest.param(ScriptedProviderError.server_error(), "provider_error", id="500"),
    pytest.param(status_error(openai.InternalServerError, 503), "provider_error", id="openai-503"),
    pytest.param(ConnectionResetError("peer went away"), "provider_error", id="ConnectionReset"),
    pytest.param(ConnectionRefusedError("refused"), "provider_error", id="ConnectionRefused"),
    pytest.param(httpx.ConnectError("refused"), "provider_error", id="httpx.ConnectError"),
    pytest.param(
        requests.exceptions.ConnectionError("refused"), "provider_error", id="requests-connection"
    ),
    pytest.param(
        openai.APIConnectionError(request=REQUEST), "provider_error", id="openai-connection"
    ),
    pytest.param(sqlite3.OperationalError("database is locked"), "storage_error", id="sqlite"),
    pytest.param(
        psycopg.OperationalError("server closed the connection"), "storage_error", id="pg"
    ),
]


@pytest.mark.parametrize(("error", "code"), TRANSIENT)
def test_timeouts_rate_limits_server_and_connection_errors_are_transient(
    error: BaseException, code: str
) -> None:
    assert classify_failure(error) == FailureClass(code, transient=True)  # type: ignore[arg-type]
    assert failure_code(error) == code


@pytest.mark.parametrize(
    ("error", "code"),
    [
        pytest.param(ScriptedProviderError.bad_request(), "provider_error", id="400"),
        pytest.param(status_error(openai.NotFoundError, 404), "provider_error", id="openai-404"),
        pytest.param(
            status_error(openai.AuthenticationError, 401), "provider_error", id="openai-401"
        ),
        pytest.param(KeyError("rubric"), "evaluator_error", id="KeyError"),
        pytest.param(ValueError("bad rubric"), "evaluator_error", id="ValueError"),
        pytest.param(sqlite3.IntegrityError("unique"), "evaluator_error", id="IntegrityError"),
    ],
)
def test_client_errors_and_bugs_are_permanent(error: BaseException, code: str) -> None:
    assert classify_failure(error) == FailureClass(code, transient=False)  # type: ignore[arg-type]


@pytest.mark.parametrize("code", sorted(FAILURE_CODES))
def test_our_own_failures_carry_their_code_and_only_rate_limits_and_timeouts_are_transient(
    code: str,
) -> None:
    found = classify_failure(EvaluationFailure("it broke", code=code))  # type: ignore[arg-type]
    assert found == FailureClass(code, transient=code in ("rate_limited", "timeout"))  # type: ignore[arg-type]


def test_the_failure_subclasses_carry_their_codes() -> None:
    assert classify_failure(JudgeOutputError("no score", raw_reply="hmm")) == FailureClass(
        "judge_parse_failure", transient=False
    )
    assert classify_failure(ToolNotFoundError("mypy")) == FailureClass(
        "tool_not_found", transient=False
    )


def test_the_cause_decides_when_the_error_itself_says_nothing() -> None:
    wrapped = raised_from(RuntimeError("judge call failed"), TimeoutError("read timed out"))
    assert classify_failure(wrapped) == FailureClass("timeout", transient=True)
    during = raised_during(ValueError("while handling it"), ScriptedProviderError.rate_limited())
    assert classify_failure(during) == FailureClass("rate_limited", transient=True)


def test_the_first_error_that_says_something_decides() -> None:
    bad_request_after_timeout = raised_from(
        ScriptedProviderError.bad_request(), TimeoutError("late")
    )
    assert classify_failure(bad_request_after_timeout) == FailureClass(
        "provider_error", transient=False
    )


@pytest.mark.parametrize(
    ("cause", "expected"),
    [
        (ConnectionResetError("peer went away"), FailureClass("provider_error", transient=True)),
        (ScriptedProviderError.server_error(), FailureClass("provider_error", transient=True)),
        (ScriptedProviderError.bad_request(), FailureClass("provider_error", transient=False)),
        (TimeoutError("late"), FailureClass("timeout", transient=True)),
        (KeyError("rubric"), FailureClass("evaluator_error", transient=False)),
    ],
    ids=["connection", "500", "400", "timeout", "bug"],
)
def test_an_evaluator_that_raises_keeps_what_its_function_raised_apart(
    cause: Exception, expected: FailureClass
) -> None:
    """``on_error="raise"`` wraps the error in an ``EvaluationFailure`` with its code; the
    wrapped error still says whether it is worth retrying (a connection error is transient
    *and* a provider error)."""

    @evaluator
    def calls_the_provider(outputs: str) -> bool:
        raise cause

    with pytest.raises(EvaluationFailure) as raised:
        calls_the_provider.invoke({"outputs": "hello"})
    assert raised.value.__cause__ is cause
    assert classify_failure(raised.value) == expected


def test_a_wrapper_with_a_code_of_its_own_is_not_overruled_by_its_cause() -> None:
    parse_failure = raised_from(
        JudgeOutputError("no score in the reply", raw_reply="..."), ConnectionResetError("gone")
    )
    assert classify_failure(parse_failure) == FailureClass("judge_parse_failure", transient=False)


def test_a_cycle_of_causes_ends() -> None:
    first, second = ValueError("first"), KeyError("second")
    first.__cause__, second.__context__ = second, first
    assert classify_failure(first) == FailureClass("evaluator_error", transient=False)


def test_an_evaluation_past_its_own_time_limit_is_a_final_timeout():
    from langchain_evals_port.core.errors import EvaluationTimeoutError

    assert classify_failure(EvaluationTimeoutError("took longer than 2s")) == FailureClass(
        "timeout", transient=False
    )
