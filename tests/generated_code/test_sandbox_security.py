"""Hostile code in a sandboxed runner is contained, and the host is unaffected.

Every test first runs the same probe with the limit lifted (network allowed, a writable
bind, more memory, more processes, more time, or no sandbox at all) and checks that it then
succeeds — so the probe really does what it claims — and only then checks that the
sandboxed run fails the specific way the limit makes it fail.

The ``runner`` fixture (``conftest.SANDBOXES``) runs each test against every sandboxed runner;
one that cannot run here is skipped loudly, and FAILS under ``CI=true``.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from langchain_evals_port.code._local import LocalProcessSandboxRunner
from langchain_evals_port.code._sandbox import Limits, SandboxResult, SandboxRunner

pytestmark = pytest.mark.processes

RunnerFactory = Callable[..., SandboxRunner]
"""The ``runner`` fixture: builds a sandboxed runner (``ro_binds``/``rw_binds`` optional)."""

PY = ["python3", "probe.py"]


@dataclass
class Listener:
    """A TCP listener on the host's 127.0.0.1 that records every connection it accepts."""

    sock: socket.socket
    accepted: list[bytes] = field(default_factory=list)

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    self.accepted.append(conn.recv(100))
                except OSError:
                    self.accepted.append(b"")


@pytest.fixture
def listener() -> Iterator[Listener]:
    """A listener on 127.0.0.1 (never any other address)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    server = Listener(sock)
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    yield server
    sock.close()
    thread.join(timeout=5)


def _report(result: SandboxResult) -> str:
    return f"exit={result.exit_code} stdout={result.stdout!r} stderr={result.stderr[-800:]!r}"


def test_network_is_unreachable(runner: RunnerFactory, listener: Listener) -> None:
    probe = f"""
import socket, sys
try:
    with socket.create_connection(("127.0.0.1", {listener.port}), timeout=3) as conn:
        conn.sendall(b"escaped")
except OSError as error:
    print("blocked", type(error).__name__, error.errno)
    sys.exit(3)
print("connected")
"""
    sandbox = runner()
    lifted = sandbox.run({"probe.py": probe}, PY, limits=Limits(network=True))
    assert lifted.exit_code == 0, _report(lifted)
    assert "connected" in lifted.stdout
    assert listener.accepted == [b"escaped"]
    listener.accepted.clear()

    result = sandbox.run({"probe.py": probe}, PY, limits=Limits(network=False))
    assert result.exit_code == 3, _report(result)
    blocked = result.stdout.split()
    assert blocked[:2] in (["blocked", "ConnectionRefusedError"], ["blocked", "OSError"])
    assert blocked[2] in ("111", "101", "99"), result.stdout  # refused, unreachable, no address
    assert listener.accepted == []


def test_writes_outside_the_work_dir_do_not_reach_the_host(
    runner: RunnerFactory, shared_dir: Path
) -> None:
    outside = shared_dir / "outside"
    outside.mkdir()
    outside.chmod(0o777)
    marker = outside / "marker.txt"
    marker.write_text("original")
    marker.chmod(0o666)
    probe = f"""
import sys
failures = []
for path in ({str(marker)!r}, {str(outside / "new.txt")!r}, "/usr/sandbox-probe.txt"):
    try:
        with open(path, "w") as handle:
            handle.write("overwritten")
    except OSError as error:
        failures.append(f"{{path}}: {{type(error).__name__}} {{error.errno}}")
print("\\n".join(failures) or "all written")
sys.exit(3 if len(failures) == 3 else 0)
"""
    # Lifted: the host directory bound writable at the same path; /usr stays read-only.
    lifted = runner(rw_binds={str(outside): str(outside)}).run({"probe.py": probe}, PY)
    assert lifted.exit_code == 0, _report(lifted)
    assert marker.read_text() == "overwritten"
    assert (outside / "new.txt").read_text() == "overwritten"
    marker.write_text("original")
    (outside / "new.txt").unlink()

    for sandbox in (runner(ro_binds={str(outside): str(outside)}), runner()):
        result = sandbox.run({"probe.py": probe}, PY)
        assert result.exit_code == 3, _report(result)
        errors = result.stdout.splitlines()
        # Bound read-only: EROFS (30) or EACCES (13); not there at all: ENOENT (2).
        assert all(line.split()[-1] in ("30", "13", "2") for line in errors), result.stdout
        assert "/usr/sandbox-probe.txt: " in result.stdout
    assert marker.read_text() == "original"
    assert not (outside / "new.txt").exists()
    assert not Path("/usr/sandbox-probe.txt").exists()


def test_the_host_home_root_and_repository_are_not_readable(
    runner: RunnerFactory, shared_dir: Path
) -> None:
    home = shared_dir / "home"
    home.mkdir()
    (home / ".secret").write_text("host-secret-token")
    repository = Path(__file__).resolve().parents[2]
    probe = f"""
import os, sys
seen = []
for path in ({str(home / ".secret")!r}, {str(repository / "pyproject.toml")!r}):
    try:
        with open(path) as handle:
            seen.append(handle.read()[:40])
    except OSError as error:
        print(path, type(error).__name__, error.errno)
try:
    seen.append(",".join(os.listdir("/root")))
except OSError as error:
    print("/root", type(error).__name__, error.errno)
print("SEEN", seen)
sys.exit(0 if len(seen) == 3 else 3)
"""
    env = {"HOME": str(home)}
    # Lifted: no sandbox at all (the tests may run as a user who cannot list /root).
    lifted = LocalProcessSandboxRunner().run({"probe.py": probe}, PY, env=env)
    assert "host-secret-token" in lifted.stdout, _report(lifted)
    if os.access("/root", os.R_OK):
        assert lifted.exit_code == 0, _report(lifted)

    result = runner().run({"probe.py": probe}, PY, env=env)
    assert result.exit_code == 3, _report(result)
    assert "host-secret-token" not in result.stdout
    assert "SEEN []" in result.stdout
    for line in result.stdout.splitlines()[:3]:
        assert line.split()[-2:] in (["FileNotFoundError", "2"], ["PermissionError", "13"]), line


def test_memory_past_the_limit_is_refused(runner: RunnerFactory) -> None:
    probe = """
import sys
try:
    block = b"x" * (200 << 20)
except MemoryError:
    print("MemoryError")
    sys.exit(3)
print("allocated", len(block) >> 20)
"""
    sandbox = runner()
    lifted = sandbox.run({"probe.py": probe}, PY, limits=Limits(memory_mb=768))
    assert lifted.exit_code == 0, _report(lifted)
    assert "allocated 200" in lifted.stdout

    result = sandbox.run({"probe.py": probe}, PY, limits=Limits(memory_mb=128))
    assert not result.timed_out
    oom_killed = result.exit_code in (-9, 137) or bool(result.details.get("oom_killed"))
    assert (result.exit_code == 3 and "MemoryError" in result.stdout) or oom_killed, _report(result)


FORK_BOMB = """
import json, os, sys, time
children, error = [], None
while len(children) < {target}:
    try:
        pid = os.fork()
    except OSError as failure:
        error = f"{{type(failure).__name__}} {{failure.errno}}"
        break
    if pid == 0:
        time.sleep(20)
        os._exit(0)
    children.append(pid)
print(json.dumps({{"peak": len(children) + 1, "error": error}}), flush=True)
for pid in children:
    os.kill(pid, 9)
sys.exit(3 if error else 0)
"""


def test_a_fork_bomb_is_refused_under_the_process_limit(
    runner: RunnerFactory, processes_with: Callable[[str], list[int]]
) -> None:
    token = f"forkbomb-{uuid.uuid4().hex}"
    files = {"probe.py": FORK_BOMB.format(target=80)}
    command = [*PY, token]
    sandbox = runner()
    lifted = sandbox.run(files, command, limits=Limits(processes=400, wall_seconds=20))
    assert lifted.exit_code == 0, _report(lifted)
    assert json.loads(lifted.stdout) == {"peak": 81, "error": None}

    result = sandbox.run(files, command, limits=Limits(processes=16, wall_seconds=20))
    assert result.exit_code == 3, _report(result)
    report = json.loads(result.stdout)
    assert report["error"] == "BlockingIOError 11", report  # EAGAIN: fork refused
    assert report["peak"] < 16
    assert processes_with(token) == []


def test_code_that_never_ends_is_killed_with_everything_it_started(
    runner: RunnerFactory, processes_with: Callable[[str], list[int]]
) -> None:
    token = f"straggler-{uuid.uuid4().hex}"
    probe = """
import os, subprocess, sys, time
# A detached grandchild in its own session, which a process-group kill would miss.
subprocess.Popen(["sleep", "30"], start_new_session=True)
subprocess.Popen(["python3", "-c", "import time; time.sleep(30)", sys.argv[1]],
                 start_new_session=True)
time.sleep(float(sys.argv[2]))
print("done")
"""
    sandbox = runner()
    lifted = sandbox.run({"probe.py": probe}, [*PY, token, "0.3"], limits=Limits(wall_seconds=600))
    assert lifted.exit_code == 0, _report(lifted)
    assert lifted.stdout == "done\n"
    assert processes_with(token) == []

    result = sandbox.run({"probe.py": probe}, [*PY, token, "3600"], limits=Limits(wall_seconds=0.7))
    assert result.timed_out, _report(result)
    assert result.exit_code is None
    assert processes_with(token) == []


def test_cpu_time_past_the_limit_is_killed(runner: RunnerFactory) -> None:
    probe = """
import sys, time
end = time.process_time() + float(sys.argv[1])
while time.process_time() < end:
    pass
print("spun")
"""
    sandbox = runner()
    # Wall limits no load reaches: what stops the endless spin is the CPU limit.
    lifted = sandbox.run(
        {"probe.py": probe}, [*PY, "1.2"], limits=Limits(cpu_seconds=5, wall_seconds=600)
    )
    assert lifted.exit_code == 0, _report(lifted)
    assert "spun" in lifted.stdout

    result = sandbox.run(
        {"probe.py": probe}, [*PY, "inf"], limits=Limits(cpu_seconds=1, wall_seconds=600)
    )
    assert not result.timed_out, _report(result)
    assert result.exit_code in (-24, -9), _report(result)  # SIGXCPU, then SIGKILL
