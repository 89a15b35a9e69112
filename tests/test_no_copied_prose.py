"""No prose or code lines from OpenEvals or agentevals are copied into this repository.

The OpenEvals prompt catalog is read from the installed distribution at run time; nothing
else of theirs may appear here. This scans every string literal of their sources for
sentences of 50 characters or more and looks for each in our files.
"""

from __future__ import annotations

import ast
import re
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OURS = [
    *ROOT.glob("langchain_evals_port/**/*.py"),
    *ROOT.glob("langchain_evals_port/**/*.json"),
    *ROOT.glob("langchain_evals_port/**/*.jsonl"),
    *ROOT.glob("cookbook/**/*.py"),
    *ROOT.glob("benchmarks/*.py"),
    *ROOT.glob("*.md"),
]


def upstream_sentences(distribution: str) -> set[str]:
    sentences: set[str] = set()
    for file in metadata.distribution(distribution).files or ():
        if file.suffix != ".py":
            continue
        tree = ast.parse(Path(str(file.locate())).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for sentence in re.split(r"(?<=[.!?:])\s+|\n", node.value):
                    sentence = sentence.strip()
                    # An import line in a docstring example is how one uses a library, not prose.
                    if len(sentence) >= 50 and not sentence.startswith(("from ", "import ")):
                        sentences.add(sentence)
    return sentences


def test_no_upstream_sentence_appears_in_our_files():
    sentences = upstream_sentences("openevals") | upstream_sentences("agentevals")
    assert len(sentences) > 100, "the scan found the upstream sources"
    found = [
        f"{path.relative_to(ROOT)}: {sentence[:80]!r}"
        for path in OURS
        for sentence in sentences
        if sentence in path.read_text(encoding="utf-8")
    ]
    assert found == []
