"""``EvaluatorConfig``: an evaluator's configuration as it reads it, the ``config`` variable of
every request: a binding's properties online, an experiment's ``evaluator_config`` offline."""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from typing import Any, Final

from langchain_evals_port.core.errors import EvalsError

__all__ = ["ConfigKeyError", "ConfigTypeError", "EvaluatorConfig"]


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
