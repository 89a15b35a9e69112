"""ExecutionEvaluator: extraction, the run, the verdict, its metadata, and its failures."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pytest
from pydantic import ValidationError

from langchain_evals_port.code._bubblewrap import BubblewrapSandboxRunner
from langchain_evals_port.code._execution import ExecutionEvaluator
from langchain_evals_port.code._local import LocalProcessSandboxRunner
from langchain_evals_port.code._sandbox import Limits, SandboxResult
from langchain_evals_port.core.errors import EvaluationFailure, ToolNotFoundError

pytestmark = pytest.mark.processes

ANSWER = """Here you go:

```bash
pip install nothing
```

```python
import sys
print("hello from", sys.argv[0])
```
"""


@dataclass
class FakeSandbox:
    """A SandboxRunner that records its calls and returns (or raises) a canned outcome."""

    outcome: SandboxResult | Exception
    calls: list[tuple[dict[str, str | bytes], list[str], dict[str, str], Limits]] = field(
        default_factory=list
    )

    def run(
        self,
        files: Mapping[str, str | bytes],
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        limits: Limits | None = None,
    ) -> SandboxResult:
        self.calls.append((dict(files), list(command), dict(env or {}), limits or Limits()))
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome

    async def arun(
        self,
        files: Mapping[str, str | bytes],
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        limits: Limits | None = None,
    ) -> SandboxResult:
        return self.run(files, command, env=env, limits=limits)


def local_evaluator(**options: object) -> ExecutionEvaluator:
    return ExecutionEvaluator(sandbox=LocalProcessSandboxRunner(), **options)


def test_code_that_runs_cleanly_passes_with_its_output_in_metadata() -> None:
    result = local_evaluator(code_extraction="markdown_code_blocks").invoke({"outputs": ANSWER})
    assert result.key == "execution"
    assert result.score is True
    meta = result.metadata
    assert meta["exit_code"] == 0
    assert meta["stdout"] == "hello from outputs.py\n"
    assert meta["stderr"] == ""
    assert meta["truncated"] is False
    assert meta["duration"] > 0
    assert meta["code_extraction"] == "markdown_code_blocks"


def test_code_that_fails_fails_with_its_stderr_in_the_comment() -> None:
    result = local_evaluator().invoke({"outputs": "raise ValueError('boom')"})
    assert result.score is False
    assert result.metadata["exit_code"] == 1
    assert result.comment is not None
    assert "exited with status 1" in result.comment
    assert "ValueError: boom" in result.comment
    assert "ValueError: boom" in result.metadata["stderr"]


def test_a_killed_run_says_which_signal() -> None:
    code = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    result = local_evaluator().invoke({"outputs": code})
    assert result.score is False
    assert result.metadata["exit_code"] == -9
    assert result.comment is not None
    assert "killed by signal 9" in result.comment


def test_no_code_in_the_answer_is_a_false_verdict_not_an_error() -> None:
    sandbox = FakeSandbox(SandboxResult(exit_code=0, stdout="", stderr=""))
    result = ExecutionEvaluator(sandbox=sandbox, code_extraction="markdown_code_blocks").invoke(
        {"outputs": "I cannot help with that."}
    )
    assert result.score is False
    assert result.metadata["code_extraction_failed"] is True
    assert sandbox.calls == []


def test_files_command_env_and_limits_reach_the_sandbox() -> None:
    sandbox = FakeSandbox(SandboxResult(exit_code=0, stdout="ok", stderr=""))
    limits = Limits(wall_seconds=3, memory_mb=256)
    evaluator = ExecutionEvaluator(
        sandbox=sandbox,
        file_name="solution.py",
        command=["python3", "test_solution.py"],
        files={"test_solution.py": "import solution"},
        env={"SEED": "1"},
        limits=limits,
    )
    assert evaluator.invoke({"outputs": "x = 1"}).score is True
    assert sandbox.calls == [
        (
            {"test_solution.py": "import solution", "solution.py": "x = 1"},
            ["python3", "test_solution.py"],
            {"SEED": "1"},
            limits,
        )
    ]


def test_extra_files_test_the_generated_module() -> None:
    tests = "from solution import add\nassert add(2, 3) == 5, 'wrong sum'\nprint('passed')"
    evaluator = local_evaluator(
        file_name="solution.py",
        command=["python3", "test_solution.py"],
        files={"test_solution.py": tests},
        env={"PYTHONDONTWRITEBYTECODE": "1"},
        code_extraction="markdown_code_blocks",
    )
    good = evaluator.invoke({"outputs": "```python\ndef add(a, b):\n    return a + b\n```"})
    assert good.score is True
    assert good.metadata["stdout"] == "passed\n"
    bad = evaluator.invoke({"outputs": "```python\ndef add(a, b):\n    return a - b\n```"})
    assert bad.score is False
    assert "wrong sum" in bad.metadata["stderr"]


def test_big_output_is_bounded_and_marked_truncated() -> None:
    evaluator = local_evaluator(limits=Limits(output_bytes=100))
    result = evaluator.invoke({"outputs": "print('y' * 1_000_000)"})
    assert result.score is True
    assert result.metadata["truncated"] is True
    assert result.metadata["stdout"] == "y" * 100


def test_a_timeout_raises_a_timeout_failure() -> None:
    evaluator = local_evaluator(limits=Limits(wall_seconds=0.5))
    with pytest.raises(EvaluationFailure, match=r"did not finish within 0\.5 s") as caught:
        evaluator.invoke({"outputs": "import time; time.sleep(30)"})
    assert caught.value.code == "timeout"


def test_a_timeout_is_recorded_as_failed_with_on_error_record() -> None:
    evaluator = local_evaluator(limits=Limits(wall_seconds=0.5), on_error="record")
    result = evaluator.invoke({"outputs": "while True: pass"})
    assert result.outcome == "failed"
    assert result.error_code == "timeout"
    assert result.score is None


def test_sandbox_infrastructure_errors_are_sandbox_errors() -> None:
    broken = FakeSandbox(EvaluationFailure("the runtime died", code="sandbox_error"))
    with pytest.raises(EvaluationFailure, match="the runtime died") as caught:
        ExecutionEvaluator(sandbox=broken).invoke({"outputs": "pass"})
    assert caught.value.code == "sandbox_error"
    recorded = ExecutionEvaluator(sandbox=broken, on_error="record")
    result = recorded.invoke({"outputs": "pass"})
    assert result.outcome == "failed"
    assert result.error_code == "sandbox_error"


def test_a_sandbox_returning_garbage_is_a_sandbox_error() -> None:
    evaluator = ExecutionEvaluator(
        sandbox=FakeSandbox(SandboxResult(exit_code=0, stdout="", stderr=""))
    )
    evaluator.sandbox.outcome = "not a result"
    with pytest.raises(EvaluationFailure) as caught:
        evaluator.invoke({"outputs": "pass"})
    assert caught.value.code == "sandbox_error"


def test_a_missing_bwrap_is_tool_not_found() -> None:
    evaluator = ExecutionEvaluator(
        sandbox=BubblewrapSandboxRunner(bwrap="/nonexistent/bwrap"),
        on_error="record",
    )
    result = evaluator.invoke({"outputs": "pass"})
    assert result.outcome == "failed"
    assert result.error_code == "tool_not_found"
    with pytest.raises(ToolNotFoundError):
        evaluator.model_copy(update={"on_error": "raise"}).invoke({"outputs": "pass"})


def test_the_async_path_uses_arun() -> None:
    evaluator = local_evaluator(limits=Limits(wall_seconds=0.5))

    async def main() -> None:
        passed, failed = await asyncio.gather(
            evaluator.ainvoke({"outputs": "print('async')"}),
            evaluator.ainvoke({"outputs": "raise SystemExit(2)"}),
        )
        assert passed.score is True
        assert passed.metadata["stdout"] == "async\n"
        assert failed.score is False
        assert failed.metadata["exit_code"] == 2
        with pytest.raises(EvaluationFailure) as caught:
            await evaluator.ainvoke({"outputs": "import time; time.sleep(30)"})
        assert caught.value.code == "timeout"

    asyncio.run(main())


def test_the_openevals_call_convention() -> None:
    result = local_evaluator(code_extraction="markdown_code_blocks")(outputs=ANSWER)
    assert isinstance(result, dict)
    assert result["key"] == "execution"
    assert result["score"] is True


def test_in_the_bubblewrap_sandbox(bwrap: BubblewrapSandboxRunner) -> None:
    evaluator = ExecutionEvaluator(sandbox=bwrap, code_extraction="markdown_code_blocks")
    result = evaluator.invoke({"outputs": ANSWER})
    assert result.score is True
    assert result.metadata["stdout"] == "hello from outputs.py\n"
    escape = "```python\nopen('/root/.bashrc').read()\n```"
    refused = evaluator.invoke({"outputs": escape})
    assert refused.score is False
    assert "FileNotFoundError" in refused.metadata["stderr"]


@pytest.mark.parametrize(
    "options",
    [
        {"file_name": "/tmp/outputs.py"},
        {"file_name": "../outputs.py"},
        {"command": "python3 outputs.py"},
        {"command": []},
        {"files": {"outputs.py": "clash"}},
        {"code_extraction": "regex"},
        {"limits": {"wall_seconds": 1}},
    ],
)
def test_bad_settings_fail_at_construction(options: dict[str, object]) -> None:
    with pytest.raises((ValidationError, ValueError)):
        local_evaluator(**options)


def test_the_sandbox_must_be_a_sandbox_runner() -> None:
    with pytest.raises(ValidationError, match="SandboxRunner"):
        ExecutionEvaluator(sandbox=object())


@pytest.mark.parametrize("field", ["wall_seconds", "cpu_seconds"])
@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_limits_refuse_a_time_that_is_not_a_finite_number(field, value):
    # NaN compares false with everything, so "<= 0" let it through: a run with no limit.
    with pytest.raises(ValueError, match=f"Limits.{field} must be a positive finite number"):
        Limits(**{field: value})
