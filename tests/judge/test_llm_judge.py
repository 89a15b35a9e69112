"""LLMJudge with the project's scripted chat model: rendering, score shapes, modes, failures."""

import asyncio
import threading
from typing import TypedDict

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.prompts.structured import StructuredPrompt
from pydantic import BaseModel

from langchain_evals_port import EvaluationFailure, EvaluatorInputError, EvaluatorUsageError
from langchain_evals_port.judge import (
    Attachment,
    FewShotExample,
    JudgeOutputError,
    LLMJudge,
    set_default_judge,
)
from langchain_evals_port.testing import ScriptedChatModel, ScriptedProviderError

VERDICT = {"reasoning": "Fine. Thus, the score should be: true.", "score": True}


def judge_with(*replies, **options):
    model = ScriptedChatModel(list(replies))
    options.setdefault("prompt", "Grade {outputs}")
    return LLMJudge(model=model, **options), model


def sent_text(model, call=0):
    return "\n".join(m.text for m in model.calls[call].messages)


# --- rendering -----------------------------------------------------------------------------


def test_braces_that_are_not_variables_stay_and_values_stay_literal():
    judge, model = judge_with(
        VERDICT, prompt='Q: {inputs}\nA: {outputs}\nReply like {"score": true}'
    )
    judge(inputs="Qué tal?", outputs="I said {reference_outputs} literally")
    assert model.calls[0].messages[0].content == (
        'Q: Qué tal?\nA: I said {reference_outputs} literally\nReply like {"score": true}'
    )


def test_format_style_templates_unescape_doubled_braces():
    judge, model = judge_with(VERDICT, prompt="Output {outputs}; reply as {{score: bool}}")
    judge(outputs="x")
    assert model.calls[0].messages[0].content == "Output x; reply as {score: bool}"


def test_structured_values_render_as_readable_json_and_messages_as_openai_dicts():
    judge, model = judge_with(VERDICT, prompt="In: {inputs}\nOut: {outputs}")
    judge(
        inputs={"city": "Zürich", "days": [1, 2]},
        outputs=[HumanMessage("hi", id="x"), AIMessage("hello")],
    )
    text = model.calls[0].messages[0].content
    assert '"city": "Zürich"' in text
    assert '{\n    "role": "user",\n    "content": "hi"\n  }' in text
    assert '"role": "assistant"' in text
    assert '"id"' not in text


def test_a_missing_variable_names_it_and_the_prompt():
    judge, _ = judge_with(VERDICT, prompt="Context: {context}\nAnswer: {outputs}")
    with pytest.raises(EvaluatorInputError, match=r"prompt 'Context: \{context\}' needs 'context'"):
        judge(outputs="a")


def test_extra_variables_fill_the_prompt():
    judge, model = judge_with(VERDICT, prompt="Plan: {plan}\nDid: {outputs}")
    judge.invoke({"outputs": "step 1", "variables": {"plan": "step 1"}})
    assert sent_text(model) == "Plan: step 1\nDid: step 1"


def test_system_message_and_few_shot_examples():
    judge, model = judge_with(
        VERDICT,
        system="You are strict.",
        few_shot_examples=[
            FewShotExample(inputs="2+2?", outputs="4", score=True, reasoning="correct"),
            {"inputs": "2+2?", "outputs": "Well...", "score": False},
        ],
    )
    judge(outputs="x")
    system, user = model.calls[0].messages
    assert isinstance(system, SystemMessage)
    assert system.content == "You are strict."
    assert user.content.startswith("Grade x\n\n<example>\n<input>2+2?</input>\n<output>4</output>")
    assert "<reasoning>correct</reasoning>\n<score>true</score>" in user.content
    assert "<output>Well...</output>\n<score>false</score>" in user.content


def test_system_needs_a_template_string():
    with pytest.raises(ValueError, match="system is only supported"):
        LLMJudge(prompt=ChatPromptTemplate.from_messages([("human", "{outputs}")]), system="x")


def test_chat_prompt_templates_and_callables():
    template = ChatPromptTemplate.from_messages(
        [("system", "Judge."), ("human", "Answer: {outputs}")]
    )
    judge, model = judge_with(VERDICT, prompt=template)
    judge(outputs="{not a variable}")
    assert [m.text for m in model.calls[0].messages] == ["Judge.", "Answer: {not a variable}"]

    def messages(*, outputs, **_):
        return [{"role": "user", "content": f"Rate: {outputs}"}]

    judge, model = judge_with(VERDICT, prompt=messages)
    judge(outputs="ok")
    assert model.calls[0].messages[0].content == "Rate: ok"


def test_attachments_are_spliced_in_as_standard_content_blocks():
    judge, model = judge_with(VERDICT, prompt="Look: {attachments} Caption: {outputs}")
    judge(
        outputs="a cat",
        attachments=[
            Attachment.from_url("https://example.com/cat.png"),
            Attachment.from_bytes(b"RIFF", "audio/wav"),
        ],
    )
    content = model.calls[0].messages[0].content
    assert content[0] == {"type": "text", "text": "Look: "}
    assert content[1]["type"] == "image"
    assert content[1]["url"] == "https://example.com/cat.png"
    assert content[2]["type"] == "audio"
    assert content[2]["base64"] == "UklGRg=="
    assert content[3] == {"type": "text", "text": " Caption: a cat"}


TINY_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwADhQGAWjR9awAAAABJRU5ErkJggg=="


def test_data_url_attachments_become_base64_blocks_as_in_openevals():
    # OpenEvals' test_multimodal asserts the judge is sent content[1]["base64"] for a
    # LangSmith-style {"mime_type", "data": data URL} attachment.
    judge, model = judge_with(VERDICT, prompt="Look: {outputs}\n{attachments}")
    judge(
        outputs="a fruit bowl",
        attachments=[
            {"mime_type": "image/png", "data": f"data:image/png;base64,{TINY_PNG}"},
            Attachment.from_url("data:image/jpeg;base64,/9j/"),
        ],
    )
    content = model.calls[0].messages[0].content
    assert [block["type"] for block in content] == ["text", "image", "image"]
    assert (content[1]["base64"], content[1]["mime_type"]) == (TINY_PNG, "image/png")
    assert (content[2]["base64"], content[2]["mime_type"]) == ("/9j/", "image/jpeg")
    assert "url" not in content[1]


def test_a_prompt_with_attachments_requires_them():
    judge, _ = judge_with(VERDICT, prompt="Look: {attachments}")
    with pytest.raises(EvaluatorInputError, match="needs 'attachments'"):
        judge(outputs="x")


def test_unsupported_attachments_are_rejected():
    with pytest.raises(EvaluatorInputError, match="not supported"):
        Attachment.from_bytes(b"x", "video/mp4").content_block()
    judge, _ = judge_with(VERDICT, prompt="{attachments}")
    with pytest.raises(EvaluatorInputError, match=r"attachments\[0\] is a int"):
        judge(outputs="x", attachments=[42])


# --- score shapes ---------------------------------------------------------------------------


def test_default_schema_puts_reasoning_before_a_boolean_score():
    judge, model = judge_with(VERDICT)
    result = judge.invoke({"outputs": "x"})
    assert (result.key, result.score, result.comment) == ("score", True, VERDICT["reasoning"])
    schema = model.calls[0].schema
    assert list(schema["properties"]) == ["reasoning", "score"]
    assert schema["properties"]["score"]["type"] == "boolean"
    assert schema["required"] == ["reasoning", "score"]
    assert judge.get_name() == "llm_as_judge"


def test_without_reasoning_the_schema_has_only_the_score():
    judge, model = judge_with({"score": False}, use_reasoning=False, feedback_key="concise")
    result = judge.invoke({"outputs": "x"})
    assert (result.score, result.comment) == (False, None)
    assert list(model.calls[0].schema["properties"]) == ["score"]
    assert judge.get_name() == "llm_as_concise_judge"


def test_continuous_and_choices():
    judge, model = judge_with({"reasoning": "r", "score": 0.75}, continuous=True)
    assert judge.invoke({"outputs": "x"}).score == 0.75
    assert model.calls[0].schema["properties"]["score"]["type"] == "number"
    judge, model = judge_with(
        {"reasoning": "r", "score": 0.5}, continuous=True, choices=[0, 0.5, 1]
    )
    assert judge.invoke({"outputs": "x"}).score == 0.5
    assert model.calls[0].schema["properties"]["score"]["enum"] == [0, 0.5, 1]


@pytest.mark.parametrize(
    ("options", "bad", "violation"),
    [
        ({"continuous": True}, 1.5, "score 1.5 is not a number from 0.0 to 1.0"),
        ({"choices": [0.0, 1.0]}, 0.5, "score 0.5 is not one of the choices [0.0, 1.0]"),
        ({}, "true", "score 'true' is not true or false"),
        ({"continuous": True}, True, "score True is not a number from 0.0 to 1.0"),
    ],
)
def test_invalid_scores_get_one_repair_quoting_the_violation(options, bad, violation):
    judge, model = judge_with(
        {"reasoning": "r", "score": bad},
        {"reasoning": "r", "score": 1.0 if options else True},
        **options,
    )
    result = judge.invoke({"outputs": "x"})
    assert result.metadata["repairs"] == 1
    assert violation in model.calls[1].messages[-1].content


@pytest.mark.parametrize(
    "bad_reply",
    [
        "no json here at all",
        {"reasoning": "forgot the score"},
        {"reasoning": "r", "score": "yes"},
        "",
    ],
    ids=["no-json", "no-score", "wrong-type", "empty"],
)
def test_bad_replies_twice_are_failures_never_a_false_score(bad_reply):
    judge, _ = judge_with(bad_reply, bad_reply)
    with pytest.raises(JudgeOutputError) as raised:
        judge(outputs="x")
    assert raised.value.code == "judge_parse_failure"
    assert isinstance(raised.value.raw_reply, str)

    judge, _ = judge_with(bad_reply, bad_reply, on_error="record")
    result = judge.invoke({"outputs": "x"})
    assert (result.outcome, result.error_code, result.score) == (
        "failed",
        "judge_parse_failure",
        None,
    )


# --- structured output modes ------------------------------------------------------------------


def test_auto_falls_back_to_prompted_when_the_provider_rejects_the_schema_and_remembers():
    chatty = 'Sure! Here you go:\n```json\n{"reasoning": "has {braces}", "score": true}\n```\nAnything else?'
    judge, model = judge_with(
        ScriptedProviderError.bad_request("unsupported schema"), chatty, chatty
    )
    first = judge.invoke({"outputs": "x"})
    assert (first.score, first.comment, first.metadata["structured_output"]) == (
        True,
        "has {braces}",
        "prompted",
    )
    assert [c.kind for c in model.calls] == ["structured", "chat"]
    assert (
        '"required": [\n    "reasoning",\n    "score"\n  ]' in model.calls[1].messages[-1].content
    )
    judge.invoke({"outputs": "y"})
    assert [c.kind for c in model.calls] == ["structured", "chat", "chat"]


@pytest.mark.parametrize(
    "error",
    [
        ScriptedProviderError.rate_limited(),
        TimeoutError("slow"),
        ScriptedProviderError.server_error(),
    ],
    ids=["429", "timeout", "500"],
)
def test_auto_never_falls_back_on_rate_limits_timeouts_or_outages(error):
    judge, model = judge_with(error, VERDICT, on_error="record")
    result = judge.invoke({"outputs": "x"})
    assert result.outcome == "failed"
    assert result.error_code in ("rate_limited", "timeout", "provider_error")
    assert len(model.calls) == 1


def test_native_mode_fails_with_a_hint_when_the_schema_is_rejected():
    judge, _ = judge_with(
        ScriptedProviderError.bad_request("unsupported"), structured_output_mode="native"
    )
    with pytest.raises(EvaluationFailure, match="structured_output_mode='prompted'"):
        judge(outputs="x")


def test_prompted_mode_never_asks_for_native_output():
    judge, model = judge_with(
        '{"reasoning": "r", "score": false}', structured_output_mode="prompted"
    )
    result = judge.invoke({"outputs": "x"})
    assert (result.score, result.metadata["structured_output"]) == (False, "prompted")
    assert model.calls[0].kind == "chat"


def test_result_metadata():
    judge, _ = judge_with(VERDICT)
    metadata = judge.invoke({"outputs": "x"}).metadata
    assert metadata["judge_model"] == "scripted"
    assert metadata["structured_output"] == "provider_default"
    assert metadata["repairs"] == 0
    assert metadata["latency_ms"] >= 0
    assert metadata["token_usage"]["total_tokens"] > 0


# --- custom output schemas --------------------------------------------------------------------


class Ticket(BaseModel):
    category: str
    urgent: bool


class TicketDict(TypedDict):
    category: str
    urgent: bool


@pytest.mark.parametrize(
    "schema",
    [
        Ticket,
        TicketDict,
        {
            "type": "object",
            "properties": {"category": {"type": "string"}, "urgent": {"type": "boolean"}},
            "required": ["category", "urgent"],
        },
    ],
    ids=["pydantic", "typeddict", "json-schema"],
)
def test_classification_with_a_custom_schema_goes_to_the_provider_untouched(schema):
    judge, model = judge_with(
        {"category": "billing", "urgent": False}, prompt="Classify: {outputs}", output_schema=schema
    )
    assert judge.evaluate_raw(outputs="refund please") == {"category": "billing", "urgent": False}
    assert model.calls[0].schema is schema


def test_invalid_classification_is_repaired_then_fails():
    judge, _ = judge_with(
        {"category": 3},
        {"category": "billing", "urgent": True},
        prompt="{outputs}",
        output_schema=Ticket,
    )
    assert judge.evaluate_raw(outputs="x") == {"category": "billing", "urgent": True}
    judge, _ = judge_with(
        {"category": 3}, {"category": 4}, prompt="{outputs}", output_schema=TicketDict
    )
    with pytest.raises(JudgeOutputError, match="does not match"):
        judge.evaluate_raw(outputs="x")


def test_a_custom_schema_without_a_score_cannot_be_scored_and_the_model_is_not_called():
    judge, model = judge_with(
        {"category": "billing", "urgent": True}, prompt="{outputs}", output_schema=Ticket
    )
    with pytest.raises(EvaluatorUsageError, match="evaluate_raw"):
        judge(outputs="x")
    assert model.calls == []


@pytest.mark.parametrize("field", ["{outputs!r}", "{outputs:>5}", "{inputs[0]}", "{inputs.text}"])
def test_template_fields_with_formatting_are_rejected(field):
    with pytest.raises(EvaluatorUsageError, match="conversion, format spec or index"):
        LLMJudge(prompt=f"Grade {field}", model=ScriptedChatModel([]))


def test_messages_placeholders_receive_messages():
    from langchain_core.prompts import MessagesPlaceholder

    template = ChatPromptTemplate.from_messages(
        [("system", "Grade the conversation."), MessagesPlaceholder("outputs")]
    )
    judge, model = judge_with(VERDICT, prompt=template)
    judge(outputs=[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    assert [m.type for m in model.calls[0].messages] == ["system", "human", "ai"]


@pytest.mark.parametrize(
    ("attachment", "message"),
    [
        ({"mime_type": "image/png", "data": "not base64!"}, r"attachments\[0\]\.data is neither"),
        ({"mime_type": "image/png", "data": b"raw"}, r"attachments\[0\] needs a string"),
    ],
)
def test_malformed_attachment_dicts_are_named(attachment, message):
    judge, _ = judge_with(VERDICT, prompt="{attachments}")
    with pytest.raises(EvaluatorInputError, match=message):
        judge(outputs="x", attachments=[attachment])


def test_structured_prompt_schema_is_used():
    prompt = StructuredPrompt.from_messages_and_schema([("human", "Classify {outputs}")], Ticket)
    judge, model = judge_with({"category": "tech", "urgent": True}, prompt=prompt)
    assert judge.evaluate_raw(outputs="x")["category"] == "tech"
    assert model.calls[0].schema is Ticket
    with pytest.raises(ValueError, match="either output_schema or a StructuredPrompt"):
        LLMJudge(prompt=prompt, output_schema=Ticket)


# --- models -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "wrap",
    [
        lambda m: m.bind(model_name="bound-name"),
        lambda m: m.with_retry(stop_after_attempt=2),
        lambda m: m.with_config(tags=["judge"]),
        lambda m: m.bind(model_name="bound-name").with_retry(stop_after_attempt=2),
    ],
    ids=["bind", "with_retry", "with_config", "bind-then-retry"],
)
def test_wrapped_models_keep_native_structured_output(wrap):
    model = ScriptedChatModel([VERDICT])
    result = LLMJudge(prompt="{outputs}", model=wrap(model)).invoke({"outputs": "x"})
    assert result.score is True
    assert [c.kind for c in model.calls] == ["structured"]


def test_bound_arguments_that_are_not_settings_fall_back_to_prompted():
    model = ScriptedChatModel(['{"reasoning": "r", "score": true}'])
    result = LLMJudge(prompt="{outputs}", model=model.bind(stop=["END"])).invoke({"outputs": "x"})
    assert result.metadata["structured_output"] == "prompted"
    assert model.calls[0].kwargs.get("stop") == ["END"]


def test_default_judge_and_missing_model(monkeypatch):
    monkeypatch.delenv("LANGCHAIN_EVALS_JUDGE", raising=False)
    judge = LLMJudge(prompt="{outputs}")
    with pytest.raises(EvaluatorInputError, match="set_default_judge"):
        judge(outputs="x")
    set_default_judge(ScriptedChatModel([VERDICT]))
    try:
        assert judge(outputs="x")["score"] is True
    finally:
        set_default_judge(None)
    monkeypatch.setenv("LANGCHAIN_EVALS_JUDGE", "nosuchprovider:model")
    with pytest.raises(ValueError, match="nosuchprovider"):
        judge(outputs="x")


def test_a_model_that_is_not_a_chat_model_is_rejected():
    with pytest.raises(ValueError, match="model must be a LangChain chat model"):
        LLMJudge(prompt="{outputs}", model=42)


# --- async ------------------------------------------------------------------------------------


async def test_ainvoke_uses_the_async_path():
    judge, _ = judge_with(VERDICT)
    result = await judge.ainvoke({"outputs": "x"})
    assert result.score is True


async def test_abatch_keeps_max_concurrency_judge_calls_in_flight():
    in_flight = 0
    peak = 0
    lock = threading.Lock()

    class Counting(ScriptedChatModel):
        async def _agenerate(self, *args, **kwargs):
            nonlocal in_flight, peak
            with lock:
                in_flight += 1
                peak = max(peak, in_flight)
            try:
                await asyncio.sleep(0.02)
                return await super()._agenerate(*args, **kwargs)
            finally:
                with lock:
                    in_flight -= 1

    judge = LLMJudge(prompt="{outputs}", model=Counting(responder=lambda messages: VERDICT))
    results = await judge.abatch(
        [{"outputs": str(i)} for i in range(12)], config={"max_concurrency": 4}
    )
    assert all(r.score is True for r in results)
    assert peak == 4


# --- the catalog ------------------------------------------------------------------------------


def test_catalog_prompts_default_optional_variables_to_empty():
    from langchain_evals_port import prompts

    judge, model = judge_with(VERDICT, prompt=prompts.HALLUCINATION_PROMPT)
    judge(outputs="Paris is in France.", context="France's capital is Paris.")
    text = model.calls[0].messages[0].content
    assert "Paris is in France." in text
    assert "{inputs}" not in text
    assert "{reference_outputs}" not in text


def test_catalog_prompts_name_themselves_in_errors():
    from langchain_evals_port import prompts

    judge, _ = judge_with(VERDICT, prompt=prompts.RAG_GROUNDEDNESS_PROMPT)
    with pytest.raises(EvaluatorInputError, match="prompt RAG_GROUNDEDNESS_PROMPT needs 'context'"):
        judge(outputs="x")


def test_conversation_prompts_take_a_message_list():
    from langchain_evals_port import prompts

    judge, model = judge_with(VERDICT, prompt=prompts.USER_SATISFACTION_PROMPT)
    judge(outputs=[HumanMessage("thanks, that fixed it!"), AIMessage("Glad to help")])
    text = model.calls[0].messages[0].content
    assert '"content": "thanks, that fixed it!"' in text


def test_a_fallback_is_remembered_only_when_the_prompted_call_succeeds():
    judge, model = judge_with(
        ScriptedProviderError.bad_request("odd request"),
        "no JSON",
        "still no JSON",
        VERDICT,
        on_error="record",
    )
    assert judge.invoke({"outputs": "x"}).error_code == "judge_parse_failure"
    assert judge.invoke({"outputs": "y"}).score is True
    assert [c.kind for c in model.calls] == ["structured", "chat", "chat", "structured"]


def test_classifying_catalog_prompts_need_an_output_schema():
    from langchain_evals_port import prompts

    with pytest.raises(ValueError, match="LANGUAGE_DETECTION_PROMPT asks for a label"):
        LLMJudge(prompt=prompts.LANGUAGE_DETECTION_PROMPT, model=ScriptedChatModel([]))
    judge = LLMJudge(
        prompt=prompts.LANGUAGE_DETECTION_PROMPT,
        model=ScriptedChatModel([{"language": "German"}]),
        output_schema={"type": "object", "properties": {"language": {"type": "string"}}},
    )
    assert judge.evaluate_raw(outputs=[{"role": "user", "content": "Guten Tag"}]) == {
        "language": "German"
    }


def test_a_prompt_of_the_wrong_type_fails_at_construction():
    with pytest.raises(ValueError, match="prompt must be a template string"):
        LLMJudge(prompt=123, model=ScriptedChatModel([]))


def test_prompt_without_reference_is_used_when_no_reference_is_given():
    judge, model = judge_with(
        VERDICT,
        VERDICT,
        prompt="With {reference_outputs}: {outputs}",
        prompt_without_reference="Alone: {outputs}",
    )
    judge(outputs="x")
    judge(outputs="x", reference_outputs="y")
    assert [c.messages[0].content for c in model.calls] == ["Alone: x", "With y: x"]


def test_prepare_request_reshapes_every_path():
    class Upper(LLMJudge):
        def prepare_request(self, request):
            return request.model_copy(update={"outputs": request.outputs.upper()})

    model = ScriptedChatModel([VERDICT, VERDICT])
    judge = Upper(prompt="{outputs}", model=model)
    judge(outputs="a")
    judge.evaluate_raw(outputs="b")
    assert [c.messages[0].content for c in model.calls] == ["A", "B"]


def test_a_catalog_prompt_names_the_key_unless_one_is_given():
    from langchain_evals_port import prompts
    from langchain_evals_port.compat.openevals import create_llm_as_judge

    model = ScriptedChatModel([VERDICT, VERDICT, VERDICT])
    judge = LLMJudge(prompt=prompts.CONCISENESS_PROMPT, model=model)
    assert judge.invoke({"inputs": "q", "outputs": "a"}).key == "conciseness"
    assert judge.get_name() == "llm_as_conciseness_judge"
    chosen = LLMJudge(prompt=prompts.RAG_HELPFULNESS_PROMPT, model=model, feedback_key="help")
    assert chosen.invoke({"inputs": "q", "outputs": "a"}).key == "help"
    assert LLMJudge(prompt="Is {outputs} right?", model=model).feedback_key == "score"
    # OpenEvals' factory keeps OpenEvals' key.
    compat = create_llm_as_judge(prompt=prompts.CONCISENESS_PROMPT, judge=model)
    assert compat(inputs="q", outputs="a")["key"] == "score"


@pytest.mark.parametrize(
    "prompt", ["Is the answer correct?", ChatPromptTemplate.from_messages([("user", "Grade it")])]
)
def test_a_prompt_without_variables_is_refused_as_the_judge_would_never_see_the_output(prompt):
    with pytest.raises(ValueError, match="has no variables, so the judge would never see"):
        LLMJudge(prompt=prompt, model=ScriptedChatModel([]))


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"continuous": "yes"}, "continuous"),
        ({"continuous": 1}, "continuous"),
        ({"use_reasoning": "no"}, "use_reasoning"),
        ({"feedback_key": ""}, "feedback_key"),
        ({"feedback_key": "  "}, "feedback_key"),
    ],
)
def test_a_flag_that_is_not_a_bool_or_an_empty_feedback_key_is_refused(options, field):
    with pytest.raises(ValueError, match=field):
        LLMJudge(prompt="Grade {outputs}", model=ScriptedChatModel([]), **options)
