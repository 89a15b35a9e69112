"""Sandboxes for running generated code: one protocol, several runners.

A ``SandboxRunner`` takes the files to place in an empty work directory, a command, an
environment and ``Limits``, and returns a ``SandboxResult``. Runners differ in what they
contain: ``DockerSandboxRunner`` (a hardened container), ``BubblewrapSandboxRunner`` (Linux
namespaces, no daemon) and ``LocalProcessSandboxRunner`` (timeouts and rlimits only — not a
security boundary, for CI and code you wrote).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

__all__ = ["Limits", "SandboxResult", "SandboxRunner"]


@dataclass(frozen=True)
class Limits:
    """What one sandboxed run may use.

    Attributes:
        cpu_seconds: CPU time (``RLIMIT_CPU`` or the container's CPU quota over time).
        memory_mb: Memory (address space or the container's memory limit), in MiB.
        wall_seconds: Wall-clock time before the run is killed (a ``timeout``).
        processes: Processes and threads the run may have at once.
        output_bytes: Bytes of stdout and of stderr kept (each); the rest is dropped.
        file_size_mb: Largest file the run may write, in MiB.
        network: Whether the run may use the network (off by default).
    """

    cpu_seconds: float = 10.0
    memory_mb: int = 512
    wall_seconds: float = 30.0
    processes: int = 64
    output_bytes: int = 64_000
    file_size_mb: int = 16
    network: bool = False

    def __post_init__(self) -> None:
        for name in ("cpu_seconds", "wall_seconds"):
            value = getattr(self, name)
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            if not number or not math.isfinite(value) or value <= 0:
                raise ValueError(
                    f"Limits.{name} must be a positive finite number of seconds, got {value!r}"
                )
        for name in ("memory_mb", "processes", "output_bytes", "file_size_mb"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"Limits.{name} must be a positive int, got {value!r}")
        if not isinstance(self.network, bool):
            raise ValueError(f"Limits.network must be a bool, got {self.network!r}")


@dataclass(frozen=True)
class SandboxResult:
    """How a sandboxed run ended.

    Attributes:
        exit_code: The command's exit status (negative: killed by that signal); ``None``
            when it was killed for passing ``wall_seconds``.
        stdout: Its standard output, decoded, at most ``output_bytes``.
        stderr: Its standard error, decoded, at most ``output_bytes``.
        timed_out: Whether it was killed for passing ``wall_seconds``.
        duration: Wall-clock seconds the run took.
        truncated: Whether stdout or stderr was cut to ``output_bytes``.
        details: Runner-specific facts (the container id, the memory peak, the OOM kill).
    """

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    duration: float = 0.0
    truncated: bool = False
    details: Mapping[str, object] = field(default_factory=dict)


@runtime_checkable
class SandboxRunner(Protocol):
    """Runs a command over given files in an isolated, limited work directory."""

    def run(
        self,
        files: Mapping[str, str | bytes],
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        limits: Limits | None = None,
    ) -> SandboxResult:
        """Write ``files`` (relative paths) into a fresh work directory, run ``command`` in
        it and return how it ended. Infrastructure problems raise ``EvaluationFailure``
        (``tool_not_found`` when the runner's tool is missing, ``sandbox_error`` otherwise);
        a timeout is a result with ``timed_out=True``."""

    async def arun(
        self,
        files: Mapping[str, str | bytes],
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        limits: Limits | None = None,
    ) -> SandboxResult:
        """The async twin of ``run``."""
