"""Fixtures of the sandbox tests: which sandboxed runners exist here, and host probes.

``SANDBOXES`` lists the sandboxed runners the security suite runs against. Each entry says
how to build a runner (with extra host directories bound read-only or writable) and why it
cannot run on this machine, if it cannot. Another runner joins the suite with one entry.
A runner that cannot run is skipped loudly, and FAILS under ``CI=true``.

(This folder is not ``tests/code``: with ``--doctest-modules``, a folder that sorts before
``tests/conftest.py`` and has a conftest of its own breaks the collection of that file.)
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import pytest

from langchain_evals_port.code._bubblewrap import BubblewrapSandboxRunner
from langchain_evals_port.code._sandbox import SandboxRunner
from langchain_evals_port.core.errors import EvaluationFailure


class RunnerFactory(Protocol):
    """Builds a sandboxed runner; ``ro_binds``/``rw_binds`` map host paths to sandbox paths."""

    def __call__(
        self,
        *,
        ro_binds: Mapping[str, str] | None = None,
        rw_binds: Mapping[str, str] | None = None,
    ) -> SandboxRunner: ...


@dataclass(frozen=True)
class Sandbox:
    """One sandboxed runner under test.

    Attributes:
        make: Builds the runner.
        problem: Why it cannot run here (None: it can).
    """

    make: RunnerFactory
    problem: Callable[[], str | None]


@functools.cache
def bubblewrap_problem() -> str | None:
    """Why bubblewrap sandboxes cannot run here, or None when a trial run works."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    if shutil.which("prlimit") is None:
        return "prlimit (util-linux) is not installed"
    try:
        result = BubblewrapSandboxRunner().run({}, ["true"])
    except EvaluationFailure as error:
        return f"bubblewrap cannot create a sandbox here: {error}"
    if result.exit_code != 0:
        return f"a trial bubblewrap run exited with {result.exit_code}: {result.stderr}"
    return None


def _bubblewrap(
    *, ro_binds: Mapping[str, str] | None = None, rw_binds: Mapping[str, str] | None = None
) -> SandboxRunner:
    return BubblewrapSandboxRunner(ro_binds=ro_binds, rw_binds=rw_binds)


@functools.cache
def docker_problem() -> str | None:
    """Why Docker sandboxes cannot run here, or None when a trial run works."""
    from test_sandbox_docker import docker_problem as problem

    return problem()


def _docker(
    *, ro_binds: Mapping[str, str] | None = None, rw_binds: Mapping[str, str] | None = None
) -> SandboxRunner:
    from langchain_evals_port.code._docker import DockerSandboxRunner

    # Host networking when Limits.network lifts the limit: the probes' listener is on the
    # host's 127.0.0.1. The image comes from LANGCHAIN_EVALS_DOCKER_IMAGE.
    image = os.environ.get("LANGCHAIN_EVALS_DOCKER_IMAGE", "")
    return DockerSandboxRunner(image, network_mode="host", ro_binds=ro_binds, rw_binds=rw_binds)


SANDBOXES: dict[str, Sandbox] = {
    "bubblewrap": Sandbox(make=_bubblewrap, problem=bubblewrap_problem),
    # Another sandboxed runner joins the security suite with one more entry here, e.g.
    # "docker": Sandbox(make=<factory taking ro_binds/rw_binds>, problem=<why not here>).
    "docker": Sandbox(make=_docker, problem=docker_problem),
}


def require_sandbox(name: str, problem: str | None) -> None:
    """Skip loudly when a sandbox cannot run here; fail instead under ``CI=true``."""
    if problem is None:
        return
    message = f"{name} sandbox NOT tested: {problem}"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message} (CI=true)", pytrace=False)
    pytest.skip(message)


@pytest.fixture(params=sorted(SANDBOXES))
def runner(request: pytest.FixtureRequest) -> RunnerFactory:
    """A factory of one sandboxed runner (each entry of ``SANDBOXES`` in turn)."""
    sandbox = SANDBOXES[request.param]
    require_sandbox(request.param, sandbox.problem())
    return sandbox.make


@pytest.fixture
def bwrap() -> BubblewrapSandboxRunner:
    """A bubblewrap runner (skipped loudly when bubblewrap cannot run; failed under CI)."""
    require_sandbox("bubblewrap", bubblewrap_problem())
    return BubblewrapSandboxRunner()


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A fresh host directory any uid may enter and write (a sandbox may run as nobody),
    outside the test's own 0700 temporary directories."""
    path = Path(tempfile.mkdtemp(prefix="evals-sandbox-test-"))
    path.chmod(0o777)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _processes_with(token: str) -> list[int]:
    """The host pids whose command line contains ``token``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                if token.encode() in cmdline.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


def _host_uid_of(pid: int) -> int:
    """The real uid of host process ``pid``, as the initial user namespace sees it."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("Uid:"):
                return int(line.split()[1])
    raise AssertionError(f"no Uid line for pid {pid}")


@pytest.fixture
def processes_with() -> Callable[[str], list[int]]:
    """A probe of the host: the pids whose command line contains a token."""
    return _processes_with


@pytest.fixture
def host_uid_of() -> Callable[[int], int]:
    """A probe of the host: the real uid of a host pid, as the initial namespace sees it."""
    return _host_uid_of
