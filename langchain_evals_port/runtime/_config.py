"""The ``evaluation`` configuration: which evaluator runs for which agent, and with what settings.

The configuration is a mapping (from a dict, a YAML file or a TOML file) with one top-level key,
``evaluation``, holding ``defaults`` and ``evaluators``. It is read and checked once, when the
``EvaluationConfig`` is built: every mistake the runtime can detect is a ``ConfigurationError``
at startup whose message starts with the full key path.

Typos never pass silently. The fixed part of the document — the top level, ``evaluation``,
``defaults`` and the two mappings under it — accepts only its own keys: anything else is an
error naming the closest valid key. That includes the top level, as the specification asks:
the document is the evaluation configuration and nothing else, so ``evaluaton:`` cannot
configure nothing unnoticed. An application that keeps its own settings in the same file
passes the section (``EvaluationConfig({"evaluation": settings["evaluation"]})``) or keeps the
evaluation configuration in files of its own. Evaluator entries and bindings are open — any key
that is not reserved is an evaluator property — but a key within a typo of a reserved key
(``agent``, ``agent_role``, ``sampling_rate``, ``Enabled``: the package's usual close-match
rule, on the key lower-cased with ``-`` read as ``_``) is an error too, rather than a property
that leaves the evaluator unbound: name such a property otherwise.

Pydantic models check the document (``ConfigDocument`` down to ``EvaluatorEntry`` and
``BindingEntry``, frozen): the fixed part forbids extra keys, entries and bindings allow them as
properties after refusing typos and misplaced reserved keys, and each reserved key has a
strict type. ``_configuration_error`` is the one place a pydantic ``ValidationError`` becomes
a ``ConfigurationError``: the key path, what was expected, the closest valid key. The same
models give the JSON Schema of the file (``EvaluationConfig.json_schema()``, printed by
``langchain-evals config schema``) for editors.

Choosing an agent's binding. For each evaluator entry the first match wins:

1. the agent's own entry under ``agents``;
2. else the entry of the agent's roles under ``agent_roles`` — when several of its roles have
   one, the first role in the order the roles were declared for the agent;
3. else the ``"*"`` entry under ``agent_roles``, which matches any agent that has at least one
   role. An agent without roles is bound only through ``agents``.

The chosen entry is final: when it is disabled (``enabled: false``) the agent is not evaluated,
even if a less specific entry would match. Each binding setting (``sampling_ratio``,
``trigger_on_failure``, ``trigger_on_interrupt``) comes from the chosen entry, else from
``evaluation.defaults.agent``, else the built-in default (1.0, false, false) — never from a less
specific entry.

Keys are snake_case. A kebab-case spelling of a reserved key (``sampling-ratio``,
``trigger-on-failure``, ``trigger-on-interrupt``, ``control-id``, ``agent-roles``) is read as
the snake_case key, never as an evaluator property; setting both spellings in one entry is an
error. Every other key of an evaluator entry or binding is an evaluator property: properties are
not checked and keep their keys exactly as written (``min-length`` stays ``min-length``).

Layering: ``EvaluationConfig.from_files(base, override, ...)`` merges the files in the order
given, a later file over the earlier ones. Mappings merge key by key; any other value,
including a list or ``null``, replaces the earlier one. Kebab-case keys are read as snake_case
in each file before merging, so ``sampling-ratio`` in an override replaces ``sampling_ratio`` in
the base.
"""

from __future__ import annotations

import copy
import difflib
import enum
import importlib
import sys
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
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

from langchain_evals_port.core._documents import DocumentError, read_yaml
from langchain_evals_port.core.errors import EvalsError

__all__ = [
    "AgentDefaults",
    "Binding",
    "BindingEntry",
    "ConfigDocument",
    "ConfigKeyError",
    "ConfigTypeError",
    "ConfigurationError",
    "DefaultsSection",
    "EvaluationConfig",
    "EvaluationSection",
    "EvaluatorConfig",
    "EvaluatorDefaults",
    "EvaluatorEntry",
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


class ConfigKeyError(EvalsError, KeyError):
    """An evaluator read a configuration key that is not set (or set to null).

    Args:
        key: The key that was read.
    """

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key

    def __str__(self) -> str:
        return f"{self.key}: not set in the evaluator configuration"


class ConfigTypeError(EvalsError, TypeError):
    """An evaluator read a configuration key whose value has the wrong type.

    Args:
        key: The key that was read.
        value: The value found.
        expected: What the reader expected, e.g. ``"an integer"``.
    """

    def __init__(self, key: str, value: object, expected: str) -> None:
        super().__init__(f"{key}: expected {expected}, got {value!r} ({type(value).__name__})")
        self.key = key
        self.value = value


class _Missing(enum.Enum):
    MISSING = enum.auto()


_MISSING: Final = _Missing.MISSING


class EvaluatorConfig(Mapping[str, Any]):
    """An evaluator's configuration as it reads it (``ctx.config``): a read-only mapping.

    The typed getters raise ``ConfigKeyError`` for a key that is not set (a null value counts
    as not set) unless a default is given, and ``ConfigTypeError`` for a value of the wrong
    type; they never convert strings.

    Example:
        >>> config = EvaluatorConfig({"min_length": 50})
        >>> config.get_int("min_length"), config.get_float("min_length"), config.get_int("x", 0)
        (50, 50.0, 0)
    """

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        self._data: dict[str, Any] = dict(data or {})

    def __getitem__(self, key: str) -> Any:
        try:
            return self._data[key]
        except KeyError:
            raise ConfigKeyError(key) from None

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"EvaluatorConfig({self._data!r})"

    def _read(self, key: str, default: object) -> object:
        value = self._data.get(key)
        if value is not None:
            return value
        if default is _MISSING:
            raise ConfigKeyError(key)
        return default

    def get_int(self, key: str, default: int | _Missing = _MISSING) -> int:
        """The integer at ``key``; an integral float such as ``50.0`` counts, a bool does not."""
        value = self._read(key, default)
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise ConfigTypeError(key, value, "an integer")

    def get_float(self, key: str, default: float | _Missing = _MISSING) -> float:
        """The number at ``key`` as a float; an integer counts, a bool does not."""
        value = self._read(key, default)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise ConfigTypeError(key, value, "a number")

    def get_bool(self, key: str, default: bool | _Missing = _MISSING) -> bool:
        """The bool at ``key``; only ``true``/``false`` count, not ``0``, ``1`` or ``"yes"``."""
        value = self._read(key, default)
        if isinstance(value, bool):
            return value
        raise ConfigTypeError(key, value, "true or false")

    def get_str(self, key: str, default: str | _Missing = _MISSING) -> str:
        """The string at ``key``."""
        value = self._read(key, default)
        if isinstance(value, str):
            return value
        raise ConfigTypeError(key, value, "a string")


@dataclass(frozen=True)
class Binding:
    """How one evaluator is bound to one agent: the chosen entry and its resolved settings."""

    evaluator_id: str
    key_path: str
    """Where the chosen entry lives, e.g. ``evaluation.evaluators.quality.agents.support``."""
    sampling_ratio: float
    trigger_on_failure: bool
    trigger_on_interrupt: bool
    control_id: str | None
    config: EvaluatorConfig = field(hash=False)
    """What the evaluator reads as ``ctx.config`` for this agent."""


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


class EvaluationConfig:
    """The ``evaluation`` configuration, checked when built; immutable.

    Args:
        data: A configuration document, ``{"evaluation": {...}}`` and nothing else; ``None``
            or an empty document configures nothing.

    Raises:
        ConfigurationError: The configuration breaks a rule; the message names the key path.

    Example:
        >>> config = EvaluationConfig.from_mapping({"evaluation": {"evaluators": {"quality": {
        ...     "min_length": 20,
        ...     "agents": {"billing-agent": {"enabled": False}},
        ...     "agent_roles": {"customer-facing": {}, "*": {"sampling_ratio": 0.1}},
        ... }}}})
        >>> config.binding("quality", "billing-agent", ["customer-facing"]) is None
        True
        >>> config.binding("quality", "support-agent", ["customer-facing"]).sampling_ratio
        1.0
        >>> config.binding("quality", "router", ["internal"]).sampling_ratio
        0.1
        >>> config.binding("quality", "judge", []) is None
        True
    """

    __slots__ = ("_bindings_cache", "_document")

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        if data is not None and not isinstance(data, Mapping):
            raise TypeError(f"the configuration must be a mapping, got {type(data).__name__}")
        document = copy.deepcopy(_normalise_document(data or {}))
        try:
            self._document = ConfigDocument.model_validate(document)
        except ValidationError as error:
            raise _configuration_error(error) from None
        self._bindings_cache: dict[tuple[str, tuple[str, ...]], tuple[Binding, ...]] = {}

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> EvaluationConfig:
        """Read a configuration document, ``{"evaluation": {...}}`` (same as the constructor)."""
        return cls(data)

    @classmethod
    def from_files(cls, *paths: str | Path) -> EvaluationConfig:
        """Read YAML (``.yaml``, ``.yml``) and TOML (``.toml``) files, each over the earlier."""
        return cls(cls.merge(*(_read_file(Path(path)) for path in paths)))

    @staticmethod
    def merge(*mappings: Mapping[str, Any]) -> dict[str, Any]:
        """Deep-merge configuration documents, each over the earlier ones.

        Kebab-case reserved keys are read as snake_case in each document first. Mappings merge
        key by key; any other value replaces the earlier one. The inputs are not modified.

        Example:
            >>> base = {"evaluation": {"evaluators": {"q": {"min_length": 20, "agents": {
            ...     "a": {"sampling_ratio": 1}}}}}}
            >>> override = {"evaluation": {"evaluators": {"q": {"agents": {
            ...     "a": {"sampling-ratio": 0.5}}}}}}
            >>> EvaluationConfig.merge(base, override)["evaluation"]["evaluators"]["q"]
            {'min_length': 20, 'agents': {'a': {'sampling_ratio': 0.5}}}
        """
        merged: dict[str, Any] = {}
        for mapping in mappings:
            merged = _deep_merge(merged, _normalise_document(mapping))
        return merged

    @staticmethod
    def json_schema() -> dict[str, Any]:
        """The JSON Schema of a configuration file, for editors (``langchain-evals config
        schema``). It accepts what the runtime accepts, except that it does not know which
        property names are typos of reserved keys (``agent`` for ``agents``), nor that a key
        may not be given in both spellings: the runtime refuses those at startup."""
        schema = ConfigDocument.model_json_schema()
        return {"$schema": _JSON_SCHEMA_DIALECT, **schema}

    def __repr__(self) -> str:
        return f"EvaluationConfig(evaluators={list(self._entries)!r})"

    @property
    def document(self) -> ConfigDocument:
        """The checked document; ``kebab-case`` reserved keys read as snake_case."""
        return self._document

    @property
    def _entries(self) -> Mapping[str, EvaluatorEntry]:
        return self._document.evaluation.evaluators

    @property
    def evaluator_ids(self) -> tuple[str, ...]:
        """The ids of the configured evaluators, enabled or not, in configuration order."""
        return tuple(self._entries)

    def check_registered(self, evaluator_ids: Collection[str]) -> None:
        """Raise ``ConfigurationError`` for a configured evaluator id that is not registered."""
        for evaluator_id in self._entries:
            if evaluator_id not in evaluator_ids:
                registered = ", ".join(sorted(evaluator_ids)) or "none"
                raise ConfigurationError(
                    _entry_path(evaluator_id),
                    f"no evaluator with this id is registered (registered: {registered})",
                )

    def is_enabled(self, evaluator_id: str) -> bool:
        """Whether the evaluator is configured and its entry is enabled."""
        entry = self._entries.get(evaluator_id)
        return entry is not None and self._enabled(entry)

    def _enabled(self, entry: EvaluatorEntry) -> bool:
        return bool(entry.setting("enabled", self._document.evaluation.defaults.evaluator.enabled))

    def control_id(self, evaluator_id: str) -> str | None:
        """The control the evaluator implements, recorded on its evaluations."""
        entry = self._entries.get(evaluator_id)
        return entry.setting("control_id", None) if entry is not None else None

    def binding(self, evaluator_id: str, agent_id: str, roles: Sequence[str]) -> Binding | None:
        """The evaluator's binding to the agent, or ``None`` when the agent is not evaluated."""
        entry = self._entries.get(evaluator_id)
        if entry is None or not self._enabled(entry):
            return None
        chosen = entry.choose(agent_id, _role_tuple(roles))
        if chosen is None:
            return None
        where, settings = chosen
        if not settings.enabled:
            return None
        defaults = self._document.evaluation.defaults.agent
        return Binding(
            evaluator_id=evaluator_id,
            key_path=f"{_entry_path(evaluator_id)}.{where}",
            sampling_ratio=float(settings.setting("sampling_ratio", defaults.sampling_ratio)),
            trigger_on_failure=settings.setting("trigger_on_failure", defaults.trigger_on_failure),
            trigger_on_interrupt=settings.setting(
                "trigger_on_interrupt", defaults.trigger_on_interrupt
            ),
            control_id=entry.setting("control_id", None),
            config=EvaluatorConfig({**entry.as_written(), **settings.as_written()}),
        )

    def bindings_for(self, agent_id: str, roles: Sequence[str]) -> list[Binding]:
        """Every enabled binding of the agent, in configuration order (cached per agent)."""
        key = (agent_id, _role_tuple(roles))
        cached = self._bindings_cache.get(key)
        if cached is None:
            cached = tuple(
                binding
                for evaluator_id in self._entries
                if (binding := self.binding(evaluator_id, *key)) is not None
            )
            self._bindings_cache[key] = cached
        return list(cached)

    def missing_pass_threshold(self, evaluator_id: str) -> str | None:
        """The key path of an enabled entry or binding the evaluator can run under without a
        ``pass_threshold``, or ``None`` when every one of them sets it (or the evaluator
        entry does, which every binding and manual evaluation inherits)."""
        entry = self._entries.get(evaluator_id)
        key_path = _entry_path(evaluator_id)
        if entry is None:
            return f"{key_path} (not configured)"
        if "pass_threshold" in entry.model_fields_set:
            return None
        if not entry.agents and not entry.agent_roles:
            return key_path
        for group, bindings in (("agents", entry.agents), ("agent_roles", entry.agent_roles)):
            for name, binding in bindings.items():
                if binding.enabled and "pass_threshold" not in binding.model_fields_set:
                    return f"{key_path}.{group}.{name}"
        return None

    def config_for(self, evaluator_id: str, agent_id: str, roles: Sequence[str]) -> EvaluatorConfig:
        """``ctx.config`` of the evaluator for the agent.

        The chosen enabled binding over the evaluator entry, key by key; for an agent without an
        enabled binding, the evaluator entry; for an unconfigured evaluator, empty. ``agents``
        and ``agent_roles`` are left out, and so are the defaults.
        """
        binding = self.binding(evaluator_id, agent_id, roles)
        if binding is not None:
            return binding.config
        entry = self._entries.get(evaluator_id)
        return EvaluatorConfig(entry.as_written() if entry is not None else None)


def _entry_path(evaluator_id: str) -> str:
    return f"evaluation.evaluators.{evaluator_id}"


# --- reading and merging documents ---------------------------------------------------------


def _read_file(path: Path) -> Mapping[str, Any]:
    suffix = path.suffix.lower()
    if suffix not in (".yaml", ".yml", ".toml"):
        raise ConfigurationError(
            str(path), f"unsupported file type {suffix or '(none)'!r}; use .yaml, .yml or .toml"
        )
    text = path.read_text(encoding="utf-8")
    if suffix == ".toml":
        # Imported by name: tomli exists only where tomllib does not (Python 3.10). TOML
        # itself refuses a key given twice.
        toml = importlib.import_module("tomllib" if sys.version_info >= (3, 11) else "tomli")
        try:
            document = toml.loads(text)
        except toml.TOMLDecodeError as exc:
            raise ConfigurationError(str(path), f"cannot be parsed: {exc}") from exc
    else:
        try:
            document = read_yaml(text)
        except DocumentError as error:
            where = f"{path}, line {error.line}" if error.line else str(path)
            raise ConfigurationError(where, str(error)) from None
    if document is None:
        return {}
    if not isinstance(document, Mapping):
        raise ConfigurationError(
            str(path), f"expected a mapping at the top level, got {type(document).__name__}"
        )
    return document


def _deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        current = merged.get(key)
        if isinstance(current, Mapping) and isinstance(value, Mapping):
            merged[key] = _deep_merge(current, value)
        else:
            merged[key] = value
    return merged


def _normalise_document(document: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the document whose reserved keys are all snake_case; nothing else changes."""
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


def _role_tuple(roles: Sequence[str]) -> tuple[str, ...]:
    if isinstance(roles, str):
        raise TypeError(f"roles must be a sequence of role names, not the string {roles!r}")
    return tuple(roles)
