"""Static checks with real tools: compile(), mypy, ruff, pyright and any CLI, on real files."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from langchain_evals_port.code import (
    CliCheck,
    MypyCheck,
    PyrightCheck,
    PythonCompileCheck,
    RuffCheck,
    ToolNotFoundError,
    find_tool,
)
from langchain_evals_port.core.errors import EvaluationFailure

BAD_TYPES = textwrap.dedent(
    """\
    import some_package_that_does_not_exist

    x: int = "a"

    def f(a: int) -> str:
        return a
    """
)
CLEAN = "def add(a: int, b: int) -> int:\n    return a + b\n"

PYRIGHT = shutil.which("pyright")
_NO_PYRIGHT = "pyright is not installed (npm install -g pyright): PyrightCheck was NOT tested"


# --- compile() --------------------------------------------------------------------------------


def test_compile_reports_line_and_column() -> None:
    result = PythonCompileCheck().invoke({"outputs": "x = 1\ndef f(:\n    pass\n"})
    assert result.score is False
    (error,) = result.metadata["errors"]
    assert (error["line"], error["column"], error["code"], error["severity"]) == (
        2,
        7,
        "SyntaxError",
        "error",
    )
    assert result.comment is not None
    assert "outputs.py:2:7: error:" in result.comment


def test_compile_catches_compile_time_errors_and_indentation() -> None:
    outside = PythonCompileCheck().invoke({"outputs": "return 1\n"})
    assert outside.score is False
    assert "outside function" in outside.metadata["errors"][0]["message"]
    indent = PythonCompileCheck().invoke({"outputs": "def f():\nreturn 1\n"})
    assert indent.metadata["errors"][0]["code"] == "IndentationError"
    nul = PythonCompileCheck().invoke({"outputs": "x = 1\x00"})
    assert nul.score is False
    assert nul.metadata["errors"][0]["line"] is None


def test_compile_passes_clean_code() -> None:
    result = PythonCompileCheck().invoke({"outputs": CLEAN})
    assert (result.score, result.metadata["errors"], result.key) == (True, [], "python_compiles")


# --- mypy -------------------------------------------------------------------------------------


def test_mypy_reports_errors_with_codes() -> None:
    result = MypyCheck().invoke({"outputs": BAD_TYPES})
    assert result.score is False
    assert result.key == "mypy_succeeded"
    codes = [(e["line"], e["column"], e["code"]) for e in result.metadata["errors"]]
    assert codes == [(3, 10, "assignment"), (6, 12, "return-value")]  # missing import ignored
    assert result.metadata["exit_code"] == 1
    assert result.comment is not None
    assert result.comment.startswith("mypy: 2 errors")


def test_mypy_passes_clean_code_and_notes_do_not_fail() -> None:
    assert MypyCheck().invoke({"outputs": CLEAN}).score is True
    noted = MypyCheck().invoke({"outputs": "x = 1\nreveal_type(x)\n"})
    assert noted.score is True
    assert noted.metadata["errors"][0]["severity"] == "note"


def test_mypy_syntax_error_is_a_verdict() -> None:
    result = MypyCheck().invoke({"outputs": "def f(:\n"})
    assert result.score is False
    assert result.metadata["errors"][0]["code"] == "syntax"


def test_mypy_args_reach_mypy() -> None:
    untyped = "def f(a):\n    return a\n"
    assert MypyCheck().invoke({"outputs": untyped}).score is True
    strict = MypyCheck(args=["--strict"]).invoke({"outputs": untyped})
    assert strict.score is False
    assert strict.metadata["errors"][0]["code"] == "no-untyped-def"


def test_mypy_crash_is_a_failure_not_a_verdict() -> None:
    with pytest.raises(EvaluationFailure, match="unrecognized arguments") as raised:
        MypyCheck(args=["--no-such-flag"]).invoke({"outputs": CLEAN})
    assert raised.value.code == "evaluator_error"
    recorded = MypyCheck(args=["--no-such-flag"], on_error="record").invoke({"outputs": CLEAN})
    assert (recorded.outcome, recorded.error_code) == ("failed", "evaluator_error")


async def test_mypy_async_path_and_markdown() -> None:
    check = MypyCheck(code_extraction="markdown_code_blocks")
    result = await check.ainvoke({"outputs": f"Here:\n```python\n{BAD_TYPES}```\n"})
    assert result.score is False
    assert len(result.metadata["errors"]) == 2


def test_mypy_keyword_call_and_batch() -> None:
    check = MypyCheck()
    assert check(outputs=CLEAN)["score"] is True
    results = check.batch([{"outputs": CLEAN}, {"outputs": BAD_TYPES}])
    assert [r.score for r in results] == [True, False]  # type: ignore[union-attr]


# --- ruff -------------------------------------------------------------------------------------


def test_ruff_reports_rules() -> None:
    result = RuffCheck(args=["--select", "F"]).invoke({"outputs": "import os\nprint(undefined)\n"})
    assert result.score is False
    assert result.key == "ruff_succeeded"
    found = [(e["line"], e["column"], e["code"]) for e in result.metadata["errors"]]
    assert found == [(1, 8, "F401"), (2, 7, "F821")]


def test_ruff_passes_clean_code() -> None:
    assert RuffCheck(args=["--select", "E,F"]).invoke({"outputs": CLEAN}).score is True


def test_ruff_is_isolated_from_config_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A config next to the temp dir would be read by ruff; isolated=True ignores it.
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    (tmp_path / "ruff.toml").write_text('[lint]\nselect = ["D"]\n')
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    code = "import os\n"
    assert (
        RuffCheck(args=["--select", "F"]).invoke({"outputs": code}).metadata["errors"][0]["code"]
        == "F401"
    )
    configured = RuffCheck(isolated=False).invoke({"outputs": code})
    assert {e["code"] for e in configured.metadata["errors"]} == {"D100"}


def test_ruff_syntax_error() -> None:
    result = RuffCheck().invoke({"outputs": "def f(:\n"})
    assert result.score is False
    assert result.metadata["errors"][0]["line"] == 1


# --- pyright (a service suite: skipped loudly without pyright, a failure under CI) --------------


@pytest.fixture
def pyright() -> str:
    if PYRIGHT is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{_NO_PYRIGHT} (CI=true)", pytrace=False)
        pytest.skip(_NO_PYRIGHT)
    return PYRIGHT


def test_pyright_reports_errors(pyright: str) -> None:
    result = PyrightCheck().invoke({"outputs": BAD_TYPES})
    assert result.score is False
    assert result.key == "pyright_succeeded"
    found = [(e["line"], e["column"], e["code"]) for e in result.metadata["errors"]]
    assert found == [(3, 10, "reportAssignmentType"), (6, 12, "reportReturnType")]
    assert result.metadata["pyright_version"]


def test_pyright_missing_imports_and_severities(pyright: str) -> None:
    strict_imports = PyrightCheck(ignore_missing_imports=False).invoke({"outputs": BAD_TYPES})
    assert strict_imports.metadata["errors"][0]["code"] == "reportMissingImports"
    noted = PyrightCheck().invoke({"outputs": "x = 1\nreveal_type(x)\n"})
    assert noted.score is True
    assert noted.metadata["errors"][0]["severity"] == "note"


async def test_pyright_async_and_clean(pyright: str) -> None:
    assert (await PyrightCheck().ainvoke({"outputs": CLEAN})).score is True


# --- any CLI ----------------------------------------------------------------------------------


def test_cli_check_with_python_module() -> None:
    check = CliCheck(command=["python", "-m", "py_compile"], file_name="main.py")
    assert (check.feedback_key, check.get_name()) == ("python_succeeded", "python_check")
    assert check.invoke({"outputs": CLEAN}).score is True
    failed = check.invoke({"outputs": "def f(:\n"})
    assert failed.score is False
    assert "SyntaxError" in (failed.comment or "")


def test_cli_check_parses_file_line_column_lines(tmp_path: Path) -> None:
    script = tmp_path / "checker.py"
    script.write_text(
        "import sys\n"
        "path = sys.argv[2]\n"
        "print(f'{path}:3:5: warning: looks odd')\n"
        "print(f'{path}:7: something is wrong')\n"
        "print('other.py:1:1: error: not ours')\n"
        "sys.exit(int(sys.argv[1]))\n"
    )
    check = CliCheck(command=["python", str(script), "1", "{file}"], feedback_key="lint")
    result = check.invoke({"outputs": CLEAN})
    assert result.score is False
    assert result.metadata["errors"] == [
        {"line": 3, "column": 5, "message": "looks odd", "code": None, "severity": "warning"},
        {
            "line": 7,
            "column": None,
            "message": "something is wrong",
            "code": None,
            "severity": "error",
        },
    ]
    assert "exited with code 1" in (result.comment or "")
    passing = CliCheck(command=["python", str(script), "0", "{file}"]).invoke({"outputs": CLEAN})
    assert passing.score is True


def test_cli_check_with_mypy_from_the_environment() -> None:
    check = CliCheck(command=["mypy", "--strict"], file_name="outputs.py")
    result = check.invoke({"outputs": "def f(a):\n    return a\n"})
    assert result.score is False
    assert result.metadata["errors"][0]["line"] == 1


def test_missing_tool_raises_or_records() -> None:
    check = CliCheck(command=["no-such-checker-xyz", "--flag"])
    with pytest.raises(ToolNotFoundError, match="no-such-checker-xyz") as raised:
        check.invoke({"outputs": CLEAN})
    assert raised.value.code == "tool_not_found"
    recorded = CliCheck(command=["no-such-checker-xyz"], on_error="record").invoke(
        {"outputs": CLEAN}
    )
    assert (recorded.outcome, recorded.error_code, recorded.score) == (
        "failed",
        "tool_not_found",
        None,
    )
    assert "no-such-checker-xyz" in (recorded.reason or "")


def test_pyright_missing_from_path_is_tool_not_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing on PATH; no pyright module installed
    with pytest.raises(ToolNotFoundError, match="pyright"):
        PyrightCheck().invoke({"outputs": CLEAN})
    recorded = PyrightCheck(on_error="record").invoke({"outputs": CLEAN})
    assert recorded.error_code == "tool_not_found"


def test_timeout_kills_the_tool() -> None:
    check = CliCheck(command=["python", "-c", "import time; time.sleep(30)", "{file}"], timeout=0.5)
    with pytest.raises(EvaluationFailure, match="did not finish") as raised:
        check.invoke({"outputs": CLEAN})
    assert raised.value.code == "timeout"


async def test_timeout_kills_the_tool_async() -> None:
    check = CliCheck(
        command=["python", "-c", "import time; time.sleep(30)", "{file}"],
        timeout=0.5,
        on_error="record",
    )
    result = await check.ainvoke({"outputs": CLEAN})
    assert (result.outcome, result.error_code) == ("failed", "timeout")


# --- discovery --------------------------------------------------------------------------------


def test_find_tool_prefers_the_active_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert find_tool("mypy") == [sys.executable, "-m", "mypy"]
    assert find_tool("ruff") == [sys.executable, "-m", "ruff"]
    assert find_tool("python") == [sys.executable]
    fake = tmp_path / "mychecker"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert find_tool("mychecker") == [str(fake)]
    with pytest.raises(ToolNotFoundError, match="not-here"):
        find_tool("not-here")


def test_bad_configuration_fails_at_construction() -> None:
    with pytest.raises(ValueError, match="command"):
        CliCheck(command=[])
    with pytest.raises(ValueError, match="file_name"):
        MypyCheck(file_name="../escape.py")
    with pytest.raises(ValueError, match="args"):
        MypyCheck(args="--strict")


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.processes
def test_a_tool_past_its_timeout_is_killed_with_its_children(mode: str, tmp_path: Path) -> None:
    import asyncio
    import subprocess
    import time

    from langchain_evals_port.code._tools import arun_tool, run_tool
    from langchain_evals_port.core.errors import EvaluationFailure

    marker = f"{41 + (mode == 'async')}.{time.monotonic_ns() % 1000}"
    command = ["sh", "-c", f"sleep {marker} & sleep {marker}; wait"]
    started = time.monotonic()

    def run() -> object:
        if mode == "sync":
            return run_tool(command, cwd=tmp_path, timeout=0.5)
        return asyncio.run(arun_tool(command, cwd=tmp_path, timeout=0.5))

    with pytest.raises(EvaluationFailure, match="did not finish") as raised:
        run()
    assert raised.value.code == "timeout"
    assert time.monotonic() - started < 10
    left = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True)
    assert left.stdout == ""
