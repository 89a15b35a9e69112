"""Turning a prompt and an ``EvalRequest`` into the judge's messages.

Rendering is safe: a template string is parsed once and values are inserted as literal text,
so an output that contains ``{reference_outputs}`` stays literal. A template is read the way
``str.format`` reads it (``{{`` is a literal brace) when every field in it is a plain name;
a template with other braces (embedded JSON) substitutes ``{name}`` placeholders only and
leaves every other brace alone. Non-string values render as indented JSON with non-ASCII
text unescaped; LangChain messages inside them render as OpenAI-style dicts, the one format
used for messages everywhere in this package.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder

from langchain_evals_port.core import EvalRequest, canonical_value, to_langchain_messages
from langchain_evals_port.core.errors import EvaluatorInputError, EvaluatorUsageError

from ._attachments import attachment_block

PromptSource = str | ChatPromptTemplate | Callable[..., Any]
"""A template string, a LangChain chat prompt, or a callable returning messages."""

_NAME = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
# A variable name followed by a conversion, a format spec, an index or an attribute.
_FORMATTED = re.compile(
    r"(?<!\{)\{[A-Za-z_][A-Za-z0-9_]*(?:![rsa]|:[^{}]*|\[[^{}]*\]|\.[A-Za-z_])[^{}]*\}"
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class FewShotExample:
    """A graded example shown to the judge to calibrate it.

    Example:
        >>> FewShotExample(inputs="2+2?", outputs="4", score=True, reasoning="correct and direct")
        FewShotExample(inputs='2+2?', outputs='4', score=True, reasoning='correct and direct')
    """

    inputs: Any
    outputs: Any
    score: bool | float
    reasoning: str | None = None

    def render(self) -> str:
        """The example as the judge sees it."""
        parts = [
            f"<input>{render_value(self.inputs)}</input>",
            f"<output>{render_value(self.outputs)}</output>",
        ]
        if self.reasoning is not None:
            parts.append(f"<reasoning>{self.reasoning}</reasoning>")
        parts.append(f"<score>{json.dumps(self.score)}</score>")
        return "<example>\n" + "\n".join(parts) + "\n</example>"


def render_value(value: Any) -> str:
    """A prompt variable's text: strings as they are, anything else as readable JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(canonical_value(value), ensure_ascii=False, indent=2)


@dataclass(frozen=True)
class Template:
    """A parsed template string: literal pieces and variable names, in order."""

    pieces: tuple[tuple[str, str | None], ...]

    @classmethod
    def parse(cls, text: str) -> Template:
        """Parse ``text`` (see the module docstring for the two readings).

        A field that names a variable with a conversion, a format spec or an index
        (``{outputs!r}``, ``{outputs:>5}``, ``{inputs[0]}``) is an error: it would not be
        filled, and the judge would see the braces instead of the value.
        """
        for match in _FORMATTED.finditer(text):
            raise EvaluatorUsageError(
                f"template field {match.group(0)!r} has a conversion, format spec or index; "
                "templates take plain {name} fields (format the value before passing it)"
            )
        try:
            fields = list(string.Formatter().parse(text))
            if all(
                name is None or (_IDENTIFIER.match(name) and not spec and not conversion)
                for _, name, spec, conversion in fields
            ):
                return cls(tuple((literal, name) for literal, name, _, _ in fields))
        except ValueError:
            pass
        pieces: list[tuple[str, str | None]] = []
        position = 0
        for match in _NAME.finditer(text):
            pieces.append((text[position : match.start()], match.group(1)))
            position = match.end()
        pieces.append((text[position:], None))
        return cls(tuple(pieces))

    @property
    def variables(self) -> list[str]:
        """The variable names, in order of first appearance."""
        return list(dict.fromkeys(name for _, name in self.pieces if name is not None))

    def render(self, values: Mapping[str, str]) -> str:
        """The text with each variable replaced by its value, inserted literally."""
        return "".join(literal + (values[name] if name else "") for literal, name in self.pieces)

    def split(self, name: str) -> tuple[Template, Template] | None:
        """The parts before and after the first ``{name}``, or None if it does not occur."""
        for index, (_, piece_name) in enumerate(self.pieces):
            if piece_name == name:
                head = (*self.pieces[:index], (self.pieces[index][0], None))
                return Template(head), Template(self.pieces[index + 1 :])
        return None


def prompt_values(
    request: EvalRequest,
    needed: Sequence[str],
    optional: Sequence[str],
    prompt_name: str,
) -> dict[str, str]:
    """The rendered value of each variable in ``needed``; optional ones default to ``""``."""
    given = _named_values(request)
    values: dict[str, str] = {}
    missing = []
    for name in needed:
        value = given.get(name)
        if value is not None:
            values[name] = render_value(value)
        elif name in optional:
            values[name] = ""
        else:
            missing.append(name)
    if missing:
        raise EvaluatorInputError(
            f"prompt {prompt_name} needs {', '.join(repr(m) for m in missing)}, which "
            f"{'was' if len(missing) == 1 else 'were'} not given (or None); pass "
            f"{', '.join(f'{m}=...' for m in missing)}"
        )
    return values


def _named_values(request: EvalRequest) -> dict[str, Any]:
    return {
        "inputs": request.inputs,
        "outputs": request.outputs,
        "reference_outputs": request.reference_outputs,
        **request.variables,
    }


def build_messages(
    prompt: PromptSource | Template,
    request: EvalRequest,
    *,
    system: str | None,
    few_shot_examples: Sequence[FewShotExample],
    optional: Sequence[str],
    prompt_name: str,
) -> list[BaseMessage]:
    """The judge's messages for ``request``: system, prompt, attachments, few-shot examples.

    A template string may come pre-parsed as a ``Template``, so a judge parses it once.
    """
    blocks = [attachment_block(item, i) for i, item in enumerate(request.attachments)]
    if isinstance(prompt, str):
        prompt = Template.parse(prompt)
    if isinstance(prompt, Template):
        messages: list[BaseMessage] = [
            _user_message(prompt, request, blocks, optional, prompt_name)
        ]
    elif isinstance(prompt, ChatPromptTemplate):
        messages = _with_blocks(
            _render_chat_template(prompt, request, optional, prompt_name), blocks
        )
    elif callable(prompt):
        produced = prompt(
            inputs=request.inputs,
            outputs=request.outputs,
            reference_outputs=request.reference_outputs,
            **request.variables,
        )
        messages = _with_blocks(to_langchain_messages(produced), blocks)
    else:
        raise EvaluatorInputError(
            f"prompt must be a template string, a ChatPromptTemplate or a callable returning "
            f"messages, got {type(prompt).__name__}"
        )
    if system is not None:
        messages = [SystemMessage(system), *messages]
    if few_shot_examples:
        examples = "\n".join(example.render() for example in few_shot_examples)
        messages = _append_to_last_user_message(messages, examples, prompt_name)
    return messages


def _render_chat_template(
    prompt: ChatPromptTemplate, request: EvalRequest, optional: Sequence[str], prompt_name: str
) -> list[BaseMessage]:
    placeholders = {
        message.variable_name
        for message in prompt.messages
        if isinstance(message, MessagesPlaceholder)
    }
    needed = [
        name
        for name in (*prompt.input_variables, *prompt.optional_variables)
        if name not in placeholders
    ]
    values: dict[str, Any] = prompt_values(
        request, needed, [*optional, *prompt.optional_variables], prompt_name
    )
    given = _named_values(request)
    # A MessagesPlaceholder takes the messages themselves, not their JSON text.
    for name in placeholders:
        value = given.get(name)
        values[name] = [] if value is None else to_langchain_messages(value)
    return prompt.invoke(values).to_messages()


def _user_message(
    template: Template,
    request: EvalRequest,
    blocks: list[dict[str, Any]],
    optional: Sequence[str],
    prompt_name: str,
) -> HumanMessage:
    needed = [name for name in template.variables if name != "attachments"]
    values = prompt_values(request, needed, optional, prompt_name)
    halves = template.split("attachments")
    if halves is None:
        text = template.render(values)
        return HumanMessage(text) if not blocks else _blocks_message(text, blocks, "")
    if not blocks and "attachments" not in optional:
        raise EvaluatorInputError(
            f"prompt {prompt_name} needs 'attachments', which were not given; pass "
            "attachments=[Attachment.from_url(...), ...]"
        )
    return _blocks_message(halves[0].render(values), blocks, halves[1].render(values))


def _blocks_message(before: str, blocks: list[dict[str, Any]], after: str) -> HumanMessage:
    content: list[str | dict[str, Any]] = []
    if before:
        content.append({"type": "text", "text": before})
    content.extend(blocks)
    if after:
        content.append({"type": "text", "text": after})
    return HumanMessage(content=content)


def _with_blocks(messages: list[BaseMessage], blocks: list[dict[str, Any]]) -> list[BaseMessage]:
    if not blocks:
        return messages
    return _extend_last_user_message(messages, blocks, "the prompt")


def _append_to_last_user_message(
    messages: list[BaseMessage], text: str, prompt_name: str
) -> list[BaseMessage]:
    return _extend_last_user_message(messages, [{"type": "text", "text": text}], prompt_name)


def _extend_last_user_message(
    messages: list[BaseMessage], blocks: list[dict[str, Any]], prompt_name: str
) -> list[BaseMessage]:
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, HumanMessage):
            content = message.content
            if isinstance(content, str):
                if all(block.get("type") == "text" for block in blocks):
                    joined = "\n\n".join([content, *(b["text"] for b in blocks)])
                    updated = message.model_copy(update={"content": joined})
                else:
                    text = [{"type": "text", "text": content}] if content else []
                    updated = message.model_copy(update={"content": [*text, *blocks]})
            else:
                updated = message.model_copy(update={"content": [*content, *blocks]})
            return [*messages[:index], updated, *messages[index + 1 :]]
    raise EvaluatorInputError(
        f"{prompt_name} has no user message to add few-shot examples or attachments to"
    )
