"""Static checks of generated code: does it compile, type-check, lint clean?

Every check first extracts the code from ``outputs`` (see ``CodeExtractor``; nothing to
extract is a ``False`` verdict with ``metadata["code_extraction_failed"]``), then scores
``True`` when the checker reports no diagnostic of severity ``error``. The result's comment
lists the diagnostics as ``file:line:column: severity: message [code]``; ``metadata["errors"]``
holds every diagnostic as ``{"line", "column", "message", "code", "severity"}`` (1-based line
and column, severity ``error``, ``warning`` or ``note``).

A checker that is not installed raises ``ToolNotFoundError`` (a ``failed`` result with
``error_code="tool_not_found"`` under ``on_error="record"``); one that runs past its
``timeout`` fails with ``timeout``; one that crashes (a usage error, unreadable output) fails
with ``evaluator_error``. None of these is ever a verdict on the code.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, TypeAlias

from langchain_core.runnables import RunnableConfig
from pydantic import Field, PrivateAttr, SkipValidation, field_validator

from langchain_evals_port.core import EvalRequest, Evaluator, Score
from langchain_evals_port.core.errors import EvaluationFailure

from ._extract import (
    CodeExtractor,
    ExtractionStrategy,
    coerce_extractor,
    extraction_failed,
    has_code,
)
from ._tools import ToolRun, arun_tool, find_tool, run_tool

__all__ = [
    "CliCheck",
    "CodeCheck",
    "Diagnostic",
    "MypyCheck",
    "PyrightCheck",
    "PythonCompileCheck",
    "RuffCheck",
]

Diagnostic: TypeAlias = dict[str, Any]
"""One finding: ``line``, ``column`` (1-based, None when unknown), ``message``, ``code``
(the rule or error code, None when the tool gives none) and ``severity``."""

CodeExtraction: TypeAlias = "ExtractionStrategy | Callable[[Any], Any] | CodeExtractor"
"""An evaluator's ``code_extraction`` setting."""

_COMMENT_LINES = 50


def _diagnostic(
    line: int | None, column: int | None, message: str, code: str | None, severity: str
) -> Diagnostic:
    return {"line": line, "column": column, "message": message, "code": code, "severity": severity}


def _describe(file_name: str, diagnostic: Diagnostic) -> str:
    where = file_name
    if diagnostic["line"] is not None:
        where += f":{diagnostic['line']}"
        if diagnostic["column"] is not None:
            where += f":{diagnostic['column']}"
    code = f" [{diagnostic['code']}]" if diagnostic["code"] else ""
    return f"{where}: {diagnostic['severity']}: {diagnostic['message']}{code}"


def _verdict(
    tool: str, file_name: str, diagnostics: list[Diagnostic], extra: Mapping[str, Any]
) -> Score:
    errors = sum(1 for d in diagnostics if d["severity"] == "error")
    if not diagnostics:
        comment = f"{tool}: no errors"
    else:
        head = f"{tool}: {errors} error{'s' if errors != 1 else ''}"
        others = len(diagnostics) - errors
        if others:
            head += f", {others} other diagnostic{'s' if others != 1 else ''}"
        lines = [_describe(file_name, d) for d in diagnostics[:_COMMENT_LINES]]
        if len(diagnostics) > _COMMENT_LINES:
            lines.append(f"... and {len(diagnostics) - _COMMENT_LINES} more")
        comment = "\n".join([head, *lines])
    metadata = {"tool": tool, "errors": diagnostics, "error_count": errors, **extra}
    return Score(errors == 0, comment, metadata)


class CodeCheck(Evaluator):
    """Base class of code evaluators: extraction first, then ``_check(code)``.

    Args:
        code_extraction: ``"none"`` (default), ``"markdown_code_blocks"``, ``"llm"``, a
            callable ``(text) -> str | None``, or a configured ``CodeExtractor``.
        extraction_model: The chat model of the ``"llm"`` strategy (None: the default judge).
        multiple_blocks: With markdown extraction, ``"join"`` several blocks or take the
            ``"largest"``.
    """

    code_extraction: Annotated[Any, SkipValidation] = "none"
    extraction_model: Annotated[Any, SkipValidation] = Field(default=None, exclude=True)
    multiple_blocks: Literal["join", "largest"] = "join"

    language: ClassVar[str | None] = "python"

    _extractor: CodeExtractor = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        """Build the extractor once (a bad strategy fails here, at construction)."""
        self._extractor = coerce_extractor(
            self.code_extraction,
            language=self._language(),
            model=self.extraction_model,
            multiple_blocks=self.multiple_blocks,
        )

    def _language(self) -> str | None:
        return self.language

    @property
    def extractor(self) -> CodeExtractor:
        """How this evaluator finds the code in ``outputs``."""
        return self._extractor

    def _score(self, request: EvalRequest, config: RunnableConfig) -> Score:
        (outputs,) = request.require("outputs", evaluator=self.get_name())
        code = self._extractor.extract(outputs, config)
        if code is None or not has_code(code):
            return extraction_failed(self._extractor.name)
        return self._check(code)

    async def _ascore(self, request: EvalRequest, config: RunnableConfig) -> Score:
        (outputs,) = request.require("outputs", evaluator=self.get_name())
        code = await self._extractor.aextract(outputs, config)
        if code is None or not has_code(code):
            return extraction_failed(self._extractor.name)
        return await self._acheck(code)

    @abstractmethod
    def _check(self, code: str) -> Score:
        """Check the extracted ``code``."""

    async def _acheck(self, code: str) -> Score:
        return self._check(code)


class PythonCompileCheck(CodeCheck):
    """``True`` when the code compiles under the running interpreter (``compile()``, in
    process: nothing to install). Key ``python_compiles``.

    Syntax errors (indentation and tab errors included, and compile-time errors such as
    ``return`` outside a function) are reported with their line and column.

    Example:
        >>> check = PythonCompileCheck()
        >>> check(outputs="def f(:\\n    pass")["metadata"]["errors"][0]["line"]
        1
        >>> check(outputs="x = 1")["score"]
        True
    """

    feedback_key: str = "python_compiles"
    default_name: ClassVar[str | None] = "python_compile_check"
    file_name: str = "outputs.py"

    def _check(self, code: str) -> Score:
        try:
            compile(code, self.file_name, "exec", dont_inherit=True)
        except SyntaxError as error:
            diagnostic = _diagnostic(
                error.lineno, error.offset, error.msg, type(error).__name__, "error"
            )
        except ValueError as error:  # e.g. source code containing null bytes
            diagnostic = _diagnostic(None, None, str(error), type(error).__name__, "error")
        else:
            return _verdict("compile", self.file_name, [], _python())
        return _verdict("compile", self.file_name, [diagnostic], _python())


def _python() -> dict[str, Any]:
    return {"python_version": ".".join(map(str, sys.version_info[:3]))}


class ToolCheck(CodeCheck):
    """A check that writes the code to ``file_name`` in a fresh temporary directory and runs
    a command-line tool over it.

    Args:
        file_name: The file the code is written to (its suffix tells most tools the language).
        args: Extra command-line arguments for the tool.
        timeout: Seconds before the tool is killed (a ``timeout`` failure).
        env: Environment variables added to the tool's environment.
    """

    file_name: str = "outputs.py"
    args: Sequence[str] = ()
    timeout: float = Field(default=60.0, gt=0)
    env: dict[str, str] | None = None

    tool_name: ClassVar[str] = ""

    @field_validator("file_name")
    @classmethod
    def _plain_file_name(cls, name: str) -> str:
        path = Path(name)
        if not name or path.is_absolute() or ".." in path.parts:
            raise ValueError(f"file_name must be a relative path inside the work dir, got {name!r}")
        return name

    @field_validator("args")
    @classmethod
    def _string_args(cls, args: Sequence[str]) -> Sequence[str]:
        if isinstance(args, str) or not all(isinstance(a, str) for a in args):
            raise ValueError(f"args must be a list of strings, got {args!r}")
        return tuple(args)

    @abstractmethod
    def _command(self, work_dir: Path) -> list[str]:
        """The full command (the tool found by ``find_tool`` first)."""

    @abstractmethod
    def _read(self, run: ToolRun) -> Score:
        """The verdict from the tool's output."""

    def _prepare(self, code: str, work_dir: Path) -> list[str]:
        command = self._command(work_dir)  # finds the tool: a missing one raises first
        path = work_dir / self.file_name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(code, encoding="utf-8")
        return command

    def _check(self, code: str) -> Score:
        with tempfile.TemporaryDirectory(prefix="lep-code-") as directory:
            work_dir = Path(directory)
            command = self._prepare(code, work_dir)
            run = run_tool(command, cwd=work_dir, timeout=self.timeout, env=self.env)
        return self._read(run)

    async def _acheck(self, code: str) -> Score:
        with tempfile.TemporaryDirectory(prefix="lep-code-") as directory:
            work_dir = Path(directory)
            command = self._prepare(code, work_dir)
            run = await arun_tool(command, cwd=work_dir, timeout=self.timeout, env=self.env)
        return self._read(run)

    def _crashed(self, run: ToolRun, why: str) -> EvaluationFailure:
        output = (run.stderr.strip() or run.stdout.strip())[-2000:]
        return EvaluationFailure(
            f"{self.tool_name} {why} (exit code {run.exit_code}): {output or 'no output'}",
            code="evaluator_error",
        )

    def _facts(self, run: ToolRun) -> dict[str, Any]:
        return {"exit_code": run.exit_code, "duration_ms": round(run.duration * 1000, 1)}


_MYPY_LINE = re.compile(
    r"^(?P<file>[^\n]+?):(?P<line>\d+):(?:(?P<column>\d+):)?\s(?P<severity>error|warning|note):"
    r"\s(?P<message>.*?)(?:\s\s\[(?P<code>[\w-]+)\])?$"
)


class MypyCheck(ToolCheck):
    """Type-checks the code with mypy. Key ``mypy_succeeded``.

    mypy runs as ``python -m mypy`` in the active environment when it is installed there
    (else from ``PATH``), so imports in the code resolve against that environment's
    packages. ``args`` default to ``["--ignore-missing-imports"]``; pass ``["--strict"]``
    and the like for stricter checks. Notes (``severity: note``) do not fail the check.

    Example:
        >>> result = MypyCheck().invoke({"outputs": 'x: int = "a"'})
        >>> result.score, result.metadata["errors"][0]["code"]
        (False, 'assignment')
    """

    feedback_key: str = "mypy_succeeded"
    default_name: ClassVar[str | None] = "mypy_check"
    args: Sequence[str] = ("--ignore-missing-imports",)
    tool_name: ClassVar[str] = "mypy"

    def _command(self, work_dir: Path) -> list[str]:
        return [
            *find_tool("mypy"),
            "--show-column-numbers",
            "--show-error-codes",
            "--no-error-summary",
            "--no-pretty",
            "--no-color-output",
            "--hide-error-context",
            "--cache-dir",
            str(work_dir / ".mypy_cache"),
            *self.args,
            self.file_name,
        ]

    def _read(self, run: ToolRun) -> Score:
        diagnostics = [
            _diagnostic(
                int(match["line"]),
                int(match["column"]) if match["column"] else None,
                match["message"],
                match["code"],
                match["severity"],
            )
            for match in map(_MYPY_LINE.match, run.stdout.splitlines())
            if match is not None
        ]
        # 0: clean, 1: errors found, 2: a crash or bad usage (syntax errors also exit 2,
        # but then they are reported).
        if run.exit_code not in (0, 1, 2) or (run.exit_code != 0 and not diagnostics):
            raise self._crashed(run, "failed")
        return _verdict("mypy", self.file_name, diagnostics, self._facts(run))


class RuffCheck(ToolCheck):
    """Lints the code with ruff (``ruff check --output-format json``). Key ``ruff_succeeded``.

    With ``isolated=True`` (default) ruff reads no configuration file, so the verdict
    depends only on ``args`` (e.g. ``["--select", "E,F,B"]``); ruff's default rules apply
    otherwise. Every ruff finding counts as an error.
    """

    feedback_key: str = "ruff_succeeded"
    default_name: ClassVar[str | None] = "ruff_check"
    isolated: bool = True
    tool_name: ClassVar[str] = "ruff"

    def _command(self, work_dir: Path) -> list[str]:
        isolated = ["--isolated"] if self.isolated else []
        return [
            *find_tool("ruff"),
            "check",
            "--output-format",
            "json",
            "--no-cache",
            *isolated,
            *self.args,
            self.file_name,
        ]

    def _read(self, run: ToolRun) -> Score:
        if run.exit_code not in (0, 1):
            raise self._crashed(run, "failed")
        try:
            findings = json.loads(run.stdout or "[]")
        except json.JSONDecodeError:
            raise self._crashed(run, "printed output that is not JSON") from None
        if not isinstance(findings, list) or (run.exit_code == 1 and not findings):
            raise self._crashed(run, "printed no findings")
        diagnostics = []
        for finding in findings:
            location = finding.get("location") or {}
            diagnostics.append(
                _diagnostic(
                    location.get("row"),
                    location.get("column"),
                    str(finding.get("message", "")),
                    finding.get("code") or "syntax",
                    "error",
                )
            )
        return _verdict("ruff", self.file_name, diagnostics, self._facts(run))


_PYRIGHT_SEVERITY = {"error": "error", "warning": "warning", "information": "note"}


class PyrightCheck(ToolCheck):
    """Type-checks the code with pyright (``pyright --outputjson``). Key
    ``pyright_succeeded``.

    pyright runs as ``python -m pyright`` when the PyPI wrapper is installed in the active
    environment, else from ``PATH`` (``npm install -g pyright``). Imports resolve against
    the active interpreter (``--pythonpath``) unless ``args`` choose one. With
    ``ignore_missing_imports=True`` (default, as for mypy) unresolved imports
    (``reportMissingImports``) are dropped. Warnings and information do not fail the check.
    """

    feedback_key: str = "pyright_succeeded"
    default_name: ClassVar[str | None] = "pyright_check"
    ignore_missing_imports: bool = True
    tool_name: ClassVar[str] = "pyright"

    def _command(self, work_dir: Path) -> list[str]:
        interpreter = (
            []
            if any(a.startswith("--pythonpath") for a in self.args)
            else ["--pythonpath", sys.executable]
        )
        return [
            *find_tool("pyright"),
            "--outputjson",
            *interpreter,
            *self.args,
            self.file_name,
        ]

    def _read(self, run: ToolRun) -> Score:
        if run.exit_code not in (0, 1):
            raise self._crashed(run, "failed")
        try:
            report = json.loads(run.stdout)
        except json.JSONDecodeError:
            raise self._crashed(run, "printed output that is not JSON") from None
        if not isinstance(report, Mapping):
            raise self._crashed(run, "printed an unexpected report")
        diagnostics = []
        for item in report.get("generalDiagnostics", []):
            rule = item.get("rule")
            if self.ignore_missing_imports and rule == "reportMissingImports":
                continue
            start = (item.get("range") or {}).get("start") or {}
            line, column = start.get("line"), start.get("character")
            diagnostics.append(
                _diagnostic(
                    line + 1 if isinstance(line, int) else None,
                    column + 1 if isinstance(column, int) else None,
                    str(item.get("message", "")),
                    rule,
                    _PYRIGHT_SEVERITY.get(str(item.get("severity")), "error"),
                )
            )
        facts = self._facts(run)
        if isinstance(report.get("version"), str):
            facts["pyright_version"] = report["version"]
        return _verdict("pyright", self.file_name, diagnostics, facts)


_GENERIC_LINE = re.compile(
    r"^(?P<file>[^\s:][^:\n]*):(?P<line>\d+)(?::(?P<column>\d+))?:?\s*"
    r"(?:(?P<severity>error|warning|note|info)\b:?\s*)?(?P<message>.*)$",
    re.IGNORECASE,
)


class CliCheck(ToolCheck):
    """Any other checker: runs ``command`` over the code and scores ``True`` when it exits
    with one of ``ok_exit_codes`` (``0`` by default).

    The file's path is appended to ``command``, or replaces ``{file}`` in its arguments.
    The first word is found like the other tools (``python`` is the running interpreter).
    Lines of output shaped ``file:line[:column]: [severity:] message`` that name the file
    become ``metadata["errors"]`` (severity ``error`` unless the line says otherwise); the
    full output (cut to 10,000 characters) is ``metadata["output"]``. Key
    ``<tool>_succeeded`` by default.

    Example:
        >>> check = CliCheck(command=["python", "-m", "py_compile"], file_name="main.py")
        >>> check.feedback_key
        'python_succeeded'
        >>> check(outputs="print('hi')")["score"]
        True
    """

    command: Sequence[str]
    feedback_key: str = ""
    ok_exit_codes: Sequence[int] = (0,)
    language: ClassVar[str | None] = None
    code_language: str | None = None
    """The language wanted from markdown blocks (None: any code block)."""

    @field_validator("command")
    @classmethod
    def _check_command(cls, command: Sequence[str]) -> Sequence[str]:
        if isinstance(command, str) or not command or not all(isinstance(a, str) for a in command):
            raise ValueError(f"command must be a non-empty list of strings, got {command!r}")
        return tuple(command)

    def model_post_init(self, context: Any, /) -> None:
        """Default the key and run name from the tool's name."""
        tool = Path(self.command[0]).name
        if not self.feedback_key:
            self.feedback_key = f"{tool}_succeeded"
        if self.name is None:
            self.name = f"{tool}_check"
        super().model_post_init(context)

    def _language(self) -> str | None:
        return self.code_language

    @property
    def tool(self) -> str:
        """The tool's name (the first word of ``command``)."""
        return Path(self.command[0]).name

    def _command(self, work_dir: Path) -> list[str]:
        prefix = find_tool(self.command[0])
        rest = [*self.command[1:], *self.args]
        if any("{file}" in arg for arg in rest):
            return [*prefix, *(arg.replace("{file}", self.file_name) for arg in rest)]
        return [*prefix, *rest, self.file_name]

    def _read(self, run: ToolRun) -> Score:
        output = "\n".join(part for part in (run.stdout, run.stderr) if part.strip())
        name = Path(self.file_name).name
        diagnostics = []
        for match in map(_GENERIC_LINE.match, output.splitlines()):
            if match is None or Path(match["file"].strip()).name != name:
                continue
            severity = (match["severity"] or "error").lower()
            diagnostics.append(
                _diagnostic(
                    int(match["line"]),
                    int(match["column"]) if match["column"] else None,
                    match["message"].strip(),
                    None,
                    "note" if severity == "info" else severity,
                )
            )
        passed = run.exit_code in self.ok_exit_codes
        facts = {**self._facts(run), "output": output[:10_000]}
        score = _verdict(self.tool, self.file_name, diagnostics, facts)
        comment = score.comment or ""
        if not passed:
            detail = comment if diagnostics else output.strip()[:2000]
            comment = f"{self.tool} exited with code {run.exit_code}" + (
                f"\n{detail}" if detail else ""
            )
        elif diagnostics:
            comment = f"{self.tool} exited with code {run.exit_code}\n{comment}"
        return Score(passed, comment, score.metadata)
