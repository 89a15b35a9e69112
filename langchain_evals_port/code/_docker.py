"""``DockerSandboxRunner``: runs generated code in a hardened, throwaway Docker container.

Each run gets its own container, hardened by default:

* no network (``network_mode="none"``: only a loopback interface) unless ``Limits.network``;
* ``Limits.memory_mb`` of memory with no swap on top, one CPU, ``Limits.processes`` pids;
* a read-only root filesystem, a small ``tmpfs`` at ``/tmp`` (also ``HOME``) for scratch;
* every capability dropped, ``no-new-privileges``, a non-root user (``nobody`` by default);
* a minimal init as pid 1 (``docker-init``), which reaps whatever the code leaves behind;
* ``RLIMIT_CPU`` from ``Limits.cpu_seconds`` and ``RLIMIT_FSIZE`` from ``Limits.file_size_mb``;
* no log driver: output is read live from an attach stream, so the daemon stores none of it.

The files are written to a host temporary directory that is bind-mounted **read-only** at
``/work`` (the working directory): the code can be read and run but not changed, and whatever
the run writes goes to ``/tmp``. Pass ``writable_workdir=True`` when the command must write
next to its files (a build, a test cache); the mount is then writable by the container user.
A bind mount needs the daemon on this machine (a local socket), not a remote ``DOCKER_HOST``.

On passing ``Limits.wall_seconds`` the container itself is killed (``SIGKILL`` through the
daemon, not just our client) and, like every container this runner creates, removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from langchain_evals_port.code._local import CappedOutput, check_command, write_files
from langchain_evals_port.code._sandbox import Limits, SandboxResult
from langchain_evals_port.core.errors import (
    EvaluationFailure,
    ToolNotFoundError,
)

__all__ = ["DockerSandboxRunner"]

logger = logging.getLogger("langchain_evals_port.code")

LABEL = "langchain-evals.sandbox"
"""The label every container of this runner carries (its value: the run's id)."""

_WORKDIR = "/work"
_SCRATCH_MB = 64
_SDK_HINT = "install the Docker SDK with `pip install 'langchain-evals-port[docker]'`"
_STDOUT, _STDERR = 1, 2


class _DockerAPI(Protocol):
    """The part of ``docker.APIClient`` this runner uses."""

    def create_host_config(self, **kwargs: Any) -> Any: ...

    def create_container(self, image: str, command: Any = ..., **kwargs: Any) -> Any: ...

    def attach_socket(self, container: str, params: Any = ...) -> Any: ...

    def start(self, container: str) -> Any: ...

    def wait(self, container: str, timeout: float | None = ...) -> Any: ...

    def kill(self, container: str, signal: Any = ...) -> Any: ...

    def inspect_container(self, container: str) -> Any: ...

    def remove_container(self, container: str, v: bool = ..., force: bool = ...) -> Any: ...


class _Control:
    """Lets an async caller kill a run that its worker thread has started."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._container: str | None = None
        self._cancelled = False

    def started(self, container: str) -> bool:
        """Record the run's container; False when the run was cancelled already."""
        with self._lock:
            self._container = container
            return not self._cancelled

    def cancel(self, api: _DockerAPI | None) -> None:
        with self._lock:
            self._cancelled = True
            container = self._container
        if container is not None and api is not None:
            with contextlib.suppress(Exception):
                api.kill(container)


class DockerSandboxRunner:
    """A ``SandboxRunner`` that runs each command in a fresh, hardened Docker container.

    Args:
        image: The image to run (it must hold the command, e.g. ``python3``).
        runtime: An OCI runtime registered with the daemon, e.g. ``"runsc"`` for gVisor;
            ``None`` for the daemon's default (``runc``).
        user: The ``uid:gid`` the command runs as (``nobody`` by default; never root).
        client: A ``docker.DockerClient`` or ``docker.APIClient``; by default one is made
            from the environment (``DOCKER_HOST`` or the local socket) on first use.
        network_mode: The network a run gets when ``Limits.network`` is true (``"bridge"``:
            the daemon's default network; ``"host"`` shares the host's, loopback included).
        writable_workdir: Let the run write to ``/work`` (off: only ``/tmp`` is writable).
        ro_binds: Extra host paths to bind read-only, host path → container path (e.g. a
            virtualenv the code needs); they must be readable by ``user``.
        rw_binds: Host paths to bind writable, host path → container path (this lets the
            code change the host: use with care).
        labels: Extra labels for the containers (the runner adds ``langchain-evals.sandbox``).
        init: Run the daemon's minimal init (``docker-init``) as pid 1, to reap zombies and
            pass signals on; it counts as one of ``Limits.processes``.
    """

    def __init__(
        self,
        image: str,
        *,
        runtime: str | None = None,
        user: str = "65534:65534",
        client: Any = None,
        network_mode: str = "bridge",
        writable_workdir: bool = False,
        ro_binds: Mapping[str, str] | None = None,
        rw_binds: Mapping[str, str] | None = None,
        labels: Mapping[str, str] | None = None,
        init: bool = True,
    ) -> None:
        if not image:
            raise ValueError("DockerSandboxRunner needs an image")
        if user.split(":", 1)[0] in ("", "0", "root"):
            raise ValueError(f"DockerSandboxRunner must not run as root, got user={user!r}")
        self.image = image
        self.runtime = runtime
        self.user = user
        self.network_mode = network_mode
        self.writable_workdir = writable_workdir
        self.ro_binds = dict(ro_binds or {})
        self.rw_binds = dict(rw_binds or {})
        for inside in [*self.ro_binds.values(), *self.rw_binds.values()]:
            if not PurePosixPath(inside).is_absolute():
                raise ValueError(f"bind targets must be absolute container paths, got {inside!r}")
        self.labels = dict(labels or {})
        self.init = init
        self._client = client
        self._api: _DockerAPI | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"DockerSandboxRunner(image={self.image!r}, runtime={self.runtime!r})"

    def run(
        self,
        files: Mapping[str, str | bytes],
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        limits: Limits | None = None,
    ) -> SandboxResult:
        """Write ``files`` into ``/work`` of a new container, run ``command`` there and
        return how it ended; the container is removed in every case."""
        return self._run(files, command, env, limits, _Control())

    async def arun(
        self,
        files: Mapping[str, str | bytes],
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        limits: Limits | None = None,
    ) -> SandboxResult:
        """``run`` in a worker thread; cancelling it kills the container."""
        control = _Control()
        try:
            return await asyncio.to_thread(self._run, files, command, env, limits, control)
        except asyncio.CancelledError:
            control.cancel(self._api)
            raise

    def _run(
        self,
        files: Mapping[str, str | bytes],
        command: Sequence[str],
        env: Mapping[str, str] | None,
        limits: Limits | None,
        control: _Control,
    ) -> SandboxResult:
        limits = limits or Limits()
        argv = check_command(command)
        api = self._connect()
        errors = _docker_errors()
        with tempfile.TemporaryDirectory(prefix="langchain-evals-docker-") as tmp:
            workdir = Path(tmp) / "work"
            _place_files(workdir, files, writable=self.writable_workdir)
            run_id = uuid.uuid4().hex
            container: str | None = None
            try:
                container = self._create(api, workdir, argv, env or {}, limits, run_id)
                if not control.started(container):
                    raise EvaluationFailure("the sandbox run was cancelled", code="sandbox_error")
                return self._start_and_wait(api, container, limits, run_id)
            except errors.ImageNotFound as error:
                raise EvaluationFailure(
                    f"Docker image {self.image!r} not found: build or pull it first ({error})",
                    code="sandbox_error",
                ) from error
            except errors.APIError as error:
                hint = ""
                if self.runtime and "runtime" in str(error).lower():
                    hint = f" (is the {self.runtime!r} runtime registered with dockerd?)"
                raise EvaluationFailure(
                    f"Docker refused the sandbox run{hint}: {error}", code="sandbox_error"
                ) from error
            except (errors.DockerException, OSError) as error:
                # OSError: the daemon's connection failed (requests' errors subclass it).
                raise EvaluationFailure(
                    f"Docker sandbox run failed: {error}", code="sandbox_error"
                ) from error
            finally:
                if container is not None:
                    _remove(api, container)

    def _connect(self) -> _DockerAPI:
        """The low-level API client, made on first use."""
        with self._lock:
            if self._api is not None:
                return self._api
            client = self._client
            if client is None:
                try:
                    import docker  # type: ignore[import-untyped]
                except ImportError as error:
                    raise ToolNotFoundError("docker", _SDK_HINT) from error
                try:
                    client = docker.APIClient(**docker.utils.kwargs_from_env())
                except docker.errors.DockerException as error:
                    raise EvaluationFailure(
                        "cannot reach the Docker daemon: start dockerd (or Docker Desktop) or"
                        f" set DOCKER_HOST ({error})",
                        code="sandbox_error",
                    ) from error
            api: _DockerAPI = getattr(client, "api", client)
            self._api = api
            return api

    def _create(
        self,
        api: _DockerAPI,
        workdir: Path,
        argv: list[str],
        env: Mapping[str, str],
        limits: Limits,
        run_id: str,
    ) -> str:
        memory = limits.memory_mb * 1024 * 1024
        file_size = limits.file_size_mb * 1024 * 1024
        cpu = max(1, math.ceil(limits.cpu_seconds))
        scratch_mb = min(_SCRATCH_MB, limits.memory_mb)
        binds = {host: {"bind": inside, "mode": "ro"} for host, inside in self.ro_binds.items()}
        binds.update(
            {host: {"bind": inside, "mode": "rw"} for host, inside in self.rw_binds.items()}
        )
        binds[str(workdir)] = {"bind": _WORKDIR, "mode": "rw" if self.writable_workdir else "ro"}
        host_config = api.create_host_config(
            binds=binds,
            network_mode=self.network_mode if limits.network else "none",
            mem_limit=memory,
            memswap_limit=memory,
            nano_cpus=1_000_000_000,
            pids_limit=limits.processes,
            read_only=True,
            tmpfs={"/tmp": f"rw,nosuid,nodev,size={scratch_mb}m,mode=1777"},
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            # Soft CPU limit: SIGXCPU; one second later the hard limit's SIGKILL.
            ulimits=[
                {"Name": "cpu", "Soft": cpu, "Hard": cpu + 1},
                {"Name": "fsize", "Soft": file_size, "Hard": file_size},
                {"Name": "core", "Soft": 0, "Hard": 0},
            ],
            log_config={"Type": "none", "Config": {}},
            init=self.init,
            runtime=self.runtime,
        )
        environment = {"HOME": "/tmp", "TMPDIR": "/tmp", **env}
        created = api.create_container(
            self.image,
            argv,
            user=self.user,
            environment=[f"{key}={value}" for key, value in environment.items()],
            working_dir=_WORKDIR,
            labels={**self.labels, LABEL: run_id},
            host_config=host_config,
            stdin_open=False,
            tty=False,
        )
        return str(created["Id"])

    def _start_and_wait(
        self, api: _DockerAPI, container: str, limits: Limits, run_id: str
    ) -> SandboxResult:
        stdout, stderr = CappedOutput(limits.output_bytes), CappedOutput(limits.output_bytes)
        # Attached before the start, so no output is missed; drained by a thread so a
        # chatty command never blocks on a full pipe.
        stream = api.attach_socket(container, params={"stdout": 1, "stderr": 1, "stream": 1})
        _disable_timeout(stream)
        reader = threading.Thread(
            target=_drain, args=(stream, stdout, stderr), name=f"docker-drain-{run_id[:8]}"
        )
        reader.daemon = True
        reader.start()
        try:
            started = time.monotonic()
            api.start(container)
            timed_out = False
            try:
                api.wait(container, timeout=limits.wall_seconds)
            except Exception:
                # requests raises ReadTimeout or ConnectionError for a timed-out wait.
                if time.monotonic() - started < limits.wall_seconds * 0.99:
                    raise
                timed_out = True
                with contextlib.suppress(Exception):
                    api.kill(container)
                with contextlib.suppress(Exception):
                    api.wait(container, timeout=30)
            duration = time.monotonic() - started
            state = api.inspect_container(container).get("State", {})
            reader.join(timeout=5)
        finally:
            _close(stream)
            reader.join(timeout=5)
        raw_exit = state.get("ExitCode")
        oom_killed = bool(state.get("OOMKilled"))
        details: dict[str, object] = {
            "container_id": container,
            "image": self.image,
            "runtime": self.runtime or "default",
            "run_id": run_id,
            "raw_exit_code": raw_exit,
            "oom_killed": oom_killed,
            "stdout_bytes": stdout.total,
            "stderr_bytes": stderr.total,
        }
        if state.get("Error"):
            details["error"] = state["Error"]
        return SandboxResult(
            exit_code=None if timed_out else _exit_code(raw_exit),
            stdout=stdout.text(),
            stderr=stderr.text(),
            timed_out=timed_out,
            duration=duration,
            truncated=stdout.dropped > 0 or stderr.dropped > 0,
            details=details,
        )


def _docker_errors() -> Any:
    """``docker.errors`` (the SDK is there: ``_connect`` checked)."""
    try:
        import docker.errors  # type: ignore[import-untyped]
    except ImportError as error:  # a client was passed but the SDK is gone
        raise ToolNotFoundError("docker", _SDK_HINT) from error
    return docker.errors


def _place_files(workdir: Path, files: Mapping[str, str | bytes], *, writable: bool) -> None:
    """Write ``files`` under ``workdir``, readable (and, if asked, writable) by anyone: the
    container user is not the owner."""
    workdir.mkdir(mode=0o700)
    write_files(workdir, files)
    # The private (0700) temporary parent does not matter: the daemon mounts as root.
    dir_mode, file_mode = (0o777, 0o666) if writable else (0o755, 0o644)
    for path in [workdir, *workdir.rglob("*")]:
        path.chmod(dir_mode if path.is_dir() else file_mode)


def _frames(stream: Any) -> Iterator[tuple[int, bytes]]:
    """The (stream id, payload) frames of a multiplexed attach stream, until it ends."""
    from docker.utils.socket import frames_iter  # type: ignore[import-untyped]

    yield from frames_iter(stream, False)


def _drain(stream: Any, stdout: CappedOutput, stderr: CappedOutput) -> None:
    """Read the attach stream to its end, keeping a bounded head of each output."""
    with contextlib.suppress(Exception):
        for kind, data in _frames(stream):
            (stderr if kind == _STDERR else stdout).add(data)


def _disable_timeout(stream: Any) -> None:
    """Let a silent run read without a socket timeout (the wall limit bounds it)."""
    for candidate in (stream, getattr(stream, "_sock", None)):
        if isinstance(candidate, socket.socket):
            candidate.settimeout(None)


def _close(stream: Any) -> None:
    """End the attach stream; shutting the socket down wakes a reader blocked on it."""
    for candidate in (stream, getattr(stream, "_sock", None)):
        if isinstance(candidate, socket.socket):
            with contextlib.suppress(OSError):
                candidate.shutdown(socket.SHUT_RDWR)
    for candidate in (getattr(stream, "_response", None), stream):
        close = getattr(candidate, "close", None)
        if close is not None:
            with contextlib.suppress(Exception):
                close()


def _remove(api: _DockerAPI, container: str) -> None:
    """Kill and remove the container; a failure here must not hide the run's own error, so
    it is logged (with the label that finds leftover containers) rather than raised."""
    try:
        api.remove_container(container, v=True, force=True)
    except Exception:
        logger.warning(
            "could not remove sandbox container %s; find leftovers with "
            "`docker ps -a --filter label=%s`",
            container,
            LABEL,
            exc_info=True,
        )


def _exit_code(raw: object) -> int | None:
    """Docker reports a process killed by signal ``n`` as ``128 + n``; we report ``-n``."""
    if not isinstance(raw, int):
        return None
    if 128 < raw < 128 + 65:
        return -(raw - 128)
    return raw
