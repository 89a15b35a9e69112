"""The compat layer against OpenEvals itself, on the same inputs."""

import inspect

import pytest
from langchain_core.embeddings import Embeddings
from openevals.exact import exact_match as oe_exact_match
from openevals.exact import exact_match_async as oe_exact_match_async
from openevals.string.embedding_similarity import (
    create_embedding_similarity_evaluator as oe_create_embedding_similarity_evaluator,
)
from openevals.string.levenshtein import levenshtein_distance as oe_levenshtein_distance

from langchain_evals_port.compat import openevals as compat

SAME_UNDER_BOTH_RULES = [
    ("Paris", "Paris"),
    ("Paris", "paris"),
    ({"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1}),
    ([1, 2], [2, 1]),
    (True, 1),
    ({"nested": {"x": None}}, {"nested": {"x": None}}),
]


@pytest.mark.parametrize(("outputs", "reference"), SAME_UNDER_BOTH_RULES)
def test_exact_match_agrees_with_openevals(outputs, reference):
    ours = compat.exact_match(outputs=outputs, reference_outputs=reference)
    theirs = oe_exact_match(outputs=outputs, reference_outputs=reference)
    assert ours == theirs


def test_exact_match_differs_only_where_parity_md_says():
    # OpenEvals compares json.dumps texts, so 1 and 1.0 differ there; the canonical rule
    # compares numbers by value.
    assert oe_exact_match(outputs=1, reference_outputs=1.0)["score"] is False
    assert compat.exact_match(outputs=1, reference_outputs=1.0)["score"] is True


async def test_async_variants_agree():
    ours = await compat.exact_match_async(outputs="a", reference_outputs="a")
    theirs = await oe_exact_match_async(outputs="a", reference_outputs="a")
    assert ours == theirs
    assert (await compat.levenshtein_distance_async(outputs="ab", reference_outputs="ac"))[
        "score"
    ] == 0.5


@pytest.mark.parametrize(
    ("outputs", "reference"),
    [("kitten", "sitting"), ("", ""), ("abc", ""), ("same", "same"), ("naïve café", "naive cafe")],
)
def test_levenshtein_agrees_with_openevals_on_strings(outputs, reference):
    ours = compat.levenshtein_distance(outputs=outputs, reference_outputs=reference)
    theirs = oe_levenshtein_distance(outputs=outputs, reference_outputs=reference)
    assert ours["key"] == theirs["key"]
    assert ours["score"] == pytest.approx(theirs["score"])


def test_signatures_match_openevals():
    for ours, theirs in [
        (compat.exact_match, oe_exact_match),
        (compat.levenshtein_distance, oe_levenshtein_distance),
    ]:
        ours_params = inspect.signature(ours).parameters
        theirs_params = inspect.signature(theirs).parameters
        assert list(ours_params) == list(theirs_params)
        assert [p.kind for p in ours_params.values()] == [p.kind for p in theirs_params.values()]


def test_missing_reference_raises_value_error_like_openevals():
    with pytest.raises(ValueError, match="reference_outputs"):
        compat.exact_match(outputs="a", reference_outputs=None)
    with pytest.raises(ValueError, match="reference_outputs"):
        oe_exact_match(outputs="a", reference_outputs=None)


class UnitEmbeddings(Embeddings):
    def embed_documents(self, texts):
        return [self.embed_query(t) for t in texts]

    def embed_query(self, text):
        return [float(len(text)), 1.0]


def test_embedding_factory_accepts_an_embeddings_instance():
    ev = compat.create_embedding_similarity_evaluator(model=UnitEmbeddings())
    result = ev(outputs="ab", reference_outputs="ab")
    assert result["key"] == "embedding_similarity"
    assert result["score"] == pytest.approx(1.0)


async def test_async_embedding_factory():
    ev = compat.create_async_embedding_similarity_evaluator(
        model=UnitEmbeddings(), algorithm="dot_product"
    )
    assert (await ev(outputs="ab", reference_outputs="abc"))["score"] == 7.0


def test_unsupported_algorithm_raises_like_openevals():
    with pytest.raises(ValueError, match="Unsupported algorithm: euclid"):
        compat.create_embedding_similarity_evaluator(model=UnitEmbeddings(), algorithm="euclid")
    with pytest.raises(ValueError, match="Unsupported algorithm: euclid"):
        oe_create_embedding_similarity_evaluator(algorithm="euclid")


def test_a_model_string_is_resolved_on_first_use_like_openevals():
    ev = compat.create_embedding_similarity_evaluator(model="nosuchprovider:model")
    with pytest.raises(ValueError, match="nosuchprovider"):
        ev(outputs="a", reference_outputs="b")


def test_every_public_name_of_openevals_types_is_in_compat_types():
    import openevals.types as theirs

    from langchain_evals_port.compat.openevals import types as ours

    public = {name for name in vars(theirs) if not name.startswith("_")}
    # typing helpers openevals.types imports for itself are not its API.
    public -= {"Any", "Callable", "Literal", "Optional", "Protocol", "Union", "runtime_checkable"}
    public -= {"NotRequired", "TypedDict", "BaseMessage", "BaseMessageChunk"}
    assert public <= set(ours.__all__)
    assert sorted(ours.ChatCompletionMessage.__annotations__) == sorted(
        theirs.ChatCompletionMessage.__annotations__
    )
    message = ours.ChatCompletionMessage(role="user", content="hi")
    assert compat.exact_match(outputs=message, reference_outputs={"role": "user", "content": "hi"})[
        "score"
    ]


def test_the_prompts_openevals_function_modules_export_are_the_catalog_texts():
    from openevals.code.llm import CODE_CORRECTNESS_PROMPT
    from openevals.trajectory.llm import (
        TRAJECTORY_ACCURACY_PROMPT,
        TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE,
    )

    assert compat.CODE_CORRECTNESS_PROMPT == CODE_CORRECTNESS_PROMPT
    assert compat.TRAJECTORY_ACCURACY_PROMPT == TRAJECTORY_ACCURACY_PROMPT
    assert compat.TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE == (
        TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE
    )
