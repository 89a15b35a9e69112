"""compat.openevals.create_llm_as_judge side by side with OpenEvals' own, on one scripted model."""

import pytest
from openevals.llm import create_async_llm_as_judge as oe_create_async_llm_as_judge
from openevals.llm import create_llm_as_judge as oe_create_llm_as_judge
from openevals.prompts import CORRECTNESS_PROMPT as OE_CORRECTNESS_PROMPT
from pydantic import BaseModel

from langchain_evals_port import prompts
from langchain_evals_port.compat.openevals import create_async_llm_as_judge, create_llm_as_judge
from langchain_evals_port.testing import ScriptedChatModel

REPLY = {"reasoning": "Washington was first. Thus, the score should be: false.", "score": False}
CALL = {
    "inputs": "Who was the first president of the United States?",
    "outputs": "John Adams",
    "reference_outputs": "George Washington",
}


def without_descriptions(schema):
    """The schema's structure: the descriptions are our own wording, not OpenEvals'."""
    if isinstance(schema, dict):
        return {k: without_descriptions(v) for k, v in schema.items() if k != "description"}
    if isinstance(schema, list):
        return [without_descriptions(v) for v in schema]
    return schema


def test_same_result_and_same_prompt_as_openevals():
    ours_model, theirs_model = ScriptedChatModel([REPLY]), ScriptedChatModel([REPLY])
    ours = create_llm_as_judge(
        prompt=prompts.CORRECTNESS_PROMPT, feedback_key="correctness", judge=ours_model
    )
    theirs = oe_create_llm_as_judge(
        prompt=OE_CORRECTNESS_PROMPT, feedback_key="correctness", judge=theirs_model
    )
    ours_result, theirs_result = ours(**CALL), theirs(**CALL)
    for key in ("key", "score", "comment"):
        assert ours_result[key] == theirs_result[key]
    assert [m.text for m in ours_model.calls[0].messages] == [
        m.text for m in theirs_model.calls[0].messages
    ]
    assert without_descriptions(ours_model.calls[0].schema) == without_descriptions(
        theirs_model.calls[0].schema
    )


@pytest.mark.parametrize(
    "options",
    [
        {"continuous": True},
        {"choices": [0.0, 0.5, 1.0]},
        {"use_reasoning": False},
        {"system": "Be strict."},
    ],
    ids=["continuous", "choices", "no-reasoning", "system"],
)
def test_options_build_the_same_schema_and_messages(options):
    reply = (
        {"reasoning": "r", "score": 0.5}
        if "continuous" in options or "choices" in options
        else {"reasoning": "r", "score": True}
    )
    if options.get("use_reasoning") is False:
        reply = {"score": True}
    ours_model, theirs_model = ScriptedChatModel([reply]), ScriptedChatModel([reply])
    create_llm_as_judge(prompt="Rate {outputs}", judge=ours_model, **options)(outputs="x")
    oe_create_llm_as_judge(prompt="Rate {outputs}", judge=theirs_model, **options)(outputs="x")
    assert without_descriptions(ours_model.calls[0].schema) == without_descriptions(
        theirs_model.calls[0].schema
    )
    assert [m.text for m in ours_model.calls[0].messages] == [
        m.text for m in theirs_model.calls[0].messages
    ]


def test_few_shot_examples_render_like_openevals():
    examples = [{"inputs": "2+2?", "outputs": "4", "score": True, "reasoning": "right"}]
    ours_model, theirs_model = ScriptedChatModel([REPLY]), ScriptedChatModel([REPLY])
    create_llm_as_judge(prompt="Rate {outputs}", judge=ours_model, few_shot_examples=examples)(
        outputs="x"
    )
    oe_create_llm_as_judge(prompt="Rate {outputs}", judge=theirs_model, few_shot_examples=examples)(
        outputs="x"
    )
    ours_text = ours_model.calls[0].messages[-1].text
    theirs_text = theirs_model.calls[0].messages[-1].text
    assert ours_text.replace("<score>true</score>", "<score>True</score>") == theirs_text


class Ticket(BaseModel):
    category: str


def test_output_schema_returns_the_object_like_openevals():
    ours = create_llm_as_judge(
        prompt="Classify {outputs}",
        judge=ScriptedChatModel([{"category": "billing"}]),
        output_schema=Ticket,
    )
    theirs = oe_create_llm_as_judge(
        prompt="Classify {outputs}",
        judge=ScriptedChatModel([{"category": "billing"}]),
        output_schema=Ticket,
    )
    assert ours(outputs="refund") == {"category": "billing"}
    assert theirs(outputs="refund") == Ticket(category="billing")


async def test_async_factory():
    model = ScriptedChatModel([REPLY, REPLY])
    ours = create_async_llm_as_judge(
        prompt=prompts.CORRECTNESS_PROMPT, feedback_key="correctness", judge=model
    )
    theirs = oe_create_async_llm_as_judge(
        prompt=OE_CORRECTNESS_PROMPT, feedback_key="correctness", judge=model
    )
    ours_result, theirs_result = await ours(**CALL), await theirs(**CALL)
    assert (ours_result["key"], ours_result["score"]) == (
        theirs_result["key"],
        theirs_result["score"],
    )
    assert ours.__name__ == "llm_as_correctness_judge"


def test_unsupported_arguments_are_clear():
    with pytest.raises(ValueError, match="raw OpenAI client is not supported"):
        create_llm_as_judge(prompt="{outputs}", judge=object())
    with pytest.raises(ValueError, match="supports only 'method'"):
        create_llm_as_judge(
            prompt="{outputs}", model="x:y", structured_output_kwargs={"strict": True}
        )


def test_structured_output_method_is_passed_on():
    model = ScriptedChatModel([REPLY])
    create_llm_as_judge(
        prompt="{outputs}", judge=model, structured_output_kwargs={"method": "function_calling"}
    )(outputs="x")
    assert model.calls[0].method == "function_calling"
