"""``SqliteCache``, ``with_cache`` and ``LLMJudge(cache=...)``: real SQLite files, real threads,
forked and spawned processes, and judges on the project's scripted chat model."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sqlite3
import subprocess
import sys
import threading
from contextlib import closing, suppress
from pathlib import Path
from typing import Any

import pytest
from langchain_core.caches import BaseCache
from langchain_core.load import dumpd
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, Generation
from langchain_core.runnables import RunnableLambda
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, create_model

from langchain_evals_port import EvaluatorInputError, prompts
from langchain_evals_port.judge import LLMJudge, SqliteCache, with_cache
from langchain_evals_port.testing import ScriptedChatModel, ScriptedProviderError

PROMPT = "Is this answer concise? {outputs}"
QUESTION = "Question: {inputs}\nAnswer: {outputs}\nIs the answer correct?"
VERDICT = {"reasoning": "One word. Thus, the score should be: true.", "score": True}


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "judge-cache.db"


@pytest.fixture
def cache(path: Path) -> SqliteCache:
    return SqliteCache(path)


def chat(text: str, **message: Any) -> list[ChatGeneration]:
    return [ChatGeneration(message=AIMessage(content=text, **message))]


def grade(messages: list[Any]) -> dict[str, Any]:
    """A deterministic judge: an answer is correct when it names Paris."""
    correct = "Paris" in messages[0].text
    return {"reasoning": f"Thus, the score should be: {str(correct).lower()}.", "score": correct}


# --- the cache itself ---------------------------------------------------------------------


def test_replies_read_back_as_they_were_stored_from_another_cache_on_the_file(path):
    reply = [
        ChatGeneration(
            message=AIMessage(
                content="Checking the weather.",
                tool_calls=[{"name": "weather", "args": {"city": "Rome"}, "id": "call_1"}],
                usage_metadata={"input_tokens": 12, "output_tokens": 7, "total_tokens": 19},
                # A plain dict with an "lc" key must come back as data, not as an object.
                response_metadata={"model_name": "judge-1", "lc": 1, "finish_reason": "stop"},
                id="run-1",
            ),
            generation_info={"finish_reason": "stop", "logprobs": None},
        )
    ]
    text = [Generation(text="Paris", generation_info={"tokens": [1, 2]})]
    SqliteCache(path).update("chat prompt", "model", reply)
    SqliteCache(path).update("text prompt", "model", text)

    reader = SqliteCache(path)
    assert reader.lookup("chat prompt", "model") == reply
    assert reader.lookup("text prompt", "model") == text
    assert reader.lookup("chat prompt", "another model") is None
    assert reader.lookup("another prompt", "model") is None


def test_a_parsed_pydantic_object_is_stored_as_its_fields(cache):
    """langchain-core's serialization turns ``additional_kwargs["parsed"]`` (ChatOpenAI's
    structured output) into a dict, which langchain-openai's parser accepts."""

    class Verdict(BaseModel):
        score: bool

    cache.update(
        "p", "m", chat('{"score": true}', additional_kwargs={"parsed": Verdict(score=True)})
    )

    [generation] = cache.lookup("p", "m")
    assert generation.message.additional_kwargs == {"parsed": {"score": True}}


@pytest.mark.parametrize(
    "reply",
    [
        [],
        chat(""),
        [Generation(text="")],
        # Only a malformed tool call: the provider said nothing usable.
        chat("", invalid_tool_calls=[{"name": "f", "args": "{", "id": "1", "error": "bad"}]),
        [*chat("fine"), *chat("")],
    ],
    ids=["no generations", "empty message", "empty text", "only invalid tool calls", "one empty"],
)
def test_an_empty_reply_is_not_stored(cache, reply):
    cache.update("p", "m", reply)

    assert cache.lookup("p", "m") is None


def test_a_reply_that_would_not_read_back_is_not_stored(cache):
    class Opaque:
        pass

    with pytest.warns(RuntimeWarning, match="not stored because it would not read back"):
        cache.update("p", "m", chat("fine", response_metadata={"raw": Opaque()}))

    assert cache.lookup("p", "m") is None


@pytest.mark.parametrize(
    ("stored", "why"),
    [
        ([dumpd(HumanMessage("not a reply"))], "HumanMessage'\\) is not allowed"),
        # Never built: a chat model's constructor runs whatever its arguments say.
        (
            [dumpd(ChatOpenAI(api_key="sk-test", base_url="http://127.0.0.1:9/v1"))],
            "is not allowed",
        ),
        ({"not": "a list"}, "expected a list of generations, got dict"),
    ],
    ids=["a human message", "a chat model", "not a list"],
)
def test_an_entry_holding_anything_but_generations_is_a_miss_and_is_replaced(
    path, cache, stored, why
):
    cache.update("p", "m", chat("fine"))
    with closing(sqlite3.connect(path)) as db:
        db.execute("UPDATE llm_cache_v1 SET generations = ?", (json.dumps(stored),))
        db.commit()

    with pytest.warns(RuntimeWarning, match=f"an entry cannot be read back .*{why}"):
        assert cache.lookup("p", "m") is None
    cache.update("p", "m", chat("again"))
    assert cache.lookup("p", "m") == chat("again")


def test_clear_removes_every_entry_for_every_cache_on_the_file(path, cache):
    cache.update("p", "m", chat("a"))
    other = SqliteCache(path)
    other.update("q", "m", chat("b"))

    cache.clear()

    assert other.lookup("p", "m") is None
    assert other.lookup("q", "m") is None
    with pytest.raises(TypeError, match=r"takes judge= and prompt= .*, got \['llm_string'\]"):
        cache.clear(llm_string="m")


async def test_the_async_methods_answer_like_the_sync_ones(cache):
    await cache.aupdate("p", "m", chat("a"))

    assert await cache.alookup("p", "m") == chat("a")
    assert cache.lookup("p", "m") == chat("a")
    await cache.aclear()
    assert await cache.alookup("p", "m") is None


async def test_an_update_waiting_for_a_busy_file_does_not_block_the_event_loop(path):
    cache = SqliteCache(path, busy_timeout=10.0)
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    with closing(sqlite3.connect(path, isolation_level=None)) as writer:
        writer.execute("BEGIN IMMEDIATE")  # another connection holds the write lock
        ticker = asyncio.create_task(tick())
        await asyncio.wait_for(cache.aupdate("p", "m", chat("a")), timeout=0.1)
        # Handed to the writer thread: this process has it (another cache on the file too),
        # the file not yet.
        assert await cache.alookup("p", "m") == chat("a")
        assert SqliteCache(path).lookup("p", "m") == chat("a")
        with closing(sqlite3.connect(path)) as db:
            assert db.execute("SELECT COUNT(*) FROM llm_cache_v1").fetchone() == (0,)
        await asyncio.sleep(0.3)
        assert ticks >= 10, f"the event loop ticked only {ticks} times in 0.3 s"
        assert not cache.flush(timeout=0), "the write did not wait for the write lock"
        writer.execute("COMMIT")
    assert await asyncio.to_thread(cache.flush, 10)
    ticker.cancel()

    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT COUNT(*) FROM llm_cache_v1").fetchone() == (1,)


def test_a_write_that_times_out_is_a_warning_and_the_call_still_succeeds(path):
    cache = SqliteCache(path, busy_timeout=0.05)
    model = ScriptedChatModel(["Paris"], cache=cache)

    with closing(sqlite3.connect(path, isolation_level=None)) as writer:
        writer.execute("BEGIN IMMEDIATE")
        with pytest.warns(RuntimeWarning, match="1 reply not stored .*database is locked"):
            reply = model.invoke("Capital of France?")
        writer.execute("ROLLBACK")

    assert reply.content == "Paris"
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT COUNT(*) FROM llm_cache_v1").fetchone() == (0,)


def test_a_path_without_its_directory_or_in_memory_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r"directory .*missing.* does not exist"):
        SqliteCache(tmp_path / "missing" / "cache.db")
    with pytest.raises(ValueError, match=r"use langchain_core\.caches\.InMemoryCache"):
        SqliteCache(":memory:")


def test_a_relative_path_stays_the_same_file_after_a_change_of_directory(tmp_path, monkeypatch):
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path)
    cache = SqliteCache("judge-cache.db")
    cache.update("p", "m", chat("a"))
    monkeypatch.chdir(tmp_path / "elsewhere")

    found = []
    thread = threading.Thread(target=lambda: found.append(cache.lookup("p", "m")))
    thread.start()
    thread.join()

    assert found == [chat("a")]
    assert cache.path == tmp_path / "judge-cache.db"


def _open_files(path: Path) -> int:
    """How many of this process's file descriptors point at ``path``."""
    gc.collect()
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        with suppress(FileNotFoundError):  # the descriptor that listed the directory
            count += os.readlink(f"/proc/self/fd/{fd}") == str(path)
    return count


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd")
def test_threads_that_end_leave_no_open_connection(path, cache):
    before = _open_files(path)
    for _ in range(20):
        thread = threading.Thread(target=cache.lookup, args=("p", "m"))
        thread.start()
        thread.join()

    # SQLite keeps one closed connection's descriptor for reuse while another connection of
    # the process holds a lock on the file; a connection left open per thread would be 20.
    assert _open_files(path) <= before + 1


# Forks from a fresh interpreter whose only threads are the cache's: a fork copies the
# parent's locks as they are, so forking pytest's process (threads left by other tests, one
# of them inside SQLite or an import at that moment) could hang the child for reasons that
# are not the cache's. Prints the child's exit code and how many connections it opened.
FORK = """
import gc, multiprocessing, os, sys
from contextlib import suppress
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration
from langchain_evals_port.judge import SqliteCache

path = sys.argv[1]

def open_files():
    gc.collect()
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        with suppress(FileNotFoundError):
            count += os.readlink(f"/proc/self/fd/{fd}") == path
    return count

def child(cache, opened):
    before = open_files()
    cache.update("child", "m", [ChatGeneration(message=AIMessage(content="from the child"))])
    opened.value = open_files() - before

cache = SqliteCache(path)
cache.update("parent", "m", [ChatGeneration(message=AIMessage(content="from the parent"))])
context = multiprocessing.get_context("fork")
opened = context.Value("i", -1)
process = context.Process(target=child, args=(cache, opened))
process.start()
process.join()
print(process.exitcode, opened.value)
"""


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd")
@pytest.mark.processes
def test_a_forked_child_opens_its_own_connection(path, cache):
    done = subprocess.run(
        [sys.executable, "-c", FORK, str(path)],
        capture_output=True,
        text=True,
        timeout=300,  # a guard against a hang only: the run takes a second or two
        check=False,
    )
    assert done.returncode == 0, done.stderr
    exitcode, opened = done.stdout.split()
    assert exitcode == "0", done.stderr
    assert opened == "1", "the child wrote through the connection it inherited"
    assert cache.lookup("child", "m") == chat("from the child")


# Waits for "go" on stdin, then opens the cache (several processes create a new file at
# once) and writes and reads back shared and own keys; any warning (a write given up) fails.
HAMMER = """
import sys, warnings
warnings.simplefilter("error")
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration
from langchain_evals_port.judge import SqliteCache

path, name, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
print("ready", flush=True)
sys.stdin.readline()
cache = SqliteCache(path)
for n in range(rounds):
    for key in (f"shared-{n % 25}", f"{name}-{n}"):
        reply = [ChatGeneration(message=AIMessage(content=f"reply to {key}"))]
        cache.update(key, "model", reply)
        assert cache.lookup(key, "model") == reply, key
print("done", flush=True)
"""


@pytest.mark.processes
def test_processes_writing_one_new_file_at_once_lose_nothing(path):
    rounds = 100
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", HAMMER, str(path), f"worker-{k}", str(rounds)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for k in range(4)
    ]
    for worker in workers:
        assert worker.stdout.readline().strip() == "ready"
    for worker in workers:
        worker.stdin.write("go\n")
        worker.stdin.flush()
    outcomes = [worker.communicate(timeout=120) for worker in workers]

    assert [
        (worker.returncode, out.strip(), err)
        for worker, (out, err) in zip(workers, outcomes, strict=True)
    ] == [(0, "done", "")] * 4
    cache = SqliteCache(path)
    for key in [f"shared-{n}" for n in range(25)] + [f"worker-3-{n}" for n in range(rounds)]:
        assert cache.lookup(key, "model") == chat(f"reply to {key}")
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert db.execute("SELECT COUNT(*) FROM llm_cache_v1").fetchone() == (25 + 4 * rounds,)


# --- with_cache -----------------------------------------------------------------------------


def test_with_cache_answers_from_the_cache_and_leaves_the_model_as_it_was(cache):
    model = ScriptedChatModel(responder=lambda messages: f"echo {messages[-1].text}")

    cached = with_cache(model, cache)
    replies = [cached.invoke("hi").content, cached.invoke("hi").content, model.invoke("hi").content]

    assert replies == ["echo hi"] * 3
    assert len(model.calls) == 2, "the cached copy called the model once, the model itself once"
    assert model.cache is None
    assert cached.cache is cache


def test_with_cache_keeps_the_wrappers_around_the_model(cache):
    model = ScriptedChatModel([ScriptedProviderError.rate_limited(), "Paris"])
    wrapped = (
        model.bind(stop=["END"])
        .with_config(tags=["judge"])
        .with_retry(stop_after_attempt=2, wait_exponential_jitter=False)
    )

    cached = with_cache(wrapped, cache)
    replies = [cached.invoke("Capital of France?").content for _ in range(2)]

    assert type(cached) is type(wrapped)
    assert replies == ["Paris", "Paris"]
    assert [call.kwargs for call in model.calls] == [{"stop": ["END"]}] * 2, "one retry, one hit"
    assert wrapped.bound.bound.cache is None


def test_with_cache_resolves_a_model_string(cache, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    cached = with_cache("openai:gpt-4o-mini", cache)

    assert isinstance(cached, ChatOpenAI)
    assert cached.cache is cache


def test_with_cache_names_what_it_expected(cache):
    with pytest.raises(EvaluatorInputError, match=r"needs a LangChain chat model .*RunnableLambda"):
        with_cache(RunnableLambda(lambda x: x), cache)
    with pytest.raises(EvaluatorInputError, match=r"cache must be a LangChain cache .*got str"):
        with_cache(ScriptedChatModel(), "judge-cache.db")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"cache must be a LangChain cache .*got str"):
        LLMJudge(prompt=PROMPT, cache="judge-cache.db")


# --- the key: what changes the reply changes the key ------------------------------------------


class Verdict(BaseModel):
    reasoning: str
    score: bool


# The class as edited between two runs: the same module and name, another field.
EditedVerdict = create_model("Verdict", __base__=Verdict, confidence=(float, 1.0))


@pytest.mark.parametrize(
    ("first", "second", "hit"),
    [
        ({}, {}, True),
        ({}, {"model_name": "scripted-large"}, False),
        ({"bind": {"temperature": 0.0}}, {"bind": {"temperature": 0.0}}, True),
        ({"bind": {"temperature": 0.0}}, {"bind": {"temperature": 0.7}}, False),
        ({"tools": ["weather"]}, {"tools": ["weather"]}, True),
        ({"tools": ["weather"]}, {"tools": ["news"]}, False),
        ({}, {"prompt": "Is this answer short? {outputs}"}, False),
        ({}, {"continuous": True, "reply": {**VERDICT, "score": 1.0}}, False),
        ({}, {"use_reasoning": False}, False),
        ({}, {"structured_output_mode": "prompted"}, False),
        ({"output_schema": Verdict}, {"output_schema": Verdict}, True),
        ({"output_schema": Verdict}, {"output_schema": EditedVerdict}, False),
        (
            {"output_schema": Verdict.model_json_schema()},
            {"output_schema": EditedVerdict.model_json_schema()},
            False,
        ),
    ],
    ids=[
        "same judge",
        "model name",
        "same temperature",
        "temperature",
        "same tools",
        "tools",
        "prompt",
        "score schema",
        "reasoning",
        "structured output mode",
        "same schema class",
        "edited schema class",
        "schema dict",
    ],
)
def test_a_second_judge_is_answered_from_the_cache_only_when_nothing_that_matters_changed(
    cache, first, second, hit
):
    def make(options: dict[str, Any]) -> tuple[LLMJudge, ScriptedChatModel]:
        options = dict(options)
        reply = options.pop("reply", VERDICT)
        model = ScriptedChatModel(
            responder=lambda messages: reply, model_name=options.pop("model_name", "scripted")
        )
        runnable: Any = model.bind(**options.pop("bind", {}))
        if "tools" in options:
            runnable = model.bind_tools(
                [
                    {"name": name, "description": f"the {name}", "parameters": {}}
                    for name in options.pop("tools")
                ]
            )
        prompt = options.pop("prompt", PROMPT)
        return LLMJudge(prompt=prompt, model=runnable, cache=cache, **options), model

    first_judge, first_model = make(first)
    first_judge.evaluate_raw(outputs="Paris")
    second_judge, second_model = make(second)
    second_judge.evaluate_raw(outputs="Paris")

    assert len(first_model.calls) == 1
    assert len(second_model.calls) == (0 if hit else 1)


def test_message_ids_do_not_change_the_key(cache):
    model = ScriptedChatModel(responder=lambda messages: "fine")
    cached = with_cache(model, cache)

    cached.invoke([HumanMessage("hi", id="first")])
    cached.invoke([HumanMessage("hi", id="second")])

    assert len(model.calls) == 1


class KeyRecorder(BaseCache):
    """Records every lookup's ``llm_string`` and answers it with one verdict, so a real
    provider's judge runs without a server."""

    def __init__(self) -> None:
        self.llm_strings: list[str] = []

    def lookup(self, prompt: str, llm_string: str) -> list[ChatGeneration]:
        self.llm_strings.append(llm_string)
        return chat(json.dumps(VERDICT), additional_kwargs={"parsed": VERDICT})

    def update(self, prompt: str, llm_string: str, return_val: Any) -> None:
        raise AssertionError("every lookup is a hit")

    def clear(self, **kwargs: Any) -> None:
        self.llm_strings.clear()


def test_a_real_providers_key_holds_its_parameters_and_our_schema_class_digest():
    """LangChain keys ChatOpenAI's native structured output by the schema class's bare name;
    the judge adds the class's JSON schema, so a changed class is a miss."""
    recorder = KeyRecorder()
    openai = ChatOpenAI(api_key="sk-test", base_url="http://127.0.0.1:9/v1", model="gpt-4o-mini")
    judges = {
        "base": LLMJudge(prompt=PROMPT, model=openai, cache=recorder),
        "temperature": LLMJudge(
            prompt=PROMPT, model=openai.model_copy(update={"temperature": 0.7}), cache=recorder
        ),
        "model": LLMJudge(
            prompt=PROMPT, model=openai.model_copy(update={"model_name": "gpt-4o"}), cache=recorder
        ),
        "class": LLMJudge(prompt=PROMPT, model=openai, cache=recorder, output_schema=Verdict),
        "edited class": LLMJudge(
            prompt=PROMPT, model=openai, cache=recorder, output_schema=EditedVerdict
        ),
    }

    for judge in judges.values():
        assert judge.evaluate_raw(outputs="Paris")["score"] is True
    keys = dict(zip(judges, recorder.llm_strings, strict=True))

    assert len(set(keys.values())) == len(keys)
    langchains_own = [
        keys[name].split("---output_schema:")[0] for name in ("class", "edited class")
    ]
    assert langchains_own[0] == langchains_own[1]
    assert "<class " in langchains_own[0]


# --- judges and re-runs ---------------------------------------------------------------------

CASES = [
    {"inputs": f"What is the capital of {country}?", "outputs": answer}
    for country, answer in [
        ("France", "Paris"),
        ("Peru", "Cusco"),
        ("Japan", "Tokyo"),
        ("France", "Lyon"),
        ("Italy", "Rome"),
        ("Canada", "Ottawa"),
    ]
]


def correctness(model: ScriptedChatModel, path: Path) -> LLMJudge:
    return LLMJudge(prompt=QUESTION, model=model, cache=SqliteCache(path))


def _seen(results: list[Any]) -> list[tuple[Any, ...]]:
    return [(r.score, r.comment, r.metadata["token_usage"]) for r in results]


def test_an_unchanged_rerun_makes_no_judge_calls(path):
    first_model = ScriptedChatModel(responder=grade)
    first = correctness(first_model, path).batch(CASES, config={"max_concurrency": 3})
    # Nothing is shared with the first run but the file.
    second_model = ScriptedChatModel(responder=grade)
    second = correctness(second_model, path).batch(CASES, config={"max_concurrency": 3})

    assert len(first_model.calls) == len(CASES)
    assert second_model.calls == []
    assert _seen(second) == _seen(first)
    assert [r.score for r in first] == [True, False, False, False, False, False]


async def test_an_unchanged_async_rerun_makes_no_judge_calls(path):
    first_model = ScriptedChatModel(responder=grade)
    first = await correctness(first_model, path).abatch(CASES, config={"max_concurrency": 4})
    second_model = ScriptedChatModel(responder=grade)
    second = await correctness(second_model, path).abatch(CASES, config={"max_concurrency": 4})

    assert len(first_model.calls) == len(CASES)
    assert second_model.calls == []
    assert _seen(second) == _seen(first)


def test_a_repaired_judge_conversation_is_replayed_whole(path):
    first_model = ScriptedChatModel(["no JSON here", VERDICT])
    first = LLMJudge(prompt=PROMPT, model=first_model, cache=SqliteCache(path))
    first_result = first.invoke({"outputs": "Paris"})
    second_model = ScriptedChatModel()  # no replies: a call would raise
    second = LLMJudge(prompt=PROMPT, model=second_model, cache=SqliteCache(path))
    second_result = second.invoke({"outputs": "Paris"})

    assert len(first_model.calls) == 2
    assert second_model.calls == []
    assert second_result.metadata["repairs"] == first_result.metadata["repairs"] == 1
    assert second_result.score is True


def test_a_failed_call_is_not_cached(cache):
    model = ScriptedChatModel([ScriptedProviderError.rate_limited(), VERDICT])
    judge = LLMJudge(prompt=PROMPT, model=model, cache=cache, on_error="record")

    outcomes = [judge.invoke({"outputs": "Paris"}) for _ in range(3)]

    assert [(r.outcome, r.error_code) for r in outcomes] == [
        ("failed", "rate_limited"),
        ("verdict", None),
        ("verdict", None),
    ]
    assert len(model.calls) == 2, "the failure was retried, then the verdict came from the cache"


def test_the_model_passed_to_a_cached_judge_stays_uncached(cache):
    model = ScriptedChatModel(responder=lambda messages: VERDICT)
    judge = LLMJudge(prompt=PROMPT, model=model, cache=cache)

    judge(outputs="Paris")
    judge(outputs="Paris")
    model.invoke("The application's own call")
    model.invoke("The application's own call")

    assert len(model.calls) == 3
    assert model.cache is None


def test_a_copy_of_a_judge_with_a_cache_uses_it(cache):
    model = ScriptedChatModel(responder=lambda messages: VERDICT)
    uncached = LLMJudge(prompt=PROMPT, model=model)
    uncached(outputs="Paris")

    cached = uncached.model_copy(update={"cache": cache})
    cached(outputs="Paris")
    cached(outputs="Paris")
    uncached(outputs="Paris")

    assert len(model.calls) == 3


# A judge run in a fresh interpreter: prints how many calls its model received and the scores.
RUN = """
import json, sys
from langchain_evals_port.judge import LLMJudge, SqliteCache
from langchain_evals_port.testing import ScriptedChatModel

def grade(messages):
    correct = "Paris" in messages[0].text
    return {"reasoning": f"Thus, the score should be: {str(correct).lower()}.", "score": correct}

model = ScriptedChatModel(responder=grade)
judge = LLMJudge(prompt=sys.argv[2], model=model, cache=SqliteCache(sys.argv[1]))
results = judge.batch(json.loads(sys.argv[3]))
print(json.dumps({"calls": len(model.calls), "scores": [r.score for r in results]}))
"""


@pytest.mark.processes
def test_an_unchanged_rerun_in_another_process_makes_no_judge_calls(path):
    def run() -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, "-c", RUN, str(path), QUESTION, json.dumps(CASES)],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return json.loads(done.stdout)

    first, second = run(), run()

    assert first == {"calls": len(CASES), "scores": [True, False, False, False, False, False]}
    assert second == {**first, "calls": 0}


def test_entries_are_cleared_by_judge_or_by_prompt(path):
    cache = SqliteCache(path)
    model = ScriptedChatModel(responder=lambda messages: {"reasoning": "ok", "score": True})
    right = LLMJudge(prompt="Is {outputs} right?", model=model, feedback_key="right", cache=cache)
    polite = LLMJudge(
        prompt=prompts.CONCISENESS_PROMPT, model=model, feedback_key="polite", cache=cache
    )

    def ask_all() -> None:
        for judge in (right, polite):
            for output in ("a", "b"):
                judge.invoke({"outputs": output, "inputs": "q"})

    ask_all()
    assert len(model.calls) == 4
    assert cache.judges() == {"polite": 2, "right": 2}
    assert cache.remove(judge="right") == 2
    ask_all()
    assert len(model.calls) == 6  # only the cleared judge was asked again
    assert cache.remove(prompt="concise") == 2  # a part of the conciseness prompt's text
    assert cache.remove(judge="right", prompt="concise") == 0
    ask_all()
    assert len(model.calls) == 8
    cache.clear(judge="polite")
    assert cache.judges() == {"right": 2}


def test_a_file_of_an_earlier_release_keeps_its_entries_and_gains_labels(path):
    with closing(sqlite3.connect(path)) as db:
        db.execute(
            "CREATE TABLE llm_cache_v1 (key BLOB PRIMARY KEY, generations TEXT NOT NULL) "
            "WITHOUT ROWID"
        )
        db.commit()
    SqliteCache(path).update("p", "m", chat("kept"))
    cache = SqliteCache(path)  # a second process opening the file after the upgrade
    assert cache.lookup("p", "m") == chat("kept")
    assert cache.remove(judge="right") == 0  # unlabelled: only clear() removes it
    cache.clear()
    assert cache.lookup("p", "m") is None
