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
SCRIPTS = sorted(
    [
        *(ROOT / "cookbook").glob("*.py"),
        *(ROOT / "cookbook").glob("*/run.py"),
        *(ROOT / "cookbook").glob("durable_evaluators/*.py"),
    ]
)
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
        # dont_inherit: this file's own __future__ imports must not change the block (string
        # annotations would hide a TypedDict's types from LangGraph, as they never do for a reader).
        code = compile(block, f"{path.name} block {number}", "exec", dont_inherit=True)
        exec(code, namespace)


# What each example must print (offline), so a wrong score fails the suite, not just a crash.
EXPECTED = {
    "check_agent_trajectory.py": [
        r"trajectory_strict_match\s+True",
        r"trajectory_in_order_match\s+True",
        r"trajectory_superset_match\s+False",
        "differs in passengers: expected 2, got 1",
    ],
    "rag_judges.py": [r"groundedness\s+True", r"groundedness\s+False", "'gold'"],
    "score_recorded_agent_run.py": [
        r"exact_match\s+verdict\s+True",
        r"levenshtein_distance\s+verdict\s+0\.805",
    ],
    "simulate_support_conversation.py": [
        r"human: Hi, my order never arrived\.",
        r"human: It's order 4411\.",
        r"issued a full refund",
        r"task_completion: True",
    ],
    "structured_extraction.py": [r"json_match:customer\s+1\.00", r"json_match:priority\s+0\.50"],
    "online_support_agent/run.py": [
        r"prod\s+helpfulness-judge\s+sampling\s+10%",
        r"Q1\s+helpfulness-judge\s+verdict\s+True",
        r"Q1\s+reply-quality\s+verdict\s+True\s+1\.00\s+ok \[good\]",
        r"Q2\s+helpfulness-judge\s+verdict\s+False",
        r"Q2\s+reply-quality\s+verdict\s+False\s+0\.50\s+missed: long_enough \[poor\]",
        r"Q3\s+reply-quality\s+inconclusive\s+-\s+-\s+the customer named no order",
        r"Q1: model calls 2, tool calls 1, tokens \d+ input \+ \d+ output = \d+",
    ],
    "support_experiment/run.py": [
        r"cancel\s+True\s+True\s+True\s+Done: order A-1003",
        r"refund-missed\s+False\s+False\s+False\s+Order A-1005 was delivered on 2 March\.",
        r"correctness\s+0\.833 \[0\.436, 0\.970\]\s+6",
        r"trajectory_unordered_match\s+0\.833 \[0\.436, 0\.970\]\s+6",
        r"refund-missed / correctness: The reference states 3, 5; it does not\.",
        r'reference call refund_order\(order_id="A-1005"\) \(messages\[0\]\) has no partner',
    ],
    "durable_evaluators/tie_break.py": [
        r"Q1\s+True\s+1\.00\s+unanimous\s+accuracy=pass helpfulness=pass\s",
        r"Q2\s+True\s+0\.67\s+tie-break\s+accuracy=pass helpfulness=fail referee=pass\s",
        r"Q3\s+False\s+0\.00\s+unanimous\s+accuracy=fail helpfulness=fail\s",
        "Judge calls: accuracy 3, helpfulness 3, referee 1",
        r"Referee session id: <evaluation id>:tie_break:1",
    ],
    "durable_evaluators/human_review.py": [
        r"judge\s+pass: confident and polite",
        r"recorded evaluations: 0\n\s+pending work units:\s+1",
        r"passed\s+False \[reviewed\]",
        r"why\s+our warranty is 12 months",
        r"'reviewer': 'dana', 'judge': 'pass'",
        r"pending work units: 0\n\s+judge calls: 1",
    ],
}


def script_key(path: Path) -> str:
    return path.relative_to(ROOT / "cookbook").as_posix()


def test_every_cookbook_script_has_expectations():
    assert sorted(EXPECTED) == sorted(script_key(p) for p in SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS, ids=script_key)
@pytest.mark.processes
def test_cookbook_scripts_run(script, monkeypatch, tmp_path):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    # Run from a folder of its own: what a script keeps (an experiment store) lands there.
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    for pattern in EXPECTED[script_key(script)]:
        assert re.search(pattern, done.stdout), f"{script.name}: no {pattern!r} in\n{done.stdout}"
