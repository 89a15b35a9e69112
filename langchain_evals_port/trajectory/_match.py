"""``TrajectoryMatch``: an agent's tool calls against a reference trajectory."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from functools import partial
from operator import attrgetter
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from langchain_core.runnables import RunnableConfig
from pydantic import PrivateAttr, SkipValidation

from langchain_evals_port.core import EvalRequest, Evaluator, OutputsKind, Score

from ._args import ArgsRules, ToolArgsMatchMode, ToolArgsOverride
from ._calls import Call, Trajectory, read_trajectory
from ._explain import MessageCount, Problem, RoleMismatch, Unpaired, explain
from ._pairing import Matching, maximum_matching

TrajectoryMatchMode = Literal["strict", "unordered", "subset", "superset", "in_order"]
"""How the agent's trajectory must relate to the reference (see ``TrajectoryMatch``)."""

_HEADERS: dict[str, str] = {
    "strict": "The agent's trajectory does not match the reference message by message:",
    "unordered": "The agent's tool calls are not the reference's (in any order):",
    "subset": "The agent made tool calls that are not in the reference:",
    "superset": "The agent did not make every reference tool call:",
    "in_order": "The reference tool calls do not appear in order in the agent's trajectory:",
}


class TrajectoryMatch(Evaluator):
    """Scores ``True`` when the agent's tool calls (``outputs``) match the reference
    trajectory (``reference_outputs``) under ``mode``.

    Modes, as in OpenEvals (message content is never compared):

    * ``strict``: the same number of messages, the same role at each index, and the same
      tool calls in each message (in any order within the message).
    * ``unordered``: the same tool calls, in any order and any messages.
    * ``subset``: every call the agent made is in the reference (it may make fewer).
    * ``superset``: every reference call was made (the agent may make more).
    * ``in_order``: the reference calls appear in the agent's trajectory in order, other
      calls allowed in between. The calls of one reference message are parallel: they may
      come in any order, in one or several agent messages, but after every call matched to
      the previous reference message and before any matched to the next.

    Calls pair when their tool names are equal and their arguments match under
    ``tool_args_match_mode`` (or the tool's override); values compare under the canonical
    equality rule (``1`` equals ``1.0``, ``True`` is not ``1``). Pairing is a maximum
    matching, so a pairing is found whenever one exists — unlike OpenEvals' first-fit
    pairing with ``subset``/``superset`` arguments or custom matchers.

    A failing result's comment names each call without a partner, the closest call of the
    same tool on the other side and the arguments that differ; ``metadata["problems"]``
    holds the same as data. ``metadata`` always has ``precision`` (the share of the agent's
    calls paired with a reference call) and ``recall`` (the share of reference calls paired),
    counted over all calls regardless of order (1.0 when a side has no calls). With
    ``explain=False`` a result has neither comment nor metadata, as in OpenEvals (the
    ``compat`` factories' default).

    Args:
        mode: ``"strict"``, ``"unordered"``, ``"subset"``, ``"superset"`` or ``"in_order"``.
        tool_args_match_mode: ``"exact"``, ``"ignore"``, ``"subset"`` (the agent's arguments
            are among the reference's) or ``"superset"`` (the agent passed at least the
            reference's arguments).
        tool_args_match_overrides: Per tool name: a mode, a list of dotted argument paths
            that must exist on both sides and be equal, or a callable
            ``matcher(actual_args, expected_args) -> bool``.
        feedback_key: Defaults to ``trajectory_<mode>_match``.
        explain: Give the comment and metadata above (the default); ``False`` gives the
            bare verdict.

    Example:
        >>> from langchain_core.messages import AIMessage
        >>> def call(**args):
        ...     return AIMessage("", tool_calls=[{"name": "search", "args": args, "id": "1"}])
        >>> ev = TrajectoryMatch(mode="superset")
        >>> ev(outputs=[call(q="Paris")], reference_outputs=[call(q="Paris")])["score"]
        True
        >>> result = ev.invoke(
        ...     {"outputs": [call(q="paris")], "reference_outputs": [call(q="Paris")]}
        ... )
        >>> print(result.comment.splitlines()[0])
        The agent did not make every reference tool call:
        >>> result.metadata["problems"][0]["closest"]["differences"]
        [{'argument': 'q', 'expected': 'Paris', 'got': 'paris'}]
        >>> result.metadata["recall"]
        0.0
    """

    outputs_kind: ClassVar[OutputsKind] = "messages"
    mode: TrajectoryMatchMode = "strict"
    tool_args_match_mode: ToolArgsMatchMode = "exact"
    tool_args_match_overrides: Annotated[dict[str, ToolArgsOverride] | None, SkipValidation] = None
    feedback_key: str = ""  # set from the mode after validation
    scores_in_loop: ClassVar[bool] = True  # milliseconds of CPU at most
    explain: bool = True

    _rules: ArgsRules = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        """Derive the feedback key from the mode and check the argument rules once."""
        if "feedback_key" not in self.model_fields_set:
            self.feedback_key = f"trajectory_{self.mode}_match"
        self._rules = ArgsRules(self.tool_args_match_mode, self.tool_args_match_overrides)

    def _score(self, request: EvalRequest, config: RunnableConfig) -> Score:
        outputs, reference = request.require(
            "outputs", "reference_outputs", evaluator=self.get_name()
        )
        agent = read_trajectory(outputs, "outputs")
        expected = read_trajectory(reference, "reference_outputs")
        problems, overall = _CHECKS[self.mode](agent, expected, self._rules)
        if not self.explain:
            return Score(not problems)
        if overall is None:
            overall = pair_calls(agent.calls, expected.calls, self._rules)
        metadata: dict[str, Any] = {
            "precision": _share(len(overall), len(agent.calls)),
            "recall": _share(len(overall), len(expected.calls)),
            "agent_tool_calls": len(agent.calls),
            "reference_tool_calls": len(expected.calls),
        }
        if not problems:
            return Score(True, None, metadata)
        comment, data = explain(
            _HEADERS[self.mode],
            problems,
            self._rules,
            {"agent": agent.calls, "reference": expected.calls},
        )
        return Score(False, comment, {**metadata, "problems": data})


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 1.0


def pair_calls(
    agent: Sequence[Call], reference: Sequence[Call], rules: ArgsRules
) -> dict[int, int]:
    """A maximum pairing of agent calls with reference calls: agent index → reference index.

    Only calls of the same tool can pair, so each tool is paired on its own: by bucketing
    keys when its rule is an equivalence, by augmenting paths otherwise.
    """
    by_name = _grouped(reference, _NAME)
    pairs: dict[int, int] = {}
    for name, calls in _grouped(agent, _NAME).items():
        candidates = by_name.get(name)
        if not candidates:
            continue
        rule = rules.for_tool(name)
        if rule.is_equivalence:
            buckets: dict[Hashable, list[Call]] = defaultdict(list)
            for candidate in reversed(candidates):  # popped from the end: first come, first paired
                key = rule.key(candidate)
                if key is not None:
                    buckets[key].append(candidate)
            for call in calls:
                bucket = buckets.get(rule.key(call))
                if bucket:
                    pairs[call.index] = bucket.pop().index
        else:
            neighbours = rule.neighbours(calls, candidates)
            mates = maximum_matching(len(calls), len(candidates), neighbours)
            for call, mate in zip(calls, mates, strict=True):
                if mate is not None:
                    pairs[call.index] = candidates[mate].index
    return pairs


_K = TypeVar("_K", str, int)
_NAME = attrgetter("name")
_MESSAGE = attrgetter("message")


def _grouped(calls: Iterable[Call], key: Callable[[Call], _K]) -> dict[_K, list[Call]]:
    """The calls grouped by ``key``, groups and calls in their original order."""
    groups: dict[_K, list[Call]] = defaultdict(list)
    for call in calls:
        groups[key(call)].append(call)
    return groups


def _unpaired(
    agent: Sequence[Call],
    reference: Sequence[Call],
    pairs: Mapping[int, int],
    *,
    missing: bool,
    extra: bool,
    in_message: int | None = None,
) -> list[Problem]:
    """Problems for the reference calls left unpaired (``missing``) and the agent calls
    left unpaired (``extra``), each with the other side's calls of its tool as candidates
    (taken from message ``in_message`` in strict mode)."""
    problems: list[Problem] = []
    if missing and len(pairs) < len(reference):
        paired = set(pairs.values())
        agent_by_name = _grouped(agent, _NAME)
        problems += [
            Unpaired("reference", call, agent_by_name[call.name], pairs, in_message=in_message)
            for call in reference
            if call.index not in paired
        ]
    if extra and len(pairs) < len(agent):
        inverse = {ref: act for act, ref in pairs.items()}
        reference_by_name = _grouped(reference, _NAME)
        problems += [
            Unpaired("agent", call, reference_by_name[call.name], inverse, in_message=in_message)
            for call in agent
            if call.index not in pairs
        ]
    return problems


# A check returns the problems it found and, when it has one, a maximum pairing of all
# calls regardless of order (for precision and recall; otherwise it is computed apart).
_Check = Callable[[Trajectory, Trajectory, ArgsRules], tuple[list[Problem], dict[int, int] | None]]


def _strict(
    agent: Trajectory, expected: Trajectory, rules: ArgsRules
) -> tuple[list[Problem], dict[int, int] | None]:
    if len(agent.roles) != len(expected.roles):
        return [MessageCount(len(expected.roles), len(agent.roles))], None
    agent_calls, expected_calls = (
        _grouped(agent.calls, _MESSAGE),
        _grouped(expected.calls, _MESSAGE),
    )
    problems: list[Problem] = []
    pairs: dict[int, int] = {}
    for index, (got, want) in enumerate(zip(agent.roles, expected.roles, strict=True)):
        if got != want:
            problems.append(RoleMismatch(index, want, got))
            continue
        mine, theirs = agent_calls.get(index, []), expected_calls.get(index, [])
        if mine or theirs:
            paired = pair_calls(mine, theirs, rules)
            pairs.update(paired)
            problems += _unpaired(mine, theirs, paired, missing=True, extra=True, in_message=index)
    # Without problems every call is paired, so the pairs are a maximum pairing of all.
    return problems, None if problems else pairs


def _order_free(
    agent: Trajectory, expected: Trajectory, rules: ArgsRules, *, missing: bool, extra: bool
) -> tuple[list[Problem], dict[int, int] | None]:
    pairs = pair_calls(agent.calls, expected.calls, rules)
    return _unpaired(agent.calls, expected.calls, pairs, missing=missing, extra=extra), pairs


def _in_order(
    agent: Trajectory, expected: Trajectory, rules: ArgsRules
) -> tuple[list[Problem], dict[int, int] | None]:
    # Each reference message's calls (a step) are placed in the shortest run of agent
    # messages after the previous step's; a step that ends earlier never hurts the later
    # ones, so placing greedily finds a placement whenever one exists.
    messages = list(_grouped(agent.calls, _MESSAGE).values())
    position = 0  # the next agent message (in ``messages``) a step may use
    earliest = 0  # its index in the trajectory
    used: dict[int, int] = {}  # agent call → reference call, over the steps placed so far
    for step in _grouped(expected.calls, _MESSAGE).values():
        matching = Matching(len(step))
        while position < len(messages) and not matching.complete:
            for call in messages[position]:
                _add_candidate(matching, step, call, rules)
            position += 1
        used.update(
            (mate, wanted.index)
            for j, wanted in enumerate(step)
            if (mate := matching.mate_of_left(j)) is not None
        )
        if not matching.complete:
            problems: list[Problem] = [
                Unpaired(
                    "reference",
                    wanted,
                    [call for call in agent.calls if call.name == wanted.name],
                    used,
                    earliest_message=earliest or None,
                )
                for j, wanted in enumerate(step)
                if matching.mate_of_left(j) is None
            ]
            return problems, None
        earliest = messages[position - 1][0].message + 1
    # Every reference call is paired, which no pairing can beat.
    return [], used


def _add_candidate(matching: Matching, step: Sequence[Call], call: Call, rules: ArgsRules) -> None:
    """Let ``call`` stand for the calls of ``step`` it matches, then grow the matching."""
    rule = rules.for_tool(call.name)
    wanted_by = [
        j
        for j, wanted in enumerate(step)
        if wanted.name == call.name and rule.matches(call, wanted)
    ]
    for j in wanted_by:
        matching.add_edge(j, call.index)
    if wanted_by:
        for j in range(len(step)):
            if matching.mate_of_left(j) is None:
                matching.augment(j)


_CHECKS: dict[str, _Check] = {
    "strict": _strict,
    "unordered": partial(_order_free, missing=True, extra=True),
    "subset": partial(_order_free, missing=False, extra=True),
    "superset": partial(_order_free, missing=True, extra=False),
    "in_order": _in_order,
}
