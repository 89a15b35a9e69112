"""The OpenEvals code evaluators, side by side with OpenEvals' own on the same inputs."""

from __future__ import annotations

import inspect
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from openevals.code import llm as oe_llm
from openevals.code import mypy as oe_mypy
from openevals.code import pyright as oe_pyright

from langchain_evals_port import prompts
from langchain_evals_port.code import CodeLLMJudge, MypyCheck, PyrightCheck
from langchain_evals_port.compat import openevals as compat
from langchain_evals_port.testing import ScriptedChatModel

CASES = [
    "def add(a: int, b: int) -> int:\n    return a + b\n",
    'x: int = "a"\n',
    "def f(a: int) -> str:\n    return a\n",
    "import numpy_not_installed_anywhere\n\ndef untyped(a):\n    return a\n\nuntyped(1)\n",
]
MARKDOWN = [
    "Here:\n```python\nx: int = 1\n```\nand run\n```bash\npython x.py\n```",
    "Bad:\n```python\ny: str = 2\n```",
    "no code at all",
]

PYRIGHT = shutil.which("pyright")
_NO_PYRIGHT = "pyright is not installed (npm install -g pyright): pyright parity was NOT tested"


@pytest.fixture
def tools_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """OpenEvals runs ``mypy`` from PATH; put this environment's scripts first."""
    bin_dir = str(Path(sys.executable).parent)
    monkeypatch.setenv("PATH", bin_dir + os.pathsep + os.environ.get("PATH", ""))


@pytest.fixture
def pyright() -> str:
    if PYRIGHT is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{_NO_PYRIGHT} (CI=true)", pytrace=False)
        pytest.skip(_NO_PYRIGHT)
    return PYRIGHT


def _params(function: Any) -> list[tuple[str, Any, Any]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (compat.create_mypy_evaluator, oe_mypy.create_mypy_evaluator),
        (compat.create_async_mypy_evaluator, oe_mypy.create_async_mypy_evaluator),
        (compat.create_pyright_evaluator, oe_pyright.create_pyright_evaluator),
        (compat.create_async_pyright_evaluator, oe_pyright.create_async_pyright_evaluator),
        (compat.create_code_llm_as_judge, oe_llm.create_code_llm_as_judge),
        (compat.create_async_code_llm_as_judge, oe_llm.create_async_code_llm_as_judge),
    ],
)
def test_signatures_match(ours: Any, theirs: Any) -> None:
    assert _params(ours) == _params(theirs)


def test_keys_and_run_names() -> None:
    mypy = compat.create_mypy_evaluator()
    assert isinstance(mypy, MypyCheck)
    assert (mypy.feedback_key, mypy.get_name()) == ("mypy_succeeded", "mypy_evaluator")
    pyright = compat.create_pyright_evaluator()
    assert isinstance(pyright, PyrightCheck)
    assert (pyright.feedback_key, pyright.get_name()) == ("pyright_succeeded", "pyright_evaluator")
    assert compat.create_async_mypy_evaluator().__name__ == "mypy_check"
    assert compat.create_async_pyright_evaluator().__name__ == "pyright_check"
    judge = compat.create_code_llm_as_judge(
        prompt=prompts.CODE_CORRECTNESS_PROMPT, judge=ScriptedChatModel([])
    )
    assert isinstance(judge, CodeLLMJudge)
    assert (judge.feedback_key, judge.get_name()) == ("code_correctness", "code_llm_as_judge")


def test_argument_checks_like_openevals() -> None:
    model = ScriptedChatModel([])
    for factory in (compat.create_mypy_evaluator, compat.create_pyright_evaluator):
        with pytest.raises(ValueError, match="only used by"):
            factory(client=model)
        with pytest.raises(ValueError, match="not both"):
            factory(code_extraction_strategy="markdown_code_blocks", code_extractor=str)
        with pytest.raises(ValueError, match="needs a model"):
            factory(code_extraction_strategy="llm")


def test_mypy_scores_match_openevals(tools_on_path: None) -> None:
    ours = compat.create_mypy_evaluator()
    theirs = oe_mypy.create_mypy_evaluator()
    for code in CASES:
        mine, original = ours(outputs=code), theirs(outputs=code)
        assert (mine["key"], mine["score"]) == (original["key"], original["score"]), code
        # Both comments name the same lines.
        assert bool(mine["metadata"]["errors"]) == bool(original["comment"])  # type: ignore[index]


def test_mypy_markdown_extraction_matches_openevals(tools_on_path: None) -> None:
    ours = compat.create_mypy_evaluator(code_extraction_strategy="markdown_code_blocks")
    theirs = oe_mypy.create_mypy_evaluator(code_extraction_strategy="markdown_code_blocks")
    for text in MARKDOWN:
        mine, original = ours(outputs=text), theirs(outputs=text)
        assert mine["score"] == original["score"], text
        failed = (original["metadata"] or {}).get("code_extraction_failed", False)
        assert (mine["metadata"] or {}).get("code_extraction_failed", False) == failed


def test_a_strategy_other_than_llm_or_markdown_extracts_nothing(tools_on_path: None) -> None:
    # OpenEvals' own tests pass "all": anything but "llm"/"markdown_code_blocks" is "none".
    ours = compat.create_mypy_evaluator(code_extraction_strategy="all")  # type: ignore[arg-type]
    theirs = oe_mypy.create_mypy_evaluator(code_extraction_strategy="all")  # type: ignore[arg-type]
    for text in [CASES[0], MARKDOWN[0]]:
        mine, original = ours(outputs=text), theirs(outputs=text)
        assert (mine["key"], mine["score"]) == (original["key"], original["score"]), text
    with pytest.raises(ValueError, match="code_extractor"):
        compat.create_mypy_evaluator(code_extraction_strategy="all", code_extractor=str)  # type: ignore[arg-type]


def test_code_extractor_gets_the_raw_outputs(tools_on_path: None) -> None:
    def extractor(outputs: Any) -> str:
        return str(outputs["code"])

    ours = compat.create_mypy_evaluator(code_extractor=extractor)
    theirs = oe_mypy.create_mypy_evaluator(code_extractor=extractor)
    for code in CASES[1:3]:
        assert ours(outputs={"code": code})["score"] == theirs(outputs={"code": code})["score"]


async def test_async_mypy_matches_openevals(tools_on_path: None) -> None:
    ours = compat.create_async_mypy_evaluator()
    theirs = oe_mypy.create_async_mypy_evaluator()
    for code in CASES[:2]:
        mine, original = await ours(outputs=code), await theirs(outputs=code)
        assert (mine["key"], mine["score"]) == (original["key"], original["score"])


def test_pyright_scores_match_openevals(pyright: str) -> None:
    ours = compat.create_pyright_evaluator()
    theirs = oe_pyright.create_pyright_evaluator()
    for code in CASES:
        mine, original = ours(outputs=code), theirs(outputs=code)
        assert (mine["key"], mine["score"]) == (original["key"], original["score"]), code


async def test_async_pyright_matches_openevals(pyright: str) -> None:
    ours = compat.create_async_pyright_evaluator(pyright_cli_args=["--pythonversion", "3.10"])
    theirs = oe_pyright.create_async_pyright_evaluator(pyright_cli_args=["--pythonversion", "3.10"])
    code = "match 1:\n    case 1:\n        pass\n"  # fine from 3.10 on
    assert (await ours(outputs=code))["score"] == (await theirs(outputs=code))["score"] is True


@pytest.mark.parametrize("strategy", ["none", "markdown_code_blocks"])
def test_code_judge_matches_openevals(strategy: str) -> None:
    verdict = {"reasoning": "Correct.", "score": True}
    text = "```python\ndef add(a, b):\n    return a + b\n```"
    ours_model, theirs_model = ScriptedChatModel([verdict]), ScriptedChatModel([verdict])
    ours = compat.create_code_llm_as_judge(
        prompt=prompts.CODE_CORRECTNESS_PROMPT,
        judge=ours_model,
        code_extraction_strategy=strategy,  # type: ignore[arg-type]
    )
    theirs = oe_llm.create_code_llm_as_judge(
        prompt=prompts.CODE_CORRECTNESS_PROMPT,
        judge=theirs_model,
        code_extraction_strategy=strategy,  # type: ignore[arg-type]
    )
    mine, original = ours(inputs="Add", outputs=text), theirs(inputs="Add", outputs=text)
    assert (mine["key"], mine["score"], mine["comment"]) == (
        original["key"],
        original["score"],
        original["comment"],
    )
    # The judge was shown the same code.
    assert ours_model.calls[0].messages[-1].text == theirs_model.calls[0].messages[-1].text


def test_code_judge_extraction_failure_matches_openevals() -> None:
    ours = compat.create_code_llm_as_judge(
        prompt=prompts.CODE_CORRECTNESS_PROMPT,
        judge=ScriptedChatModel([]),
        code_extraction_strategy="markdown_code_blocks",
    )
    theirs = oe_llm.create_code_llm_as_judge(
        prompt=prompts.CODE_CORRECTNESS_PROMPT,
        judge=ScriptedChatModel([]),
        code_extraction_strategy="markdown_code_blocks",
    )
    mine, original = ours(inputs="Add", outputs="none"), theirs(inputs="Add", outputs="none")
    assert mine["score"] is original["score"] is False
    assert mine["metadata"]["code_extraction_failed"] is True  # type: ignore[index]
    assert original["metadata"]["code_extraction_failed"] is True


async def test_async_code_judge_with_llm_extraction() -> None:
    model = ScriptedChatModel(
        [
            {"has_code": True, "code": "def add(a, b):\n    return a + b"},
            {"reasoning": "Ok.", "score": True},
        ]
    )
    judge = compat.create_async_code_llm_as_judge(
        prompt=prompts.CODE_CORRECTNESS_PROMPT, judge=model, code_extraction_strategy="llm"
    )
    assert judge.__name__ == "code_llm_as_judge"  # type: ignore[attr-defined]
    result = await judge(inputs="Add", outputs="add returns a + b")
    assert result["score"] is True  # type: ignore[index]
    assert "return a + b" in model.calls[1].messages[-1].text
