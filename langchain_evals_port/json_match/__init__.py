"""Structured-output (JSON) matching: ``JsonMatch``.

Compares an object, or a list of objects, with a reference key by key — by the canonical
equality rule, or by a judge model for rubric keys — and pairs lists of objects optimally.
"""

from ._match import JsonMatch
from ._pairing import ListMatchMode
from ._results import Aggregator

__all__ = ["Aggregator", "JsonMatch", "ListMatchMode"]
