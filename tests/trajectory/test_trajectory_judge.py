"""TrajectoryLLMJudge and the compat trajectory judge, on the scripted chat model."""

import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from openevals.trajectory.llm import (
    create_trajectory_llm_as_judge as oe_create_trajectory_llm_as_judge,
)

from langchain_evals_port import prompts
from langchain_evals_port.compat._openevals_trajectory import (
    create_async_trajectory_llm_as_judge,
    create_trajectory_llm_as_judge,
)
from langchain_evals_port.core.errors import EvaluatorInputError, MessageFormatError
from langchain_evals_port.judge import LLMJudge
from langchain_evals_port.testing import ScriptedChatModel
from langchain_evals_port.trajectory import TrajectoryLLMJudge

REPLY = {"reasoning": "Logical steps. Thus, the score should be: true.", "score": True}
TRAJECTORY = [
    HumanMessage("Weather in Paris?"),
    AIMessage("", tool_calls=[{"name": "weather", "args": {"city": "Paris"}, "id": "call_1"}]),
    ToolMessage("Sunny, 21°C", tool_call_id="call_1"),
    AIMessage("It is sunny in Paris."),
]


def without_descriptions(schema):
    """The schema's structure: the descriptions are our own wording, not OpenEvals'."""
    if isinstance(schema, dict):
        return {k: without_descriptions(v) for k, v in schema.items() if k != "description"}
    if isinstance(schema, list):
        return [without_descriptions(v) for v in schema]
    return schema


def prompt_text(model, call=0):
    return model.calls[call].messages[-1].text


def test_prompt_follows_the_reference_per_call():
    model = ScriptedChatModel([REPLY, REPLY, REPLY])
    judge = TrajectoryLLMJudge(model=model)
    judge(outputs=TRAJECTORY, reference_outputs=TRAJECTORY)
    judge(outputs=TRAJECTORY)
    judge(outputs=TRAJECTORY, reference_outputs=[])
    with_reference, without, empty = (prompt_text(model, i) for i in range(3))
    assert with_reference.startswith(
        prompts.TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE.split("{")[0]
    )
    assert "<reference_trajectory>" in with_reference
    assert "<reference_trajectory>" not in without
    assert without == empty
    assert without.startswith(prompts.TRAJECTORY_ACCURACY_PROMPT.split("{")[0])


def test_result_key_name_and_score():
    judge = TrajectoryLLMJudge(model=ScriptedChatModel([REPLY]))
    result = judge.invoke({"outputs": TRAJECTORY})
    assert (result.key, result.score, result.comment) == (
        "trajectory_accuracy",
        True,
        REPLY["reasoning"],
    )
    assert judge.get_name() == "llm_as_trajectory_accuracy_judge"
    assert isinstance(judge, LLMJudge)


def test_messages_render_as_readable_openai_style_json():
    model = ScriptedChatModel([REPLY])
    state = {"messages": TRAJECTORY, "user_id": "secret-42"}
    TrajectoryLLMJudge(model=model)(outputs=state)
    text = prompt_text(model)
    assert "secret-42" not in text
    rendered = json.loads(text.split("<trajectory>\n")[1].split("\n</trajectory>")[0])
    assert rendered[1] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"name": "weather", "arguments": {"city": "Paris"}}],
    }
    assert rendered[2]["content"] == "Sunny, 21°C"


def test_langchain_openai_and_state_inputs_render_alike():
    from langchain_evals_port.core import to_openai_messages

    model = ScriptedChatModel([REPLY] * 3)
    judge = TrajectoryLLMJudge(model=model)
    for shape in (TRAJECTORY, to_openai_messages(TRAJECTORY), {"messages": TRAJECTORY}):
        judge(outputs=shape, reference_outputs=shape)
    assert prompt_text(model, 0) == prompt_text(model, 1) == prompt_text(model, 2)


def test_text_passes_through():
    model = ScriptedChatModel([REPLY])
    TrajectoryLLMJudge(model=model)(outputs="user asked; agent searched; agent answered")
    assert "user asked; agent searched; agent answered" in prompt_text(model)


def test_an_explicit_prompt_is_used_for_every_call():
    model = ScriptedChatModel([REPLY, REPLY])
    judge = TrajectoryLLMJudge(model=model, prompt="Grade {outputs}", feedback_key="mine")
    judge(outputs=TRAJECTORY)
    judge(outputs=TRAJECTORY, reference_outputs=TRAJECTORY)
    assert prompt_text(model, 0).startswith("Grade [")
    assert prompt_text(model, 1).startswith("Grade [")
    strict = TrajectoryLLMJudge(
        model=ScriptedChatModel([REPLY]), prompt=prompts.TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE
    )
    with pytest.raises(EvaluatorInputError, match="reference_outputs"):
        strict(outputs=TRAJECTORY)


def test_options_apply_with_and_without_reference():
    model = ScriptedChatModel([{"reasoning": "r", "score": 0.5}] * 2)
    judge = TrajectoryLLMJudge(
        model=model,
        continuous=True,
        system="Be strict.",
        few_shot_examples=[{"inputs": "q", "outputs": "a", "score": 1.0}],
    )
    judge(outputs=TRAJECTORY)
    judge(outputs=TRAJECTORY, reference_outputs=TRAJECTORY)
    for call in model.calls:
        assert call.messages[0].text == "Be strict."
        assert "<example>" in call.messages[-1].text
        assert call.schema["properties"]["score"]["type"] == "number"


def test_malformed_trajectory_names_the_side():
    bad = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "1", "type": "function", "function": {"name": "weather", "arguments": "{"}}
            ],
        }
    ]
    with pytest.raises(
        MessageFormatError,
        match=r"reference_outputs: messages\[0\]: tool_calls\[0\] \(tool 'weather'\)",
    ):
        TrajectoryLLMJudge(model=ScriptedChatModel([REPLY]))(
            outputs=TRAJECTORY, reference_outputs=bad
        )


async def test_async_path():
    model = ScriptedChatModel([REPLY])
    result = await TrajectoryLLMJudge(model=model).ainvoke({"outputs": TRAJECTORY})
    assert result.score is True
    assert "<reference_trajectory>" not in prompt_text(model)


# --- compat -------------------------------------------------------------------------------


def test_compat_judge_matches_openevals_key_score_and_comment():
    ours_model, theirs_model = ScriptedChatModel([REPLY]), ScriptedChatModel([REPLY])
    ours = create_trajectory_llm_as_judge(judge=ours_model)(
        outputs=TRAJECTORY, reference_outputs=TRAJECTORY
    )
    theirs = oe_create_trajectory_llm_as_judge(judge=theirs_model)(
        outputs=TRAJECTORY, reference_outputs=TRAJECTORY
    )
    for key in ("key", "score", "comment"):
        assert ours[key] == theirs[key]
    # the same prompt text around the trajectories, which render differently (see PARITY.md)
    head = prompts.TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE.split("{")[0]
    assert prompt_text(ours_model).startswith(head)
    assert prompt_text(theirs_model).startswith(head)
    assert without_descriptions(ours_model.calls[0].schema) == without_descriptions(
        theirs_model.calls[0].schema
    )


def test_compat_judge_without_reference_uses_the_prompt_without_reference():
    ours_model, theirs_model = ScriptedChatModel([REPLY]), ScriptedChatModel([REPLY])
    create_trajectory_llm_as_judge(judge=ours_model)(outputs=TRAJECTORY)
    oe_create_trajectory_llm_as_judge(judge=theirs_model)(outputs=TRAJECTORY)
    # OpenEvals fills the reference block with nothing; here the prompt has no such block
    assert "<reference_trajectory>\n\n</reference_trajectory>" in prompt_text(theirs_model)
    assert "<reference_trajectory>" not in prompt_text(ours_model)


def test_compat_judge_options_and_errors():
    model = ScriptedChatModel([{"reasoning": "r", "score": 0.5}])
    judge = create_trajectory_llm_as_judge(
        judge=model, feedback_key="traj", choices=[0.0, 0.5, 1.0], prompt="Rate {outputs}"
    )
    assert judge(outputs=TRAJECTORY)["key"] == "traj"
    assert prompt_text(model).startswith("Rate [")
    with pytest.raises(ValueError, match="LangChain chat model"):
        create_trajectory_llm_as_judge(judge=object())


async def test_compat_async_judge():
    model = ScriptedChatModel([REPLY])
    evaluate = create_async_trajectory_llm_as_judge(judge=model)
    assert evaluate.__name__ == "llm_as_trajectory_accuracy_judge"
    result = await evaluate(outputs=TRAJECTORY, reference_outputs=TRAJECTORY)
    assert (result["key"], result["score"]) == ("trajectory_accuracy", True)
