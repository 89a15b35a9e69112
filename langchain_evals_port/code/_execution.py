"""``ExecutionEvaluator``: does the generated code run?

The code is extracted from ``outputs``, written as ``file_name`` next to any extra
``files``, and ``command`` runs over it in a ``SandboxRunner``. The verdict is ``True`` when
the command exits with status 0. Running past ``limits.wall_seconds`` is not a verdict on
the code but a ``timeout`` failure; a sandbox that cannot be set up is a ``sandbox_error``
(a missing runner tool: ``tool_not_found``). With ``on_error="record"`` both become
``failed`` results carrying that code.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from langchain_core.runnables import RunnableConfig
from pydantic import Field, PrivateAttr, SkipValidation, field_validator

from langchain_evals_port.core import EvalRequest, Evaluator, Score
from langchain_evals_port.core.errors import EvalsError, EvaluationFailure

from ._local import check_command, relative_file_path
from ._sandbox import Limits, SandboxResult, SandboxRunner

__all__ = ["ExecutionEvaluator"]

_COMMENT_TAIL = 2_000


class ExecutionEvaluator(Evaluator):
    """``True`` when the generated code runs and exits with status 0. Key ``execution``.

    Args:
        sandbox: The ``SandboxRunner`` to run in (``BubblewrapSandboxRunner``,
            ``DockerSandboxRunner``; ``LocalProcessSandboxRunner`` only for code you trust).
        file_name: The file the extracted code is written to, relative to the work dir.
        command: What to run in the work directory.
        files: Extra files for the work directory (relative path → text or bytes), e.g.
            tests that import the generated module.
        env: The run's environment variables (nothing else is passed, bar a minimal PATH).
        limits: Time, memory, process, file-size and output limits of the run.
        code_extraction: How the code is found in ``outputs``, as for every code evaluator:
            ``"none"`` (default: ``outputs`` is the code), ``"markdown_code_blocks"``,
            ``"llm"``, a callable ``(text) -> str | None`` or a ``CodeExtractor``. Nothing
            found is a ``False`` verdict with ``metadata["code_extraction_failed"]``.
        code_language: The language wanted from markdown blocks (None: any code block).
        extraction_model: The chat model of the ``"llm"`` extraction.

    The result's metadata holds ``exit_code``, ``stdout`` and ``stderr`` (each at most
    ``limits.output_bytes``), ``duration`` (seconds), ``truncated`` and ``timed_out``.

    Example:
        >>> from langchain_evals_port.code import LocalProcessSandboxRunner
        >>> ev = ExecutionEvaluator(sandbox=LocalProcessSandboxRunner())
        >>> ev(outputs="print('hi')")["score"]
        True
    """

    feedback_key: str = "execution"
    default_name: ClassVar[str | None] = "execution_evaluator"

    sandbox: Annotated[Any, SkipValidation] = Field(exclude=True)
    file_name: str = "outputs.py"
    command: list[str] = Field(default_factory=lambda: ["python3", "outputs.py"])
    files: dict[str, str | bytes] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)
    limits: Annotated[Limits, SkipValidation] = Field(default_factory=Limits)
    code_extraction: Annotated[Any, SkipValidation] = "none"
    code_language: str | None = "python"
    extraction_model: Annotated[Any, SkipValidation] = Field(default=None, exclude=True)
    multiple_blocks: Literal["join", "largest"] = "join"

    _extractor: Any = PrivateAttr()

    @field_validator("sandbox")
    @classmethod
    def _check_sandbox(cls, sandbox: Any) -> Any:
        if not isinstance(sandbox, SandboxRunner):
            raise ValueError(f"sandbox must be a SandboxRunner (run and arun), got {sandbox!r}")
        return sandbox

    @field_validator("limits")
    @classmethod
    def _check_limits(cls, limits: Any) -> Any:
        if not isinstance(limits, Limits):
            raise ValueError(f"limits must be a Limits, got {limits!r}")
        return limits

    def model_post_init(self, context: Any, /) -> None:
        """Check the file names and command, and build the code extractor once."""
        try:
            relative_file_path(self.file_name)
            for name in self.files:
                relative_file_path(name)
            check_command(self.command)
        except EvalsError as error:
            raise ValueError(str(error)) from None
        if self.file_name in self.files:
            raise ValueError(f"files must not contain file_name {self.file_name!r}")
        # Imported here: extraction is its own module, shared with the static checks.
        from ._extract import coerce_extractor

        self._extractor = coerce_extractor(
            self.code_extraction,
            language=self.code_language,
            model=self.extraction_model,
            multiple_blocks=self.multiple_blocks,
        )

    def _score(self, request: EvalRequest, config: RunnableConfig) -> Score:
        from ._extract import extraction_failed, has_code

        (outputs,) = request.require("outputs", evaluator=self.get_name())
        code = self._extractor.extract(outputs, config)
        if code is None or not has_code(code):
            return extraction_failed(self._extractor.name)
        result = self.sandbox.run(self._files(code), self.command, env=self.env, limits=self.limits)
        return self._verdict(result)

    async def _ascore(self, request: EvalRequest, config: RunnableConfig) -> Score:
        from ._extract import extraction_failed, has_code

        (outputs,) = request.require("outputs", evaluator=self.get_name())
        code = await self._extractor.aextract(outputs, config)
        if code is None or not has_code(code):
            return extraction_failed(self._extractor.name)
        result = await self.sandbox.arun(
            self._files(code), self.command, env=self.env, limits=self.limits
        )
        return self._verdict(result)

    def _files(self, code: str) -> dict[str, str | bytes]:
        return {**self.files, self.file_name: code}

    def _verdict(self, result: SandboxResult) -> Score:
        if not isinstance(result, SandboxResult):
            raise EvaluationFailure(
                f"the sandbox returned {type(result).__name__}, not a SandboxResult",
                code="sandbox_error",
            )
        if result.timed_out:
            raise EvaluationFailure(
                f"{' '.join(self.command)!s} did not finish within "
                f"{self.limits.wall_seconds:g} s and was killed",
                code="timeout",
            )
        metadata: dict[str, Any] = {
            "exit_code": result.exit_code,
            "stdout": result.stdout,
            "stderr": result.stderr,
            "duration": result.duration,
            "truncated": result.truncated,
            "timed_out": False,
            "code_extraction": self._extractor.name,
        }
        if result.exit_code == 0:
            return Score(True, f"exited with status 0 in {result.duration:.2f} s", metadata)
        if result.exit_code is not None and result.exit_code < 0:
            how = f"was killed by signal {-result.exit_code}"
        else:
            how = f"exited with status {result.exit_code}"
        comment = f"{' '.join(self.command)} {how}"
        tail = result.stderr.strip()[-_COMMENT_TAIL:]
        if tail:
            comment += f"; stderr:\n{tail}"
        return Score(False, comment, metadata)
