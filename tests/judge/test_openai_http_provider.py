"""``LLMJudge`` through a real provider client over real HTTP.

``langchain_openai.ChatOpenAI`` talks to a small OpenAI-compatible Chat Completions server on
127.0.0.1 (stdlib ``ThreadingHTTPServer`` in a daemon thread). Each test scripts the server's
answers in order (or gives it a responder function); the server records every request body
and checks what it receives — the judge's schema untouched in ``response_format`` on the
native path, in ``tools`` on the tool path, in the prompt text on the prompted path. A request
that breaks the rules is recorded as a violation and answered with a 500, so the client fails
loudly and the test asserts there were none.

What ChatOpenAI (langchain-openai 1.x) sends for the default boolean score schema:

* native (``method="json_schema"``): ``response_format = {"type": "json_schema",
  "json_schema": {"name": <schema title>, "description": <schema description>,
  "strict": False, "schema": <our schema without title/description>}}``;
* tools (``method="function_calling"``): ``tools = [{"type": "function", "function":
  {"name": <title>, "description": <description>, "parameters": <schema without
  title/description>}}]``, ``tool_choice = {"type": "function", "function": {"name":
  <title>}}`` and ``parallel_tool_calls = False``.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

import openai
import pytest
from langchain_openai import ChatOpenAI

from langchain_evals_port.core.errors import EvaluationFailure, JudgeOutputError
from langchain_evals_port.judge import LLMJudge, SqliteCache

MODEL = "gpt-4o-mini"
PROMPT = "Question: {inputs}\nAnswer: {outputs}\nIs the answer correct?"
REPAIR_PREFIX = "Your reply was not valid"

Path = Literal["json_schema", "tools", "prompted"]

# langchain-openai warns when OpenAI says "Invalid schema for response_format" (our scripted
# 400), before raising; the tests assert on the error itself.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Invalid schema for OpenAI's structured output feature:UserWarning"
)


# --- the stand-in server ------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """One scripted answer: an HTTP status, a JSON body, extra headers, and the path (if any)
    the request it answers must have come through."""

    status: int
    body: dict[str, Any]
    expects: Path | None = None
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0


def _usage(prompt: int, completion: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _completion(message: dict[str, Any], finish_reason: str, usage: dict[str, int]) -> dict:
    return {
        "id": "chatcmpl-stand-in",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": MODEL,
        "choices": [
            {"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}
        ],
        "usage": usage,
    }


def _verdict_text(reasoning: str, score: Any) -> str:
    return json.dumps({"reasoning": reasoning, "score": score})


def json_schema_reply(
    reasoning: str, score: Any, *, usage: tuple[int, int] = (42, 17), delay: float = 0.0
) -> Answer:
    """A structured-output completion: the content is the verdict's JSON text."""
    message = {"role": "assistant", "content": _verdict_text(reasoning, score), "refusal": None}
    return Answer(200, _completion(message, "stop", _usage(*usage)), "json_schema", delay=delay)


def tool_call_reply(reasoning: str, score: Any, *, usage: tuple[int, int] = (50, 20)) -> Answer:
    """A forced tool call whose arguments are the verdict's JSON text (the function name is
    filled in from the request's ``tool_choice``)."""
    message = {
        "role": "assistant",
        "content": None,
        "refusal": None,
        "tool_calls": [
            {
                "id": "call_stand_in_1",
                "type": "function",
                "function": {"name": "", "arguments": _verdict_text(reasoning, score)},
            }
        ],
    }
    return Answer(200, _completion(message, "tool_calls", _usage(*usage)), "tools")


def text_reply(text: str, *, usage: tuple[int, int] = (60, 25)) -> Answer:
    """A plain assistant reply, for the prompted path."""
    message = {"role": "assistant", "content": text, "refusal": None}
    return Answer(200, _completion(message, "stop", _usage(*usage)), "prompted")


def chatty_reply(reasoning: str, score: Any, *, usage: tuple[int, int] = (60, 25)) -> Answer:
    """A prompted reply that wraps the verdict in prose and a fenced block."""
    verdict = json.dumps({"reasoning": reasoning, "score": score}, indent=2)
    text = f"Sure! Here is my verdict:\n```json\n{verdict}\n```\nHope that helps."
    return text_reply(text, usage=usage)


NO_JSON_TEXT = "The answer looks right to me, I would say it passes."


def no_json_reply(*, usage: tuple[int, int] = (60, 12)) -> Answer:
    """A prompted reply with no JSON object in it at all."""
    return text_reply(NO_JSON_TEXT, usage=usage)


def unsupported_schema() -> Answer:
    """OpenAI's 400 for a ``response_format`` it will not apply (only valid in answer to a
    request that has one)."""
    body = {
        "error": {
            "message": "Invalid schema for response_format 'score': this model does not "
            "support structured outputs with json_schema.",
            "type": "invalid_request_error",
            "param": "response_format",
            "code": None,
        }
    }
    return Answer(400, body, "json_schema")


def context_length_exceeded() -> Answer:
    """OpenAI's 400 for a prompt that is too long: a 400 that is not about the schema."""
    body = {
        "error": {
            "message": "This model's maximum context length is 128000 tokens. However, your "
            "messages resulted in 130512 tokens. Please reduce the length of the messages.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }
    return Answer(400, body)


def rate_limited() -> Answer:
    """OpenAI's 429, with ``retry-after: 0``."""
    body = {
        "error": {
            "message": "Rate limit reached for gpt-4o-mini on requests per min (RPM): "
            "Limit 3, Used 3, Requested 1.",
            "type": "requests",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    }
    return Answer(429, body, headers=(("retry-after", "0"),))


@dataclass(eq=False)
class OpenAIStandIn:
    """An OpenAI Chat Completions stand-in: scripted answers, recorded and checked requests."""

    schema: dict[str, Any] | None = None
    responder: Callable[[dict[str, Any]], Answer] | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    peak_in_flight: int = 0
    port: int = 0
    _script: deque[Answer] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _in_flight: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *answers: Answer) -> None:
        with self._lock:
            self._script.extend(answers)

    @property
    def unanswered(self) -> int:
        return len(self._script)

    def handle(self, path: str, headers: Any, raw: bytes) -> Answer:
        with self._lock:
            self._in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self._in_flight)
        try:
            return self._handle(path, headers, raw)
        finally:
            with self._lock:
                self._in_flight -= 1

    def _handle(self, path: str, headers: Any, raw: bytes) -> Answer:
        problems: list[str] = []
        try:
            body = json.loads(raw)
        except ValueError:
            body = {"unparseable": raw.decode(errors="replace")}
            problems.append("request body is not JSON")
        with self._lock:
            index = len(self.requests)
            self.requests.append(body)
            scripted = self._script.popleft() if self._script else None
        if path != "/v1/chat/completions":
            problems.append(f"unexpected path {path!r}")
        if headers.get("authorization") != "Bearer test":
            problems.append("missing or wrong authorization header")
        answer = scripted
        if answer is None and self.responder is not None and not problems:
            answer = self.responder(body)
        if answer is None:
            problems.append("no scripted answer left for this request")
        if not problems:
            problems = check_request(body, self.schema, answer.expects if answer else None)
        if (
            answer is not None
            and answer.expects
            and answer.status == 400
            and "response_format" not in body
        ):
            problems.append("a 400 for an unsupported schema, but no response_format was sent")
        if problems:
            with self._lock:
                self.violations.extend(f"request {index}: {p}" for p in problems)
            error = {"message": "; ".join(problems), "type": "stand_in_violation"}
            return Answer(500, {"error": {**error, "param": None, "code": None}})
        assert answer is not None
        if answer.delay:
            time.sleep(answer.delay)
        return _fill_tool_name(answer, body)


def _fill_tool_name(answer: Answer, body: dict[str, Any]) -> Answer:
    if answer.expects != "tools":
        return answer
    name = body["tool_choice"]["function"]["name"]
    filled = json.loads(json.dumps(answer.body))
    filled["choices"][0]["message"]["tool_calls"][0]["function"]["name"] = name
    return Answer(answer.status, filled, answer.expects, answer.headers, answer.delay)


def request_path(body: dict[str, Any]) -> Path:
    if "response_format" in body:
        return "json_schema"
    if "tools" in body:
        return "tools"
    return "prompted"


def object_part(schema: dict[str, Any]) -> dict[str, Any]:
    """Our schema without what ChatOpenAI moves to the function/json_schema envelope."""
    return {k: v for k, v in schema.items() if k not in ("title", "description")}


def schema_text(schema: dict[str, Any]) -> str:
    """The schema as ``_structured._with_schema_instructions`` writes it into the prompt."""
    return json.dumps(schema, ensure_ascii=False, indent=2)


def _same_json(sent: Any, ours: Any) -> bool:
    # Equal and in the same order (dict equality ignores key order; the text does not).
    return json.dumps(sent) == json.dumps(ours)


def _content_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def check_request(body: dict[str, Any], schema: dict[str, Any] | None, expects: Path | None):
    """What is wrong with a chat completions request, given the judge's schema."""
    problems: list[str] = []
    if body.get("model") != MODEL:
        problems.append(f"model is {body.get('model')!r}, not {MODEL!r}")
    if body.get("stream"):
        problems.append("the judge asked for a stream")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return [*problems, "no messages"]
    path = request_path(body)
    if expects is not None and path != expects:
        problems.append(f"the scripted answer is for the {expects} path, request is {path}")
    if schema is None:
        return [*problems, "the test did not tell the stand-in the judge's schema"]
    if path == "json_schema":
        expected = {
            "type": "json_schema",
            "json_schema": {
                "name": schema["title"],
                "description": schema["description"],
                "strict": False,
                "schema": object_part(schema),
            },
        }
        response_format = body["response_format"]
        if response_format != expected:
            problems.append(f"response_format is {response_format!r}, expected {expected!r}")
        elif not _same_json(response_format["json_schema"]["schema"], object_part(schema)):
            problems.append("response_format schema is ours but reordered")
        if "tools" in body or "tool_choice" in body:
            problems.append("tools sent alongside response_format")
    elif path == "tools":
        expected_tools = [
            {
                "type": "function",
                "function": {
                    "name": schema["title"],
                    "description": schema["description"],
                    "parameters": object_part(schema),
                },
            }
        ]
        tools = body["tools"]
        if tools != expected_tools:
            problems.append(f"tools are {tools!r}, expected {expected_tools!r}")
        elif not _same_json(tools[0]["function"]["parameters"], object_part(schema)):
            problems.append("tool parameters are our schema but reordered")
        forced = {"type": "function", "function": {"name": schema["title"]}}
        if body.get("tool_choice") != forced:
            problems.append(f"tool_choice is {body.get('tool_choice')!r}, expected {forced!r}")
        if body.get("parallel_tool_calls") is not False:
            problems.append("parallel tool calls were not turned off")
    else:
        if "tool_choice" in body:
            problems.append("tool_choice sent without tools")
        users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
        holder = users[-1] if users else None
        if holder is not None and _content_text(messages[holder]).startswith(REPAIR_PREFIX):
            # A repair: [..., schema instructions, assistant's bad reply, repair prompt].
            holder = users[-2] if len(users) > 1 else None
            if holder is None or messages[holder + 1].get("role") != "assistant":
                problems.append("a repair prompt that does not follow the assistant's reply")
        if holder is None or schema_text(schema) not in _content_text(messages[holder]):
            problems.append("the prompted request does not carry our schema's JSON text")
    return problems


def _serve(stand_in: OpenAIStandIn) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            answer = stand_in.handle(self.path, self.headers, raw)
            self._send(answer)

        def do_GET(self) -> None:
            with stand_in._lock:
                stand_in.violations.append(f"unexpected GET {self.path}")
            self._send(Answer(500, {"error": {"message": "unexpected GET"}}))

        def _send(self, answer: Answer) -> None:
            payload = json.dumps(answer.body).encode()
            self.send_response(answer.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            for name, value in answer.headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    stand_in.port = server.server_port
    # A short poll interval: shutdown() waits up to one interval.
    threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
    return server


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStandIn]:
    """A fresh stand-in per test; fails the test if a violation slipped past its asserts or a
    scripted answer was never asked for."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("all_proxy", raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    monkeypatch.setenv("LANGCHAIN_TRACING_V2", "false")
    server_state = OpenAIStandIn()
    server = _serve(server_state)
    try:
        yield server_state
    finally:
        server.shutdown()
        server.server_close()
    assert server_state.violations == []
    assert server_state.unanswered == 0, "the judge made fewer requests than scripted"


@pytest.fixture
def chat_model(stand_in: OpenAIStandIn) -> ChatOpenAI:
    return ChatOpenAI(base_url=stand_in.base_url, api_key="test", model=MODEL, max_retries=0)


def make_judge(stand_in: OpenAIStandIn, model: Any, **options: Any) -> LLMJudge:
    judge = LLMJudge(prompt=PROMPT, model=model, **options)
    stand_in.schema = judge.response_schema
    return judge


QUESTION = {"inputs": "What is the capital of France?", "outputs": "Paris"}


def provider_error(error: BaseException, code: str) -> BaseException:
    """The provider client's exception behind ``error``: ``error`` itself, or — since
    ``on_error="raise"`` wraps machinery failures — the cause of an ``EvaluationFailure``
    carrying ``code``."""
    if isinstance(error, EvaluationFailure):
        assert error.code == code
        assert error.__cause__ is not None
        return error.__cause__
    return error


def token_usage(prompt: int, completion: int) -> dict[str, int]:
    return {
        "input_tokens": prompt,
        "output_tokens": completion,
        "total_tokens": prompt + completion,
    }


# --- 1. native ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["native", "auto"])
def test_native_path_sends_our_schema_untouched(stand_in, chat_model, mode):
    judge = make_judge(stand_in, chat_model, structured_output_mode=mode)
    stand_in.script(
        json_schema_reply("Paris is the capital. Thus, the score should be: true.", True)
    )

    result = judge.invoke(QUESTION)

    assert stand_in.violations == []
    assert result.outcome == "verdict"
    assert result.score is True
    assert result.comment == "Paris is the capital. Thus, the score should be: true."
    assert result.metadata["structured_output"] == "json_schema"
    assert result.metadata["judge_model"] == MODEL
    assert result.metadata["repairs"] == 0
    assert result.metadata["token_usage"] == token_usage(42, 17)
    [sent] = stand_in.requests
    # Exactly what ChatOpenAI sends: our schema's object part untouched, in order; its title
    # and description moved to the envelope; strict left off.
    envelope = sent["response_format"]["json_schema"]
    assert list(envelope) == ["name", "description", "strict", "schema"]
    assert envelope["name"] == "score"
    assert envelope["strict"] is False
    assert envelope["schema"] == object_part(judge.response_schema)
    assert list(envelope["schema"]["properties"]) == ["reasoning", "score"]
    assert envelope["schema"]["required"] == ["reasoning", "score"]
    assert envelope["schema"]["properties"]["score"]["type"] == "boolean"
    assert envelope["schema"]["additionalProperties"] is False
    assert "tools" not in sent
    assert sent["messages"] == [
        {"role": "user", "content": PROMPT.format(**QUESTION)},
    ]


def test_native_path_continuous_and_choices_schemas(stand_in, chat_model):
    continuous = make_judge(stand_in, chat_model, continuous=True)
    stand_in.script(json_schema_reply("Mostly right.", 0.75))
    assert continuous.invoke(QUESTION).score == 0.75

    choices = make_judge(stand_in, chat_model, choices=[0, 0.5, 1])
    stand_in.script(json_schema_reply("Half right.", 0.5))
    assert choices.invoke(QUESTION).score == 0.5

    assert stand_in.violations == []
    first, second = (r["response_format"]["json_schema"]["schema"] for r in stand_in.requests)
    assert first["properties"]["score"]["type"] == "number"
    assert second["properties"]["score"]["enum"] == [0, 0.5, 1]


# --- 2. tools -----------------------------------------------------------------------------


def test_tool_path_sends_our_schema_as_the_forced_tool(stand_in, chat_model):
    judge = make_judge(stand_in, chat_model, structured_output_method="function_calling")
    stand_in.script(tool_call_reply("Correct. Thus, the score should be: true.", True))

    result = judge.invoke(QUESTION)

    assert stand_in.violations == []
    assert result.score is True
    assert result.comment == "Correct. Thus, the score should be: true."
    assert result.metadata["structured_output"] == "function_calling"
    assert result.metadata["token_usage"] == token_usage(50, 20)
    [sent] = stand_in.requests
    assert "response_format" not in sent
    [tool] = sent["tools"]
    assert tool["function"]["name"] == "score"
    assert tool["function"]["parameters"] == object_part(judge.response_schema)
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "score"}}
    assert sent["parallel_tool_calls"] is False


# --- 3. auto fallback ---------------------------------------------------------------------


def test_auto_falls_back_to_prompted_on_an_unsupported_schema_and_remembers(stand_in, chat_model):
    judge = make_judge(stand_in, chat_model)
    stand_in.script(unsupported_schema(), chatty_reply("Correct.", True, usage=(60, 25)))

    first = judge.invoke(QUESTION)

    assert stand_in.violations == []
    assert first.score is True
    assert first.comment == "Correct."
    assert first.metadata["structured_output"] == "prompted"
    assert first.metadata["repairs"] == 0
    assert first.metadata["token_usage"] == token_usage(60, 25)  # the 400 used none
    native, prompted = stand_in.requests
    assert "response_format" in native
    assert "response_format" not in prompted
    assert "tools" not in prompted
    assert schema_text(judge.response_schema) in prompted["messages"][-1]["content"]
    assert prompted["messages"][-1]["role"] == "user"

    # The fallback is remembered for this model: the next evaluation goes straight to prompted.
    stand_in.script(chatty_reply("Wrong city.", False))
    second = judge.invoke({"inputs": "What is the capital of France?", "outputs": "Lyon"})

    assert stand_in.violations == []
    assert second.score is False
    assert second.metadata["structured_output"] == "prompted"
    assert len(stand_in.requests) == 3
    assert "response_format" not in stand_in.requests[2]


def test_auto_does_not_fall_back_on_a_400_about_the_messages(stand_in, chat_model):
    judge = make_judge(stand_in, chat_model, on_error="record")
    stand_in.responder = lambda body: context_length_exceeded()

    result = judge.invoke(QUESTION)

    assert stand_in.violations == []
    assert result.error_code == "provider_error"
    assert [request_path(r) for r in stand_in.requests] == ["json_schema"]

    stand_in.responder = lambda body: json_schema_reply("Correct.", True)
    assert judge.invoke(QUESTION).metadata["structured_output"] == "json_schema"


# --- 4. native + 400 ----------------------------------------------------------------------


def test_native_mode_400_raises_and_suggests_prompted(stand_in, chat_model):
    judge = make_judge(stand_in, chat_model, structured_output_mode="native")
    stand_in.script(unsupported_schema())

    with pytest.raises(EvaluationFailure, match="structured_output_mode='prompted'") as caught:
        judge.invoke(QUESTION)

    assert caught.value.code == "provider_error"
    assert isinstance(caught.value.__cause__, openai.BadRequestError)
    assert stand_in.violations == []
    assert len(stand_in.requests) == 1


def test_native_mode_400_records_a_provider_error(stand_in, chat_model):
    judge = make_judge(stand_in, chat_model, structured_output_mode="native", on_error="record")
    stand_in.script(unsupported_schema())

    result = judge.invoke(QUESTION)

    assert stand_in.violations == []
    assert result.outcome == "failed"
    assert result.error_code == "provider_error"
    assert result.score is None
    assert "prompted" in result.reason
    assert len(stand_in.requests) == 1


# --- 5. 429 -------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "native"])
def test_rate_limit_is_recorded_without_fallback(stand_in, chat_model, mode):
    judge = make_judge(stand_in, chat_model, structured_output_mode=mode, on_error="record")
    stand_in.script(rate_limited())

    result = judge.invoke(QUESTION)

    assert stand_in.violations == []
    assert result.outcome == "failed"
    assert result.error_code == "rate_limited"
    assert len(stand_in.requests) == 1  # no prompted retry, no client retry

    # A rate limit says nothing about the schema: the next evaluation is native again.
    stand_in.script(json_schema_reply("Correct.", True))
    assert judge.invoke(QUESTION).metadata["structured_output"] == "json_schema"
    assert "response_format" in stand_in.requests[1]


def test_rate_limit_in_auto_mode_propagates(stand_in, chat_model):
    judge = make_judge(stand_in, chat_model)
    stand_in.script(rate_limited())

    with pytest.raises((openai.RateLimitError, EvaluationFailure)) as caught:
        judge.invoke(QUESTION)

    cause = provider_error(caught.value, "rate_limited")
    assert isinstance(cause, openai.RateLimitError)
    assert cause.status_code == 429
    assert stand_in.violations == []
    assert len(stand_in.requests) == 1


# --- 6. prompted repairs ------------------------------------------------------------------


def test_prompted_reply_without_json_is_repaired_once(stand_in, chat_model):
    judge = make_judge(stand_in, chat_model, structured_output_mode="prompted")
    stand_in.script(no_json_reply(usage=(60, 12)), chatty_reply("Correct.", True, usage=(90, 25)))

    result = judge.invoke(QUESTION)

    assert stand_in.violations == []
    assert result.score is True
    assert result.metadata["structured_output"] == "prompted"
    assert result.metadata["repairs"] == 1
    assert result.metadata["token_usage"] == token_usage(150, 37)
    first, repair = stand_in.requests
    assert "response_format" not in first
    assert "tools" not in first
    assert schema_text(judge.response_schema) in first["messages"][-1]["content"]
    assert repair["messages"][: len(first["messages"])] == first["messages"]
    assert repair["messages"][-2] == {"role": "assistant", "content": NO_JSON_TEXT}
    assert repair["messages"][-1]["content"].startswith(REPAIR_PREFIX)
    assert "no JSON object" in repair["messages"][-1]["content"]


def test_prompted_reply_without_json_twice_raises_with_the_raw_reply(stand_in, chat_model):
    judge = make_judge(stand_in, chat_model, structured_output_mode="prompted")
    stand_in.script(no_json_reply(), no_json_reply())

    with pytest.raises(JudgeOutputError) as caught:
        judge.invoke(QUESTION)

    assert caught.value.raw_reply == NO_JSON_TEXT
    assert caught.value.code == "judge_parse_failure"
    assert stand_in.violations == []
    assert len(stand_in.requests) == 2


def test_prompted_reply_without_json_twice_is_recorded(stand_in, chat_model):
    judge = make_judge(stand_in, chat_model, structured_output_mode="prompted", on_error="record")
    stand_in.script(no_json_reply(), no_json_reply())

    result = judge.invoke(QUESTION)

    assert stand_in.violations == []
    assert result.outcome == "failed"
    assert result.error_code == "judge_parse_failure"
    assert result.score is None
    assert len(stand_in.requests) == 2


# --- 7. async -----------------------------------------------------------------------------


async def test_ainvoke_native_and_fallback_through_the_async_client(stand_in, chat_model):
    native = make_judge(stand_in, chat_model)
    stand_in.script(json_schema_reply("Correct.", True, usage=(40, 10)))

    result = await native.ainvoke(QUESTION)

    assert result.score is True
    assert result.metadata["structured_output"] == "json_schema"
    assert result.metadata["token_usage"] == token_usage(40, 10)

    fallback = make_judge(stand_in, chat_model)
    stand_in.script(unsupported_schema(), chatty_reply("Correct.", True))
    result = await fallback.ainvoke(QUESTION)

    assert result.metadata["structured_output"] == "prompted"
    assert stand_in.violations == []
    assert [request_path(r) for r in stand_in.requests] == [
        "json_schema",
        "json_schema",
        "prompted",
    ]


async def test_abatch_with_max_concurrency(stand_in, chat_model):
    judge = make_judge(stand_in, chat_model)
    answers = ["Paris", "Lyon", "Paris", "Marseille", "Paris", "Nice"]

    def responder(body: dict[str, Any]) -> Answer:
        content = body["messages"][0]["content"]
        right = content.endswith("Answer: Paris\nIs the answer correct?")
        return json_schema_reply("checked", right, usage=(30, 5), delay=0.1)

    stand_in.responder = responder
    requests = [{"inputs": QUESTION["inputs"], "outputs": answer} for answer in answers]

    results = await judge.abatch(requests, config={"max_concurrency": 3})

    assert stand_in.violations == []
    assert [r.score for r in results] == [answer == "Paris" for answer in answers]
    assert all(r.metadata["structured_output"] == "json_schema" for r in results)
    assert all(r.metadata["token_usage"] == token_usage(30, 5) for r in results)
    assert len(stand_in.requests) == len(answers)
    assert 2 <= stand_in.peak_in_flight <= 3


# --- caching -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "reply"),
    [
        ("json_schema", json_schema_reply("Paris is right. Thus: true.", True)),
        ("function_calling", tool_call_reply("Paris is right. Thus: true.", True)),
    ],
)
async def test_a_cached_rerun_sends_no_request_and_reads_the_reply_back(
    stand_in, chat_model, tmp_path, method, reply
):
    path = tmp_path / "judge-cache.db"
    stand_in.script(reply)
    first = make_judge(
        stand_in, chat_model, structured_output_method=method, cache=SqliteCache(path)
    ).invoke(QUESTION)
    # Another client, judge and cache object: only the file is shared.
    client = ChatOpenAI(base_url=stand_in.base_url, api_key="test", model=MODEL, max_retries=0)
    second = await make_judge(
        stand_in, client, structured_output_method=method, cache=SqliteCache(path)
    ).ainvoke(QUESTION)

    assert len(stand_in.requests) == 1
    assert first.score is True
    assert (second.score, second.comment) == (first.score, first.comment)
    for key in ("structured_output", "judge_model", "repairs", "token_usage"):
        assert second.metadata[key] == first.metadata[key], key


# --- wrapped models ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "reply"),
    [
        ("json_schema", json_schema_reply("Correct.", True)),
        ("function_calling", tool_call_reply("Correct.", True)),
    ],
)
def test_native_paths_keep_bound_model_kwargs(stand_in, chat_model, method, reply):
    # Regression: .bind(...) arguments used to be dropped on the native paths, because
    # RunnableBinding.__getattr__ forwarded with_structured_output to the bare ChatOpenAI.
    judge = make_judge(
        stand_in,
        chat_model.bind(temperature=0, seed=7).with_config(tags=["judge"]),
        structured_output_mode="native",
        structured_output_method=method,
    )
    stand_in.script(reply)

    result = judge.invoke(QUESTION)

    assert stand_in.violations == []
    assert result.score is True
    assert result.metadata["structured_output"] == method
    [sent] = stand_in.requests
    assert (sent.get("temperature"), sent.get("seed")) == (0, 7)


def test_prompted_path_keeps_bound_model_kwargs(stand_in, chat_model):
    judge = make_judge(
        stand_in, chat_model.bind(temperature=0, seed=7), structured_output_mode="prompted"
    )
    stand_in.script(chatty_reply("Correct.", True))

    assert judge.invoke(QUESTION).score is True

    assert stand_in.violations == []
    [sent] = stand_in.requests
    assert (sent.get("temperature"), sent.get("seed")) == (0, 7)


# --- native repairs -----------------------------------------------------------------------


def test_native_invalid_reply_is_repaired_through_response_format(stand_in, chat_model):
    judge = make_judge(stand_in, chat_model)
    stand_in.script(
        json_schema_reply("Looks fine.", "yes", usage=(42, 17)),
        json_schema_reply("Correct.", True, usage=(70, 9)),
    )

    result = judge.invoke(QUESTION)

    assert stand_in.violations == []  # both requests carried our response_format
    assert result.score is True
    assert result.metadata["structured_output"] == "json_schema"
    assert result.metadata["repairs"] == 1
    assert result.metadata["token_usage"] == token_usage(112, 26)
    repair = stand_in.requests[1]["messages"]
    assert repair[-2] == {
        "role": "assistant",
        "content": json.dumps({"reasoning": "Looks fine.", "score": "yes"}),
    }
    assert repair[-1]["content"].startswith(REPAIR_PREFIX)
    assert "'yes' is not true or false" in repair[-1]["content"]


REFUSAL_TEXT = "I'm sorry, I can't help with grading that."


def refusal_reply() -> Answer:
    """A structured-output refusal: no content, a ``refusal`` string."""
    message = {"role": "assistant", "content": None, "refusal": REFUSAL_TEXT}
    return Answer(200, _completion(message, "stop", _usage(30, 10)), "json_schema")


def test_native_refusal_twice_fails_loudly(stand_in, chat_model):
    judge = make_judge(stand_in, chat_model)
    stand_in.script(refusal_reply(), refusal_reply())

    with pytest.raises(JudgeOutputError, match="could not be parsed") as caught:
        judge.invoke(QUESTION)

    assert REFUSAL_TEXT in str(caught.value)
    assert stand_in.violations == []
    assert len(stand_in.requests) == 2


def test_native_refusal_is_the_raw_reply(stand_in, chat_model):
    judge = make_judge(stand_in, chat_model)
    stand_in.script(refusal_reply(), refusal_reply())

    with pytest.raises(JudgeOutputError) as caught:
        judge.invoke(QUESTION)

    assert stand_in.requests[1]["messages"][-2] == {"role": "assistant", "content": REFUSAL_TEXT}
    assert caught.value.raw_reply == REFUSAL_TEXT


# --- the stand-in checks itself -----------------------------------------------------------


def test_stand_in_rejects_a_request_off_the_scripted_path(stand_in, chat_model):
    # A tool-call answer scripted for a native request: the stand-in records the violation
    # and answers 500, so the client fails loudly.
    judge = make_judge(stand_in, chat_model, structured_output_mode="native")
    stand_in.script(tool_call_reply("Correct.", True))

    with pytest.raises((openai.InternalServerError, EvaluationFailure)) as caught:
        judge.invoke(QUESTION)

    assert isinstance(provider_error(caught.value, "provider_error"), openai.InternalServerError)

    assert stand_in.violations == [
        "request 0: the scripted answer is for the tools path, request is json_schema"
    ]
    stand_in.violations.clear()


def test_stand_in_rejects_a_400_for_a_request_without_response_format(stand_in, chat_model):
    judge = make_judge(stand_in, chat_model, structured_output_mode="prompted")
    stand_in.script(unsupported_schema())

    with pytest.raises((openai.InternalServerError, EvaluationFailure)) as caught:
        judge.invoke(QUESTION)

    assert isinstance(provider_error(caught.value, "provider_error"), openai.InternalServerError)

    assert stand_in.violations == [
        "request 0: the scripted answer is for the json_schema path, request is prompted",
        "request 0: a 400 for an unsupported schema, but no response_format was sent",
    ]
    stand_in.violations.clear()


def test_stand_in_rejects_a_schema_that_is_not_the_judges(stand_in, chat_model):
    judge = make_judge(stand_in, chat_model)
    stand_in.schema = {**judge.response_schema, "required": ["score"]}
    stand_in.script(json_schema_reply("Correct.", True))

    with pytest.raises((openai.InternalServerError, EvaluationFailure)) as caught:
        judge.invoke(QUESTION)

    assert isinstance(provider_error(caught.value, "provider_error"), openai.InternalServerError)

    [violation] = stand_in.violations
    assert violation.startswith("request 0: response_format is")
    stand_in.violations.clear()


# --- 8. live ------------------------------------------------------------------------------


@pytest.mark.live
@pytest.mark.skipif(
    not os.environ.get("OPENAI_API_KEY"),
    reason="needs OPENAI_API_KEY (and optionally OPENAI_BASE_URL / OPENAI_JUDGE_MODEL)",
)
def test_live_openai_judge():
    model = ChatOpenAI(
        model=os.environ.get("OPENAI_JUDGE_MODEL", MODEL),
        base_url=os.environ.get("OPENAI_BASE_URL") or None,
        temperature=0,
        max_retries=2,
    )
    judge = LLMJudge(
        prompt="Question: {inputs}\nAnswer: {outputs}\nReference: {reference_outputs}\n"
        "Is the answer correct?",
        model=model,
    )

    right = judge.invoke(
        {
            "inputs": "What is the capital of France?",
            "outputs": "Paris",
            "reference_outputs": "Paris",
        }
    )
    wrong = judge.invoke(
        {
            "inputs": "What is the capital of France?",
            "outputs": "Berlin",
            "reference_outputs": "Paris",
        }
    )

    assert right.score is True
    assert wrong.score is False
    assert right.comment
    assert right.metadata["structured_output"] in ("json_schema", "prompted")
    assert right.metadata["token_usage"]["total_tokens"] > 0
