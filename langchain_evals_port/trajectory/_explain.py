"""Why a trajectory does not match: problems, their closest candidates, comment and metadata.

A failing result names each reference call that found no partner (or each agent call that
the reference does not have), the closest call on the other side — the call of the same
tool with the fewest differing arguments — and the arguments that differ, expected against
got. The comment says it in words, the metadata as data.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain_evals_port.core import MISSING, canonical_value
from langchain_evals_port.core.errors import EvaluatorInputError

from ._args import ArgsRules, Difference
from ._calls import Call

_SHOWN_PROBLEMS = 5
_SHOWN_CHARS = 60


@dataclass(frozen=True)
class MessageCount:
    """The trajectories have different numbers of messages (strict mode)."""

    expected: int
    got: int


@dataclass(frozen=True)
class RoleMismatch:
    """A message has another role than the reference's message at the same index."""

    message: int
    expected: str
    got: str


@dataclass(frozen=True)
class Unpaired:
    """A call that found no partner on the other side.

    Args:
        side: ``"reference"`` for a reference call the agent did not make, ``"agent"`` for
            an agent call the reference does not have.
        call: The call.
        candidates: The other side's calls of the same tool that the mode allowed as
            partners (or, in order, all of them; see ``earliest_message``).
        partners: For each candidate that is paired, the index of its partner.
        earliest_message: In order only: candidates before this agent message came too
            early to count.
        in_message: Strict only: the message index the candidates were taken from.
    """

    side: Literal["reference", "agent"]
    call: Call
    candidates: Sequence[Call]
    partners: Mapping[int, int]
    earliest_message: int | None = None
    in_message: int | None = None


Problem = MessageCount | RoleMismatch | Unpaired


@dataclass(frozen=True)
class _Closest:
    call: Call
    differences: list[Difference]
    paired_with: int | None
    too_early: bool


def explain(
    header: str,
    problems: Sequence[Problem],
    rules: ArgsRules,
    calls: Mapping[str, Sequence[Call]],
) -> tuple[str, list[dict[str, Any]]]:
    """The comment and the metadata entries for ``problems``.

    ``calls`` holds each side's calls (``"agent"``, ``"reference"``), to name the partner of
    a candidate that is paired elsewhere.
    """
    lines = [header]
    data = []
    for number, problem in enumerate(problems):
        text, entry = _describe(problem, rules, calls)
        data.append(entry)
        if number < _SHOWN_PROBLEMS:
            lines.append(f"- {text}")
    if len(problems) > _SHOWN_PROBLEMS:
        hidden = len(problems) - _SHOWN_PROBLEMS
        lines.append(f"- ... and {hidden} more (see metadata['problems'])")
    return "\n".join(lines), data


def _describe(
    problem: Problem, rules: ArgsRules, calls: Mapping[str, Sequence[Call]]
) -> tuple[str, dict[str, Any]]:
    if isinstance(problem, MessageCount):
        text = (
            f"the agent's trajectory has {problem.got} messages, the reference {problem.expected}"
        )
        return text, {"kind": "message_count", "expected": problem.expected, "got": problem.got}
    if isinstance(problem, RoleMismatch):
        text = (
            f"messages[{problem.message}] is a {problem.got} message where the reference has "
            f"a {problem.expected} message"
        )
        entry = {"kind": "role", "message": problem.message}
        return text, {**entry, "expected": problem.expected, "got": problem.got}
    return _describe_unpaired(problem, rules, calls)


def _describe_unpaired(
    problem: Unpaired, rules: ArgsRules, calls: Mapping[str, Sequence[Call]]
) -> tuple[str, dict[str, Any]]:
    call = problem.call
    other = "agent" if problem.side == "reference" else "reference"
    if problem.side == "reference":
        text = f"reference call {signature(call)} (messages[{call.message}]) has no partner"
    else:
        text = f"agent call {signature(call)} (messages[{call.message}]) is not in the reference"
    entry: dict[str, Any] = {
        "kind": "missing_call" if problem.side == "reference" else "extra_call",
        "call": _call_data(call),
    }
    if problem.earliest_message is not None:
        entry["earliest_message"] = problem.earliest_message
    closest = _closest(problem, rules)
    if closest is None:
        entry["closest"] = None
        return f"{text}; {_no_candidate(problem, other)}", entry
    candidate = closest.call
    where = f"{other} call {signature(candidate)} (messages[{candidate.message}])"
    if closest.differences:
        differing = "; ".join(_difference_text(d) for d in closest.differences)
        text = f"{text}; closest {where} differs in {differing}"
    elif closest.too_early:
        text = (
            f"{text}; {where} matches it but comes before messages[{problem.earliest_message}], "
            "where the previous reference step was already matched"
        )
    elif closest.paired_with is not None:
        partner = calls[problem.side][closest.paired_with]
        text = (
            f"{text}; {where} matches it but is paired with {problem.side} call "
            f"{signature(partner)} (messages[{partner.message}])"
        )
    else:
        rule = rules.for_tool(call.name).describe()
        text = f"{text}; closest {where} is rejected by {rule}"
    entry["closest"] = {
        **_call_data(candidate),
        "differences": [_difference_data(d) for d in closest.differences],
        "paired_with": closest.paired_with,
    }
    if problem.earliest_message is not None:
        entry["closest"]["too_early"] = closest.too_early
    return text, entry


def _closest(problem: Unpaired, rules: ArgsRules) -> _Closest | None:
    rule = rules.for_tool(problem.call.name)
    best: tuple[tuple[bool, int, bool, int], _Closest] | None = None
    for candidate in problem.candidates:
        actual, expected = (
            (candidate, problem.call) if problem.side == "reference" else (problem.call, candidate)
        )
        differences = rule.differences(actual, expected)
        paired_with = problem.partners.get(candidate.index)
        too_early = (
            problem.earliest_message is not None and candidate.message < problem.earliest_message
        )
        rank = (too_early, len(differences), paired_with is not None, candidate.index)
        if best is None or rank < best[0]:
            best = (rank, _Closest(candidate, differences, paired_with, too_early))
    return None if best is None else best[1]


def _no_candidate(problem: Unpaired, other: str) -> str:
    name = problem.call.name
    if problem.in_message is not None:
        return f"the {other}'s messages[{problem.in_message}] has no {name} call"
    if problem.earliest_message is not None:
        return f"the agent made no {name} call at or after messages[{problem.earliest_message}]"
    return (
        f"the agent made no {name} call"
        if other == "agent"
        else f"the reference has no {name} call"
    )


def signature(call: Call) -> str:
    """A call as ``name(arg=value, ...)``, each value shortened for reading.

    Example:
        >>> signature(Call(0, 1, "weather", {"city": "Paris", "days": 3}))
        'weather(city="Paris", days=3)'
    """
    arguments = ", ".join(f"{name}={_short(value)}" for name, value in call.args.items())
    return f"{call.name}({arguments})"


def _short(value: Any) -> str:
    text = json.dumps(plain(value), ensure_ascii=False)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 3] + "..."


def _difference_text(difference: Difference) -> str:
    expected = "missing" if difference.expected is MISSING else _short(difference.expected)
    got = "missing" if difference.got is MISSING else _short(difference.got)
    return f"{difference.argument}: expected {expected}, got {got}"


def _difference_data(difference: Difference) -> dict[str, Any]:
    # A side that lacks the argument is left out, so ``None`` always means JSON null.
    data: dict[str, Any] = {"argument": difference.argument}
    if difference.expected is not MISSING:
        data["expected"] = plain(difference.expected)
    if difference.got is not MISSING:
        data["got"] = plain(difference.got)
    return data


def _call_data(call: Call) -> dict[str, Any]:
    return {
        "index": call.index,
        "message": call.message,
        "name": call.name,
        "args": plain(call.args),
    }


def plain(value: Any) -> Any:
    """``value`` in plain JSON types for metadata, or its ``repr`` when it has no JSON form
    (a custom matcher may accept arguments the equality rule cannot read)."""
    try:
        return canonical_value(value)
    except EvaluatorInputError:
        return repr(value)
