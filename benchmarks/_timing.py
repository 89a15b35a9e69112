"""Timing helpers the benchmarks share (run as scripts, so this folder is on ``sys.path``)."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys


def import_seconds(statement: str, after: str = "pass", runs: int = 7) -> float:
    """Median wall time of ``statement`` in fresh interpreters, each having run ``after``
    first (so ``after``'s cost is excluded); bytecode is cached by a warm-up run."""
    code = (
        f"import time; {after}; t = time.perf_counter(); {statement}; "
        "print(time.perf_counter() - t)"
    )
    # Measure warm imports, as a user's machine has them: allow the bytecode cache.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    samples = []
    for _ in range(runs + 1):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
        )
        samples.append(float(out.stdout.strip()))
    return statistics.median(samples[1:])
