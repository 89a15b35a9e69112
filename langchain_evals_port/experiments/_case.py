"""One row of a dataset: ``Case``, and its stable id."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from langchain_evals_port.core import canonical_json, canonical_value
from langchain_evals_port.core.errors import EvaluatorInputError

from ._errors import DatasetError, Location, did_you_mean

__all__ = ["CASE_KEYS", "Case", "Located", "case_at", "content_id"]

CASE_KEYS = ("id", "inputs", "reference_outputs", "metadata")

# Names other tools give these keys: LangSmith calls an example's reference "outputs",
# pydantic-evals calls it "expected_output" and a case's id its "name".
_SYNONYMS = {
    "outputs": "reference_outputs",
    "expected": "reference_outputs",
    "expected_output": "reference_outputs",
    "expected_outputs": "reference_outputs",
    "reference": "reference_outputs",
    "name": "id",
}


def content_id(inputs: Any, reference_outputs: Any) -> str:
    """The id of a case that was given none: 16 hex digits of the SHA-256 of the canonical
    JSON of its inputs and reference outputs.

    Canonical JSON (``canonical_json``) sorts keys and writes numbers by value, so the id is
    the same in every process and on every Python version, and cases that are equal under
    the package's equality rule (``{"n": 1}`` and ``{"n": 1.0}``) share it. Metadata is left
    out: retagging a case keeps its results paired with earlier runs.

    Example:
        >>> content_id({"question": "2 + 2?"}, "4") == content_id({"question": "2 + 2?"}, "4")
        True
        >>> content_id({"a": 1, "b": 2.0}, None) == content_id({"b": 2, "a": 1}, None)
        True
    """
    text = canonical_json({"inputs": inputs, "reference_outputs": reference_outputs})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class Case(BaseModel):
    """One case of a dataset: what the application is given and what it should produce.

    The shape of a LangSmith example (``inputs``, ``outputs`` as ``reference_outputs``,
    ``metadata``) with a stable ``id``, so results pair across experiments and an
    interrupted run resumes where it stopped.

    Args:
        inputs: What the application is given: a dict, a string, a message list, any value
            with a JSON form. Required, and never ``None``.
        reference_outputs: What it should produce, for evaluators that compare; ``None``
            when the case has no reference.
        metadata: Anything else about the case (tags, difficulty, source), a mapping with
            string keys.
        id: A non-empty string. When not given, the content id of ``inputs`` and
            ``reference_outputs`` (see ``content_id``): the same case gets the same id in
            every process.

    Raises:
        DatasetError: A field has the wrong type or no JSON form, or ``inputs`` is ``None``.

    Example:
        >>> case = Case(inputs={"question": "Capital of France?"}, reference_outputs="Paris")
        >>> case.id
        'a9d6ae588711501e'
        >>> Case(id="france", inputs="Capital of France?", metadata={"level": 1}).id
        'france'
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    inputs: Any
    reference_outputs: Any = None
    metadata: dict[str, Any] = {}

    def __init__(
        self,
        *,
        inputs: Any,
        reference_outputs: Any = None,
        metadata: Mapping[str, Any] | None = None,
        id: str | None = None,
    ) -> None:
        if inputs is None:
            raise DatasetError(
                "'inputs' is null; every case needs the inputs the application is given",
                field="inputs",
            )
        _check_json("inputs", inputs)
        _check_json("reference_outputs", reference_outputs)
        metadata = {} if metadata is None else metadata
        if not isinstance(metadata, Mapping) or not all(isinstance(k, str) for k in metadata):
            raise DatasetError(
                f"'metadata' must be a mapping with string keys, got {_kind(metadata)}",
                field="metadata",
            )
        _check_json("metadata", metadata)
        if id is None:
            id = content_id(inputs, reference_outputs)
        elif not isinstance(id, str) or not id.strip():
            raise DatasetError(
                f"'id' must be a non-empty string, got {_kind(id)} {id!r}", field="id"
            )
        super().__init__(
            id=id, inputs=inputs, reference_outputs=reference_outputs, metadata=dict(metadata)
        )


Located = tuple[Location, Case]
"""A case with the place it was read from."""


def case_at(row: object, location: Location) -> Case:
    """The case a row (a mapping of ``CASE_KEYS``) describes; any problem is raised as a
    ``DatasetError`` located at ``location``."""
    try:
        if not isinstance(row, Mapping):
            raise DatasetError(
                f"expected a mapping with the keys {', '.join(CASE_KEYS)}, got {_kind(row)}"
            )
        for key in row:
            if key not in CASE_KEYS:
                raise DatasetError(
                    f"unknown key {key!r}{did_you_mean(str(key), CASE_KEYS, _SYNONYMS)}; "
                    f"a case has the keys {', '.join(CASE_KEYS)}",
                    field=str(key),
                )
        if "inputs" not in row:
            raise DatasetError(
                "no 'inputs'; every case needs the inputs the application is given",
                field="inputs",
            )
        return Case(**row)
    except DatasetError as error:
        raise error.at(location) from None


def _check_json(field: str, value: Any) -> None:
    # The canonical form's check, without writing its text: a case is checked every time a
    # run of it is claimed from the store, and the text is never used here.
    try:
        canonical_value(value, name=field)
    except EvaluatorInputError as error:
        raise DatasetError(str(error), field=field) from None


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__
