"""Check a recorded LangGraph agent run against reference trajectories; no API key needed.

The run (``data/recorded_langgraph_agent_run.json``) is a real ``create_react_agent``
thread's state: the agent searched flights and the weather in one step, then booked. It is
checked three ways, then against a reference it fails, to show the explanation a failing
match gives.

Run it with ``bash scripts/demo.sh`` (or ``.venv/bin/python cookbook/check_agent_trajectory.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

from langchain_evals_port.trajectory import TrajectoryMatch

RUN = json.loads((Path(__file__).parent / "data" / "recorded_langgraph_agent_run.json").read_text())


def call(name: str, **args: object) -> dict[str, object]:
    """An OpenAI-style tool call for a reference trajectory."""
    return {"type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


REQUEST = {"role": "user", "content": "Book the cheapest Paris-Rome flight on 2026-12-05."}
SEARCH = call("search_flights", origin="CDG", destination="FCO", date="2026-12-05")
WEATHER = call("get_weather", city="Rome", date="2026-12-05")
BOOK = call("book_flight", flight_no="AZ317", passengers=1)

# The same steps as the agent took: the reviewer wrote this one by hand.
EXACT_PATH = [
    REQUEST,
    {"role": "assistant", "content": "", "tool_calls": [WEATHER, SEARCH]},
    {"role": "tool", "tool_call_id": "ref", "content": "..."},
    {"role": "tool", "tool_call_id": "ref", "content": "..."},
    {"role": "assistant", "content": "", "tool_calls": [BOOK]},
    {"role": "tool", "tool_call_id": "ref", "content": "..."},
    {"role": "assistant", "content": "Booked."},
]
# What must happen, whatever else the agent does: it books AZ317.
MUST_BOOK = [REQUEST, {"role": "assistant", "content": "", "tool_calls": [BOOK]}]
# The order that matters: search first, book after.
SEARCH_THEN_BOOK = [
    REQUEST,
    {"role": "assistant", "content": "", "tool_calls": [SEARCH]},
    {"role": "assistant", "content": "", "tool_calls": [BOOK]},
]
# A reference the run does not meet: two passengers were wanted.
TWO_PASSENGERS = [
    REQUEST,
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [call("book_flight", flight_no="AZ317", passengers=2)],
    },
]

CHECKS = [
    ("strict: the same steps, tools and arguments", TrajectoryMatch(mode="strict"), EXACT_PATH),
    ("superset: it booked AZ317 at least", TrajectoryMatch(mode="superset"), MUST_BOOK),
    ("in_order: searched, then booked", TrajectoryMatch(mode="in_order"), SEARCH_THEN_BOOK),
    ("superset: booked for two (fails)", TrajectoryMatch(mode="superset"), TWO_PASSENGERS),
]


def main() -> None:
    for title, matcher, reference in CHECKS:
        result = matcher.invoke({"outputs": RUN, "reference_outputs": reference})
        print(f"{title:<46} {result.key:<28} {result.score}")
        if result.score is False:
            print(f"  why: {result.comment}")


if __name__ == "__main__":
    main()
