"""Evaluators for generated code: extraction, static checks, execution, an LLM judge.

* **Extraction** (``CodeExtractor``): the code is taken from ``outputs`` as it is
  (``"none"``), from markdown fences, by a judge model (``"llm"``), or by your function.
  Nothing to extract is a ``False`` verdict with ``metadata["code_extraction_failed"]``.
* **Checks**: ``PythonCompileCheck`` (in process), ``MypyCheck``, ``PyrightCheck``,
  ``RuffCheck`` and ``CliCheck`` for any other tool; a missing tool is a
  ``ToolNotFoundError``, never a failing verdict.
* **Execution**: ``ExecutionEvaluator`` over a ``SandboxRunner`` (``DockerSandboxRunner``,
  ``BubblewrapSandboxRunner``, ``LocalProcessSandboxRunner``; the last is not a security
  boundary).
* **Judge**: ``CodeLLMJudge`` with the code-correctness prompts.

Example:
    >>> from langchain_evals_port.code import PythonCompileCheck
    >>> PythonCompileCheck(code_extraction="markdown_code_blocks")(
    ...     outputs="Here:\\n```python\\nprint('hi')\\n```")["score"]
    True
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from langchain_evals_port.core.errors import ToolNotFoundError

from ._checks import (
    CliCheck,
    CodeCheck,
    Diagnostic,
    MypyCheck,
    PyrightCheck,
    PythonCompileCheck,
    RuffCheck,
)
from ._extract import (
    NON_CODE_TAGS,
    CodeExtractor,
    ExtractionStrategy,
    extract_markdown_code,
    extraction_failed,
    output_text,
)
from ._sandbox import Limits, SandboxResult, SandboxRunner
from ._tools import ToolRun, find_tool, run_tool

if TYPE_CHECKING:
    from ._bubblewrap import BubblewrapSandboxRunner
    from ._docker import DockerSandboxRunner
    from ._execution import ExecutionEvaluator
    from ._judge import CodeLLMJudge
    from ._local import LocalProcessSandboxRunner

# Loaded on first use: the judge pulls in LangChain's prompt machinery, and the runners are
# written in modules of their own.
_LAZY = {
    "CodeLLMJudge": "_judge",
    "ExecutionEvaluator": "_execution",
    "LocalProcessSandboxRunner": "_local",
    "BubblewrapSandboxRunner": "_bubblewrap",
    "DockerSandboxRunner": "_docker",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "NON_CODE_TAGS",
    "BubblewrapSandboxRunner",
    "CliCheck",
    "CodeCheck",
    "CodeExtractor",
    "CodeLLMJudge",
    "Diagnostic",
    "DockerSandboxRunner",
    "ExecutionEvaluator",
    "ExtractionStrategy",
    "Limits",
    "LocalProcessSandboxRunner",
    "MypyCheck",
    "PyrightCheck",
    "PythonCompileCheck",
    "RuffCheck",
    "SandboxResult",
    "SandboxRunner",
    "ToolNotFoundError",
    "ToolRun",
    "extract_markdown_code",
    "extraction_failed",
    "find_tool",
    "output_text",
    "run_tool",
]
