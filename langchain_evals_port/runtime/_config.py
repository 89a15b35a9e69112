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

The document is checked by pydantic models (``_config_document``: ``ConfigDocument`` down to
``EvaluatorEntry`` and ``BindingEntry``), whose errors become ``ConfigurationError`` in one
place; the same models give the JSON Schema of the file (``EvaluationConfig.json_schema()``,
printed by ``langchain-evals config schema``) for editors.

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
import importlib
import sys
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_evals_port.capture import ConfigKeyError, ConfigTypeError, EvaluatorConfig
from langchain_evals_port.core._documents import DocumentError, read_yaml

from ._config_document import (
    AgentDefaults,
    BindingEntry,
    ConfigDocument,
    ConfigurationError,
    DefaultsSection,
    EvaluationSection,
    EvaluatorDefaults,
    EvaluatorEntry,
    document_schema,
    read_document,
    snake_case_keys,
)

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
        self._document = read_document(copy.deepcopy(snake_case_keys(data or {})))
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
            merged = _deep_merge(merged, snake_case_keys(mapping))
        return merged

    @staticmethod
    def json_schema() -> dict[str, Any]:
        """The JSON Schema of a configuration file, for editors (``langchain-evals config
        schema``). It accepts what the runtime accepts, except that it does not know which
        property names are typos of reserved keys (``agent`` for ``agents``), nor that a key
        may not be given in both spellings: the runtime refuses those at startup."""
        return document_schema()

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


def _role_tuple(roles: Sequence[str]) -> tuple[str, ...]:
    if isinstance(roles, str):
        raise TypeError(f"roles must be a sequence of role names, not the string {roles!r}")
    return tuple(roles)
