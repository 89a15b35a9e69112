"""Multi-turn simulation: a simulated user talks to your app, then evaluators judge the talk.

``MultiturnSimulation`` runs the conversation as a LangGraph graph; the user is a
``SimulatedUser`` (scripted, LLM-played or a function). A LangGraph app is sent only the
newest user message under a stable ``thread_id``, so the run exercises its own memory.
"""

from ._app import App, AppFunction
from ._evaluate import TrajectoryEvaluator
from ._simulation import (
    MultiturnSimulation,
    SimulationResult,
    SimulationState,
    StopCondition,
    StopReason,
)
from ._user import OPENING_REQUEST, SimulatedUser, UserFunction, UserTurn, persona_view

__all__ = [
    "OPENING_REQUEST",
    "App",
    "AppFunction",
    "MultiturnSimulation",
    "SimulatedUser",
    "SimulationResult",
    "SimulationState",
    "StopCondition",
    "StopReason",
    "TrajectoryEvaluator",
    "UserFunction",
    "UserTurn",
    "persona_view",
]
