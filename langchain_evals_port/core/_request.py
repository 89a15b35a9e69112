"""What an evaluator is asked to judge: ``EvalRequest``."""

from __future__ import annotations

import difflib
import reprlib
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .errors import EvaluatorInputError, EvaluatorUsageError

_FIELDS = ("inputs", "outputs", "reference_outputs", "variables", "attachments")
CALL_FIELDS = ("inputs", "outputs", "reference_outputs", "attachments")
"""The fields a request is called with by keyword (``variables`` aside)."""
# Scoring functions receive fields and variables by name, and "request" is the request itself.
_RESERVED = frozenset({*_FIELDS, "request"})


class EvalRequest(BaseModel):
    """One thing to evaluate.

    Args:
        inputs: What the application was given (a question, a message list, a dict).
        outputs: What the application produced.
        reference_outputs: What it should have produced, for evaluators that compare.
        variables: Extra named values (e.g. ``context`` for a RAG prompt).
        attachments: Images, audio or documents for multimodal judges.

    Example:
        >>> EvalRequest(outputs="Paris", reference_outputs="Paris").outputs
        'Paris'
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True, extra="forbid")

    inputs: Any = None
    outputs: Any = None
    reference_outputs: Any = None
    # Factories, not ``{}``/``[]``: pydantic deep-copies a mutable default per instance.
    variables: dict[str, Any] = Field(default_factory=dict)
    attachments: list[Any] = Field(default_factory=list)

    @field_validator("variables")
    @classmethod
    def _no_shadowing(cls, variables: dict[str, Any]) -> dict[str, Any]:
        _check_variable_names(variables)
        return variables

    def require(self, *fields: str, evaluator: str) -> tuple[Any, ...]:
        """The values of ``fields``, or an ``EvaluatorInputError`` naming those that are None.

        Example:
            >>> EvalRequest(outputs="a", reference_outputs="b").require(
            ...     "outputs", "reference_outputs", evaluator="exact_match")
            ('a', 'b')
        """
        values = tuple(getattr(self, name) for name in fields)
        missing = [name for name, value in zip(fields, values, strict=True) if value is None]
        if missing:
            raise EvaluatorInputError(
                f"{evaluator} requires {' and '.join(fields)}; {' and '.join(missing)} "
                f"{'is' if len(missing) == 1 else 'are'} None"
            )
        return values

    @classmethod
    def of(
        cls,
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **variables: Any,
    ) -> EvalRequest:
        """A request from the keyword call's arguments (``attachments=`` and ``variables=``
        included), with the same checks as ``coerce``.

        Example:
            >>> EvalRequest.of(outputs="a", context="docs").variables
            {'context': 'docs'}
        """
        fields = {"inputs": inputs, "outputs": outputs, "reference_outputs": reference_outputs}
        return cls.coerce({**fields, **variables})

    @classmethod
    def coerce(cls, value: EvalRequest | Mapping[str, Any]) -> EvalRequest:
        """Accept a request, or a mapping with its field names (the Runnable input).

        Keys other than the fields are variables, the same as in the keyword call
        ``ev(inputs=..., outputs=..., context=...)``; a ``variables`` mapping in the input is
        merged with them. A loose key that is a near miss of a field name (``output``,
        ``reference``) is almost always a typo, so it raises ``TypeError`` with a
        suggestion instead of being passed on silently; pass such a name inside
        ``variables={...}`` when it is meant.
        """
        if isinstance(value, EvalRequest):
            return value
        if not isinstance(value, Mapping):
            raise EvaluatorInputError(_not_a_request(value))
        data = dict(value)
        nested = data.pop("variables", None) or {}
        if not isinstance(nested, Mapping):
            raise EvaluatorInputError(
                f"'variables' must be a mapping of name to value, got {type(nested).__name__}"
            )
        fields = {name: data.pop(name) for name in CALL_FIELDS if name in data}
        for name in data:
            _reject_near_miss(name)
        _check_variable_names(nested)
        fields["attachments"] = _as_attachment_list(fields.get("attachments"))
        return cls(**fields, variables={**nested, **data})


def _check_variable_names(variables: Mapping[str, Any]) -> None:
    shadowing = sorted(set(variables) & _RESERVED)
    if shadowing:
        raise EvaluatorInputError(
            f"variables may not be named {', '.join(map(repr, shadowing))}: those names are "
            "the request's own fields; pass them as fields"
        )


def _as_attachment_list(attachments: Any) -> list[Any]:
    if attachments is None:
        return []
    if isinstance(attachments, (list, tuple)):
        return list(attachments)
    if isinstance(attachments, Mapping) and not attachments.keys() & {"type", "mime_type"}:
        # LangSmith hands evaluators a mapping of attachment name to attachment.
        return list(attachments.values())
    return [attachments]


_ALIASES = {
    "reference": "reference_outputs",
    "references": "reference_outputs",
    "expected": "reference_outputs",
    "expected_output": "reference_outputs",
    "expected_outputs": "reference_outputs",
    "prediction": "outputs",
}


def _not_a_request(value: object) -> str:
    """Say what an evaluator got instead of a request, and how a chain should feed it."""
    # A parser hands on a str subclass (a message's text); name the type users know.
    if isinstance(value, str):
        value = str(value)
    return (
        f"an evaluator takes a mapping with keys {', '.join(_FIELDS)} (or an EvalRequest), "
        f"but it received {type(value).__name__} {reprlib.repr(value)}. To score a chain's "
        "answer, say which value is the answer and which the reference: "
        '{"outputs": chain, "reference_outputs": itemgetter("answer")} | evaluator '
        "(itemgetter from the operator module)"
    )


def _reject_near_miss(name: str) -> None:
    if not isinstance(name, str):
        raise EvaluatorInputError(f"variable names must be strings, got {name!r}")
    if name == "request":
        raise EvaluatorInputError(
            "'request' is reserved for the whole EvalRequest; name the variable otherwise"
        )
    suggestion = _ALIASES.get(name)
    if suggestion is None:
        close = difflib.get_close_matches(name, _FIELDS, n=1, cutoff=0.75)
        suggestion = close[0] if close else None
    if suggestion is not None:
        raise EvaluatorUsageError(
            f"unexpected keyword argument {name!r}; did you mean {suggestion!r}? "
            "(evaluators take inputs=, outputs=, reference_outputs=, attachments= and named "
            "variables)"
        )
