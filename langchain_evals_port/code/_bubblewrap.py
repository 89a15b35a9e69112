"""``BubblewrapSandboxRunner``: a daemonless Linux sandbox built on bubblewrap (``bwrap``).

How a run is contained:

* **Namespaces** — ``--unshare-all`` gives the run new user, pid, network, ipc, uts, cgroup
  and mount namespaces (``--share-net`` keeps the network only when ``limits.network``);
  ``--disable-userns`` stops it from making further user namespaces, ``--new-session``
  detaches it from any terminal and ``--die-with-parent`` ends it if bwrap dies.
* **File system** — a new root holding only the system directories (``/usr`` and the
  ``/bin``, ``/lib``... links or directories, ``/etc/alternatives``, ``/etc/ld.so.cache``),
  bound read-only, a private ``/proc`` and ``/dev``, and two size-capped tmpfs: ``/tmp`` and
  the work directory, into which bwrap copies the files itself (``--file``). The host's home,
  ``/root``, the repository and the rest of ``/etc`` are not there at all.
* **User** — the run is uid/gid 65534 inside. When the host process is root, bwrap itself
  is started as an unprivileged uid (``host_uid``, default 65534 "nobody"), so the sandboxed
  processes are not uid 0 in the initial namespace either: the kernel exempts uid 0 from
  ``RLIMIT_NPROC``, and an unprivileged uid owns nothing on the host.
* **Limits** — ``prlimit`` (util-linux), run inside the sandbox, sets ``RLIMIT_AS``
  (``memory_mb``), ``RLIMIT_CPU``, ``RLIMIT_NPROC`` (``processes``) and ``RLIMIT_FSIZE``
  before it executes the command. Since Linux 5.14 the process count is kept per user
  namespace, so concurrent runs do not share it. These are per-process limits: memory in
  all is up to ``processes`` times ``memory_mb``, plus the two tmpfs (each ``memory_mb`` at most);
  a cgroup (``DockerSandboxRunner``) caps the total.
* **Time** — bwrap runs in its own process group; past ``wall_seconds`` the group is
  killed, the sandbox's pid 1 dies with it and the kernel kills every process in its pid
  namespace.

bwrap reports a command killed by signal N as exit status 128+N; ``SandboxResult.exit_code``
turns 129..192 back into -N, as a local process would report it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from pathlib import PurePosixPath
from typing import IO

from langchain_evals_port.core.errors import (
    EvaluationFailure,
    EvaluatorInputError,
    ToolNotFoundError,
)

from ._local import (
    Job,
    check_command,
    cpu_limits,
    file_bytes,
    relative_file_path,
    run_env,
    wait_async,
)
from ._sandbox import Limits, SandboxResult

__all__ = ["BubblewrapSandboxRunner"]

_INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install "
    "bubblewrap) and make sure unprivileged user namespaces are enabled"
)
_SANDBOX_UID = 65534
# Reached through stdin, which is the status file: "started", then stdin is /dev/null.
_STARTER = 'printf started >&0 && exec 0</dev/null && exec "$@"'
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_SYSTEM_FILES = ("/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime")
_NETWORK_FILES = (
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/host.conf",
    "/etc/gai.conf",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/pki",
)


class BubblewrapSandboxRunner:
    """Runs a command in a bubblewrap sandbox: Linux namespaces, no daemon, no root needed.

    See the module documentation for what is isolated and how each limit is enforced.

    Args:
        bwrap: The bubblewrap executable (a name on ``PATH`` or a path).
        work_dir: The work directory inside the sandbox (a fresh tmpfs).
        ro_binds: Extra host paths to bind read-only, host path → sandbox path (e.g. a
            virtualenv the code needs). When the host process is root they must be readable
            by ``host_uid``.
        rw_binds: Host paths to bind writable, host path → sandbox path (this lets the code
            change the host: use with care).
        host_uid: The unprivileged uid bwrap runs as when the host process is root.
        host_gid: The gid that goes with ``host_uid``.

    Raises:
        ToolNotFoundError: At ``run`` when ``bwrap`` (or ``prlimit``) is not installed.
    """

    def __init__(
        self,
        *,
        bwrap: str = "bwrap",
        work_dir: str = "/work",
        ro_binds: Mapping[str, str] | None = None,
        rw_binds: Mapping[str, str] | None = None,
        host_uid: int = 65534,
        host_gid: int = 65534,
    ) -> None:
        if not PurePosixPath(work_dir).is_absolute() or work_dir.rstrip("/") in ("", "/tmp"):
            raise EvaluatorInputError(f"work_dir must be an absolute path, got {work_dir!r}")
        if host_uid == 0 or host_gid == 0:
            raise EvaluatorInputError("host_uid and host_gid must not be 0 (root)")
        self.bwrap = bwrap
        self.work_dir = work_dir.rstrip("/")
        self.ro_binds = dict(ro_binds or {})
        self.rw_binds = dict(rw_binds or {})
        self.host_uid = host_uid
        self.host_gid = host_gid

    def __repr__(self) -> str:
        return f"{type(self).__name__}(bwrap={self.bwrap!r}, work_dir={self.work_dir!r})"

    def run(
        self,
        files: Mapping[str, str | bytes],
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        limits: Limits | None = None,
    ) -> SandboxResult:
        """Copy ``files`` into a fresh sandbox, run ``command`` there, return how it ended."""
        limits = limits or Limits()
        with ExitStack() as stack:
            job, status = self._start(stack, files, command, env, limits)
            return _finish(job.wait(), status)

    async def arun(
        self,
        files: Mapping[str, str | bytes],
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        limits: Limits | None = None,
    ) -> SandboxResult:
        """The async twin of ``run``; cancelling it kills the sandbox."""
        limits = limits or Limits()
        with ExitStack() as stack:
            job, status = self._start(stack, files, command, env, limits)
            return _finish(await wait_async(job), status)

    def command_line(
        self, file_fds: Mapping[str, int], command: Sequence[str], limits: Limits
    ) -> list[str]:
        """The bwrap command line for one run (``file_fds``: sandbox path → readable fd)."""
        bwrap = self._tool(self.bwrap, "bubblewrap", _INSTALL_HINT)
        prlimit = self._tool("prlimit", "prlimit", "it is part of util-linux")
        tmpfs_bytes = str(limits.memory_mb << 20)
        args = [bwrap, "--unshare-all", "--unshare-user", "--disable-userns"]
        if limits.network:
            args.append("--share-net")
        args += ["--die-with-parent", "--new-session", "--hostname", "sandbox"]
        args += ["--uid", str(_SANDBOX_UID), "--gid", str(_SANDBOX_UID)]
        for path in _SYSTEM_DIRS:
            if os.path.islink(path):
                args += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                args += ["--ro-bind", path, path]
        for path in _SYSTEM_FILES + (_NETWORK_FILES if limits.network else ()):
            args += ["--ro-bind-try", path, path]
        args += ["--proc", "/proc", "--dev", "/dev"]
        args += ["--perms", "1777", "--size", tmpfs_bytes, "--tmpfs", "/tmp"]
        args += ["--perms", "0755", "--size", tmpfs_bytes, "--tmpfs", self.work_dir]
        made = {self.work_dir}
        for name, fd in file_fds.items():
            target = f"{self.work_dir}/{name}"
            for parent in reversed(PurePosixPath(target).parents):
                if str(parent).startswith(self.work_dir + "/") and str(parent) not in made:
                    args += ["--perms", "0755", "--dir", str(parent)]
                    made.add(str(parent))
            args += ["--perms", "0644", "--file", str(fd), target]
        for host, inside in self.ro_binds.items():
            args += ["--ro-bind", host, inside]
        for host, inside in self.rw_binds.items():
            args += ["--bind", host, inside]
        cpu_soft, cpu_hard = cpu_limits(limits)
        memory = limits.memory_mb << 20
        file_size = limits.file_size_mb << 20
        args += ["--chdir", self.work_dir, "--"]
        # The shell writes "started" to its stdin (a status file), swaps stdin for /dev/null
        # and becomes prlimit, which sets the limits and becomes the command: no "started"
        # means bwrap failed before the command ran (and the command cannot write it).
        args += ["/bin/sh", "-c", _STARTER, "sandbox"]
        args += [
            prlimit,
            f"--as={memory}:{memory}",
            f"--cpu={cpu_soft}:{cpu_hard}",
            f"--nproc={limits.processes}:{limits.processes}",
            f"--fsize={file_size}:{file_size}",
            "--",
            *command,
        ]
        return args

    def _start(
        self,
        stack: ExitStack,
        files: Mapping[str, str | bytes],
        command: Sequence[str],
        env: Mapping[str, str] | None,
        limits: Limits,
    ) -> tuple[Job, IO[bytes]]:
        argv = check_command(command)
        run_environment = run_env(env)
        # Each file reaches bwrap as an open descriptor, which it copies into the tmpfs:
        # nothing on the host has to be readable by the sandbox's user.
        file_fds: dict[str, int] = {}
        for name, content in files.items():
            handle = stack.enter_context(tempfile.TemporaryFile())  # noqa: SIM115
            handle.write(file_bytes(content))
            handle.seek(0)
            file_fds[str(relative_file_path(name))] = handle.fileno()
        status = stack.enter_context(tempfile.TemporaryFile())  # noqa: SIM115
        args = self.command_line(file_fds, argv, limits)
        as_root = os.geteuid() == 0
        job = Job(
            args,
            cwd="/",
            env=run_environment,
            limits=limits,
            pass_fds=list(file_fds.values()),
            stdin=status,
            user=self.host_uid if as_root else None,
            group=self.host_gid if as_root else None,
        )
        stack.callback(job.kill)
        return job, status

    @staticmethod
    def _tool(name: str, tool: str, hint: str) -> str:
        path = shutil.which(name)
        if path is None:
            raise ToolNotFoundError(tool, hint)
        return path


def _finish(result: SandboxResult, status: IO[bytes]) -> SandboxResult:
    """A run whose command never started (bwrap failed to set up) is a sandbox error."""
    status.seek(0)
    if status.read() != b"started" and not result.timed_out:
        raise EvaluationFailure(
            "bubblewrap could not set up the sandbox (exit status "
            f"{result.exit_code}): {result.stderr.strip()[:2000]}",
            code="sandbox_error",
        )
    code = result.exit_code
    if code is not None and 128 < code <= 128 + 64:
        code = -(code - 128)
    details = dict(result.details)
    details["runner"] = "bubblewrap"
    return SandboxResult(
        exit_code=code,
        stdout=result.stdout,
        stderr=result.stderr,
        timed_out=result.timed_out,
        duration=result.duration,
        truncated=result.truncated,
        details=details,
    )
