"""A configuration document (``evals.yaml``) and its checks: the pydantic models of the
document, from ``ConfigDocument`` down to ``EvaluatorEntry`` and ``BindingEntry`` (frozen),
the kebab-case reserved keys read as snake_case, the document's JSON Schema, and pydantic's
errors as ``ConfigurationError`` (``_config`` says the rules; ``EvaluationConfig`` reads a
document through ``read_document``).

The fixed part forbids extra keys; entries and bindings allow them, as evaluator properties,
after refusing typos of reserved keys and reserved keys that belong elsewhere; each reserved
key has a strict type that says what it expects (``_Expected``). ``_configuration_error`` is
the one place a pydantic ``ValidationError`` becomes a ``ConfigurationError``: the key path,
what was expected, the closest valid key.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, ClassVar, Final, Literal, get_args, get_origin

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    ValidationError,
    model_validator,
)
from pydantic.config import JsonDict
from pydantic_core import PydanticCustomError

from langchain_evals_port.core.errors import EvalsError

__all__ = [
    "AgentDefaults",
    "BindingEntry",
    "ConfigDocument",
    "ConfigurationError",
    "DefaultsSection",
    "EvaluationSection",
    "EvaluatorDefaults",
    "EvaluatorEntry",
    "document_schema",
    "read_document",
    "snake_case_keys",
]

_RESERVED: Final = (
    "enabled",
    "trigger",
    "sampling_ratio",
    "trigger_on_failure",
    "trigger_on_interrupt",
    "pass_threshold",
    "control_id",
    "agents",
    "agent_roles",
)
_KEBAB_TWINS: Final = {key.replace("_", "-"): key for key in _RESERVED if "_" in key}
_BINDING_SETTINGS: Final = ("sampling_ratio", "trigger_on_failure", "trigger_on_interrupt")
_BINDING_GROUPS: Final = ("agents", "agent_roles")
_CLOSE_MATCH: Final = 0.75
"""The similarity from which a key counts as a typo of another (the core's rule for keywords)."""
_ANY_ROLE: Final = "*"
_JSON_SCHEMA_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"


class ConfigurationError(EvalsError, ValueError):
    """The evaluation configuration is invalid; raised at startup.

    Args:
        key_path: Where the problem is, e.g. ``evaluation.evaluators.quality.sampling_ratio``
            (for a file that cannot be read: the file).
        problem: What is wrong and what was expected.
    """

    def __init__(self, key_path: str, problem: str) -> None:
        super().__init__(f"{key_path}: {problem}")
        self.key_path = key_path


# --- the document's models -----------------------------------------------------------------


class _Expected:
    """What a reserved key's value must be, as the error message says it (``{value}``: the
    value found); kept in the key's type, read by ``_configuration_error``."""

    __slots__ = ("template",)

    def __init__(self, template: str) -> None:
        self.template = template


_Trigger = Literal["interaction"]
_TRIGGERS: Final = get_args(_Trigger)
_Flag = Annotated[bool, Strict(), _Expected("expected true or false, got {value}")]
_Ratio = Annotated[
    float,
    Strict(),
    Field(ge=0, le=1, allow_inf_nan=False),
    _Expected("expected a number from 0.0 to 1.0, got {value}"),
]
_Threshold = Annotated[
    float, Strict(), Field(allow_inf_nan=False), _Expected("expected a number, got {value}")
]
_ControlId = Annotated[
    str, Strict(), Field(min_length=1), _Expected("expected a non-empty string, got {value}")
]
_TriggerOrNone = Annotated[
    _Trigger | None,
    _Expected(f"unknown trigger {{value}}; allowed: {', '.join(_TRIGGERS)}"),
]


def _null_is_empty(value: object) -> object:
    return {} if value is None else value


def _nullable(kind: Any) -> BeforeValidator:
    """``null`` where a mapping belongs (``agents:`` with nothing under it) reads as empty;
    the schema allows it."""
    return BeforeValidator(_null_is_empty, json_schema_input_type=kind | None)


def _no_default(schema: JsonDict) -> None:
    schema.pop("default", None)


def _inherited() -> Any:
    """The default of a key whose value, when left out, comes from elsewhere (the defaults
    section or the evaluator entry): none in the schema, and never read (``setting``)."""
    return Field(default=None, json_schema_extra=_no_default)


def _schema_extra(schema: JsonDict, model: type[BaseModel]) -> None:
    """A section's schema also accepts the kebab-case spelling of its reserved keys, refuses
    (``false``) the reserved keys that belong elsewhere, and has its descriptions (the
    docstrings) on one line each, for editors."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return
    for described in (schema, *properties.values()):
        if isinstance(described, dict) and isinstance(described.get("description"), str):
            described["description"] = " ".join(str(described["description"]).split())
    misplaced: Mapping[str, str] = getattr(model, "_misplaced", {})
    for key in misplaced:
        properties[key] = False
    for kebab, snake in _KEBAB_TWINS.items():
        if snake in properties:
            properties[kebab] = properties[snake]


class _Section(BaseModel):
    """A part of the document whose keys are fixed: any other key is an error."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", use_attribute_docstrings=True, json_schema_extra=_schema_extra
    )
    _unknown_key_note: ClassVar[str] = ""
    """Said after the keys a section accepts when it is given another."""


class _Settings(BaseModel):
    """An evaluator entry or a binding: reserved keys typed, any other key a property."""

    model_config = ConfigDict(
        frozen=True, extra="allow", use_attribute_docstrings=True, json_schema_extra=_schema_extra
    )
    _misplaced: ClassVar[Mapping[str, str]] = {}
    """Reserved keys that belong elsewhere, with the problem said for each."""

    @model_validator(mode="before")
    @classmethod
    def _no_misplaced_or_misspelt_reserved_key(cls, data: Any) -> Any:
        """Refuse a reserved key that belongs elsewhere, and a key within a typo of a reserved
        key: read as a property, it would leave the evaluator unbound or a setting unset."""
        if not isinstance(data, Mapping):
            return data
        for key in data:
            if key in cls._misplaced:
                raise PydanticCustomError("misplaced_key", "misplaced key", {"key": key})
        for key in data:
            if isinstance(key, str) and key not in _RESERVED and _closest(key, _RESERVED):
                raise PydanticCustomError("reserved_key_typo", "a typo", {"key": key})
        return data

    def setting(self, name: str, fallback: Any) -> Any:
        """The value of the reserved key ``name`` where it is set, else ``fallback``."""
        return getattr(self, name) if name in self.model_fields_set else fallback

    def as_written(self) -> dict[str, Any]:
        """The keys set, reserved keys and properties, without ``agents`` and ``agent_roles``:
        what the evaluator reads from this entry (properties keep their keys as written)."""
        reserved = {
            name: getattr(self, name)
            for name in type(self).model_fields
            if name in self.model_fields_set and name not in _BINDING_GROUPS
        }
        return {**reserved, **(self.model_extra or {})}


class BindingEntry(_Settings):
    """How one evaluator is bound to one agent (under agents) or to the agents of one role
    (under agent_roles; "*": any agent with a role). Any key that is not reserved is an
    evaluator property, over the evaluator entry's."""

    model_config = ConfigDict(title="Binding")
    _misplaced: ClassVar[Mapping[str, str]] = {
        "control_id": "not allowed on a binding; set it on the evaluator entry",
        "agents": "not allowed on a binding; bindings do not nest",
        "agent_roles": "not allowed on a binding; bindings do not nest",
    }

    enabled: _Flag = True
    """false: the agent is not evaluated, even where a less specific entry would match."""
    trigger: _TriggerOrNone = None
    """When the evaluator runs: interaction, after each interaction of the agent."""
    sampling_ratio: _Ratio = _inherited()
    """The share of the agent's interactions evaluated, 0.0 to 1.0 (else
    evaluation.defaults.agent.sampling_ratio, else 1.0)."""
    trigger_on_failure: _Flag = _inherited()
    """Evaluate interactions that failed (the agent raised), too (else
    evaluation.defaults.agent.trigger_on_failure, else false)."""
    trigger_on_interrupt: _Flag = _inherited()
    """Evaluate interrupted interactions, too (else
    evaluation.defaults.agent.trigger_on_interrupt, else false)."""
    pass_threshold: _Threshold = _inherited()
    """A numeric score passes at or above this (else the evaluator entry's)."""


_Binding = Annotated[BindingEntry, _nullable(BindingEntry)]
_Bindings = Annotated[dict[str, _Binding], _nullable(dict[str, _Binding])]


class EvaluatorEntry(_Settings):
    """One evaluator's entry, under its registered id: its settings, its properties (any key
    that is not reserved, read by the evaluator as ctx.config) and its bindings."""

    model_config = ConfigDict(title="Evaluator")
    _misplaced: ClassVar[Mapping[str, str]] = dict.fromkeys(
        _BINDING_SETTINGS,
        "not allowed on an evaluator entry; set it on a binding under agents or agent_roles, "
        "or under evaluation.defaults.agent",
    )

    enabled: _Flag = _inherited()
    """false: the evaluator binds no agent (else evaluation.defaults.evaluator.enabled)."""
    trigger: _TriggerOrNone = None
    """When the evaluator runs: interaction, after each interaction of the agent."""
    pass_threshold: _Threshold = _inherited()
    """A numeric score passes at or above this; a binding's wins."""
    control_id: _ControlId = _inherited()
    """The control the evaluator implements, recorded on its evaluations."""
    agents: _Bindings = Field(default_factory=dict)
    """Bindings by agent id; an agent's own entry wins over its roles'."""
    agent_roles: _Bindings = Field(default_factory=dict)
    """Bindings by role: an agent's first role with an entry, else "*" for any agent with a
    role."""

    def choose(self, agent_id: str, roles: tuple[str, ...]) -> tuple[str, BindingEntry] | None:
        """Where under the entry the binding of the agent is (``agents.support``) and the
        binding; first match wins, ``None`` when none matches."""
        if agent_id in self.agents:
            return f"agents.{agent_id}", self.agents[agent_id]
        for role in roles:
            if role in self.agent_roles:
                return f"agent_roles.{role}", self.agent_roles[role]
        if roles and _ANY_ROLE in self.agent_roles:
            return f"agent_roles.{_ANY_ROLE}", self.agent_roles[_ANY_ROLE]
        return None


_PROPERTIES_ELSEWHERE: Final = "; evaluator properties go on an evaluator entry or binding"


class EvaluatorDefaults(_Section):
    """What every evaluator entry that does not say otherwise gets."""

    _unknown_key_note: ClassVar[str] = _PROPERTIES_ELSEWHERE

    enabled: _Flag = True
    """false: an evaluator entry without enabled: true binds no agent."""


class AgentDefaults(_Section):
    """The binding settings of every binding that leaves them out."""

    _unknown_key_note: ClassVar[str] = _PROPERTIES_ELSEWHERE

    sampling_ratio: _Ratio = 1.0
    """The share of an agent's interactions evaluated, 0.0 to 1.0."""
    trigger_on_failure: _Flag = False
    """Evaluate interactions that failed (the agent raised), too."""
    trigger_on_interrupt: _Flag = False
    """Evaluate interrupted interactions, too."""


class DefaultsSection(_Section):
    """Defaults for evaluator entries and for bindings; never evaluator properties."""

    model_config = ConfigDict(title="Defaults")

    agent: Annotated[AgentDefaults, _nullable(AgentDefaults)] = Field(default_factory=AgentDefaults)
    """The binding settings a binding leaves out."""
    evaluator: Annotated[EvaluatorDefaults, _nullable(EvaluatorDefaults)] = Field(
        default_factory=EvaluatorDefaults
    )
    """The settings an evaluator entry leaves out."""


_Entry = Annotated[EvaluatorEntry, _nullable(EvaluatorEntry)]


class EvaluationSection(_Section):
    """Which evaluator runs for which agent, and with what settings."""

    model_config = ConfigDict(title="Evaluation")

    defaults: Annotated[DefaultsSection, _nullable(DefaultsSection)] = Field(
        default_factory=DefaultsSection
    )
    """Defaults for evaluator entries (evaluator) and bindings (agent)."""
    evaluators: Annotated[dict[str, _Entry], _nullable(dict[str, _Entry])] = Field(
        default_factory=dict
    )
    """Evaluator entries by the id the evaluator is registered under, in the order they
    run."""


class ConfigDocument(_Section):
    """The evaluation configuration of langchain-evals-port (evals.yaml): the evaluation
    section and nothing else."""

    model_config = ConfigDict(title="langchain-evals evaluation configuration")
    _unknown_key_note: ClassVar[str] = (
        "; give the evaluation section alone, without an application's other settings"
    )

    evaluation: Annotated[EvaluationSection, _nullable(EvaluationSection)] = Field(
        default_factory=EvaluationSection
    )
    """The evaluation configuration: defaults and evaluators."""


# --- reading a document ------------------------------------------------------------------


def read_document(document: Mapping[str, Any]) -> ConfigDocument:
    """The checked document (its reserved keys already snake_case: ``snake_case_keys``).

    Raises:
        ConfigurationError: The document breaks a rule; the message names the key path.
    """
    try:
        return ConfigDocument.model_validate(document)
    except ValidationError as error:
        raise _configuration_error(error) from None


def document_schema() -> dict[str, Any]:
    """The JSON Schema of a configuration document, for editors."""
    return {"$schema": _JSON_SCHEMA_DIALECT, **ConfigDocument.model_json_schema()}


# --- kebab-case keys -----------------------------------------------------------------------


def snake_case_keys(document: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the document whose reserved keys are all snake_case; nothing else changes.

    Raises:
        ConfigurationError: An entry sets a reserved key in both spellings.
    """
    result = dict(document)
    evaluation = document.get("evaluation")
    if not isinstance(evaluation, Mapping):
        return result
    evaluation = result["evaluation"] = dict(evaluation)
    defaults = evaluation.get("defaults")
    if isinstance(defaults, Mapping):
        evaluation["defaults"] = _normalise_children(defaults, "evaluation.defaults", _snake_case)
    evaluators = evaluation.get("evaluators")
    if isinstance(evaluators, Mapping):
        evaluation["evaluators"] = _normalise_children(
            evaluators, "evaluation.evaluators", _normalise_entry
        )
    return result


def _normalise_children(
    parent: Mapping[Any, Any],
    key_path: str,
    normalise: Callable[[Mapping[Any, Any], str], dict[Any, Any]],
) -> dict[Any, Any]:
    return {
        key: normalise(child, f"{key_path}.{key}") if isinstance(child, Mapping) else child
        for key, child in parent.items()
    }


def _normalise_entry(entry: Mapping[Any, Any], key_path: str) -> dict[Any, Any]:
    result = _snake_case(entry, key_path)
    for group in _BINDING_GROUPS:
        bindings = result.get(group)
        if isinstance(bindings, Mapping):
            result[group] = _normalise_children(bindings, f"{key_path}.{group}", _snake_case)
    return result


def _snake_case(entry: Mapping[Any, Any], key_path: str) -> dict[Any, Any]:
    result: dict[Any, Any] = {}
    for key, value in entry.items():
        name = _KEBAB_TWINS.get(key, key)
        if name != key and name in entry:
            raise ConfigurationError(
                f"{key_path}.{name}", f"set twice, as {name!r} and {key!r}; keep one"
            )
        result[name] = value
    return result


# --- pydantic's errors as configuration errors -------------------------------------------


def _configuration_error(error: ValidationError) -> ConfigurationError:
    """The ``ConfigurationError`` of the outermost problem pydantic found (the first of them:
    a section's fields in order, then an entry's bindings): its key path, what was expected
    there and, for an unknown key, the closest valid one. The one place pydantic's errors
    are read."""
    found = min(error.errors(include_url=False), key=lambda problem: len(problem["loc"]))
    loc, kind, value = tuple(found["loc"]), found["type"], found.get("input")
    if kind in ("misplaced_key", "reserved_key_typo"):
        model = _model_at(loc)
        key = (found.get("ctx") or {})["key"]
        return ConfigurationError(_key_path((*loc, key)), _settings_key_problem(model, kind, key))
    if kind == "invalid_key" or loc[-1:] == ("[key]",):
        # The key as given: pydantic's location reads a key such as True as 1.
        parent = loc[:-2] if loc[-1:] == ("[key]",) else loc[:-1]
        return ConfigurationError(_key_path((*parent, value)), "keys must be strings")
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return ConfigurationError(_key_path(loc), f"expected a mapping, got {type(value).__name__}")
    if kind == "extra_forbidden":
        return ConfigurationError(_key_path(loc), _unknown_key_problem(loc))
    expected = _expected_at(loc)
    problem = expected.format(value=repr(value)) if expected else f"{found['msg']}, got {value!r}"
    return ConfigurationError(_key_path(loc), problem)


def _key_path(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc)


def _settings_key_problem(model: type[BaseModel] | None, kind: str, key: str) -> str:
    if kind == "misplaced_key":
        misplaced: Mapping[str, str] = getattr(model, "_misplaced", {})
        return misplaced[key]
    return (
        f"unknown key (did you mean {_closest(key, _RESERVED)!r}?); a key this close to a "
        "reserved key is not taken for an evaluator property, so rename it if it is one"
    )


def _unknown_key_problem(loc: tuple[Any, ...]) -> str:
    model = _model_at(loc[:-1])
    allowed = tuple(model.model_fields) if model is not None else ()
    closest = _closest(str(loc[-1]), allowed)
    hint = f" (did you mean {closest!r}?)" if closest else ""
    where = _key_path(loc[:-1]) or "the top level"
    note: str = getattr(model, "_unknown_key_note", "")
    return f"unknown key{hint}; {where} accepts only {', '.join(allowed)}{note}"


def _expected_at(loc: tuple[Any, ...]) -> str | None:
    """The ``_Expected`` template of the reserved key at ``loc``."""
    model = _model_at(loc[:-1])
    field_info = model.model_fields.get(str(loc[-1])) if model is not None and loc else None
    for metadata in field_info.metadata if field_info is not None else ():
        if isinstance(metadata, _Expected):
            return metadata.template
    return None


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model that validates the mapping at ``loc`` of the document, if a model does."""
    kind: Any = ConfigDocument
    for part in loc:
        kind = _unannotated(kind)
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            field_info = kind.model_fields.get(part) if isinstance(part, str) else None
            kind = field_info.annotation if field_info is not None else None
        elif get_origin(kind) is dict:
            kind = get_args(kind)[1]
        else:
            return None
    kind = _unannotated(kind)
    return kind if isinstance(kind, type) and issubclass(kind, BaseModel) else None


def _unannotated(kind: Any) -> Any:
    return get_args(kind)[0] if get_origin(kind) is Annotated else kind


def _closest(key: str, candidates: Sequence[str]) -> str | None:
    """The candidate ``key`` is a typo of, if any (case and ``-`` versus ``_`` aside)."""
    spelt = key.lower().replace("-", "_")
    close = difflib.get_close_matches(spelt, candidates, n=1, cutoff=_CLOSE_MATCH)
    return close[0] if close else None
