"""``GraphTrajectoryMatch``: a graph trajectory's node steps compared turn by turn with
reference steps."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from langchain_core.runnables import RunnableConfig

from langchain_evals_port.core import EvalRequest, Evaluator, OutputsKind, Score

from ._graph_trajectory import graph_steps

__all__ = ["GraphTrajectoryMatch", "GraphTrajectoryMatchMode"]

GraphTrajectoryMatchMode = Literal["strict", "unordered", "subset", "superset", "in_order"]
"""How ``GraphTrajectoryMatch`` compares the steps of a turn with the reference's:

* ``strict``: the same steps in the same order;
* ``unordered``: the same steps, each as many times, in any order;
* ``subset``: the graph ran no step the reference lacks (it may skip some);
* ``superset``: the graph ran every reference step (it may run more);
* ``in_order``: the reference steps appear in the same order, other steps may come between.
"""


# An experiment keeps an evaluator's module and class name in its fingerprint, so moving this
# class would make experiments stored with it refuse to resume: it stays in ``_graph``.
class GraphTrajectoryMatch(Evaluator):
    """Compares the node steps of each turn of a graph trajectory with reference steps.

    ``outputs`` is a trajectory in any form ``GraphTrajectory.coerce`` accepts (usually
    ``extract_graph_trajectory(graph, config)``); ``reference_outputs`` too, usually a list
    of each turn's node names. Only the steps are read. Each turn is compared by ``mode`` (see
    ``GraphTrajectoryMatchMode``); the score is ``True`` when every turn matches. A different
    number of turns scores ``False`` — it is the graph's behaviour (a run that interrupted
    or did not), not a malformed input. A failing result says which turns differ and how
    in its comment, and lists them in ``metadata["mismatches"]`` (``turn`` counts from 1).

    Args:
        mode: ``"strict"`` (default), ``"unordered"``, ``"subset"``, ``"superset"`` or
            ``"in_order"``.
        feedback_key: Defaults to ``graph_trajectory_<mode>_match`` (agentevals' key for
            strict).

    Example:
        >>> steps = [["__start__", "agent", "tools"], ["__start__", "agent"]]
        >>> GraphTrajectoryMatch(mode="superset")(
        ...     outputs=steps, reference_outputs=[["agent", "tools"], ["agent"]])["score"]
        True
        >>> result = GraphTrajectoryMatch().invoke(
        ...     {"outputs": steps, "reference_outputs": [["__start__", "agent"]] * 2})
        >>> result.key, result.score
        ('graph_trajectory_strict_match', False)
        >>> result.metadata["mismatches"][0]["unexpected"]
        ['tools']
        >>> print(result.comment)  # doctest: +NORMALIZE_WHITESPACE
        turn 1: expected ['__start__', 'agent'], got ['__start__', 'agent', 'tools']:
        unexpected 'tools'
    """

    outputs_kind: ClassVar[OutputsKind] = "other"
    mode: GraphTrajectoryMatchMode = "strict"
    feedback_key: str = ""
    scores_in_loop: ClassVar[bool] = True  # a list comparison

    def model_post_init(self, context: Any, /) -> None:
        """Name the key after the mode unless one was given."""
        if "feedback_key" not in self.model_fields_set:
            self.feedback_key = f"graph_trajectory_{self.mode}_match"

    def _score(self, request: EvalRequest, config: RunnableConfig) -> Score:
        outputs, reference = request.require(
            "outputs", "reference_outputs", evaluator=self.get_name()
        )
        actual = graph_steps(outputs, name="outputs")
        expected = graph_steps(reference, name="reference_outputs")
        return _match_steps(actual, expected, self.mode)


def _match_steps(
    actual: Sequence[Sequence[str]],
    expected: Sequence[Sequence[str]],
    mode: GraphTrajectoryMatchMode,
) -> Score:
    """Compare each turn's steps by ``mode``; a failing score explains every differing turn.

    Example:
        >>> _match_steps([["a", "b"]], [["b", "a"]], "unordered").value
        True
    """
    if len(actual) != len(expected):
        return Score(
            False,
            f"the graph ran {len(actual)} turn(s) but the reference has {len(expected)}",
            {"mode": mode, "turns": len(actual), "expected_turns": len(expected)},
        )
    check = _CHECKS[mode]
    mismatches = []
    for number, (got, want) in enumerate(zip(actual, expected, strict=True), start=1):
        reason = check(list(got), list(want))
        if reason is not None:
            mismatches.append(
                {
                    "turn": number,
                    "expected": list(want),
                    "actual": list(got),
                    "missing": _minus(want, got),
                    "unexpected": _minus(got, want),
                    "reason": reason,
                }
            )
    if not mismatches:
        return Score(True)
    comment = "; ".join(
        f"turn {m['turn']}: expected {m['expected']}, got {m['actual']}: {m['reason']}"
        for m in mismatches
    )
    return Score(False, comment, {"mode": mode, "mismatches": mismatches})


def _minus(left: Sequence[str], right: Sequence[str]) -> list[str]:
    """The steps of ``left`` that ``right`` lacks, counting repeats."""
    return list((Counter(left) - Counter(right)).elements())


def _names(steps: list[str]) -> str:
    return ", ".join(repr(step) for step in steps)


def _strict(got: list[str], want: list[str]) -> str | None:
    if got == want:
        return None
    difference = _unordered(got, want)
    if difference is not None:
        return difference
    position = next(i for i, (g, w) in enumerate(zip(got, want, strict=True)) if g != w)
    return f"same steps in another order: step {position + 1} is {got[position]!r}"


def _unordered(got: list[str], want: list[str]) -> str | None:
    missing, unexpected = _minus(want, got), _minus(got, want)
    parts = []
    if missing:
        parts.append(f"missing {_names(missing)}")
    if unexpected:
        parts.append(f"unexpected {_names(unexpected)}")
    return "; ".join(parts) or None


def _subset(got: list[str], want: list[str]) -> str | None:
    unexpected = _minus(got, want)
    return f"ran steps the reference lacks: {_names(unexpected)}" if unexpected else None


def _superset(got: list[str], want: list[str]) -> str | None:
    missing = _minus(want, got)
    return f"did not run reference steps: {_names(missing)}" if missing else None


def _in_order(got: list[str], want: list[str]) -> str | None:
    remaining = iter(got)
    for position, step in enumerate(want):
        # ``in`` on an iterator consumes it up to the match: a subsequence test.
        if step not in remaining:
            return f"reference step {position + 1} ({step!r}) does not follow in order"
    return None


_CHECKS = {
    "strict": _strict,
    "unordered": _unordered,
    "subset": _subset,
    "superset": _superset,
    "in_order": _in_order,
}
