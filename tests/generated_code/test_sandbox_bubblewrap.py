"""BubblewrapSandboxRunner: what the sandbox looks like from inside, and the run's plumbing.

Skipped loudly when bubblewrap cannot run here, and FAILS under ``CI=true`` (``scripts/test.sh``
installs it when it can). The hostile-code tests are in ``test_sandbox_security.py``.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from langchain_evals_port.code._bubblewrap import BubblewrapSandboxRunner
from langchain_evals_port.code._sandbox import Limits, SandboxRunner
from langchain_evals_port.core.errors import (
    EvaluationFailure,
    EvaluatorInputError,
    ToolNotFoundError,
)

pytestmark = [pytest.mark.processes, pytest.mark.services]

PY = ["python3", "main.py"]


def test_it_is_a_sandbox_runner() -> None:
    assert isinstance(BubblewrapSandboxRunner(), SandboxRunner)


def test_a_missing_bwrap_is_tool_not_found() -> None:
    runner = BubblewrapSandboxRunner(bwrap="/nonexistent/bwrap")
    with pytest.raises(ToolNotFoundError, match="bubblewrap is not installed") as caught:
        runner.run({}, ["true"])
    assert caught.value.tool == "bubblewrap"
    assert caught.value.code == "tool_not_found"
    with pytest.raises(ToolNotFoundError):
        asyncio.run(runner.arun({}, ["true"]))


def test_bad_settings_are_refused() -> None:
    with pytest.raises(EvaluatorInputError):
        BubblewrapSandboxRunner(work_dir="work")
    with pytest.raises(EvaluatorInputError):
        BubblewrapSandboxRunner(host_uid=0)


def test_files_are_copied_into_a_fresh_work_dir(bwrap: BubblewrapSandboxRunner) -> None:
    code = """
import os
print(os.getcwd(), sorted(os.listdir(".")), open("pkg/data.txt").read())
print(open("blob.bin", "rb").read().hex())
open("written.txt", "w").write("mine")
print(open("written.txt").read())
"""
    files: dict[str, str | bytes] = {"main.py": code, "pkg/data.txt": "héllo", "blob.bin": b"\x00"}
    result = bwrap.run(files, PY)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "/work ['blob.bin', 'main.py', 'pkg'] héllo",
        "00",
        "mine",
    ]
    # The next run starts from nothing.
    again = bwrap.run({"main.py": "import os; print(sorted(os.listdir('.')))"}, PY)
    assert again.stdout == "['main.py']\n"


def test_the_environment_holds_only_what_is_given(
    bwrap: BubblewrapSandboxRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOST_SECRET", "leak")
    result = bwrap.run({}, ["env"], env={"GREETING": "hi there"})
    assert result.exit_code == 0, result.stderr
    # bwrap itself sets PWD to the work directory.
    assert sorted(result.stdout.splitlines()) == [
        "GREETING=hi there",
        "PATH=/usr/local/bin:/usr/bin:/bin",
        "PWD=/work",
    ]


def test_the_sandbox_from_inside(bwrap: BubblewrapSandboxRunner) -> None:
    code = """
import os, socket, subprocess, sys
print(os.getuid(), os.getgid(), os.getpid(), socket.gethostname())
print(sorted(p for p in os.listdir("/proc") if p.isdigit()))
print(sorted(os.listdir("/")))
print(subprocess.run(["unshare", "--user", "true"], capture_output=True).returncode)
print(repr(sys.stdin.read()), sorted(os.listdir("/proc/self/fd")))
"""
    result = bwrap.run({"main.py": code}, PY)
    assert result.exit_code == 0, result.stderr
    ids, pids, root, nested, fds = result.stdout.splitlines()
    uid, gid, pid, hostname = ids.split()
    assert (uid, gid, hostname) == ("65534", "65534", "sandbox")
    assert int(pid) < 10
    assert len(eval(pids)) < 5
    assert "root" not in root
    assert "home" not in root
    assert "work" in root
    assert nested != "0"  # no further user namespaces
    assert fds == "'' ['0', '1', '2', '3']"  # stdin is empty; no descriptor of the host's


def test_concurrent_runs_do_not_share_the_process_limit(bwrap: BubblewrapSandboxRunner) -> None:
    code = """
import os, time
for _ in range(10):
    if os.fork() == 0:
        time.sleep(1.5)
        os._exit(0)
time.sleep(0.5)
print("forked")
"""

    async def main() -> list[str]:
        runs = [bwrap.arun({"main.py": code}, PY, limits=Limits(processes=16)) for _ in range(3)]
        return [result.stdout for result in await asyncio.gather(*runs)]

    # 33 processes of the same host uid at once, each sandbox under its own limit of 16.
    assert asyncio.run(main()) == ["forked\n"] * 3


def test_the_sandbox_is_not_root_on_the_host(
    bwrap: BubblewrapSandboxRunner,
    processes_with: Callable[[str], list[int]],
    host_uid_of: Callable[[int], int],
) -> None:
    token = f"uid-probe-{uuid.uuid4().hex}"
    seen: list[int] = []

    def watch() -> None:
        deadline = time.monotonic() + 10
        while not seen and time.monotonic() < deadline:
            seen.extend(host_uid_of(pid) for pid in processes_with(token))
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    result = bwrap.run({"main.py": "import time; time.sleep(1.5)"}, [*PY, token])
    watcher.join()
    assert result.exit_code == 0, result.stderr
    assert seen
    assert 0 not in seen
    if os.geteuid() == 0:
        assert set(seen) == {65534}


@pytest.mark.parametrize(("script", "code"), [("pass", 0), ("raise SystemExit(7)", 7)])
def test_exit_codes(bwrap: BubblewrapSandboxRunner, script: str, code: int) -> None:
    result = bwrap.run({"main.py": script}, PY)
    assert result.exit_code == code
    assert not result.timed_out
    assert result.details["runner"] == "bubblewrap"


def test_a_signal_is_a_negative_exit_code(bwrap: BubblewrapSandboxRunner) -> None:
    result = bwrap.run({"main.py": "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"}, PY)
    assert result.exit_code == -9


def test_a_missing_command_exits_127(bwrap: BubblewrapSandboxRunner) -> None:
    result = bwrap.run({}, ["no-such-command-here"])
    assert result.exit_code == 127
    assert "no-such-command-here" in result.stderr


def test_big_output_on_both_streams_is_drained_and_bounded(
    bwrap: BubblewrapSandboxRunner,
) -> None:
    code = """
import sys
for _ in range(400):
    sys.stdout.write("o" * 10_000)
    sys.stderr.write("e" * 10_000)
"""
    result = bwrap.run({"main.py": code}, PY, limits=Limits(output_bytes=500, wall_seconds=20))
    assert result.exit_code == 0
    assert not result.timed_out
    assert result.stdout == "o" * 500
    assert result.stderr == "e" * 500
    assert result.truncated
    assert result.duration < 10


def test_files_past_the_size_limit_cannot_be_written(bwrap: BubblewrapSandboxRunner) -> None:
    code = "open('big', 'wb').write(b'x' * (3 << 20))"
    assert bwrap.run({"main.py": code}, PY, limits=Limits(file_size_mb=4)).exit_code == 0
    result = bwrap.run({"main.py": code}, PY, limits=Limits(file_size_mb=1))
    assert result.exit_code == 1
    assert "File too large" in result.stderr


def test_the_work_dir_is_capped_in_size(bwrap: BubblewrapSandboxRunner) -> None:
    code = """
for n in range(100):
    open(f"part{n}", "wb").write(b"x" * (1 << 20))
"""
    result = bwrap.run({"main.py": code}, PY, limits=Limits(memory_mb=64, file_size_mb=2))
    assert result.exit_code == 1
    assert "No space left on device" in result.stderr


def test_read_only_binds_are_visible_but_not_writable(
    bwrap: BubblewrapSandboxRunner, shared_dir: Path
) -> None:
    (shared_dir / "lib.py").write_text("VALUE = 42\n")
    (shared_dir / "lib.py").chmod(0o644)
    runner = BubblewrapSandboxRunner(ro_binds={str(shared_dir): "/opt/lib"})
    code = """
import sys
sys.path.insert(0, "/opt/lib")
import lib
print(lib.VALUE)
try:
    open("/opt/lib/lib.py", "w")
except OSError as error:
    print(error.errno)
"""
    result = runner.run({"main.py": code}, PY)
    assert result.stdout.split() == ["42", "30"], result.stderr  # EROFS


def test_a_sandbox_that_cannot_be_set_up_is_a_sandbox_error(
    bwrap: BubblewrapSandboxRunner,
) -> None:
    runner = BubblewrapSandboxRunner(ro_binds={"/nonexistent/dir": "/opt/x"})
    with pytest.raises(EvaluationFailure, match="could not set up") as caught:
        runner.run({}, ["true"])
    assert caught.value.code == "sandbox_error"


def test_arun_is_the_async_twin(bwrap: BubblewrapSandboxRunner) -> None:
    async def main() -> list[int | None]:
        runs = [
            bwrap.arun({"main.py": f"import time; time.sleep(0.5); raise SystemExit({n})"}, PY)
            for n in range(3)
        ]
        started = time.monotonic()
        results = await asyncio.gather(*runs)
        assert time.monotonic() - started < 1.4
        return [result.exit_code for result in results]

    assert asyncio.run(main()) == [0, 1, 2]


def test_arun_times_out_and_kills_the_sandbox(
    bwrap: BubblewrapSandboxRunner, processes_with: Callable[[str], list[int]]
) -> None:
    token = f"bwrap-timeout-{uuid.uuid4().hex}"
    result = asyncio.run(
        bwrap.arun(
            {"main.py": "import time; time.sleep(30)"},
            [*PY, token],
            limits=Limits(wall_seconds=0.5),
        )
    )
    assert result.timed_out
    assert result.exit_code is None
    assert processes_with(token) == []


def test_cancelling_arun_kills_the_sandbox(
    bwrap: BubblewrapSandboxRunner, processes_with: Callable[[str], list[int]]
) -> None:
    token = f"bwrap-cancel-{uuid.uuid4().hex}"

    async def main() -> None:
        task = asyncio.create_task(
            bwrap.arun({"main.py": "import time; time.sleep(30)"}, [*PY, token])
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
