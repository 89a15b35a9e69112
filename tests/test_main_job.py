"""README's main job in a fresh copy of the repository: ``bash scripts/demo.sh`` bootstraps
its own environment and runs ``langchain-evals run`` over the support agent's cases; run
again, the judges' cache answers every judge call and the table compares with the first run;
``langchain-evals compare`` then finds no regression."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.processes

ROOT = Path(__file__).resolve().parent.parent


def _fresh_copy(destination: Path) -> Path:
    """The repository's tracked files, as a clone has them (uncommitted edits included)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: no tracked files to copy")
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return destination


def test_the_main_job_runs_in_a_fresh_clone_and_a_second_run_uses_the_cache(
    tmp_path: Path,
) -> None:
    clone = _fresh_copy(tmp_path / "clone")
    environment = {**os.environ, "COLUMNS": "160"}
    # The bootstrap installs uv into .tools/ when it is not on PATH; reuse this checkout's.
    if (ROOT / ".tools" / "bin").is_dir():
        environment["PATH"] = f"{ROOT / '.tools' / 'bin'}{os.pathsep}{environment['PATH']}"

    def demo() -> str:
        done = subprocess.run(
            ["bash", "scripts/demo.sh"],
            cwd=clone,
            env=environment,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout

    first = demo()
    assert first.startswith(
        "Experiment target-1: 6 runs; judge calls: 6 made, 0 answered from the cache\n"
    )
    for key in ("correctness", "intent", "trajectory_unordered_match"):
        assert f"{key} " in first
    assert first.count("pass rate   0.833 [0.436, 0.970]  6             0       0") == 3

    second = demo()
    assert second.startswith(
        "Experiment target-2: 6 runs, compared with target-1; "
        "judge calls: 0 made, 6 answered from the cache\n"
    )
    assert second.count("no detectable change") == 3

    compared = subprocess.run(
        [str(clone / ".venv" / "bin" / "langchain-evals"), "compare", "target-1", "target-2"],
        cwd=clone / "cookbook" / "support_experiment",
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert compared.returncode == 0, compared.stdout + compared.stderr
