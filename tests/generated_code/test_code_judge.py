"""CodeLLMJudge: extraction first, then the code-correctness prompts."""

from __future__ import annotations

from langchain_evals_port import prompts
from langchain_evals_port.code import CodeLLMJudge
from langchain_evals_port.testing import ScriptedChatModel

VERDICT = {"reasoning": "It adds the numbers.", "score": True}
ANSWER = (
    "Sure!\n```bash\npip install nothing\n```\n```python\ndef add(a, b):\n    return a + b\n```"
)


def test_judge_sees_only_the_extracted_code() -> None:
    model = ScriptedChatModel([VERDICT])
    judge = CodeLLMJudge(model=model, code_extraction="markdown_code_blocks")
    result = judge.invoke({"inputs": "Add two numbers", "outputs": ANSWER})
    assert (result.key, result.score, result.comment) == (
        "code_correctness",
        True,
        "It adds the numbers.",
    )
    prompt = model.calls[0].messages[-1].text
    assert "<output>\ndef add(a, b):\n    return a + b\n\n</output>" in prompt
    assert "pip install" not in prompt
    assert judge.get_name() == "code_llm_as_judge"


def test_prompt_with_and_without_reference() -> None:
    model = ScriptedChatModel([VERDICT, VERDICT])
    judge = CodeLLMJudge(model=model)
    judge.invoke({"inputs": "Add", "outputs": "def add(a, b): return a + b"})
    judge.invoke(
        {"inputs": "Add", "outputs": "def add(a, b): return a + b", "reference_outputs": "3"}
    )
    without, with_reference = (call.messages[-1].text for call in model.calls)
    assert "<reference_output>" not in without
    assert without.startswith(prompts.CODE_CORRECTNESS_PROMPT.split("{inputs}")[0])
    assert "<reference_output>\n3\n</reference_output>" in with_reference


def test_a_given_prompt_is_used_for_every_evaluation() -> None:
    model = ScriptedChatModel([VERDICT])
    judge = CodeLLMJudge(model=model, prompt="Is this code safe? {outputs}")
    judge.invoke({"outputs": "print(1)", "reference_outputs": "x"})
    assert model.calls[0].messages[-1].text == "Is this code safe? print(1)"


def test_extraction_failure_does_not_call_the_judge() -> None:
    model = ScriptedChatModel([])
    judge = CodeLLMJudge(model=model, code_extraction="markdown_code_blocks")
    result = judge(inputs="Add", outputs="I won't do that.")
    assert result["score"] is False  # type: ignore[index]
    assert result["metadata"]["code_extraction_failed"] is True  # type: ignore[index]
    assert model.calls == []


def test_llm_extraction_uses_the_judge_model() -> None:
    model = ScriptedChatModel(
        [{"has_code": True, "code": "def add(a, b):\n    return a+b"}, VERDICT]
    )
    judge = CodeLLMJudge(model=model, code_extraction="llm")
    assert judge.invoke({"inputs": "Add", "outputs": "add is a+b, as a function"}).score is True
    assert [call.kind for call in model.calls] == ["structured", "structured"]
    assert "return a+b" in model.calls[1].messages[-1].text


def test_separate_extraction_model() -> None:
    extractor = ScriptedChatModel([{"has_code": False, "code": ""}])
    model = ScriptedChatModel([])
    judge = CodeLLMJudge(model=model, code_extraction="llm", extraction_model=extractor)
    result = judge.invoke({"inputs": "Add", "outputs": "no code"})
    assert result.metadata["code_extraction_failed"] is True
    assert model.calls == []
    assert len(extractor.calls) == 1


async def test_async_path_continuous() -> None:
    model = ScriptedChatModel([{"reasoning": "Mostly right.", "score": 0.75}])
    judge = CodeLLMJudge(model=model, continuous=True, code_extraction="markdown_code_blocks")
    result = await judge.ainvoke({"inputs": "Add", "outputs": ANSWER})
    assert result.score == 0.75
    assert result.metadata["judge_model"] == "scripted"
