"""``HashingEmbeddings``: LangChain embeddings by feature hashing, which need no model."""

from __future__ import annotations

import re
import zlib

from langchain_core.embeddings import Embeddings

__all__ = ["HashingEmbeddings"]


class HashingEmbeddings(Embeddings):
    """Offline embeddings by feature hashing: each lower-cased word adds 1 to one of
    ``size`` dimensions (chosen by CRC-32, so vectors are the same in every process).

    Identical texts get identical vectors, texts that share words get similar ones, and a
    text without words gets the zero vector. Good enough to exercise embedding evaluators
    without a model; not a semantic model.

    Example:
        >>> emb = HashingEmbeddings(size=8)
        >>> emb.embed_query("a cat") == emb.embed_query("A  cat!")
        True
    """

    def __init__(self, size: int = 256) -> None:
        if size < 1:
            raise ValueError(f"size must be a positive number of dimensions, got {size}")
        self.size = size

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One vector per text."""
        return [self.embed_query(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        """The vector of one text."""
        vector = [0.0] * self.size
        for word in re.findall(r"\w+", text.lower()):
            vector[zlib.crc32(word.encode()) % self.size] += 1.0
        return vector
