"""Evaluators that need no judge: exact match, edit similarity, embedding similarity."""

from ._embedding import EmbeddingSimilarity
from ._exact import ExactMatch
from ._levenshtein import LevenshteinDistance

__all__ = ["EmbeddingSimilarity", "ExactMatch", "LevenshteinDistance"]
