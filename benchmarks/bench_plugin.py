"""What the pytest plugin costs every pytest start in the environment while it is inert.

The plugin is registered through the ``pytest11`` entry point, so every pytest run where the
package is installed imports it, evaluations or not. Prints (budget: <= 20 ms on top of a
bare pytest start):

* the plugin's import on top of ``import pytest``: median of fresh interpreters;
* a whole pytest run of one trivial test with the plugin blocked (``-p no:langchain_evals``)
  and loaded, in alternation so that the machine's load falls on both alike: medians of the
  wall time and of the CPU time (user + system, which other load on a shared machine
  disturbs less).

Run: ``.venv/bin/python benchmarks/bench_plugin.py`` (after ``bash scripts/test.sh`` or
``bash scripts/demo.sh`` has made the virtual environment).
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _timing import import_seconds

BUDGET_MS = 20.0

# Blocked then loaded by module name, so a checkout measures its own plugin whether or not
# the entry point is registered; "no:cacheprovider" keeps the runs from writing a cache.
BLOCKED = ["-p", "no:langchain_evals", "-p", "no:cacheprovider"]
LOADED = [*BLOCKED, "-p", "langchain_evals_port.pytest_plugin"]


def pytest_run_seconds(folder: Path, runs: int = 20) -> dict[str, tuple[float, float]]:
    """Medians of whole pytest runs of ``folder`` as (wall, CPU) seconds, plugin blocked
    and plugin loaded."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    samples: dict[str, list[tuple[float, float]]] = {"blocked": [], "loaded": []}
    for index in range(runs + 1):
        for name, options in (("blocked", BLOCKED), ("loaded", LOADED)):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "pytest", "-q", *options, str(folder)],
                cwd=folder,
                capture_output=True,
                check=True,
                env=env,
            )
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
            if index:  # the first round warms the bytecode and file caches
                samples[name].append((wall, cpu))
    return {
        name: (statistics.median(w for w, _ in pairs), statistics.median(c for _, c in pairs))
        for name, pairs in samples.items()
    }


def main() -> None:
    plugin = import_seconds(
        "import langchain_evals_port.pytest_plugin", after="import pytest", runs=15
    )
    print("pytest plugin, inert (median of fresh interpreters)")
    print(f"  import on top of `import pytest`        {plugin * 1e3:8.1f} ms")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "test_trivial.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
        runs = pytest_run_seconds(folder)
    (blocked_wall, blocked_cpu), (loaded_wall, loaded_cpu) = runs["blocked"], runs["loaded"]
    print("pytest run of one trivial test (medians)   wall        CPU")
    print(
        f"  plugin blocked                       {blocked_wall * 1e3:7.1f} ms {blocked_cpu * 1e3:7.1f} ms"
    )
    print(
        f"  plugin loaded                        {loaded_wall * 1e3:7.1f} ms {loaded_cpu * 1e3:7.1f} ms"
    )
    print(
        f"  overhead of the plugin               {(loaded_wall - blocked_wall) * 1e3:+7.1f} ms"
        f" {(loaded_cpu - blocked_cpu) * 1e3:+7.1f} ms  (budget <= {BUDGET_MS:.0f} ms)"
    )


if __name__ == "__main__":
    main()
