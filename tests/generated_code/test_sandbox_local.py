"""LocalProcessSandboxRunner: files, environment, exit codes, limits, output, timeouts."""

from __future__ import annotations

import asyncio
import os
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from langchain_evals_port.code._local import LocalProcessSandboxRunner
from langchain_evals_port.code._sandbox import Limits, SandboxRunner
from langchain_evals_port.core.errors import EvaluatorInputError

pytestmark = pytest.mark.processes

PY = [sys.executable, "main.py"]


@pytest.fixture
def local() -> LocalProcessSandboxRunner:
    return LocalProcessSandboxRunner()


def test_it_is_a_sandbox_runner(local: LocalProcessSandboxRunner) -> None:
    assert isinstance(local, SandboxRunner)


def test_files_are_placed_in_a_fresh_work_dir_that_is_removed_afterwards(
    local: LocalProcessSandboxRunner,
) -> None:
    code = """
import os
print(os.getcwd())
print(open("pkg/data.txt").read())
print(open("blob.bin", "rb").read().hex())
print(sorted(os.listdir(".")))
"""
    files: dict[str, str | bytes] = {
        "main.py": code,
        "pkg/data.txt": "héllo",
        "blob.bin": b"\x00\xff",
    }
    result = local.run(files, PY)
    assert result.exit_code == 0, result.stderr
    cwd, data, blob, listing = result.stdout.splitlines()
    assert (data, blob, listing) == ("héllo", "00ff", "['blob.bin', 'main.py', 'pkg']")
    assert not Path(cwd).exists()


def test_only_the_given_environment_and_a_minimal_path(
    local: LocalProcessSandboxRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOST_SECRET", "leak")
    result = local.run({}, ["env"], env={"GREETING": "hi there"})
    assert result.exit_code == 0
    assert sorted(result.stdout.splitlines()) == [
        "GREETING=hi there",
        "PATH=/usr/local/bin:/usr/bin:/bin",
    ]
    result = local.run({}, ["env"], env={"PATH": "/bin", "LC_CTYPE": "C.UTF-8"})
    assert sorted(result.stdout.splitlines()) == ["LC_CTYPE=C.UTF-8", "PATH=/bin"]


@pytest.mark.parametrize(("script", "code"), [("pass", 0), ("raise SystemExit(7)", 7)])
def test_exit_codes(local: LocalProcessSandboxRunner, script: str, code: int) -> None:
    result = local.run({"main.py": script}, PY)
    assert result.exit_code == code
    assert not result.timed_out
    assert result.duration > 0


def test_a_signal_is_a_negative_exit_code(local: LocalProcessSandboxRunner) -> None:
    result = local.run({"main.py": "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"}, PY)
    assert result.exit_code == -9


def test_a_missing_command_exits_127(local: LocalProcessSandboxRunner) -> None:
    result = local.run({}, ["no-such-command-here"])
    assert result.exit_code == 127
    assert "no-such-command-here" in result.stderr


def test_big_output_on_both_streams_is_drained_and_bounded(
    local: LocalProcessSandboxRunner,
) -> None:
    # Far more than a pipe buffer on both streams at once: a runner that read one stream
    # after the other, or only after the exit, would deadlock here.
    code = """
import sys
for _ in range(400):
    sys.stdout.write("o" * 10_000)
    sys.stderr.write("e" * 10_000)
print("end")
"""
    result = local.run({"main.py": code}, PY, limits=Limits(output_bytes=1000, wall_seconds=20))
    assert result.exit_code == 0
    assert not result.timed_out
    assert result.stdout == "o" * 1000
    assert result.stderr == "e" * 1000
    assert result.truncated
    assert result.details["stdout_dropped_bytes"] == 4_000_000 + 4 - 1000
    assert result.duration < 10


def test_output_within_the_limit_is_not_truncated(local: LocalProcessSandboxRunner) -> None:
    result = local.run({"main.py": "print('x' * 99)"}, PY, limits=Limits(output_bytes=100))
    assert result.stdout == "x" * 99 + "\n"
    assert not result.truncated


def test_a_timeout_kills_the_whole_process_group(
    local: LocalProcessSandboxRunner, processes_with: Callable[[str], list[int]]
) -> None:
    token = f"local-child-{uuid.uuid4().hex}"
    code = f"""
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", {token!r}])
print("started", flush=True)
time.sleep(30)
"""
    started = time.monotonic()
    result = local.run({"main.py": code}, PY, limits=Limits(wall_seconds=1))
    assert result.timed_out
    assert result.exit_code is None
    assert result.stdout == "started\n"
    assert time.monotonic() - started < 5
    assert processes_with(token) == []


def test_children_left_behind_by_a_finished_run_are_ended(
    local: LocalProcessSandboxRunner, processes_with: Callable[[str], list[int]]
) -> None:
    token = f"local-orphan-{uuid.uuid4().hex}"
    code = f"""
import subprocess, sys
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", {token!r}])
"""
    started = time.monotonic()
    result = local.run({"main.py": code}, PY, limits=Limits(wall_seconds=20))
    assert result.exit_code == 0
    assert not result.timed_out
    assert time.monotonic() - started < 5
    assert processes_with(token) == []


def test_a_run_that_closes_its_pipes_is_still_waited_for(
    local: LocalProcessSandboxRunner,
) -> None:
    code = "import os, time\nos.close(1)\nos.close(2)\ntime.sleep(0.5)\nraise SystemExit(4)"
    result = local.run({"main.py": code}, PY)
    assert result.exit_code == 4
    assert result.duration >= 0.5


def test_memory_past_the_address_space_limit_is_a_memory_error(
    local: LocalProcessSandboxRunner,
) -> None:
    code = "b = bytearray(300 << 20)\nprint(len(b))"
    assert local.run({"main.py": code}, PY, limits=Limits(memory_mb=1024)).exit_code == 0
    result = local.run({"main.py": code}, PY, limits=Limits(memory_mb=128))
    assert result.exit_code == 1
    assert "MemoryError" in result.stderr


def test_files_past_the_size_limit_cannot_be_written(local: LocalProcessSandboxRunner) -> None:
    code = "open('big', 'wb').write(b'x' * (3 << 20))"
    assert local.run({"main.py": code}, PY, limits=Limits(file_size_mb=4)).exit_code == 0
    result = local.run({"main.py": code}, PY, limits=Limits(file_size_mb=1))
    assert result.exit_code == 1
    assert "File too large" in result.stderr


def test_cpu_time_past_the_limit_is_killed(local: LocalProcessSandboxRunner) -> None:
    result = local.run({"main.py": "while True: pass"}, PY, limits=Limits(cpu_seconds=1))
    assert result.exit_code in (-24, -9)
    assert not result.timed_out


@pytest.mark.skipif(os.geteuid() == 0, reason="the kernel does not limit root's processes")
def test_processes_past_the_limit_cannot_be_started(local: LocalProcessSandboxRunner) -> None:
    code = """
import os, time
n = 0
try:
    for _ in range(200):
        if os.fork() == 0:
            time.sleep(5)
            os._exit(0)
        n += 1
except BlockingIOError:
    print("refused after", n)
"""
    result = local.run({"main.py": code}, PY, limits=Limits(processes=20))
    assert "refused after" in result.stdout


@pytest.mark.parametrize("name", ["/etc/passwd", "../escape.py", "", "a/../../b"])
def test_file_names_must_stay_in_the_work_dir(local: LocalProcessSandboxRunner, name: str) -> None:
    with pytest.raises(EvaluatorInputError, match="relative"):
        local.run({name: "x"}, PY)


@pytest.mark.parametrize("command", ["python3 main.py", [], [1]])
def test_the_command_must_be_a_list_of_strings(
    local: LocalProcessSandboxRunner, command: object
) -> None:
    with pytest.raises(EvaluatorInputError, match="command"):
        local.run({}, command)  # type: ignore[arg-type]


def test_arun_is_the_async_twin(local: LocalProcessSandboxRunner) -> None:
    async def main() -> list[int | None]:
        runs = [
            local.arun({"main.py": f"import time; time.sleep(0.5); raise SystemExit({n})"}, PY)
            for n in range(3)
        ]
        started = time.monotonic()
        results = await asyncio.gather(*runs)
        assert time.monotonic() - started < 1.4  # concurrent, not one after the other
        return [result.exit_code for result in results]

    assert asyncio.run(main()) == [0, 1, 2]


def test_arun_times_out_like_run(local: LocalProcessSandboxRunner) -> None:
    result = asyncio.run(
        local.arun({"main.py": "import time; time.sleep(30)"}, PY, limits=Limits(wall_seconds=0.5))
    )
    assert result.timed_out
    assert result.exit_code is None


def test_cancelling_arun_kills_the_run(
    local: LocalProcessSandboxRunner, processes_with: Callable[[str], list[int]]
) -> None:
    token = f"local-cancel-{uuid.uuid4().hex}"

    async def main() -> None:
        task = asyncio.create_task(
            local.arun({"main.py": "import time; time.sleep(30)"}, [*PY, token])
        )
        await asyncio.sleep(0.5)
        assert processes_with(token)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    deadline = time.monotonic() + 3
    while processes_with(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(token) == []
