"""Getting the code out of a model's answer before it is checked or judged.

Strategies:

* ``"none"``: the answer's text is the code.
* ``"markdown_code_blocks"``: the fenced blocks of the answer (```` ``` ```` or ``~~~``).
  Blocks tagged as shell sessions, JSON or plain text (``bash``, ``sh``, ``console``,
  ``json``, ``text``, ...; see ``NON_CODE_TAGS``) are never code. Blocks tagged with the
  requested ``language`` (or one of its aliases, e.g. ``py`` for ``python``) win; without
  any, untagged blocks are the candidates; blocks tagged with another language are used only
  when no ``language`` is requested. Each block's code ends with a newline, as a file's
  lines do. Several candidates are **joined** in order, separated by a blank line
  (``multiple_blocks="join"``, the default: answers often split one module
  into imports, definitions and usage), or the **largest** one alone is taken
  (``multiple_blocks="largest"``: for answers that show a draft and then a corrected
  version).
* ``"llm"``: a chat model reads the answer and returns ``{"has_code", "code"}`` through
  ``with_structured_output``; ``has_code: false`` means nothing to extract.
* a callable ``(text) -> str | None`` (or an async one, on the async path).

The answer may be a string, a LangChain message, an OpenAI-style message dict, a list of
messages or ``{"messages": [...]}`` (its last AI message is read). Nothing to extract is not
an error: code evaluators turn it into a ``False`` verdict whose metadata carries
``code_extraction_failed: True`` (see ``extraction_failed``).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Generator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, Field

from langchain_evals_port.core import Score, to_openai_messages
from langchain_evals_port.core._calls import call_async, call_sync
from langchain_evals_port.core.errors import (
    EvaluatorInputError,
    EvaluatorUsageError,
    JudgeOutputError,
    MessageFormatError,
)
from langchain_evals_port.judge._defaults import judge_model
from langchain_evals_port.judge._model import native_method, with_structured_output
from langchain_evals_port.judge._structured import ModelCall, run_async, run_sync

__all__ = [
    "NON_CODE_TAGS",
    "CodeExtractor",
    "ExtractionStrategy",
    "extract_markdown_code",
    "extraction_failed",
    "output_text",
]

ExtractionStrategy: TypeAlias = Literal["none", "markdown_code_blocks", "llm"]
"""The built-in ways to find the code in an answer."""

ExtractorFunction: TypeAlias = Callable[[Any], "str | Awaitable[str | None] | None"]
"""A custom extractor: the answer's text (or its raw ``outputs``) in, the code or None out."""

NON_CODE_TAGS: Final[frozenset[str]] = frozenset(
    {
        "bash",
        "sh",
        "shell",
        "zsh",
        "fish",
        "console",
        "terminal",
        "shell-session",
        "shellsession",
        "powershell",
        "ps1",
        "bat",
        "cmd",
        "json",
        "jsonc",
        "json5",
        "text",
        "txt",
        "plaintext",
        "output",
    }
)
"""Fence tags whose blocks are never taken as code (unless that language is requested)."""

_ALIASES: Final[dict[str, frozenset[str]]] = {
    "python": frozenset({"python", "py", "python3", "py3"}),
    "javascript": frozenset({"javascript", "js", "node", "mjs"}),
    "typescript": frozenset({"typescript", "ts", "tsx"}),
    "shell": frozenset({"bash", "sh", "shell", "zsh"}),
    "c++": frozenset({"c++", "cpp", "cxx"}),
    "csharp": frozenset({"csharp", "c#", "cs"}),
}

# An opening fence: up to three spaces, three or more backticks or tildes, an info string.
_OPEN = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)$")


def _names(language: str) -> frozenset[str]:
    lowered = language.lower()
    for aliases in _ALIASES.values():
        if lowered in aliases:
            return aliases
    return _ALIASES.get(lowered, frozenset({lowered}))


@dataclass(frozen=True)
class _Block:
    tag: str
    code: str


def _blocks(text: str) -> list[_Block]:
    """The fenced blocks of ``text``, CommonMark style: the closing fence is the same
    character, at least as long, and an unclosed block runs to the end of the text."""
    lines = text.splitlines()
    blocks: list[_Block] = []
    index = 0
    while index < len(lines):
        opening = _OPEN.match(lines[index])
        index += 1
        if opening is None:
            continue
        fence = opening["fence"]
        info = opening["info"].strip()
        if fence[0] == "`" and "`" in info:
            continue  # not a fence: inline code such as ```x```
        tag = info.split(maxsplit=1)[0].lower() if info else ""
        tag = tag.strip("{}.")
        body: list[str] = []
        indent = len(opening["indent"])
        while index < len(lines):
            line = lines[index]
            index += 1
            stripped = line.lstrip(" ")
            if (
                len(line) - len(stripped) <= 3
                and stripped.rstrip().startswith(fence)
                and set(stripped.rstrip()) == {fence[0]}
            ):
                break
            # Content is dedented by the opening fence's indentation, as CommonMark does.
            body.append(line[min(indent, len(line) - len(line.lstrip(" "))) :])
        blocks.append(_Block(tag, "".join(f"{line}\n" for line in body)))
    return blocks


def extract_markdown_code(
    text: str,
    *,
    language: str | None = "python",
    multiple_blocks: Literal["join", "largest"] = "join",
) -> str | None:
    """The code in ``text``'s fenced markdown blocks, or None when there is none.

    See the module docstring for which blocks count.

    Example:
        >>> answer = "Install:\\n```bash\\npip install x\\n```\\n```python\\nprint(1)\\n```"
        >>> extract_markdown_code(answer)
        'print(1)\\n'
        >>> extract_markdown_code("no code here") is None
        True
    """
    blocks = [block for block in _blocks(text) if block.code.strip()]
    if language is None:
        chosen = [block for block in blocks if block.tag not in NON_CODE_TAGS]
    else:
        wanted = _names(language)
        chosen = [block for block in blocks if block.tag in wanted]
        if not chosen:
            chosen = [block for block in blocks if block.tag == ""]
    if not chosen:
        return None
    if multiple_blocks == "largest":
        return max(chosen, key=lambda block: len(block.code.strip())).code
    return "\n".join(block.code for block in chosen)


def output_text(outputs: Any) -> str:
    """The text of an answer: a string, a message, a message list or ``{"messages": [...]}``
    (the last AI message), or a mapping with a ``content`` key.

    Example:
        >>> output_text({"messages": [{"role": "user", "content": "hi"},
        ...                           {"role": "assistant", "content": "x = 1"}]})
        'x = 1'
    """
    if isinstance(outputs, str):
        return outputs
    if isinstance(outputs, BaseMessage):
        return _content_text(outputs.content)
    is_state = isinstance(outputs, Mapping) and "messages" in outputs and "role" not in outputs
    if isinstance(outputs, (list, tuple)) or is_state:
        try:
            messages = to_openai_messages(outputs)
        except MessageFormatError as error:
            raise EvaluatorInputError(f"outputs: {error}") from None
        answers = [m for m in messages if m["role"] == "assistant"]
        if not answers:
            raise EvaluatorInputError(
                "outputs: the message list has no AI (assistant) message to read code from"
            )
        return _content_text(answers[-1].get("content"))
    if isinstance(outputs, Mapping) and "content" in outputs:
        return _content_text(outputs["content"])
    raise EvaluatorInputError(
        "outputs must be a string, a message, a message list or {'messages': [...]} to "
        f"extract code from; got {type(outputs).__name__}"
    )


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
        return "\n".join(parts)
    raise EvaluatorInputError(
        f"a message's content must be text or content blocks, got {type(content).__name__}"
    )


# --- the LLM strategy ------------------------------------------------------------------------


class _Extraction(BaseModel):
    """The code found in a text, verbatim."""

    has_code: bool = Field(
        description="true when the text contains source code to extract, false otherwise"
    )
    code: str = Field(
        default="",
        description=(
            "All of the source code in the text, exactly as written (errors included), as one "
            "program; no prose, no installation steps, no shell commands. Empty when has_code "
            "is false."
        ),
    )


_SYSTEM = (
    "You pull source code out of a piece of text so that it can be checked by tools. Copy "
    "the code character for character: do not fix, reformat, complete or explain it. Leave "
    "out prose, shell commands and installation instructions. If the text holds no source "
    "code, answer has_code=false."
)


def _extraction_messages(text: str, language: str | None) -> list[BaseMessage]:
    wanted = f" The code should be {language}." if language else ""
    return [
        SystemMessage(_SYSTEM + wanted),
        HumanMessage(f"<text>\n{text}\n</text>"),
    ]


def _extraction(
    model: Any, text: str, language: str | None
) -> Generator[ModelCall, Any, str | None]:
    """The extraction as a judge conversation: one structured call, its reply read (a reply
    that does not match is a ``JudgeOutputError``, and is not cached)."""
    chat = judge_model(model)
    try:
        structured = with_structured_output(chat, _Extraction, native_method(chat))
    except NotImplementedError as error:
        raise EvaluatorInputError(
            f"the code-extraction model cannot produce structured output: {error}"
        ) from None
    reply = yield ModelCall(structured, _extraction_messages(text, language))
    return _read_extraction(reply)


def _read_extraction(reply: Any) -> str | None:
    parsed = reply.get("parsed") if isinstance(reply, Mapping) else reply
    if isinstance(parsed, Mapping):
        try:
            parsed = _Extraction.model_validate(parsed)
        except ValueError as error:
            raise JudgeOutputError(
                f"the code-extraction reply does not match its schema: {error}",
                raw_reply=str(parsed),
            ) from None
    if not isinstance(parsed, _Extraction):
        raw = reply.get("raw") if isinstance(reply, Mapping) else reply
        problem = reply.get("parsing_error") if isinstance(reply, Mapping) else None
        text = raw.text if isinstance(raw, AIMessage) else str(raw)
        raise JudgeOutputError(
            f"the code-extraction model did not return its schema ({problem or 'no object'})",
            raw_reply=text,
        )
    return parsed.code if parsed.has_code else None


# --- the extractor --------------------------------------------------------------------------


@dataclass(frozen=True)
class CodeExtractor:
    """How a code evaluator finds the code in ``outputs``.

    Args:
        strategy: ``"none"``, ``"markdown_code_blocks"``, ``"llm"`` or a callable
            ``(text) -> str | None`` (async callables work on the async path).
        language: The language wanted from markdown blocks and asked of the LLM; None for any.
        multiple_blocks: ``"join"`` or ``"largest"`` (see the module docstring).
        model: The chat model of the ``"llm"`` strategy (None: the default judge).
        callable_input: What a callable strategy receives: the answer's ``"text"``, or the
            request's raw ``"outputs"`` (what OpenEvals' ``code_extractor`` gets).

    Example:
        >>> CodeExtractor("markdown_code_blocks").extract("```py\\nx = 1\\n```")
        'x = 1\\n'
    """

    strategy: ExtractionStrategy | ExtractorFunction = "none"
    language: str | None = "python"
    multiple_blocks: Literal["join", "largest"] = "join"
    model: Any = None
    callable_input: Literal["text", "outputs"] = "text"

    def __post_init__(self) -> None:
        if not callable(self.strategy) and self.strategy not in (
            "none",
            "markdown_code_blocks",
            "llm",
        ):
            raise ValueError(
                "code_extraction must be 'none', 'markdown_code_blocks', 'llm' or a callable "
                f"(text) -> str | None, got {self.strategy!r}"
            )
        if self.multiple_blocks not in ("join", "largest"):
            raise ValueError(
                f"multiple_blocks must be 'join' or 'largest', got {self.multiple_blocks!r}"
            )

    @property
    def name(self) -> str:
        """The strategy's name, for result metadata."""
        if callable(self.strategy):
            return getattr(self.strategy, "__name__", "custom")
        return self.strategy

    def extract(self, outputs: Any, config: RunnableConfig | None = None) -> str | None:
        """The code in ``outputs``, or None when there is none."""
        strategy = self.strategy
        if callable(strategy):
            found = call_sync(
                strategy,
                self._callable_argument(outputs),
                hint="use the evaluator's async path (ainvoke)",
            )
            return _checked(found)
        text = output_text(outputs)
        if strategy == "none":
            return text
        if strategy == "markdown_code_blocks":
            return extract_markdown_code(
                text, language=self.language, multiple_blocks=self.multiple_blocks
            )
        return run_sync(_extraction(self.model, text, self.language), _extract_config(config))

    async def aextract(self, outputs: Any, config: RunnableConfig | None = None) -> str | None:
        """The async twin of ``extract``: the model's async path, awaited custom extractors."""
        strategy = self.strategy
        if callable(strategy):
            return _checked(await call_async(strategy, self._callable_argument(outputs)))
        if strategy != "llm":
            return self.extract(outputs, config)
        text = output_text(outputs)
        return await run_async(
            _extraction(self.model, text, self.language), _extract_config(config)
        )

    def _callable_argument(self, outputs: Any) -> Any:
        return outputs if self.callable_input == "outputs" else output_text(outputs)


def _extract_config(config: RunnableConfig | None) -> RunnableConfig:
    return {**(config or {}), "run_name": "extract_code"}


def _checked(found: Any) -> str | None:
    if found is None or isinstance(found, str):
        return found
    raise EvaluatorUsageError(
        f"a code extractor must return a string or None, got {type(found).__name__}"
    )


def coerce_extractor(
    spec: ExtractionStrategy | ExtractorFunction | CodeExtractor,
    *,
    language: str | None,
    model: Any,
    multiple_blocks: Literal["join", "largest"] = "join",
) -> CodeExtractor:
    """A ``CodeExtractor`` from an evaluator's ``code_extraction`` setting."""
    if isinstance(spec, CodeExtractor):
        return spec
    return CodeExtractor(
        strategy=spec, language=language, multiple_blocks=multiple_blocks, model=model
    )


def extraction_failed(strategy: str) -> Score:
    """The verdict of a code evaluator that found no code: ``False``, with
    ``metadata["code_extraction_failed"] = True``.

    Example:
        >>> extraction_failed("markdown_code_blocks").metadata["code_extraction_failed"]
        True
    """
    return Score(
        False,
        f"no code could be extracted from the outputs (strategy {strategy!r})",
        {"code_extraction_failed": True, "code_extraction": strategy},
    )


def has_code(code: str | None) -> bool:
    """Whether an extraction found code (not None, not only whitespace)."""
    return code is not None and bool(code.strip())
