"""``Holder``: the process that holds claims, named uniquely, and whether it is gone.

Claims name their holder; a process killed outright keeps its claims until their leases
expire, unless another process can tell for certain that it is gone. Host and pid cannot
tell that alone: containers given one hostname have separate pid namespaces, where a live
process of one has the pid of a dead (or of this very) process of the other. So a holder is
named by a random instance id, with where its pid means something (the boot and the pid
namespace: its *scope*) and when that process started; only a holder of this scope whose
pid is gone, or now belongs to a process that started at another moment, is gone. Any
other holder (another machine, another container, an id of an earlier release) keeps its
claims until its lease expires.
"""

from __future__ import annotations

import hashlib
import os
import socket
import uuid
from dataclasses import dataclass
from functools import cache

__all__ = ["Holder"]


@dataclass(frozen=True)
class Holder:
    """A process holding claims, as its worker id names it:
    ``host:pid:instance:scope:started``.

    Attributes:
        host: The host name (for people: two containers may share it).
        pid: The process id in its pid namespace.
        instance: A random id, unique to the process (and to each store it opens).
        scope: Where the pid means something: a digest of the boot and the pid namespace
            (of the host name where the system tells neither).
        started: When the process started, in the system's clock ticks since boot (``""``
            where the system does not tell), so a reused pid is not taken for the holder.
    """

    host: str
    pid: int
    instance: str
    scope: str
    started: str

    def __str__(self) -> str:
        return f"{self.host}:{self.pid}:{self.instance}:{self.scope}:{self.started}"

    @classmethod
    def current(cls) -> Holder:
        """This process, under a new random instance id."""
        return cls(socket.gethostname(), os.getpid(), uuid.uuid4().hex[:12], _scope(), _own_start())

    @classmethod
    def parse(cls, worker_id: str) -> Holder | None:
        """The holder a worker id names; ``None`` for an id not made by ``current`` (one
        given by hand, or of an earlier release)."""
        parts = worker_id.split(":")
        if len(parts) != 5 or not parts[1].isdigit():
            return None
        host, pid, instance, scope, started = parts
        return cls(host, int(pid), instance, scope, started)

    def is_gone(self) -> bool:
        """Whether this holder is certainly no longer running: it ran where this process
        runs (the same scope), and its pid is free or taken by a process started at
        another moment. ``False`` whenever that cannot be told."""
        if self.scope != _scope():
            return False
        if not _alive(self.pid):
            return True
        started = _start_of(self.pid)
        return bool(self.started and started and started != self.started)


@cache
def _scope() -> str:
    """A digest of this boot and this process's pid namespace (Linux), or of the host name."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as boot:
            where = f"{boot.read().strip()} {os.readlink('/proc/self/ns/pid')}"
    except OSError:
        where = f"host {socket.gethostname()}"
    return hashlib.sha256(where.encode()).hexdigest()[:12]


def _own_start() -> str:
    return _stat_start("/proc/self/stat")


def _start_of(pid: int) -> str:
    """When process ``pid`` started (``""``: unknown, also where ``/proc`` shows another pid
    namespace than this process's)."""
    try:
        if os.readlink("/proc/self") != str(os.getpid()):
            return ""
    except OSError:
        return ""
    return _stat_start(f"/proc/{pid}/stat")


def _stat_start(path: str) -> str:
    """Field 22 of a ``/proc/<pid>/stat`` (start time in clock ticks after boot), or ``""``."""
    try:
        with open(path) as stat:
            text = stat.read()
    except OSError:
        return ""
    # Fields after the command name, which is in parentheses and may hold anything.
    fields = text.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else ""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
