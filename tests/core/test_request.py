import pytest

from langchain_evals_port import EvalRequest, EvaluatorInputError


def test_mapping_fields_and_loose_keys_become_variables():
    request = EvalRequest.coerce(
        {"inputs": "q", "outputs": "a", "context": "docs", "variables": {"plan": "p"}}
    )
    assert request.inputs == "q"
    assert request.outputs == "a"
    assert request.reference_outputs is None
    assert request.variables == {"plan": "p", "context": "docs"}


def test_a_request_is_returned_unchanged():
    request = EvalRequest(outputs=1)
    assert EvalRequest.coerce(request) is request


@pytest.mark.parametrize(
    ("typo", "suggestion"),
    [
        ("output", "outputs"),
        ("input", "inputs"),
        ("reference_output", "reference_outputs"),
        ("reference", "reference_outputs"),
        ("expected", "reference_outputs"),
        ("attachment", "attachments"),
    ],
)
def test_near_misses_of_field_names_raise_type_error_with_a_suggestion(typo, suggestion):
    with pytest.raises(TypeError, match=f"'{typo}'; did you mean '{suggestion}'"):
        EvalRequest.coerce({"outputs": "a", typo: "b"})


def test_a_near_miss_name_is_allowed_inside_explicit_variables():
    request = EvalRequest.coerce({"outputs": "a", "variables": {"expected": "b"}})
    assert request.variables == {"expected": "b"}


@pytest.mark.parametrize("bad", ["just a string", 42, None, ["outputs"]])
def test_non_mapping_input_is_rejected_clearly(bad):
    with pytest.raises(
        EvaluatorInputError, match=r"takes a mapping with keys inputs, .* but it received"
    ):
        EvalRequest.coerce(bad)


def test_variables_must_be_a_mapping():
    with pytest.raises(EvaluatorInputError, match="'variables' must be a mapping"):
        EvalRequest.coerce({"outputs": "a", "variables": ["x"]})


def test_non_string_keys_are_rejected():
    with pytest.raises(EvaluatorInputError, match="variable names must be strings"):
        EvalRequest.coerce({"outputs": "a", 3: "x"})


def test_attachments_are_always_a_list():
    assert EvalRequest.coerce({"attachments": "http://img"}).attachments == ["http://img"]
    assert EvalRequest.coerce({"attachments": ("a", "b")}).attachments == ["a", "b"]
    assert EvalRequest.coerce({}).attachments == []


def test_require_names_every_missing_field():
    request = EvalRequest(inputs="q")
    with pytest.raises(EvaluatorInputError, match="outputs and reference_outputs are None"):
        request.require("outputs", "reference_outputs", evaluator="exact_match")
    with pytest.raises(EvaluatorInputError, match="reference_outputs is None"):
        EvalRequest(outputs=1).require("outputs", "reference_outputs", evaluator="x")


@pytest.mark.parametrize(
    "name", ["outputs", "inputs", "reference_outputs", "attachments", "request"]
)
def test_variables_may_not_shadow_the_fields(name):
    with pytest.raises(EvaluatorInputError, match=f"'{name}'"):
        EvalRequest.coerce({"outputs": 1, "variables": {name: 0}})
    with pytest.raises(ValueError, match=f"'{name}'"):
        EvalRequest(outputs=1, variables={name: 0})


def test_request_is_reserved_as_a_loose_key():
    with pytest.raises(EvaluatorInputError, match="'request' is reserved"):
        EvalRequest.coerce({"outputs": 1, "request": 0})


def test_langsmith_style_named_attachments_become_a_list():
    named = {"photo": {"presigned_url": "http://x", "mime_type": "image/png"}}
    assert EvalRequest.coerce({"attachments": named}).attachments == [named["photo"]]
    assert EvalRequest.coerce({"attachments": {}}).attachments == []
    block = {"type": "image", "url": "http://x"}
    assert EvalRequest.coerce({"attachments": block}).attachments == [block]
