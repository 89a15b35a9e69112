"""``LocalProcessSandboxRunner``: timeouts and rlimits for a plain child process.

This is NOT a security boundary. The command runs as the calling user, sees the whole file
system and the network; only its time, memory, CPU, file sizes and output are bounded. Use
it in CI and for code you wrote; run model-generated code in ``BubblewrapSandboxRunner`` or
``DockerSandboxRunner``.

The process machinery here (spawning in a new session, draining both pipes while waiting,
killing the whole process group on a timeout) is shared with the bubblewrap runner.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import IO, Any

from langchain_evals_port.core.errors import EvaluationFailure, EvaluatorInputError

from ._sandbox import Limits, SandboxResult

__all__ = ["LocalProcessSandboxRunner"]

MINIMAL_PATH = "/usr/local/bin:/usr/bin:/bin"
"""The ``PATH`` a run gets unless its ``env`` sets one."""

_GRACE_SECONDS = 1.0
"""How long output is still read after the run ended or was killed (a stray holder of the
pipes must not keep a finished run waiting)."""

# Run by the interpreter between our fork and the command: it lowers its own rlimits, which
# the command inherits, then replaces itself with the command. Doing this in a launcher
# rather than a ``preexec_fn`` keeps Python code out of the fork of a threaded process.
_LAUNCHER = """\
import os, resource, sys
for spec in sys.argv[1].split(","):
    name, soft, hard = spec.split(":")
    resource.setrlimit(getattr(resource, name), (int(soft), int(hard)))
if sys.argv[2] == "0":  # set by this interpreter's locale coercion, not by the caller
    os.environ.pop("LC_CTYPE", None)
try:
    os.execvp(sys.argv[3], sys.argv[3:])
except OSError as error:
    sys.stderr.write(f"sandbox: cannot run {sys.argv[3]!r}: {error.strerror}\\n")
    os._exit(127)
"""


class LocalProcessSandboxRunner:
    """Runs a command as a child process in a fresh temporary directory, with limits.

    Not a security boundary — for CI and code you wrote. Each run gets an empty temporary
    work directory holding ``files``, an environment holding only ``env`` (plus a minimal
    ``PATH``), rlimits on CPU time, address space, file size and processes, bounded
    stdout/stderr, and a wall-clock timeout that kills the whole process group.

    The process limit (``RLIMIT_NPROC``) counts every process of the calling user, so the
    run may have ``limits.processes`` more than the user already has; the kernel does not
    enforce it at all for root. A child that starts its own session escapes the group kill.

    Args:
        python: The interpreter that applies the rlimits before running the command
            (defaults to the current one).
    """

    def __init__(self, *, python: str | None = None) -> None:
        self.python = python or sys.executable

    def __repr__(self) -> str:
        return f"{type(self).__name__}(python={self.python!r})"

    def run(
        self,
        files: Mapping[str, str | bytes],
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        limits: Limits | None = None,
    ) -> SandboxResult:
        """Write ``files`` into a fresh directory, run ``command`` there, return how it ended."""
        limits = limits or Limits()
        with _work_dir() as work:
            job = self._start(work, files, command, env, limits)
            return job.wait()

    async def arun(
        self,
        files: Mapping[str, str | bytes],
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        limits: Limits | None = None,
    ) -> SandboxResult:
        """The async twin of ``run``; cancelling it kills the run."""
        limits = limits or Limits()
        with _work_dir() as work:
            job = await asyncio.to_thread(self._start, work, files, command, env, limits)
            return await wait_async(job)

    def _start(
        self,
        work: Path,
        files: Mapping[str, str | bytes],
        command: Sequence[str],
        env: Mapping[str, str] | None,
        limits: Limits,
    ) -> Job:
        argv = check_command(command)
        write_files(work, files)
        rlimits = [
            ("RLIMIT_CPU", *cpu_limits(limits)),
            ("RLIMIT_AS", limits.memory_mb << 20, limits.memory_mb << 20),
            ("RLIMIT_FSIZE", limits.file_size_mb << 20, limits.file_size_mb << 20),
        ]
        if os.geteuid() != 0:  # root is exempt anyway; a low limit would only mislead
            nproc = limits.processes + _tasks_of_user(os.getuid())
            rlimits.append(("RLIMIT_NPROC", nproc, nproc))
        spec = ",".join(f"{name}:{soft}:{hard}" for name, soft, hard in rlimits)
        environment = run_env(env)
        keep_lc_ctype = "1" if "LC_CTYPE" in environment else "0"
        launcher = [self.python, "-I", "-S", "-c", _LAUNCHER, spec, keep_lc_ctype, *argv]
        return Job(launcher, cwd=str(work), env=environment, limits=limits)


class Job:
    """One started child: drains its output while waiting and kills its process group.

    Args:
        argv: The command to start.
        cwd: Its working directory.
        env: Its whole environment.
        limits: The output and wall-clock limits.
        pass_fds: File descriptors the child inherits.
        user: The uid to run as (``None``: ours).
        group: The gid to run as (``None``: ours).
        stdin: The child's stdin (``None``: ``/dev/null``).
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str],
        limits: Limits,
        pass_fds: Sequence[int] = (),
        user: int | None = None,
        group: int | None = None,
        stdin: IO[bytes] | None = None,
    ) -> None:
        self.limits = limits
        self.started = time.monotonic()
        self._killed = threading.Event()
        extra: dict[str, Any] = {}
        if user is not None:
            extra.update(user=user, group=group, extra_groups=[])
        try:
            self.process = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.DEVNULL if stdin is None else stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=tuple(pass_fds),
                start_new_session=True,
                **extra,
            )
        except OSError as error:
            raise EvaluationFailure(
                f"cannot start {argv[0]!r}: {error}", code="sandbox_error"
            ) from error

    def kill(self) -> None:
        """Kill the child's whole process group (idempotent)."""
        self._killed.set()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    def wait(self) -> SandboxResult:
        """Drain stdout and stderr until the child ends or its wall time passes."""
        assert self.process.stdout is not None
        assert self.process.stderr is not None
        out, err = CappedOutput(self.limits.output_bytes), CappedOutput(self.limits.output_bytes)
        deadline = self.started + self.limits.wall_seconds
        timed_out = False
        ended_at: float | None = None
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ, out)
            selector.register(self.process.stderr, selectors.EVENT_READ, err)
            while selector.get_map():
                now = time.monotonic()
                if ended_at is None:
                    if self._killed.is_set():
                        ended_at = now
                    elif now >= deadline:
                        timed_out = True
                        self.kill()
                        ended_at = now
                    elif self.process.poll() is not None:
                        # Leftover children would hold the pipes (and run on): end them.
                        self.kill()
                        ended_at = now
                elif now - ended_at > _GRACE_SECONDS:
                    break
                wait = _GRACE_SECONDS if ended_at is not None else deadline - now
                for key, _ in selector.select(min(max(wait, 0.0), 0.05)):
                    stream: IO[bytes] = key.fileobj  # type: ignore[assignment]
                    chunk = os.read(stream.fileno(), 1 << 16)
                    if chunk:
                        key.data.add(chunk)
                    else:
                        selector.unregister(stream)
        self.process.stdout.close()
        self.process.stderr.close()
        if ended_at is None:  # it closed both pipes but may still be running
            try:
                self.process.wait(timeout=max(deadline - time.monotonic(), 0.0))
            except subprocess.TimeoutExpired:
                timed_out = True
        self.kill()  # the timed-out run, or children left behind by a finished one
        code = self.process.wait()
        duration = time.monotonic() - self.started
        return SandboxResult(
            exit_code=None if timed_out else code,
            stdout=out.text(),
            stderr=err.text(),
            timed_out=timed_out,
            duration=duration,
            truncated=out.dropped > 0 or err.dropped > 0,
            details={"stdout_dropped_bytes": out.dropped, "stderr_dropped_bytes": err.dropped},
        )


async def wait_async(job: Job) -> SandboxResult:
    """Wait for ``job`` in a worker thread; cancelling the wait kills the job."""
    try:
        return await asyncio.shield(asyncio.to_thread(job.wait))
    except asyncio.CancelledError:
        job.kill()
        raise


class CappedOutput:
    """Keeps the first ``limit`` bytes of a stream and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        """Keep what still fits of ``chunk``; count the rest as dropped."""
        room = self.limit - len(self.kept)
        self.kept += chunk[: max(0, room)]
        self.dropped += max(0, len(chunk) - max(0, room))

    @property
    def total(self) -> int:
        """Bytes the stream carried, kept or not."""
        return len(self.kept) + self.dropped

    def text(self) -> str:
        """What was kept, decoded (invalid UTF-8 replaced)."""
        return self.kept.decode("utf-8", errors="replace")


class _work_dir:
    """A fresh temporary directory, removed afterwards."""

    def __enter__(self) -> Path:
        self.path = Path(tempfile.mkdtemp(prefix="evals-sandbox-"))
        return self.path

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def check_command(command: Sequence[str]) -> list[str]:
    """The command as a list, or ``EvaluatorInputError`` if it is not a non-empty list of str."""
    if isinstance(command, (str, bytes)) or not command:
        raise EvaluatorInputError(f"command must be a non-empty list of strings, got {command!r}")
    argv = list(command)
    if not all(isinstance(arg, str) for arg in argv):
        raise EvaluatorInputError(f"command must be a list of strings, got {command!r}")
    return argv


def relative_file_path(name: str) -> PurePosixPath:
    """``name`` as a safe relative path, or ``EvaluatorInputError`` (absolute, ``..``, empty)."""
    path = PurePosixPath(name)
    if not name or "\\" in name or path.is_absolute() or ".." in path.parts or str(path) == ".":
        raise EvaluatorInputError(f"sandbox file names must be relative paths, got {name!r}")
    return path


def file_bytes(content: str | bytes) -> bytes:
    """A file's content as bytes (text is written as UTF-8)."""
    if isinstance(content, str):
        return content.encode("utf-8")
    if isinstance(content, (bytes, bytearray)):
        return bytes(content)
    raise EvaluatorInputError(f"sandbox file contents must be str or bytes, got {content!r}")


def write_files(root: Path, files: Mapping[str, str | bytes]) -> None:
    """Write ``files`` (relative paths) under ``root``."""
    for name, content in files.items():
        target = root / relative_file_path(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(file_bytes(content))


def run_env(env: Mapping[str, str] | None) -> dict[str, str]:
    """Only the given variables, plus a minimal ``PATH`` unless they set one."""
    result = {"PATH": MINIMAL_PATH}
    for key, value in (env or {}).items():
        if not isinstance(key, str) or not isinstance(value, str) or "=" in key or not key:
            raise EvaluatorInputError(f"env must map names to strings, got {key!r}: {value!r}")
        result[key] = value
    return result


def cpu_limits(limits: Limits) -> tuple[int, int]:
    """``RLIMIT_CPU`` (soft, hard): SIGXCPU after ``cpu_seconds``, SIGKILL a second later."""
    soft = max(1, math.ceil(limits.cpu_seconds))
    return soft, soft + 1


def _tasks_of_user(uid: int) -> int:
    """How many tasks (threads) ``uid`` has, which is what ``RLIMIT_NPROC`` counts (Linux)."""
    total = 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 0
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", encoding="ascii", errors="replace") as status:
                fields = dict(line.split(":", 1) for line in status if ":" in line)
        except OSError:
            continue
        if fields.get("Uid", "").split()[:1] == [str(uid)]:
            total += int(fields.get("Threads", "1").strip() or 1)
    return total
