"""DockerSandboxRunner against a real daemon: behaviour, hardening seen from inside the
container, cleanup after timeouts, and the security probes (each first run with its limit
lifted, to prove the probe would notice, then sandboxed).

The image comes from LANGCHAIN_EVALS_DOCKER_IMAGE (scripts/docker.sh builds one and starts a
daemon when it can). Without an image or a daemon these tests skip, saying why, and FAIL
under CI=true.
"""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from langchain_evals_port.code._docker import LABEL, DockerSandboxRunner
from langchain_evals_port.code._sandbox import Limits, SandboxResult, SandboxRunner
from langchain_evals_port.core.errors import (
    EvaluationFailure,
    EvaluatorInputError,
    ToolNotFoundError,
)

pytestmark = [pytest.mark.processes, pytest.mark.services]

IMAGE = os.environ.get("LANGCHAIN_EVALS_DOCKER_IMAGE", "")


@functools.cache
def docker_problem() -> str | None:
    """Why Docker sandboxes cannot run here, or None when a trial run works."""
    if not IMAGE:
        return (
            "LANGCHAIN_EVALS_DOCKER_IMAGE is not set (scripts/docker.sh sets it when it can"
            " start dockerd and build the image)"
        )
    try:
        import docker  # type: ignore[import-untyped]  # noqa: F401
    except ImportError:
        return "the docker SDK is not installed"
    try:
        result = DockerSandboxRunner(IMAGE).run({}, ["python3", "-c", "print('ok')"])
    except EvaluationFailure as error:
        return f"no Docker daemon can run {IMAGE}: {error}"
    if result.exit_code != 0 or result.stdout != "ok\n":
        return f"a trial run of {IMAGE} failed: {result}"
    return None


@pytest.fixture
def image() -> str:
    """The test image; skips loudly (fails under CI=true) where Docker cannot run."""
    problem = docker_problem()
    if problem is not None:
        message = f"Docker sandbox NOT tested: {problem}"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message} (CI=true)", pytrace=False)
        pytest.skip(message)
    return IMAGE


@pytest.fixture
def run_label() -> dict[str, str]:
    """A label unique to this test, to find any container it left behind."""
    return {"langchain-evals.test": uuid.uuid4().hex}


@pytest.fixture
def runner(image: str, run_label: dict[str, str]) -> DockerSandboxRunner:
    return DockerSandboxRunner(image, labels=run_label)


def containers_with(label: dict[str, str]) -> list[str]:
    """Ids of all containers (running or not: `docker ps -a`) carrying ``label``."""
    ((key, value),) = label.items()
    if shutil.which("docker"):
        listed = subprocess.run(
            ["docker", "ps", "-a", "-q", "--no-trunc", "--filter", f"label={key}={value}"],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        return listed.stdout.split()
    import docker

    api = docker.APIClient()
    return [c["Id"] for c in api.containers(all=True, filters={"label": f"{key}={value}"})]


def python(source: str) -> dict[str, str]:
    return {"probe.py": textwrap.dedent(source)}


PY = ["python3", "probe.py"]


# --- without a daemon -------------------------------------------------------------------


def test_it_is_a_sandbox_runner() -> None:
    assert isinstance(DockerSandboxRunner("any"), SandboxRunner)


def test_root_user_and_relative_bind_targets_are_refused() -> None:
    with pytest.raises(ValueError, match="root"):
        DockerSandboxRunner("any", user="0:0")
    with pytest.raises(ValueError, match="absolute"):
        DockerSandboxRunner("any", ro_binds={"/etc": "etc"})


def test_a_missing_sdk_is_tool_not_found(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "docker", None)
    with pytest.raises(ToolNotFoundError, match=r"docker.*pip install") as caught:
        DockerSandboxRunner("any").run({}, ["true"])
    assert caught.value.code == "tool_not_found"


def test_an_unreachable_daemon_is_a_sandbox_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-daemon.sock")
    with pytest.raises(EvaluationFailure, match="cannot reach the Docker daemon") as caught:
        DockerSandboxRunner("any").run({}, ["true"])
    assert caught.value.code == "sandbox_error"


def test_bad_commands_and_file_names_are_input_errors() -> None:
    runner = DockerSandboxRunner("any", client=object())
    with pytest.raises(EvaluatorInputError):
        runner.run({}, "python3 probe.py")  # a string, not a list
    with pytest.raises(EvaluatorInputError):
        runner.run({}, [])
    for name in ("../escape.py", "/etc/passwd", ""):
        with pytest.raises(EvaluatorInputError, match="relative"):
            runner.run({name: "x"}, ["true"])


# --- functional -------------------------------------------------------------------------


def test_files_env_and_exit_code(runner: DockerSandboxRunner) -> None:
    files: dict[str, str | bytes] = {
        "probe.py": "import os, sys\n"
        "print(open('data/in.txt').read(), os.environ['GREETING'], os.getcwd())\n"
        "print(open('blob.bin', 'rb').read().hex(), file=sys.stderr)\n"
        "sys.exit(7)\n",
        "data/in.txt": "from a file",
        "blob.bin": b"\x00\xff",
    }
    result = runner.run(files, PY, env={"GREETING": "hello"})
    assert result.exit_code == 7
    assert result.stdout == "from a file hello /work\n"
    assert result.stderr == "00ff\n"
    assert not result.timed_out
    assert not result.truncated
    assert result.details["oom_killed"] is False
    assert result.details["container_id"]


def test_a_huge_output_is_drained_and_bounded(runner: DockerSandboxRunner) -> None:
    # 64 MiB on each stream: the run must not block on a full pipe, and only the head of
    # each stream is kept.
    probe = python("""
        import sys
        chunk = "o" * (1 << 20)
        for _ in range(64):
            sys.stdout.write(chunk)
            sys.stderr.write(chunk.replace("o", "e"))
        print("end")
    """)
    result = runner.run(probe, PY, limits=Limits(output_bytes=1000, wall_seconds=60))
    assert result.exit_code == 0
    assert not result.timed_out
    assert result.stdout == "o" * 1000
    assert result.stderr == "e" * 1000
    assert result.truncated
    assert result.details["stdout_bytes"] == 64 * (1 << 20) + len("end\n")
    assert result.details["stderr_bytes"] == 64 * (1 << 20)


def test_a_silent_run_longer_than_the_socket_timeout_is_read(
    image: str, run_label: dict[str, str]
) -> None:
    import docker

    # A client with a 2 s timeout: the attach stream must not give up after 2 s of silence.
    client = docker.APIClient(timeout=2)
    runner = DockerSandboxRunner(image, client=client, labels=run_label)
    probe = python("import time\ntime.sleep(4)\nprint('after the silence')\n")
    result = runner.run(probe, PY, limits=Limits(wall_seconds=30))
    assert result.exit_code == 0
    assert result.stdout == "after the silence\n"


async def test_arun(runner: DockerSandboxRunner) -> None:
    probe = python("import sys\nprint(sys.argv[1:])\n")
    results = await asyncio.gather(
        *(runner.arun(probe, [*PY, str(n)]) for n in range(3)),
    )
    assert [r.stdout for r in results] == ["['0']\n", "['1']\n", "['2']\n"]
    assert all(r.exit_code == 0 for r in results)


async def test_cancelling_arun_kills_the_container(
    runner: DockerSandboxRunner, run_label: dict[str, str]
) -> None:
    task = asyncio.ensure_future(runner.arun(python("import time\ntime.sleep(60)\n"), PY))
    for _ in range(100):
        await asyncio.sleep(0.1)
        if containers_with(run_label):
            break
    await asyncio.sleep(0.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    deadline = time.monotonic() + 20
    while containers_with(run_label) and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    assert containers_with(run_label) == []


def test_the_work_dir_can_be_made_writable(image: str) -> None:
    probe = python("open('out.txt', 'w').write('x')\nprint(open('out.txt').read())\n")
    result = DockerSandboxRunner(image, writable_workdir=True).run(probe, PY)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "x\n"


def test_a_missing_image_is_a_sandbox_error(image: str) -> None:
    with pytest.raises(EvaluationFailure, match="not found") as caught:
        DockerSandboxRunner("langchain-evals-no-such-image:0").run({}, ["true"])
    assert caught.value.code == "sandbox_error"


def test_an_unknown_runtime_is_passed_through_and_refused(image: str) -> None:
    runner = DockerSandboxRunner(image, runtime="langchain-evals-no-such-runtime")
    with pytest.raises(EvaluationFailure, match="runtime") as caught:
        runner.run({}, ["true"])
    assert caught.value.code == "sandbox_error"


# --- hardening, seen from inside --------------------------------------------------------

FACTS = """
    import errno, os, sys

    def status(field):
        for line in open("/proc/self/status"):
            if line.startswith(field + ":"):
                return line.split(":", 1)[1].strip()

    def first(*paths):
        for path in paths:
            try:
                return open(path).read().strip()
            except OSError:
                continue
        return "?"

    def writable(path):
        try:
            with open(path, "w") as handle:
                handle.write("x")
        except OSError as error:
            return errno.errorcode[error.errno]
        return "written"

    limits = {}
    for line in open("/proc/self/limits").read().splitlines()[1:]:
        name, soft = line[:26].strip(), line[26:47].strip()
        limits[name] = soft
    print("uid", os.getuid(), os.getgid())
    print("pid1", open("/proc/1/cmdline").read().split(chr(0))[0])
    print("processes", len([entry for entry in os.listdir("/proc") if entry.isdigit()]))
    print("root", writable("/probe-root"))
    print("work", writable("/work/probe-work"))
    print("tmp", writable("/tmp/probe-tmp"))
    print("capeff", status("CapEff"))
    print("capbnd", status("CapBnd"))
    print("nonewprivs", status("NoNewPrivs"))
    print("interfaces", ",".join(sorted(os.listdir("/sys/class/net"))))
    print("memory", first("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"))
    print("swap", first("/sys/fs/cgroup/memory.swap.max", "/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes"))
    print("pids", first("/sys/fs/cgroup/pids.max", "/sys/fs/cgroup/pids/pids.max"))
    print("cpu", limits["Max cpu time"])
    print("fsize", limits["Max file size"])
"""


def facts(result: SandboxResult) -> dict[str, str]:
    assert result.exit_code == 0, result.stderr
    return dict(line.split(" ", 1) for line in result.stdout.splitlines())


def test_hardening_facts_from_inside(runner: DockerSandboxRunner) -> None:
    limits = Limits(memory_mb=200, processes=40, cpu_seconds=5, file_size_mb=3)
    seen = facts(runner.run(python(FACTS), PY, limits=limits))
    assert seen["uid"] == "65534 65534"
    # Its own pid namespace: the init and the probe, nothing of the host.
    assert seen["pid1"].endswith("docker-init")
    assert seen["processes"] == "2"
    assert seen["root"] == "EROFS"
    assert seen["work"] == "EROFS"
    assert seen["tmp"] == "written"
    assert int(seen["capeff"], 16) == 0
    assert int(seen["capbnd"], 16) == 0
    assert seen["nonewprivs"] == "1"
    assert seen["interfaces"] == "lo"
    assert seen["memory"] == str(200 << 20)
    if seen["swap"] != "?":  # memory + swap (v1) or swap alone (v2)
        assert seen["swap"] in (str(200 << 20), "0")
    assert seen["pids"] == "40"
    assert seen["cpu"] == "5"
    assert seen["fsize"] == str(3 << 20)


def test_the_file_size_limit_stops_a_big_write(runner: DockerSandboxRunner) -> None:
    probe = python("""
        import errno
        try:
            with open("/tmp/big", "wb") as handle:
                handle.write(b"x" * (3 << 20))
        except OSError as error:
            print(errno.errorcode[error.errno])
        else:
            print("written")
    """)
    assert runner.run(probe, PY, limits=Limits(file_size_mb=4)).stdout == "written\n"
    result = runner.run(probe, PY, limits=Limits(file_size_mb=1))
    assert result.stdout == "EFBIG\n"


def test_a_timeout_kills_and_removes_the_container(
    runner: DockerSandboxRunner, run_label: dict[str, str]
) -> None:
    started = time.monotonic()
    result = runner.run(
        python("import time\nprint('started', flush=True)\ntime.sleep(600)\n"),
        PY,
        limits=Limits(wall_seconds=2),
    )
    assert result.timed_out
    assert result.exit_code is None
    assert result.stdout == "started\n"
    assert 2 <= result.duration < 15
    assert time.monotonic() - started < 30
    assert containers_with(run_label) == []
    assert containers_with({LABEL: str(result.details["run_id"])}) == []


def test_an_oom_kill_is_reported(runner: DockerSandboxRunner) -> None:
    probe = python("""
        chunks = []
        for n in range(64):
            chunks.append(bytearray(b"x" * (16 << 20)))
        print("allocated")
    """)
    result = runner.run(probe, PY, limits=Limits(memory_mb=64))
    assert result.details["oom_killed"] is True
    assert result.exit_code == -9
    assert "allocated" not in result.stdout


# --- security probes: first with the limit lifted, then sandboxed -----------------------


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A TCP listener on the host's 127.0.0.1; yields its port and what it received."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    received: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(5)
                received.append(conn.recv(100))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], received
    finally:
        stop.set()
        thread.join(timeout=5)
        server.close()


CONNECT = """
    import socket, sys
    try:
        with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5) as conn:
            conn.sendall(b"escaped")
        print("connected")
    except OSError as error:
        print("blocked", type(error).__name__)
"""


def test_security_network(
    image: str, run_label: dict[str, str], listener: tuple[int, list[bytes]]
) -> None:
    port, received = listener
    # Lifted: host networking, so the container's 127.0.0.1 is the host's.
    lifted = DockerSandboxRunner(image, network_mode="host", labels=run_label).run(
        python(CONNECT), [*PY, str(port)], limits=Limits(network=True)
    )
    assert lifted.stdout == "connected\n", lifted.stderr
    deadline = time.monotonic() + 5
    while not received and time.monotonic() < deadline:
        time.sleep(0.05)
    assert received == [b"escaped"]
    received.clear()
    # Sandboxed: no network at all, so the host's listener is out of reach.
    sandboxed = DockerSandboxRunner(image, labels=run_label).run(python(CONNECT), [*PY, str(port)])
    assert sandboxed.stdout.startswith("blocked"), sandboxed.stdout
    time.sleep(0.5)
    assert received == []


WRITE = """
    import sys
    for directory in sys.argv[1:]:
        try:
            with open(directory + "/escaped.txt", "w") as handle:
                handle.write("escaped")
            print(directory, "written")
        except OSError as error:
            print(directory, "refused", type(error).__name__)
"""


@pytest.fixture
def host_dir() -> Iterator[Path]:
    """A host directory any uid may write (the container runs as nobody)."""
    path = Path(tempfile.mkdtemp(prefix="evals-docker-test-"))
    path.chmod(0o777)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def test_security_write_outside_the_work_dir(
    image: str, run_label: dict[str, str], host_dir: Path
) -> None:
    targets = ["/work", "/outside", "/", "/etc", "/root", "/home", "/usr/lib", "/var/tmp"]
    # Lifted: a writable work dir and a writable bind of a host directory.
    lifted = DockerSandboxRunner(
        image, writable_workdir=True, rw_binds={str(host_dir): "/outside"}, labels=run_label
    ).run(python(WRITE), [*PY, *targets])
    assert "/work written" in lifted.stdout.splitlines()
    assert "/outside written" in lifted.stdout.splitlines()
    assert (host_dir / "escaped.txt").read_text() == "escaped"
    (host_dir / "escaped.txt").unlink()
    # Sandboxed: the same host directory bound read-only; only /tmp takes writes.
    sandboxed = DockerSandboxRunner(
        image, ro_binds={str(host_dir): "/outside"}, labels=run_label
    ).run(python(WRITE), [*PY, *targets, "/tmp"])
    lines = sandboxed.stdout.splitlines()
    assert [line for line in lines if line.endswith("written")] == ["/tmp written"], lines
    assert len(lines) == len(targets) + 1
    assert list(host_dir.iterdir()) == []


READ = """
    import os, sys
    path = sys.argv[1]
    try:
        print("read", open(path).read())
    except OSError as error:
        print("refused", type(error).__name__)
    for directory in (os.path.dirname(path), "/home"):
        try:
            print("listing", directory, sorted(os.listdir(directory)))
        except OSError as error:
            print("listing", directory, "refused", type(error).__name__)
"""


def test_security_read_the_host_home(runner: DockerSandboxRunner, tmp_path: Path) -> None:
    secret = uuid.uuid4().hex
    path = Path.home() / f".langchain-evals-docker-probe-{secret[:8]}"
    path.write_text(secret)
    try:
        (tmp_path / "probe.py").write_text(textwrap.dedent(READ))
        # Lifted: the same probe on the host reads the secret.
        lifted = subprocess.run(
            [sys.executable, str(tmp_path / "probe.py"), str(path)],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        assert f"read {secret}" in lifted.stdout
        # Sandboxed: the host's home is not there at all.
        sandboxed = runner.run(python(READ), [*PY, str(path)])
        assert sandboxed.exit_code == 0, sandboxed.stderr
        assert secret not in sandboxed.stdout
        assert path.name not in sandboxed.stdout
        assert sandboxed.stdout.startswith("refused")
    finally:
        path.unlink()


MEMORY = """
    import sys
    chunks = []
    for n in range(int(sys.argv[1]) // 16):
        chunks.append(bytearray(b"x" * (16 << 20)))
    print("allocated", sys.argv[1])
"""


def test_security_memory(runner: DockerSandboxRunner) -> None:
    lifted = runner.run(python(MEMORY), [*PY, "320"], limits=Limits(memory_mb=1024))
    assert lifted.exit_code == 0, lifted.stderr
    assert lifted.stdout == "allocated 320\n"
    sandboxed = runner.run(python(MEMORY), [*PY, "320"], limits=Limits(memory_mb=128))
    assert sandboxed.exit_code == -9
    assert sandboxed.details["oom_killed"] is True
    assert "allocated" not in sandboxed.stdout


FORKS = """
    import os, sys, time
    children = []
    error = "none"
    for _ in range(int(sys.argv[1])):
        try:
            pid = os.fork()
        except OSError as failure:
            error = type(failure).__name__
            break
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        children.append(pid)
    print("peak", len(children) + 1, error, flush=True)
    for pid in children:
        os.kill(pid, 9)
"""


def test_security_fork_bomb(runner: DockerSandboxRunner, run_label: dict[str, str]) -> None:
    lifted = runner.run(python(FORKS), [*PY, "100"], limits=Limits(processes=256))
    assert lifted.stdout == "peak 101 none\n", lifted.stderr
    sandboxed = runner.run(python(FORKS), [*PY, "100"], limits=Limits(processes=20))
    peak, error = sandboxed.stdout.split()[1:]
    assert int(peak) <= 20  # the pids limit counts the parent too
    assert error != "none"
    # A real fork bomb: bounded by the pids limit, ended by the wall limit, cleaned up.
    bomb = runner.run(
        python(
            "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
        ),
        PY,
        limits=Limits(processes=32, wall_seconds=3),
    )
    assert bomb.timed_out
    assert containers_with(run_label) == []


BUSY = """
    import sys
    left = int(sys.argv[1])  # steps of work; -1: work that never ends, under any load
    while left != 0:
        left -= 1
    print("finished")
"""


def test_security_never_ending(runner: DockerSandboxRunner, run_label: dict[str, str]) -> None:
    # Limits no load reaches: what stops the endless runs below is the limit under test.
    lifted = runner.run(
        python(BUSY), [*PY, "100000"], limits=Limits(wall_seconds=600, cpu_seconds=600)
    )
    assert lifted.stdout == "finished\n"
    assert not lifted.timed_out
    # The wall limit: killed and removed.
    walled = runner.run(python(BUSY), [*PY, "-1"], limits=Limits(wall_seconds=1.5, cpu_seconds=600))
    assert walled.timed_out
    assert walled.stdout == ""
    # The CPU limit: SIGXCPU at the soft limit (SIGKILL at the hard one), long before the wall.
    cpu = runner.run(python(BUSY), [*PY, "-1"], limits=Limits(wall_seconds=600, cpu_seconds=1))
    assert not cpu.timed_out
    assert cpu.exit_code in (-24, -9)
    assert cpu.stdout == ""
    assert containers_with(run_label) == []
