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

Hand-written checks, not pydantic models: most of the document is open mappings whose keys
are properties, where a model can only say "extra input" without the closest key or where the
key belongs instead; the fixed part is five small mappings whose values share their checks with
the reserved keys of entries and bindings. Translating pydantic's errors into these messages
would take more code than checking directly.

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
import math
import sys
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from langchain_evals_port.core._documents import DocumentError, read_yaml
from langchain_evals_port.core.errors import EvalsError

__all__ = [
    "Binding",
    "ConfigKeyError",
    "ConfigTypeError",
    "ConfigurationError",
    "EvaluationConfig",
    "EvaluatorConfig",
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
_BUILT_IN_AGENT_DEFAULTS: Final[Mapping[str, Any]] = {
    "sampling_ratio": 1.0,
    "trigger_on_failure": False,
    "trigger_on_interrupt": False,
}
_BINDING_GROUPS: Final = ("agents", "agent_roles")
_FIXED_KEYS: Final[Mapping[str, tuple[str, ...]]] = {
    "": ("evaluation",),
    "evaluation": ("defaults", "evaluators"),
    "evaluation.defaults": ("agent", "evaluator"),
    "evaluation.defaults.evaluator": ("enabled",),
    "evaluation.defaults.agent": _BINDING_SETTINGS,
}
"""The keys each section of the fixed part accepts, by key path ("" is the top level)."""
_CLOSE_MATCH: Final = 0.75
"""The similarity from which a key counts as a typo of another (the core's rule for keywords)."""
_TRIGGERS: Final = ("interaction",)
_ANY_ROLE: Final = "*"


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


@dataclass(frozen=True)
class _Entry:
    """One checked evaluator entry."""

    evaluator_id: str
    enabled: bool
    control_id: str | None
    properties: Mapping[str, Any]  # the entry without agents and agent_roles
    agents: Mapping[str, Mapping[str, Any]]
    agent_roles: Mapping[str, Mapping[str, Any]]

    @property
    def key_path(self) -> str:
        return f"evaluation.evaluators.{self.evaluator_id}"

    def choose(self, agent_id: str, roles: tuple[str, ...]) -> tuple[str, Mapping[str, Any]] | None:
        """The key path and contents of the entry that binds the agent; first match wins."""
        if agent_id in self.agents:
            return f"{self.key_path}.agents.{agent_id}", self.agents[agent_id]
        for role in roles:
            if role in self.agent_roles:
                return f"{self.key_path}.agent_roles.{role}", self.agent_roles[role]
        if roles and _ANY_ROLE in self.agent_roles:
            return f"{self.key_path}.agent_roles.{_ANY_ROLE}", self.agent_roles[_ANY_ROLE]
        return None


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

    __slots__ = ("_agent_defaults", "_bindings_cache", "_entries")

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        if data is not None and not isinstance(data, Mapping):
            raise TypeError(f"the configuration must be a mapping, got {type(data).__name__}")
        document = _mapping(_normalise_document(data or {}), "")
        _only(document, "")
        evaluation = _mapping(copy.deepcopy(document.get("evaluation")), "evaluation")
        _only(evaluation, "evaluation")
        defaults = _mapping(evaluation.get("defaults"), "evaluation.defaults")
        _only(defaults, "evaluation.defaults")
        default_enabled = _parse_evaluator_defaults(defaults.get("evaluator"))
        self._agent_defaults = _parse_agent_defaults(defaults.get("agent"))
        evaluators = _mapping(evaluation.get("evaluators"), "evaluation.evaluators")
        self._entries: Mapping[str, _Entry] = {
            evaluator_id: _parse_entry(evaluator_id, entry, default_enabled)
            for evaluator_id, entry in evaluators.items()
        }
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

    def __repr__(self) -> str:
        return f"EvaluationConfig(evaluators={list(self._entries)!r})"

    @property
    def evaluator_ids(self) -> tuple[str, ...]:
        """The ids of the configured evaluators, enabled or not, in configuration order."""
        return tuple(self._entries)

    def check_registered(self, evaluator_ids: Collection[str]) -> None:
        """Raise ``ConfigurationError`` for a configured evaluator id that is not registered."""
        for entry in self._entries.values():
            if entry.evaluator_id not in evaluator_ids:
                registered = ", ".join(sorted(evaluator_ids)) or "none"
                raise ConfigurationError(
                    entry.key_path,
                    f"no evaluator with this id is registered (registered: {registered})",
                )

    def is_enabled(self, evaluator_id: str) -> bool:
        """Whether the evaluator is configured and its entry is enabled."""
        entry = self._entries.get(evaluator_id)
        return entry is not None and entry.enabled

    def control_id(self, evaluator_id: str) -> str | None:
        """The control the evaluator implements, recorded on its evaluations."""
        entry = self._entries.get(evaluator_id)
        return entry.control_id if entry is not None else None

    def binding(self, evaluator_id: str, agent_id: str, roles: Sequence[str]) -> Binding | None:
        """The evaluator's binding to the agent, or ``None`` when the agent is not evaluated."""
        entry = self._entries.get(evaluator_id)
        if entry is None or not entry.enabled:
            return None
        chosen = entry.choose(agent_id, _role_tuple(roles))
        if chosen is None:
            return None
        key_path, settings = chosen
        if not settings.get("enabled", True):
            return None
        resolved = {**self._agent_defaults, **settings}
        return Binding(
            evaluator_id=evaluator_id,
            key_path=key_path,
            sampling_ratio=float(resolved["sampling_ratio"]),
            trigger_on_failure=resolved["trigger_on_failure"],
            trigger_on_interrupt=resolved["trigger_on_interrupt"],
            control_id=entry.control_id,
            config=EvaluatorConfig({**entry.properties, **settings}),
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
        if entry is None:
            return f"evaluation.evaluators.{evaluator_id} (not configured)"
        if "pass_threshold" in entry.properties:
            return None
        if not entry.agents and not entry.agent_roles:
            return entry.key_path
        for group, bindings in (("agents", entry.agents), ("agent_roles", entry.agent_roles)):
            for name, binding in bindings.items():
                if binding.get("enabled", True) and "pass_threshold" not in binding:
                    return f"{entry.key_path}.{group}.{name}"
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
        return EvaluatorConfig(entry.properties if entry is not None else None)


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


# --- checking ------------------------------------------------------------------------------


def _child(key_path: str, key: object) -> str:
    return f"{key_path}.{key}" if key_path else str(key)


def _mapping(value: object, key_path: str) -> Mapping[str, Any]:
    """The mapping at ``key_path`` (``null`` reads as empty); its keys must be strings."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigurationError(key_path, f"expected a mapping, got {type(value).__name__}")
    for key in value:
        if not isinstance(key, str):
            raise ConfigurationError(_child(key_path, repr(key)), "keys must be strings")
    return value


def _closest(key: str, candidates: Sequence[str]) -> str | None:
    """The candidate ``key`` is a typo of, if any (case and ``-`` versus ``_`` aside)."""
    spelt = key.lower().replace("-", "_")
    close = difflib.get_close_matches(spelt, candidates, n=1, cutoff=_CLOSE_MATCH)
    return close[0] if close else None


def _only(mapping: Mapping[str, Any], key_path: str) -> None:
    """Reject a key the fixed section at ``key_path`` does not accept, naming the closest."""
    allowed = _FIXED_KEYS[key_path]
    for key in mapping:
        if key in allowed:
            continue
        closest = _closest(key, allowed)
        hint = f" (did you mean {closest!r}?)" if closest else ""
        where = key_path or "the top level"
        why = ""
        if key_path.startswith("evaluation.defaults."):
            why = "; evaluator properties go on an evaluator entry or binding"
        elif not key_path:
            why = "; give the evaluation section alone, without an application's other settings"
        raise ConfigurationError(
            _child(key_path, key),
            f"unknown key{hint}; {where} accepts only {', '.join(allowed)}{why}",
        )


def _reject_near_misses(mapping: Mapping[str, Any], key_path: str) -> None:
    """Reject a key that is not reserved but a typo of a reserved key: read as a property,
    it would silently leave the evaluator unbound or its setting unset."""
    for key in mapping:
        if key in _RESERVED:
            continue
        closest = _closest(key, _RESERVED)
        if closest is not None:
            raise ConfigurationError(
                f"{key_path}.{key}",
                f"unknown key (did you mean {closest!r}?); a key this close to a reserved key "
                "is not taken for an evaluator property, so rename it if it is one",
            )


def _reject(mapping: Mapping[str, Any], keys: Sequence[str], key_path: str, problem: str) -> None:
    for key in keys:
        if key in mapping:
            raise ConfigurationError(f"{key_path}.{key}", problem)


def _check_bool(value: object, key_path: str) -> None:
    if not isinstance(value, bool):
        raise ConfigurationError(key_path, f"expected true or false, got {value!r}")


def _check_ratio(value: object, key_path: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ConfigurationError(key_path, f"expected a number from 0.0 to 1.0, got {value!r}")


def _check_trigger(value: object, key_path: str) -> None:
    if value is not None and value not in _TRIGGERS:
        raise ConfigurationError(
            key_path, f"unknown trigger {value!r}; allowed: {', '.join(_TRIGGERS)}"
        )


def _check_threshold(value: object, key_path: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigurationError(key_path, f"expected a number, got {value!r}")


def _check_control_id(value: object, key_path: str) -> None:
    if not isinstance(value, str) or not value:
        raise ConfigurationError(key_path, f"expected a non-empty string, got {value!r}")


_VALUE_CHECKS: Final[Mapping[str, Callable[[object, str], None]]] = {
    "enabled": _check_bool,
    "trigger": _check_trigger,
    "sampling_ratio": _check_ratio,
    "trigger_on_failure": _check_bool,
    "trigger_on_interrupt": _check_bool,
    "pass_threshold": _check_threshold,
    "control_id": _check_control_id,
}


def _check_values(mapping: Mapping[str, Any], key_path: str) -> None:
    for key, check in _VALUE_CHECKS.items():
        if key in mapping:
            check(mapping[key], f"{key_path}.{key}")


def _parse_evaluator_defaults(value: object) -> bool:
    key_path = "evaluation.defaults.evaluator"
    defaults = _mapping(value, key_path)
    _only(defaults, key_path)
    _check_values(defaults, key_path)
    return bool(defaults.get("enabled", True))


def _parse_agent_defaults(value: object) -> Mapping[str, Any]:
    key_path = "evaluation.defaults.agent"
    defaults = _mapping(value, key_path)
    _only(defaults, key_path)
    _check_values(defaults, key_path)
    return {**_BUILT_IN_AGENT_DEFAULTS, **defaults}


def _parse_entry(evaluator_id: str, value: object, default_enabled: bool) -> _Entry:
    key_path = f"evaluation.evaluators.{evaluator_id}"
    entry = _mapping(value, key_path)
    _reject(
        entry,
        _BINDING_SETTINGS,
        key_path,
        "not allowed on an evaluator entry; set it on a binding under agents or agent_roles, "
        "or under evaluation.defaults.agent",
    )
    _reject_near_misses(entry, key_path)
    _check_values(entry, key_path)
    return _Entry(
        evaluator_id=evaluator_id,
        enabled=entry.get("enabled", default_enabled),
        control_id=entry.get("control_id"),
        properties={key: value for key, value in entry.items() if key not in _BINDING_GROUPS},
        agents=_parse_bindings(entry.get("agents"), f"{key_path}.agents"),
        agent_roles=_parse_bindings(entry.get("agent_roles"), f"{key_path}.agent_roles"),
    )


def _parse_bindings(value: object, key_path: str) -> Mapping[str, Mapping[str, Any]]:
    return {
        name: _parse_binding(binding, f"{key_path}.{name}")
        for name, binding in _mapping(value, key_path).items()
    }


def _parse_binding(value: object, key_path: str) -> Mapping[str, Any]:
    binding = _mapping(value, key_path)
    _reject(
        binding,
        ("control_id",),
        key_path,
        "not allowed on a binding; set it on the evaluator entry",
    )
    _reject(binding, _BINDING_GROUPS, key_path, "not allowed on a binding; bindings do not nest")
    _reject_near_misses(binding, key_path)
    _check_values(binding, key_path)
    return binding


def _role_tuple(roles: Sequence[str]) -> tuple[str, ...]:
    if isinstance(roles, str):
        raise TypeError(f"roles must be a sequence of role names, not the string {roles!r}")
    return tuple(roles)
