"""``SqliteCache``: real SQLite files, real threads, forked and spawned processes."""

from __future__ import annotations

import asyncio
import gc
import json
import multiprocessing
import os
import sqlite3
import subprocess
import sys
import threading
from contextlib import closing, suppress
from pathlib import Path
from typing import Any

import pytest
from langchain_core.load import dumpd
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, Generation
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

from langchain_evals_port.judge import SqliteCache
from langchain_evals_port.testing import ScriptedChatModel


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "judge-cache.db"


@pytest.fixture
def cache(path: Path) -> SqliteCache:
    return SqliteCache(path)


def chat(text: str, **message: Any) -> list[ChatGeneration]:
    return [ChatGeneration(message=AIMessage(content=text, **message))]


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
    with pytest.raises(TypeError, match=r"takes no arguments, got \['llm_string'\]"):
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
        update = asyncio.create_task(cache.aupdate("p", "m", chat("a")))
        await asyncio.sleep(0.3)
        assert not update.done(), "the update did not wait for the write lock"
        assert ticks >= 10, f"the event loop ticked only {ticks} times in 0.3 s"
        writer.execute("COMMIT")
    await asyncio.wait_for(update, timeout=10)
    ticker.cancel()

    assert await cache.alookup("p", "m") == chat("a")


def test_a_write_that_times_out_is_a_warning_and_the_call_still_succeeds(path):
    cache = SqliteCache(path, busy_timeout=0.05)
    model = ScriptedChatModel(["Paris"], cache=cache)

    with closing(sqlite3.connect(path, isolation_level=None)) as writer:
        writer.execute("BEGIN IMMEDIATE")
        with pytest.warns(RuntimeWarning, match="a reply is not stored .*database is locked"):
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


def _use_the_inherited_cache(cache: SqliteCache, path: Path, opened: Any) -> None:
    before = _open_files(path)
    cache.update("child", "m", chat("from the child"))
    opened.value = _open_files(path) - before


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd")
def test_a_forked_child_opens_its_own_connection(path, cache):
    cache.update("parent", "m", chat("from the parent"))
    context = multiprocessing.get_context("fork")
    opened = context.Value("i", -1)

    child = context.Process(target=_use_the_inherited_cache, args=(cache, path, opened))
    child.start()
    child.join(timeout=30)

    assert child.exitcode == 0
    assert opened.value == 1, "the child wrote through the connection it inherited"
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
