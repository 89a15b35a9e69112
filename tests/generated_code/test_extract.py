"""Code extraction: markdown fences, message inputs, the LLM strategy, custom functions."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langchain_evals_port.code import (
    CodeExtractor,
    PythonCompileCheck,
    extract_markdown_code,
    output_text,
)
from langchain_evals_port.core.errors import (
    EvaluatorInputError,
    EvaluatorUsageError,
    JudgeOutputError,
)
from langchain_evals_port.testing import ScriptedChatModel

ANSWER = """Install the dependency first:

```bash
pip install requests
```

Then the function:

```python
def add(a, b):
    return a + b
```

Called like this:

```python
print(add(1, 2))
```

Which prints:

```text
3
```

The config:

```json
{"debug": true}
```
"""


# --- markdown ---------------------------------------------------------------------------------


def test_markdown_skips_shell_json_and_text_and_joins_python_blocks() -> None:
    code = extract_markdown_code(ANSWER)
    assert code == "def add(a, b):\n    return a + b\n\nprint(add(1, 2))\n"


def test_markdown_largest_takes_one_block() -> None:
    code = extract_markdown_code(ANSWER, multiple_blocks="largest")
    assert code == "def add(a, b):\n    return a + b\n"


def test_markdown_prefers_the_language_over_untagged_blocks() -> None:
    text = "```\nnot this\n```\n```py\nx = 1\n```"
    assert extract_markdown_code(text) == "x = 1\n"


def test_markdown_untagged_blocks_are_candidates() -> None:
    text = "Run:\n```sh\nls\n```\nCode:\n```\nx = 1\n```"
    assert extract_markdown_code(text) == "x = 1\n"


def test_markdown_other_languages_only_without_a_requested_language() -> None:
    text = "```javascript\nconsole.log(1)\n```"
    assert extract_markdown_code(text) is None
    assert extract_markdown_code(text, language=None) == "console.log(1)\n"
    assert extract_markdown_code(text, language="js") == "console.log(1)\n"


def test_markdown_only_shell_and_json_is_nothing() -> None:
    assert extract_markdown_code("```bash\nls\n```\n```json\n{}\n```", language=None) is None
    assert extract_markdown_code("just prose, no code") is None


def test_markdown_fences_follow_commonmark() -> None:
    # A longer fence may contain a shorter one; tildes work; an unclosed fence runs to the end.
    nested = "````python\ns = '''\n```\n'''\n````"
    assert extract_markdown_code(nested) == "s = '''\n```\n'''\n"
    assert extract_markdown_code("~~~python\nx = 2\n~~~") == "x = 2\n"
    assert extract_markdown_code("Here:\n```python\nx = 3\ny = 4") == "x = 3\ny = 4\n"
    # An info string after the language is allowed.
    assert extract_markdown_code('```python title="a.py"\nz = 5\n```') == "z = 5\n"


def test_markdown_empty_blocks_do_not_count() -> None:
    assert extract_markdown_code("```python\n\n```") is None


# --- inputs -----------------------------------------------------------------------------------


def test_output_text_reads_every_message_shape() -> None:
    assert output_text("x = 1") == "x = 1"
    assert output_text(AIMessage("x = 1")) == "x = 1"
    assert output_text({"role": "assistant", "content": "x = 1"}) == "x = 1"
    state = {"messages": [HumanMessage("write x"), AIMessage("x = 1"), HumanMessage("thanks")]}
    assert output_text(state) == "x = 1"  # the last AI message, not the last message
    blocks = AIMessage(content=[{"type": "text", "text": "x = 1"}, {"type": "image_url"}])
    assert output_text(blocks) == "x = 1"


def test_output_text_rejects_what_holds_no_answer() -> None:
    with pytest.raises(EvaluatorInputError, match="no AI"):
        output_text([{"role": "user", "content": "hi"}])
    with pytest.raises(EvaluatorInputError, match="got int"):
        output_text(42)


# --- extraction through an evaluator ----------------------------------------------------------


def test_nothing_to_extract_is_a_false_verdict_not_an_error() -> None:
    check = PythonCompileCheck(code_extraction="markdown_code_blocks")
    result = check.invoke({"outputs": "Sorry, I can't write that."})
    assert result.outcome == "verdict"
    assert result.score is False
    assert result.metadata["code_extraction_failed"] is True
    assert result.metadata["code_extraction"] == "markdown_code_blocks"


def test_extraction_reads_the_last_ai_message_of_a_state() -> None:
    check = PythonCompileCheck(code_extraction="markdown_code_blocks")
    state = {
        "messages": [
            {"role": "user", "content": "write code"},
            {"role": "assistant", "content": "```python\ndef f(:\n```"},
        ]
    }
    result = check.invoke({"outputs": state})
    assert result.score is False
    assert result.metadata["errors"][0]["line"] == 1


def test_unknown_strategy_fails_at_construction() -> None:
    with pytest.raises(ValueError, match="code_extraction must be"):
        PythonCompileCheck(code_extraction="regex")


# --- the LLM strategy -------------------------------------------------------------------------


def test_llm_extraction_uses_structured_output() -> None:
    model = ScriptedChatModel([{"has_code": True, "code": "x = 1\n"}])
    extractor = CodeExtractor("llm", model=model)
    assert extractor.extract("Set x to one: x = 1") == "x = 1\n"
    call = model.calls[0]
    assert call.kind == "structured"
    assert "Set x to one" in call.messages[-1].text
    assert "python" in call.messages[0].text


def test_llm_extraction_has_code_false_means_no_code() -> None:
    model = ScriptedChatModel([{"has_code": False, "code": ""}])
    check = PythonCompileCheck(code_extraction="llm", extraction_model=model)
    result = check.invoke({"outputs": "The weather is fine."})
    assert result.score is False
    assert result.metadata["code_extraction_failed"] is True


def test_llm_extraction_bad_reply_is_a_judge_failure() -> None:
    model = ScriptedChatModel([{"found": "yes"}])
    check = PythonCompileCheck(code_extraction="llm", extraction_model=model)
    with pytest.raises(JudgeOutputError):
        check.invoke({"outputs": "x = 1"})
    recorded = PythonCompileCheck(
        code_extraction="llm",
        extraction_model=ScriptedChatModel([{"found": "yes"}]),
        on_error="record",
    ).invoke({"outputs": "x = 1"})
    assert recorded.outcome == "failed"
    assert recorded.error_code == "judge_parse_failure"


async def test_llm_extraction_async_path() -> None:
    model = ScriptedChatModel([{"has_code": True, "code": "def f(:\n    pass"}])
    check = PythonCompileCheck(code_extraction="llm", extraction_model=model)
    result = await check.ainvoke({"outputs": "Here is f"})
    assert result.score is False
    assert result.metadata["errors"][0]["code"] == "SyntaxError"
    assert len(model.calls) == 1


# --- custom extractors ------------------------------------------------------------------------


def test_custom_extractor_gets_the_text() -> None:
    seen: list[object] = []

    def after_marker(text: str) -> str | None:
        seen.append(text)
        return text.split("CODE:", 1)[1] if "CODE:" in text else None

    check = PythonCompileCheck(code_extraction=after_marker)
    assert check.invoke({"outputs": AIMessage("CODE:\nx = 1")}).score is True
    assert seen == ["CODE:\nx = 1"]
    failed = check.invoke({"outputs": "nothing"})
    assert failed.metadata["code_extraction_failed"] is True
    assert failed.metadata["code_extraction"] == "after_marker"


def test_custom_extractor_must_return_text() -> None:
    check = PythonCompileCheck(code_extraction=lambda text: 42)
    with pytest.raises(EvaluatorUsageError, match="string or None"):
        check.invoke({"outputs": "x"})


async def test_async_custom_extractor() -> None:
    async def extract(text: str) -> str:
        return text.upper()

    check = PythonCompileCheck(code_extraction=extract)
    assert (await check.ainvoke({"outputs": "x = 1"})).score is True  # "X = 1"
    with pytest.raises(EvaluatorUsageError, match="async"):
        check.invoke({"outputs": "x = 1"})
