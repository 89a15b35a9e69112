import asyncio
import datetime

import pytest
from langchain_core.embeddings import Embeddings

from langchain_evals_port import (
    EmbeddingSimilarity,
    EvaluatorInputError,
    ExactMatch,
    LevenshteinDistance,
)
from langchain_evals_port.core.errors import CanonicalizationError
from langchain_evals_port.testing import HashingEmbeddings


class TableEmbeddings(Embeddings):
    """Embeds known texts to fixed vectors and counts the calls it receives."""

    def __init__(self, table):
        self.table = table
        self.document_calls = []

    def embed_documents(self, texts):
        self.document_calls.append(list(texts))
        return [self.table[t] for t in texts]

    def embed_query(self, text):
        raise AssertionError("both texts must go through one embed_documents call")

    async def aembed_documents(self, texts):
        self.document_calls.append(["async", *texts])
        return [self.table[t] for t in texts]


# --- ExactMatch ----------------------------------------------------------------------------


def test_exact_match_uses_the_canonical_rule():
    ev = ExactMatch()
    assert ev(outputs={"a": 1, "b": [1, 2]}, reference_outputs={"b": [1.0, 2], "a": 1})["score"]
    assert ev(outputs={"d": datetime.date(2024, 1, 2)}, reference_outputs={"d": "2024-01-02"})[
        "score"
    ]
    assert not ev(outputs=True, reference_outputs=1)["score"]
    assert not ev(outputs="Paris", reference_outputs="paris")["score"]


def test_exact_match_on_very_long_strings():
    long = "x" * 1_000_000
    assert ExactMatch()(outputs=long, reference_outputs=long)["score"] is True
    assert ExactMatch()(outputs=long, reference_outputs=long + "y")["score"] is False


def test_exact_match_rejects_values_without_a_json_form():
    with pytest.raises(CanonicalizationError, match="outputs\\['when'\\] is a object"):
        ExactMatch()(outputs={"when": object()}, reference_outputs={})


def test_exact_match_ignores_extra_variables():
    assert ExactMatch()(inputs="q", outputs=1, reference_outputs=1, context="unused")["score"]


# --- LevenshteinDistance -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("outputs", "reference", "score"),
    [
        ("kitten", "sitting", 1 - 3 / 7),
        ("same", "same", 1.0),
        ("", "", 1.0),
        ("abc", "", 0.0),
        ("abc", "xyz", 0.0),
    ],
)
def test_levenshtein_similarity(outputs, reference, score):
    assert LevenshteinDistance()(outputs=outputs, reference_outputs=reference)[
        "score"
    ] == pytest.approx(score)


def test_levenshtein_compares_canonical_json_of_non_strings():
    ev = LevenshteinDistance()
    assert ev(outputs={"b": 1, "a": 2}, reference_outputs={"a": 2.0, "b": 1})["score"] == 1.0
    assert 0 < ev(outputs=[1, 2, 3], reference_outputs=[1, 2, 4])["score"] < 1


def test_levenshtein_on_long_strings_matches_the_definition():
    a = "ab" * 1000
    b = "ab" * 999 + "cd"
    assert LevenshteinDistance()(outputs=a, reference_outputs=b)["score"] == pytest.approx(
        1 - 2 / 2000
    )


async def test_levenshtein_async_and_missing_reference():
    assert (await LevenshteinDistance().acall(outputs="a", reference_outputs="a"))["score"] == 1.0
    with pytest.raises(EvaluatorInputError, match="reference_outputs is None"):
        await LevenshteinDistance().acall(outputs="a", reference_outputs=None)


# --- EmbeddingSimilarity -------------------------------------------------------------------


def test_cosine_similarity_embeds_both_texts_in_one_call():
    embeddings = TableEmbeddings({"cat": [1.0, 0.0], "kitten": [1.0, 1.0]})
    result = EmbeddingSimilarity(embeddings=embeddings).invoke(
        {"outputs": "cat", "reference_outputs": "kitten"}
    )
    assert result.key == "embedding_similarity"
    assert result.score == pytest.approx(2**-0.5)
    assert embeddings.document_calls == [["cat", "kitten"]]


def test_dot_product():
    embeddings = TableEmbeddings({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    ev = EmbeddingSimilarity(embeddings=embeddings, algorithm="dot_product")
    assert ev(outputs="a", reference_outputs="b")["score"] == 11.0


async def test_async_uses_aembed_documents():
    embeddings = TableEmbeddings({"a": [1.0, 0.0], "b": [0.0, 1.0]})
    result = await EmbeddingSimilarity(embeddings=embeddings).ainvoke(
        {"outputs": "a", "reference_outputs": "b"}
    )
    assert result.score == 0.0
    assert embeddings.document_calls == [["async", "a", "b"]]


def test_a_zero_vector_scores_zero_and_says_why():
    embeddings = TableEmbeddings({"": [0.0, 0.0], "b": [0.0, 1.0]})
    result = EmbeddingSimilarity(embeddings=embeddings).invoke(
        {"outputs": "", "reference_outputs": "b"}
    )
    assert result.score == 0.0
    assert "outputs is a zero vector" in result.comment
    assert result.metadata == {"zero_vector": ["outputs"]}


def test_non_string_values_are_embedded_as_canonical_json():
    embeddings = TableEmbeddings({'{"a":1}': [1.0, 0.0]})
    assert (
        EmbeddingSimilarity(embeddings=embeddings)(outputs={"a": 1.0}, reference_outputs={"a": 1})[
            "score"
        ]
        == 1.0
    )


def test_mismatched_vectors_are_a_provider_failure():
    embeddings = TableEmbeddings({"a": [1.0, 0.0], "b": [1.0]})
    result = EmbeddingSimilarity(embeddings=embeddings, on_error="record").invoke(
        {"outputs": "a", "reference_outputs": "b"}
    )
    assert (result.outcome, result.error_code) == ("failed", "provider_error")


def test_bad_construction_arguments_are_clear():
    with pytest.raises(ValueError, match="embeddings must be a LangChain Embeddings"):
        EmbeddingSimilarity(embeddings=42)
    with pytest.raises(ValueError, match="algorithm"):
        EmbeddingSimilarity(embeddings=TableEmbeddings({}), algorithm="euclid")


def test_with_hashing_embeddings_and_batch():
    ev = EmbeddingSimilarity(embeddings=HashingEmbeddings(size=16))
    results = ev.batch(
        [{"outputs": "x", "reference_outputs": "x"}, {"outputs": "x", "reference_outputs": "y"}]
    )
    assert results[0].score == pytest.approx(1.0)
    assert results[1].score < 1.0
    assert asyncio.run(
        ev.ainvoke({"outputs": "x", "reference_outputs": "x"})
    ).score == pytest.approx(1.0)


def test_exact_match_says_why_when_the_types_differ():
    result = ExactMatch()(outputs=4, reference_outputs="4")
    assert result["score"] is False
    assert "outputs is a number and reference_outputs is a string" in result["comment"]
    assert "both read 4" in result["comment"]
    flipped = ExactMatch()(outputs="true", reference_outputs=True)["comment"]
    assert "outputs is a string and reference_outputs is a boolean" in flipped


def test_exact_match_says_why_when_a_side_is_a_mapping_of_one_key():
    result = ExactMatch()(outputs="4", reference_outputs={"answer": "4"})
    assert result["score"] is False
    assert "reference_outputs is a mapping with one key, 'answer'" in result["comment"]
    assert "reference_outputs['answer'] equals outputs" in result["comment"]
    other = ExactMatch()(outputs={"answer": 4}, reference_outputs=4)["comment"]
    assert "outputs is a mapping with one key, 'answer'" in other


def test_exact_match_leaves_a_plain_mismatch_uncommented():
    assert ExactMatch()(outputs="Paris", reference_outputs="Lyon")["comment"] is None
    assert ExactMatch()(outputs="4", reference_outputs="4")["comment"] is None
