"""Contracts every evaluator of the package keeps: its constructor refuses unknown keywords
(naming the closest valid one), its signature lists its real keywords, and the Runnable
schemas that LangServe, LangGraph Studio and docs generators read are valid JSON schemas."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable

import jsonschema
import pytest

import langchain_evals_port
from langchain_evals_port import (
    EmbeddingSimilarity,
    Evaluator,
    EvaluatorUsageError,
    ExactMatch,
    GraphTrajectoryLLMJudge,
    GraphTrajectoryMatch,
    JsonMatch,
    JudgeEnsemble,
    LevenshteinDistance,
    LLMJudge,
    PairwiseLLMJudge,
    TrajectoryLLMJudge,
    TrajectoryMatch,
)
from langchain_evals_port.code import (
    CliCheck,
    CodeLLMJudge,
    ExecutionEvaluator,
    LocalProcessSandboxRunner,
    MypyCheck,
    PyrightCheck,
    PythonCompileCheck,
    RuffCheck,
)
from langchain_evals_port.core import FunctionEvaluator, evaluator
from langchain_evals_port.core._fingerprint import configuration_fingerprint
from langchain_evals_port.testing import HashingEmbeddings, ScriptedChatModel


def _judge() -> ScriptedChatModel:
    return ScriptedChatModel([])


# One way to build each evaluator class the package exports, with its required fields.
BUILDERS: dict[type[Evaluator], Callable[..., Evaluator]] = {
    ExactMatch: lambda **kw: ExactMatch(**kw),
    LevenshteinDistance: lambda **kw: LevenshteinDistance(**kw),
    EmbeddingSimilarity: lambda **kw: EmbeddingSimilarity(embeddings=HashingEmbeddings(), **kw),
    FunctionEvaluator: lambda **kw: (
        evaluator(lambda: True, run_name="f", feedback_key="f")
        if not kw
        else FunctionEvaluator(name="f", feedback_key="f", fn=lambda: True, **kw)
    ),
    LLMJudge: lambda **kw: LLMJudge(prompt="Judge {outputs}", model=_judge(), **kw),
    PairwiseLLMJudge: lambda **kw: PairwiseLLMJudge(model=_judge(), **kw),
    JudgeEnsemble: lambda **kw: JudgeEnsemble([ExactMatch(), ExactMatch()], **kw),
    JsonMatch: lambda **kw: JsonMatch(**kw),
    TrajectoryMatch: lambda **kw: TrajectoryMatch(**kw),
    TrajectoryLLMJudge: lambda **kw: TrajectoryLLMJudge(model=_judge(), **kw),
    GraphTrajectoryMatch: lambda **kw: GraphTrajectoryMatch(**kw),
    GraphTrajectoryLLMJudge: lambda **kw: GraphTrajectoryLLMJudge(model=_judge(), **kw),
    PythonCompileCheck: lambda **kw: PythonCompileCheck(**kw),
    MypyCheck: lambda **kw: MypyCheck(**kw),
    PyrightCheck: lambda **kw: PyrightCheck(**kw),
    RuffCheck: lambda **kw: RuffCheck(**kw),
    CliCheck: lambda **kw: CliCheck(command=["python", "-m", "py_compile"], **kw),
    CodeLLMJudge: lambda **kw: CodeLLMJudge(model=_judge(), **kw),
    ExecutionEvaluator: lambda **kw: ExecutionEvaluator(sandbox=LocalProcessSandboxRunner(), **kw),
}


def _exported_evaluator_classes() -> set[type[Evaluator]]:
    found: set[type[Evaluator]] = set()
    for module in pkgutil.walk_packages(langchain_evals_port.__path__, "langchain_evals_port."):
        if any(part.startswith("_") for part in module.name.split(".")):
            continue
        public = importlib.import_module(module.name)
        for name in getattr(public, "__all__", ()):
            value = getattr(public, name)
            is_evaluator = inspect.isclass(value) and issubclass(value, Evaluator)
            if is_evaluator and not inspect.isabstract(value):
                found.add(value)
    return found


def test_every_exported_evaluator_class_is_covered_here():
    assert _exported_evaluator_classes() == set(BUILDERS)


@pytest.mark.parametrize("cls", list(BUILDERS), ids=lambda cls: cls.__name__)
def test_a_misspelt_keyword_is_refused_with_the_closest_valid_one(cls):
    with pytest.raises(EvaluatorUsageError, match=r"'feedbak_key'.*did you mean 'feedback_key'"):
        BUILDERS[cls](feedbak_key="k")
    with pytest.raises(
        TypeError, match=rf"{cls.__name__}\(\) got an unexpected keyword argument 'bogus'"
    ):
        BUILDERS[cls](bogus=1)


@pytest.mark.parametrize("cls", list(BUILDERS), ids=lambda cls: cls.__name__)
def test_the_signature_lists_keywords_only(cls):
    parameters = list(inspect.signature(cls).parameters.values())
    # What an ensemble is made of comes first: JudgeEnsemble([judge_a, judge_b], ...).
    if cls is JudgeEnsemble:
        assert parameters[0].name == "members"
        assert parameters[0].kind is inspect.Parameter.POSITIONAL_ONLY
        parameters = parameters[1:]
    kinds = {parameter.kind for parameter in parameters}
    assert kinds == {inspect.Parameter.KEYWORD_ONLY}
    assert "feedback_key" in inspect.signature(cls).parameters


@pytest.mark.parametrize("cls", list(BUILDERS), ids=lambda cls: cls.__name__)
def test_runnable_schemas_are_valid_json_schemas(cls):
    evaluator = BUILDERS[cls]()
    for schema in (evaluator.get_input_jsonschema(), evaluator.get_output_jsonschema()):
        jsonschema.Draft202012Validator.check_schema(schema)
    inputs = evaluator.get_input_jsonschema()
    request = {"outputs": "Paris", "reference_outputs": "Paris"}
    jsonschema.validate(request, inputs)
    result = ExactMatch().invoke(request).model_dump(mode="json")
    jsonschema.validate(result, evaluator.get_output_jsonschema())


@pytest.mark.parametrize("cls", list(BUILDERS), ids=lambda cls: cls.__name__)
def test_the_configuration_fingerprint_names_what_it_is_not_where_it_sits(
    cls: type[Evaluator],
) -> None:
    # An experiment resumed in another process compares these: no memory addresses.
    first, second = (
        configuration_fingerprint(BUILDERS[cls]()),
        configuration_fingerprint(BUILDERS[cls]()),
    )
    assert first == second
    assert first["type"] == f'"{cls.__module__}.{cls.__qualname__}"'
    assert not {"name", "tracer", "cache", "on_error"} & first.keys()
