"""Finding a command-line checker and running it over one file.

A tool is looked for in the active Python environment first — ``sys.executable -m <module>``
when its module is importable there (``mypy``, ``ruff``, ``pyright``), then an executable
beside ``sys.executable`` (a virtualenv's ``bin/``) — and then on ``PATH``. A tool found
nowhere raises ``ToolNotFoundError`` naming it: a missing checker is a failure of the
evaluator's machinery, never a verdict on the code.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from langchain_evals_port.core.errors import EvaluationFailure, ToolNotFoundError

__all__ = ["ToolRun", "find_tool", "run_tool"]

# Python tools that run as ``python -m <module>``; other names are only looked up as files.
PYTHON_MODULES: Final[dict[str, str]] = {
    "mypy": "mypy",
    "ruff": "ruff",
    "pyright": "pyright",
    "pylint": "pylint",
    "flake8": "flake8",
    "black": "black",
    "pyflakes": "pyflakes",
    "pycodestyle": "pycodestyle",
    "bandit": "bandit",
}

HINTS: Final[dict[str, str]] = {
    "mypy": "pip install mypy",
    "ruff": "pip install ruff",
    "pyright": "npm install -g pyright (needs Node.js), or pip install pyright",
}


def find_tool(name: str, *, module: str | None = None, hint: str | None = None) -> list[str]:
    """The command prefix that runs tool ``name``, or ``ToolNotFoundError``.

    ``python``/``python3`` mean the running interpreter; a path is used as it is.

    Example:
        >>> find_tool("python")[0] == sys.executable
        True
    """
    if name in ("python", "python3"):
        return [sys.executable]
    if os.sep in name:
        if Path(name).is_file() and os.access(name, os.X_OK):
            return [name]
        raise ToolNotFoundError(name, hint or HINTS.get(name, ""))
    module = module or PYTHON_MODULES.get(name)
    if module is not None and _importable(module):
        return [sys.executable, "-m", module]
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    found = shutil.which(name)
    if found is not None:
        return [found]
    raise ToolNotFoundError(name, hint or HINTS.get(name, f"install {name} or put it on PATH"))


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


@dataclass(frozen=True)
class ToolRun:
    """How a checker process ended.

    Attributes:
        command: What was run.
        exit_code: Its exit status.
        stdout: Its standard output, decoded.
        stderr: Its standard error, decoded.
        duration: Wall-clock seconds.
    """

    command: tuple[str, ...]
    exit_code: int
    stdout: str
    stderr: str
    duration: float


def _env(extra: Mapping[str, str] | None) -> dict[str, str]:
    env = dict(os.environ)
    # Plain, stable output: no colours, no pagers, no update checks.
    env.update({"NO_COLOR": "1", "TERM": "dumb"})
    env.pop("FORCE_COLOR", None)
    env.pop("MYPY_FORCE_COLOR", None)
    if extra:
        env.update(extra)
    return env


def _timed_out(command: Sequence[str], timeout: float) -> EvaluationFailure:
    return EvaluationFailure(
        f"{Path(command[0]).name} did not finish within {timeout:g} s", code="timeout"
    )


def run_tool(
    command: Sequence[str],
    *,
    cwd: str | Path,
    timeout: float,
    env: Mapping[str, str] | None = None,
) -> ToolRun:
    """Run ``command`` in ``cwd``; a run past ``timeout`` seconds is killed and raises an
    ``EvaluationFailure`` with code ``timeout``."""
    started = time.perf_counter()
    try:
        process = subprocess.Popen(
            list(command),
            cwd=cwd,
            env=_env(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # a process group: a timeout kills the tool's children too
        )
    except FileNotFoundError:
        raise ToolNotFoundError(Path(command[0]).name) from None
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process.pid)
        process.communicate()
        raise _timed_out(command, timeout) from None
    return ToolRun(
        command=tuple(command),
        exit_code=process.returncode,
        stdout=stdout.decode("utf-8", "replace"),
        stderr=stderr.decode("utf-8", "replace"),
        duration=time.perf_counter() - started,
    )


def _kill_group(pid: int) -> None:
    """Kill the process group ``pid`` leads (the tool and whatever it started)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


async def arun_tool(
    command: Sequence[str],
    *,
    cwd: str | Path,
    timeout: float,
    env: Mapping[str, str] | None = None,
) -> ToolRun:
    """The async twin of ``run_tool`` (an asyncio subprocess, killed on timeout)."""
    started = time.perf_counter()
    try:
        process = await asyncio.create_subprocess_exec(
            *command,
            cwd=cwd,
            env=_env(env),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise ToolNotFoundError(Path(command[0]).name) from None
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout)
    except (asyncio.TimeoutError, asyncio.CancelledError) as error:
        _kill_group(process.pid)
        await process.wait()
        if isinstance(error, asyncio.CancelledError):
            raise
        raise _timed_out(command, timeout) from None
    assert process.returncode is not None
    return ToolRun(
        command=tuple(command),
        exit_code=process.returncode,
        stdout=stdout.decode("utf-8", "replace"),
        stderr=stderr.decode("utf-8", "replace"),
        duration=time.perf_counter() - started,
    )
