"""How the arguments of two calls of the same tool are compared.

Every rule answers ``matches(actual, expected)`` — the agent's call first, the reference's
second, whichever side the mode starts from — and explains a mismatch with
``differences``. Rules that are equivalences (exact, ignore, dotted paths) also give each
call a ``key``: calls pair exactly when their keys are equal, so they are paired by
bucketing in linear time instead of comparing every pair.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal, NamedTuple, TypeAlias

from langchain_evals_port.core import MISSING, get_path
from langchain_evals_port.core.errors import EvaluationFailure

from ._calls import Call, value_key

ToolArgsMatchMode = Literal["exact", "ignore", "subset", "superset"]
"""``exact``: the same arguments; ``ignore``: any arguments; ``subset``: every argument the
agent passed equals the reference's; ``superset``: every reference argument was passed, equal
(the agent may pass more)."""

ToolArgsMatcher: TypeAlias = Callable[[dict[str, Any], dict[str, Any]], bool]
"""A custom rule, called as ``matcher(actual_args, expected_args)``."""

ToolArgsOverride: TypeAlias = ToolArgsMatchMode | Sequence[str] | ToolArgsMatcher
"""A tool's own rule: a mode, dotted paths that must exist and be equal on both sides, or a
custom matcher."""

_MODES: tuple[str, ...] = ToolArgsMatchMode.__args__  # type: ignore[attr-defined]


class Difference(NamedTuple):
    """One argument (or dotted path) that differs; ``MISSING`` on the side that lacks it."""

    argument: str
    expected: Any
    got: Any


class ArgsRule(ABC):
    """How two calls of one tool are compared."""

    is_equivalence: bool = False
    """True when ``key`` decides matching: calls match exactly when their keys are equal."""

    def key(self, call: Call) -> Hashable | None:
        """The call's equivalence key, or None when it matches no call (used only when
        ``is_equivalence``)."""
        return ()

    @abstractmethod
    def matches(self, actual: Call, expected: Call) -> bool:
        """Whether the agent's call ``actual`` can stand for the reference's ``expected``."""

    def neighbours(
        self, actual: Sequence[Call], expected: Sequence[Call]
    ) -> Callable[[int], Iterable[int]]:
        """For ``actual[i]``, the indices of the calls in ``expected`` it matches (used only
        when not ``is_equivalence``); by default found lazily, pair by pair, because pairing
        asks for the first free match first and often needs no more."""

        def matched(i: int) -> Iterator[int]:
            return (j for j, call in enumerate(expected) if self.matches(actual[i], call))

        return matched

    @abstractmethod
    def differences(self, actual: Call, expected: Call) -> list[Difference]:
        """The arguments that keep the calls apart under this rule."""

    @abstractmethod
    def describe(self) -> str:
        """The rule in a few words, for explanations."""


class _ModeRule(ArgsRule):
    """One of the four built-in modes, over whole top-level arguments."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.is_equivalence = mode in ("exact", "ignore")

    def key(self, call: Call) -> Hashable | None:
        return frozenset(call.arg_keys.items()) if self.mode == "exact" else ()

    def matches(self, actual: Call, expected: Call) -> bool:
        if self.mode == "exact":
            return actual.arg_keys == expected.arg_keys
        if self.mode == "subset":
            return actual.arg_keys.items() <= expected.arg_keys.items()
        if self.mode == "superset":
            return actual.arg_keys.items() >= expected.arg_keys.items()
        return True

    def neighbours(
        self, actual: Sequence[Call], expected: Sequence[Call]
    ) -> Callable[[int], Iterable[int]]:
        if self.mode not in ("subset", "superset"):
            return super().neighbours(actual, expected)
        if self.mode == "subset":
            return _containing(actual, expected).__getitem__
        # superset: the calls containing each expected call's arguments, turned around.
        rows: list[list[int]] = [[] for _ in actual]
        for j, containers in enumerate(_containing(expected, actual)):
            for i in containers:
                rows[i].append(j)
        return rows.__getitem__

    def differences(self, actual: Call, expected: Call) -> list[Difference]:
        if self.mode == "ignore":
            return []
        if self.mode == "subset":
            names: Iterable[str] = actual.args
        elif self.mode == "superset":
            names = expected.args
        else:
            names = dict.fromkeys([*expected.args, *actual.args])
        return _differing(actual, expected, names)

    def describe(self) -> str:
        return f"{self.mode} arguments"


class _PathsRule(ArgsRule):
    """Only the values at the given dotted paths count; each must exist on both sides."""

    is_equivalence = True

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = tuple(paths)

    def key(self, call: Call) -> Hashable | None:
        values = [get_path(call.args, path) for path in self.paths]
        if any(value is MISSING for value in values):
            return None
        return tuple(value_key(value) for value in values)

    def matches(self, actual: Call, expected: Call) -> bool:
        key = self.key(actual)
        return key is not None and key == self.key(expected)

    def differences(self, actual: Call, expected: Call) -> list[Difference]:
        found = []
        for path in self.paths:
            got, want = get_path(actual.args, path), get_path(expected.args, path)
            if got is MISSING or want is MISSING or value_key(got) != value_key(want):
                found.append(Difference(path, want, got))
        return found

    def describe(self) -> str:
        return f"arguments at {', '.join(self.paths)}"


class _CustomRule(ArgsRule):
    """A caller's matcher; mismatches are explained by the arguments that differ exactly."""

    def __init__(self, tool: str, matcher: ToolArgsMatcher) -> None:
        self.tool = tool
        self.matcher = matcher

    def matches(self, actual: Call, expected: Call) -> bool:
        try:
            return bool(self.matcher(actual.args, expected.args))
        except Exception as error:
            raise EvaluationFailure(
                f"the argument matcher for tool {self.tool!r} raised {type(error).__name__}: "
                f"{error} (comparing {actual.args!r} with {expected.args!r})"
            ) from error

    def differences(self, actual: Call, expected: Call) -> list[Difference]:
        return _differing(actual, expected, dict.fromkeys([*expected.args, *actual.args]))

    def describe(self) -> str:
        return f"the custom matcher {getattr(self.matcher, '__name__', repr(self.matcher))}"


def _containing(parts: Sequence[Call], wholes: Sequence[Call]) -> list[list[int]]:
    """For each call in ``parts``, the indices of the calls in ``wholes`` whose arguments
    include all of its arguments (equal), found through an index of argument values instead
    of comparing every pair."""
    postings: dict[tuple[str, Hashable], list[int]] = defaultdict(list)
    for j, whole in enumerate(wholes):
        for item in whole.arg_keys.items():
            postings[item].append(j)
    everything = list(range(len(wholes)))
    rows = []
    for part in parts:
        items = part.arg_keys.items()
        if not items:
            rows.append(everything)
            continue
        rarest = min((postings.get(item, []) for item in items), key=len)
        rows.append([j for j in rarest if items <= wholes[j].arg_keys.items()])
    return rows


def _differing(actual: Call, expected: Call, names: Iterable[str]) -> list[Difference]:
    got_keys, want_keys = actual.arg_keys, expected.arg_keys
    return [
        Difference(name, expected.args.get(name, MISSING), actual.args.get(name, MISSING))
        for name in names
        if got_keys.get(name, MISSING) != want_keys.get(name, MISSING)
    ]


class ArgsRules:
    """The rule for each tool: the default mode, or the tool's override.

    Raises ``ValueError`` for an unknown mode or an override that is not a mode, a non-empty
    list of dotted paths, or a callable.
    """

    def __init__(
        self, default: str, overrides: Mapping[str, ToolArgsOverride] | None = None
    ) -> None:
        if default not in _MODES:
            raise ValueError(f"tool_args_match_mode must be one of {_MODES}, got {default!r}")
        self._default: ArgsRule = _ModeRule(default)
        self._overrides = {
            tool: _override_rule(tool, override) for tool, override in (overrides or {}).items()
        }

    def for_tool(self, name: str) -> ArgsRule:
        """The rule that compares calls of tool ``name``."""
        return self._overrides.get(name, self._default)


def _override_rule(tool: str, override: Any) -> ArgsRule:
    if isinstance(override, str):
        if override not in _MODES:
            raise ValueError(
                f"tool_args_match_overrides[{tool!r}]: unknown mode {override!r}; expected "
                f"one of {_MODES}, a list of dotted argument paths, or a callable"
            )
        return _ModeRule(override)
    if callable(override):
        return _CustomRule(tool, override)
    if isinstance(override, (list, tuple)):
        if not override or not all(isinstance(path, str) and path for path in override):
            # OpenEvals silently falls back to the default mode for an empty list.
            raise ValueError(
                f"tool_args_match_overrides[{tool!r}]: a list of paths must name at least "
                f"one dotted argument path (non-empty strings), got {override!r}; use "
                "'ignore' to compare no arguments"
            )
        return _PathsRule(override)
    raise ValueError(
        f"tool_args_match_overrides[{tool!r}]: expected a mode, a list of dotted argument "
        f"paths, or a callable(actual_args, expected_args) -> bool, got {override!r}"
    )
