"""``GraphTrajectoryLLMJudge``: a chat model grades the path a LangGraph agent took.

The judge sees the thread turn by turn — what started the turn, the nodes that ran, and
what came back (or the question the graph paused on) — through ``render_graph_thread``.
The default prompt, ``GRAPH_TRAJECTORY_PROMPT``, is this package's own text, not
agentevals'; custom prompts get the same variables agentevals gives them (``thread``,
``reference_outputs`` as a ready-made block, and the raw ``inputs`` and ``outputs``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import Field, SkipValidation

from langchain_evals_port.core import EvalRequest, OutputsKind, canonical_value
from langchain_evals_port.core.errors import CanonicalizationError, EvaluatorInputError
from langchain_evals_port.judge import LLMJudge, PromptSource
from langchain_evals_port.trajectory._graph_trajectory import (
    RESUME_KEY,
    START_STEP,
    GraphTrajectory,
    GraphTurn,
)

__all__ = ["GRAPH_TRAJECTORY_PROMPT", "GraphTrajectoryLLMJudge", "render_graph_thread"]

GRAPH_TRAJECTORY_PROMPT = """\
Grade the path an AI agent took through a conversation. The agent is a graph of nodes; \
below, each turn shows what the agent was given, the nodes it ran in order, and what it \
returned.

How to read the steps: "__start__" is the agent receiving the turn's input; a name such as \
"research:search" is the node "search" inside the subgraph "research"; "__interrupt__" means \
the agent paused to wait for a person, and the next turn resumes it with that person's answer.

Give a passing grade when:
- each step follows sensibly from the turn's input and the steps before it;
- the agent gets to its result without detours or work that is repeated to no effect;
- it pauses for a person only when the turn needs a person's decision or information;
- when a reference is given, it does the same work as the reference (the node names and \
their order may differ where that changes nothing).

<thread>
{thread}
</thread>
{reference_outputs}"""
"""The default prompt: ``{thread}`` is the rendered trajectory, ``{reference_outputs}`` the
rendered reference block (empty without a reference)."""

_REFERENCE_BLOCK = """
A reference trajectory for the same conversation, to compare with:
<reference_thread>
{thread}
</reference_thread>
"""


def render_graph_thread(trajectory: GraphTrajectory) -> str:
    """The trajectory as the judge reads it: one ``<turn>`` per turn with its input (or the
    answer it resumed with), its steps, and its result (or the interrupt it paused on).

    Example:
        >>> turn = GraphTurn(input={"__start__": "hi"}, steps=("__start__", "greet"),
        ...                  result={"reply": "hello"})
        >>> print(render_graph_thread(GraphTrajectory(turns=(turn,))))
        <turn number="1">
        <input>
        hi
        </input>
        <steps>__start__ -> greet</steps>
        <result>
        {
          "reply": "hello"
        }
        </result>
        </turn>
    """
    return "\n".join(_render_turn(number, turn) for number, turn in enumerate(trajectory.turns, 1))


def _render_turn(number: int, turn: GraphTurn) -> str:
    parts = [f'<turn number="{number}">']
    given = turn.input
    if isinstance(given, Mapping) and len(given) == 1 and RESUME_KEY in given:
        parts.append(f"<resumed_with>\n{_text(given[RESUME_KEY])}\n</resumed_with>")
    elif isinstance(given, Mapping) and len(given) == 1 and START_STEP in given:
        parts.append(f"<input>\n{_text(given[START_STEP])}\n</input>")
    elif given is not None:
        parts.append(f"<input>\n{_text(given)}\n</input>")
    parts.append(f"<steps>{' -> '.join(turn.steps) if turn.steps else '(none)'}</steps>")
    if turn.interrupted:
        question = "\n".join(_text(payload) for payload in turn.interrupts)
        parts.append(f"<paused_for_person>\n{question or '(no details)'}\n</paused_for_person>")
    elif turn.result not in (None, {}):
        parts.append(f"<result>\n{_text(turn.result)}\n</result>")
    parts.append("</turn>")
    return "\n".join(parts)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        # LangChain messages anywhere in the value render as OpenAI-style dicts.
        return json.dumps(canonical_value(value), ensure_ascii=False, indent=2)
    except CanonicalizationError:
        # State may hold objects with no JSON form; the judge still deserves to see them.
        return repr(value)


class GraphTrajectoryLLMJudge(LLMJudge):
    """Grades a LangGraph agent's trajectory, turn by turn, with a chat model.

    ``outputs`` is a trajectory in any form ``GraphTrajectory.coerce`` accepts (usually
    ``extract_graph_trajectory(graph, config)``); ``reference_outputs`` an optional
    reference trajectory. ``inputs`` may be None (the trajectory's own turn inputs are
    shown), a list with one input per turn, or a dict with such a list under ``"inputs"``;
    a list of another length raises ``EvaluatorInputError``.

    Every ``LLMJudge`` option applies (``continuous``, ``choices``, ``few_shot_examples``,
    ...). The prompt's variables: ``thread`` (see ``render_graph_thread``),
    ``reference_outputs`` (a block with the rendered reference, or empty), ``inputs`` and
    ``outputs`` as given.

    Args:
        prompt: Defaults to ``GRAPH_TRAJECTORY_PROMPT``.
        feedback_key: Defaults to ``graph_trajectory_accuracy``, as in agentevals.

    Example:
        >>> from langchain_evals_port.testing import ScriptedChatModel
        >>> judge = GraphTrajectoryLLMJudge(
        ...     model=ScriptedChatModel([{"reasoning": "Direct.", "score": True}]))
        >>> judge(outputs=[["__start__", "agent"]])["score"]
        True
    """

    outputs_kind: ClassVar[OutputsKind] = "other"
    prompt: Annotated[PromptSource, SkipValidation] = Field(
        default=GRAPH_TRAJECTORY_PROMPT, exclude=True
    )
    feedback_key: str = "graph_trajectory_accuracy"

    def prepare_request(self, request: EvalRequest) -> EvalRequest:
        """The request with the thread rendered turn by turn as ``thread``."""
        (outputs,) = request.require("outputs", evaluator=self.get_name())
        if "thread" in request.variables:
            raise EvaluatorInputError(
                "'thread' is rendered from outputs by the graph trajectory judge; pass the "
                "trajectory as outputs instead"
            )
        trajectory = _with_inputs(GraphTrajectory.coerce(outputs), request.inputs)
        reference = ""
        if request.reference_outputs is not None:
            expected = GraphTrajectory.coerce(request.reference_outputs, name="reference_outputs")
            reference = _REFERENCE_BLOCK.format(thread=render_graph_thread(expected))
        return request.model_copy(
            update={
                "reference_outputs": reference,
                "variables": {**request.variables, "thread": render_graph_thread(trajectory)},
            }
        )


def _with_inputs(trajectory: GraphTrajectory, inputs: Any) -> GraphTrajectory:
    if inputs is None:
        return trajectory
    if isinstance(inputs, Mapping):
        if "inputs" not in inputs:
            raise EvaluatorInputError(
                "inputs must be None, a list with one input per turn, or a dict with such a "
                f"list under 'inputs'; got a dict with keys {sorted(map(str, inputs))}"
            )
        inputs = inputs["inputs"]
    if not isinstance(inputs, (list, tuple)):
        raise EvaluatorInputError(
            f"inputs must be a list with one input per turn, got {type(inputs).__name__}"
        )
    if len(inputs) != len(trajectory.turns):
        raise EvaluatorInputError(
            f"inputs has {len(inputs)} items but outputs has {len(trajectory.turns)} turns; "
            "pass one input per turn, or inputs=None to use the trajectory's own"
        )
    return GraphTrajectory(
        turns=tuple(
            turn.model_copy(update={"input": given})
            for turn, given in zip(trajectory.turns, inputs, strict=True)
        )
    )
