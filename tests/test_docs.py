"""The docs run as shown: every fenced Python block of README.md and cookbook/*.md, in order
(one namespace per file, as a reader would paste them), and every cookbook/*.py script."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MARKDOWN = [ROOT / "README.md", *sorted((ROOT / "cookbook").glob("*.md"))]
SCRIPTS = sorted((ROOT / "cookbook").glob("*.py"))
FENCE = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def python_blocks(path: Path) -> list[str]:
    return FENCE.findall(path.read_text())


def test_readme_has_python_blocks():
    assert len(python_blocks(ROOT / "README.md")) >= 3


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_markdown_python_blocks_run(path, langsmith_endpoint, monkeypatch):
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for number, block in enumerate(python_blocks(path), start=1):
        code = compile(block, f"{path.name} block {number}", "exec")
        exec(code, namespace)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_cookbook_scripts_run(script):
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip(), f"{script.name} printed nothing"
