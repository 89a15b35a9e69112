"""Trajectory and JSON matchers side by side with OpenEvals 0.2.2, measured in one run.

Both sides get identical inputs and are called through OpenEvals' signatures
(``create_trajectory_match_evaluator`` and ``create_json_match_evaluator``, ours from
``langchain_evals_port.compat.openevals``). Every figure is a best-of-N mean per call, and
every ratio is OpenEvals' time / ours (> 1 means we are faster). Before anything is timed,
both sides' results are checked on that very input: the same key and score for
trajectories; for JSON the same keys, and our score at least OpenEvals' (equal when the
lists are a pure shuffle), since our list pairing is optimal and OpenEvals' is greedy.

* Trajectory match on a typical agent run: 13 messages, 8 tool calls (user; an assistant
  message with 2 parallel calls and their 2 tool results; another 2 and 2; 4 and 4; the
  final answer. Ten messages cannot hold 8 calls each answered by its own tool message).
  Passing cases, as OpenAI-style dicts and as LangChain messages, in the modes strict,
  unordered, subset and superset, with ``tool_args_match_mode`` exact and superset (for
  superset, the reference leaves out optional arguments such as ``units``). References:
  strict, the last message's parallel calls in another order; unordered, the same calls
  grouped differently; subset, one more call; superset, two fewer. Target: no slower
  than OpenEvals (every ratio >= 1.0).
* Trajectory match on 200 tool calls: 200 assistant messages of one call each, with their
  tool results, over four tools; the reference is shuffled (unordered, subset, superset),
  has 10 more calls (subset) or 10 fewer (superset). Target: every ratio >= 5.
* JSON match of two lists of 100 objects of 8 keys, the reference a shuffled copy with
  some values edited (and a pure shuffle), ``list_match_mode="same_elements"``,
  ``list_aggregator="average"``, ``aggregator`` None and ``"average"``. Target: no slower
  than OpenEvals (ratio >= 1.0) while pairing optimally.

Run: ``.venv/bin/python benchmarks/bench_matchers.py`` (after ``bash scripts/test.sh`` or
``bash scripts/demo.sh`` has made the virtual environment). About 20 s on 2 cores.
"""

from __future__ import annotations

import copy
import json
import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

os.environ.pop("LANGSMITH_TRACING", None)
os.environ.pop("LANGCHAIN_TRACING_V2", None)

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from openevals.json import create_json_match_evaluator as oe_json_match
from openevals.trajectory.match import (
    create_trajectory_match_evaluator as oe_trajectory_match,
)

from langchain_evals_port.compat.openevals import (
    create_json_match_evaluator,
    create_trajectory_match_evaluator,
)
from langchain_evals_port.trajectory import ToolArgsMatchMode, TrajectoryMatchMode

SEED = 20250614
MODES: tuple[TrajectoryMatchMode, ...] = ("strict", "unordered", "subset", "superset")
ARGS_MODES: tuple[ToolArgsMatchMode, ...] = ("exact", "superset")
Evaluator = Callable[..., Any]

# --- timing ---------------------------------------------------------------------------------


def per_call(fn: Callable[[], object], budget: float = 0.04, repeats: int = 5) -> float:
    """Best-of-``repeats`` mean seconds per call; each repeat runs about ``budget`` seconds
    (at least one call), the number of calls fixed from one untimed call."""
    start = time.perf_counter()
    fn()
    calls = max(1, int(budget / max(time.perf_counter() - start, 1e-7)))
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def time_evaluator(
    evaluator: Evaluator, outputs: Any, reference: Any, budget: float, repeats: int
) -> float:
    """``per_call`` of ``evaluator(outputs=outputs, reference_outputs=reference)``."""
    return per_call(
        lambda: evaluator(outputs=outputs, reference_outputs=reference), budget, repeats
    )


def duration(seconds: float) -> str:
    return f"{seconds * 1e6:8.0f} us" if seconds < 1e-3 else f"{seconds * 1e3:8.2f} ms"


# --- trajectories ---------------------------------------------------------------------------
# A step is ("user", text), ("assistant", text, calls) or ("tool", call_id, text); a call is
# (id, tool name, arguments). Both message formats are built from the same steps.

Call = tuple[str, str, dict[str, Any]]
Step = tuple[Any, ...]


def as_dicts(steps: Sequence[Step]) -> list[dict[str, Any]]:
    """OpenAI-style chat-completion messages."""
    messages: list[dict[str, Any]] = []
    for step in steps:
        if step[0] == "user":
            messages.append({"role": "user", "content": step[1]})
        elif step[0] == "tool":
            messages.append({"role": "tool", "tool_call_id": step[1], "content": step[2]})
        elif step[2]:
            calls = [
                {
                    "id": id_,
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
                for id_, name, args in step[2]
            ]
            messages.append({"role": "assistant", "content": step[1], "tool_calls": calls})
        else:
            messages.append({"role": "assistant", "content": step[1]})
    return messages


def as_messages(steps: Sequence[Step]) -> list[BaseMessage]:
    """LangChain messages."""
    messages: list[BaseMessage] = []
    for step in steps:
        if step[0] == "user":
            messages.append(HumanMessage(step[1]))
        elif step[0] == "tool":
            messages.append(ToolMessage(step[2], tool_call_id=step[1]))
        else:
            calls = [{"id": id_, "name": name, "args": args} for id_, name, args in step[2]]
            messages.append(AIMessage(step[1], tool_calls=calls))
    return messages


def run(calls: Sequence[Call], thought: str = "") -> list[Step]:
    """One assistant message making ``calls`` in parallel, then their tool results."""
    return [("assistant", thought, list(calls))] + [
        ("tool", id_, f"result of {name} {id_}") for id_, name, _ in calls
    ]


def loosened(calls: Sequence[Call], optional: Sequence[str]) -> list[Call]:
    """The calls without the ``optional`` arguments: a reference the agent's calls are a
    superset of (``tool_args_match_mode="superset"``)."""
    return [
        (id_, name, {k: v for k, v in args.items() if k not in optional})
        for id_, name, args in calls
    ]


TYPICAL_OPTIONAL = ("units", "max_price", "body", "cabin")


def typical_calls() -> list[list[Call]]:
    """The agent's 8 calls, grouped by the assistant message that makes them."""
    weather: list[Call] = [
        ("c1", "get_weather", {"city": "Lisbon", "date": "2025-06-14", "units": "metric"}),
        ("c2", "get_weather", {"city": "Lisbon", "date": "2025-06-15", "units": "metric"}),
    ]
    search: list[Call] = [
        (
            "c3",
            "search_flights",
            {
                "origin": "CDG",
                "destination": "LIS",
                "depart": "2025-06-14",
                "return": "2025-06-16",
                "passengers": 2,
                "cabin": "economy",
            },
        ),
        (
            "c4",
            "search_hotels",
            {
                "city": "Lisbon",
                "neighbourhood": "Alfama",
                "check_in": "2025-06-14",
                "check_out": "2025-06-16",
                "guests": 2,
                "max_price": 180,
            },
        ),
    ]
    book: list[Call] = [
        (
            "c5",
            "book_flight",
            {"flight_id": "TP433", "passengers": [{"name": "Ana Silva"}, {"name": "Ben Ode"}]},
        ),
        ("c6", "book_hotel", {"hotel_id": "h-8812", "rooms": 1, "guests": 2}),
        ("c7", "convert_currency", {"amount": 612.4, "from": "EUR", "to": "USD"}),
        (
            "c8",
            "send_email",
            {
                "to": "ana@example.com",
                "subject": "Lisbon, 14-16 June",
                "body": "Flights TP433, Casa Alfama; about 665 USD in total.",
            },
        ),
    ]
    return [weather, search, book]


def typical_steps(groups: Sequence[Sequence[Call]]) -> list[Step]:
    steps: list[Step] = [
        (
            "user",
            "Plan a weekend in Lisbon from Paris for two, 14-16 June: weather, flights, a "
            "hotel in Alfama; book them and email me the total in USD.",
        )
    ]
    for group in groups:
        steps += run(group)
    steps.append(("assistant", "Booked: TP433 and Casa Alfama, about 665 USD.", []))
    return steps


def typical_cases(args_mode: str) -> dict[str, tuple[list[Step], list[Step]]]:
    """Per mode, a passing (agent, reference) pair of the typical run."""
    weather, search, book = typical_calls()
    agent = typical_steps([weather, search, book])

    def reference(groups: Sequence[Sequence[Call]]) -> list[Step]:
        if args_mode == "superset":
            groups = [loosened(group, TYPICAL_OPTIONAL) for group in groups]
        return typical_steps(groups)

    extra_weather: Call = (
        "r9",
        "get_weather",
        {"city": "Lisbon", "date": "2025-06-16", "units": "metric"},
    )
    return {
        # The same messages; the parallel calls of the last one in another order.
        "strict": (agent, reference([weather, search, book[::-1]])),
        # The same calls, grouped differently.
        "unordered": (agent, reference([search, [*weather, *book[:2]], book[2:]])),
        # The reference also checks a third day's weather.
        "subset": (agent, reference([[*weather, extra_weather], search, book])),
        # The reference asks for neither the conversion nor the email.
        "superset": (agent, reference([weather, search, book[:2]])),
    }


BULK_OPTIONAL = ("top_k", "encoding", "limit", "timeout")


def bulk_call(i: int, rng: random.Random) -> Call:
    kind = rng.randrange(4)
    if kind == 0:
        return (f"b{i}", "search", {"query": f"topic {i}", "top_k": 5})
    if kind == 1:
        return (f"b{i}", "fetch_page", {"url": f"https://example.com/{i}", "timeout": 10})
    if kind == 2:
        return (f"b{i}", "read_file", {"path": f"src/module_{i}.py", "encoding": "utf-8"})
    return (f"b{i}", "run_sql", {"sql": f"select * from t where id = {i}", "limit": 100})


def bulk_cases(rng: random.Random) -> dict[str, dict[str, tuple[list[Step], list[Step]]]]:
    """Per args mode and mode, a passing (agent, reference) pair of 200 calls, one per
    assistant message."""
    calls = [bulk_call(i, rng) for i in range(200)]
    extra = [bulk_call(i, rng) for i in range(200, 210)]
    shuffled = rng.sample(calls, len(calls))
    references = {
        "strict": calls,
        "unordered": shuffled,
        "subset": rng.sample(shuffled + extra, len(calls) + len(extra)),
        "superset": shuffled[: -len(extra)],
    }

    def steps(chosen: Sequence[Call]) -> list[Step]:
        out: list[Step] = [("user", "Audit the service and report.")]
        for call in chosen:
            out += run([call])
        out.append(("assistant", "Report: all checks done.", []))
        return out

    agent = steps(calls)
    return {
        "exact": {mode: (agent, steps(ref)) for mode, ref in references.items()},
        "superset": {
            mode: (agent, steps(loosened(ref, BULK_OPTIONAL))) for mode, ref in references.items()
        },
    }


def compare_trajectories(
    title: str,
    cases: Mapping[str, dict[str, tuple[list[Step], list[Step]]]],
    target: float,
    budget: float,
    repeats: int,
) -> None:
    """Times both sides on every (mode, args mode, format) and prints the ratios."""
    print(title)
    print(f"  {'mode':9} {'args':8} {'format':9} {'openevals':>11} {'ours':>11}  ratio")
    worst: tuple[float, str] = (float("inf"), "")
    for mode in MODES:
        for args_mode in ARGS_MODES:
            ours_ev: Evaluator = create_trajectory_match_evaluator(
                trajectory_match_mode=mode, tool_args_match_mode=args_mode
            )
            theirs_ev: Evaluator = oe_trajectory_match(
                trajectory_match_mode=mode,  # type: ignore[arg-type]
                tool_args_match_mode=args_mode,
            )
            agent_steps, reference_steps = cases[args_mode][mode]
            for fmt, build in (("dicts", as_dicts), ("langchain", as_messages)):
                agent: Any = build(agent_steps)
                reference: Any = build(reference_steps)
                ours = ours_ev(outputs=agent, reference_outputs=reference)
                theirs = theirs_ev(outputs=agent, reference_outputs=reference)
                assert (ours["key"], ours["score"]) == (theirs["key"], theirs["score"]), (
                    mode,
                    args_mode,
                    fmt,
                    ours,
                    theirs,
                )
                assert ours["score"] is True, (mode, args_mode, fmt, ours)
                t_theirs = time_evaluator(theirs_ev, agent, reference, budget, repeats)
                t_ours = time_evaluator(ours_ev, agent, reference, budget, repeats)
                ratio = t_theirs / t_ours
                label = f"{mode} / {args_mode} / {fmt}"
                worst = min(worst, (ratio, label))
                print(
                    f"  {mode:9} {args_mode:8} {fmt:9} {duration(t_theirs)} {duration(t_ours)}"
                    f"  {ratio:6.2f}x"
                )
    print(f"  worst: {worst[0]:.2f}x ({worst[1]})  (target >= {target:g}x)")


# --- JSON -----------------------------------------------------------------------------------

CITIES = ("Lisbon", "Porto", "Paris", "Lyon", "Berlin", "Madrid")
TAGS = ("new", "vip", "churn-risk", "trial", "b2b")


def person(i: int, rng: random.Random) -> dict[str, Any]:
    first = rng.choice(("Ana", "Ben", "Chloe", "Dev", "Eva", "Femi", "Gus", "Hana"))
    return {
        "id": 1000 + i,
        "name": f"{first} {rng.choice('ABCDEFGHJKLMNPRSTW')}.",
        "email": f"{first.lower()}{i}@example.com",
        "city": rng.choice(CITIES),
        "age": rng.randrange(18, 80),
        "active": rng.random() < 0.7,
        "score": round(rng.uniform(0, 100), 1),
        "tags": sorted(rng.sample(TAGS, rng.randrange(0, 3))),
    }


def edited(item: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A copy with one or two values changed, as an extraction model might get them wrong."""
    item = copy.deepcopy(item)
    for key in rng.sample(("name", "city", "age", "active", "score", "tags"), rng.randrange(1, 3)):
        if key == "name":
            item["name"] = item["name"].upper()
        elif key == "city":
            item["city"] = rng.choice([c for c in CITIES if c != item["city"]])
        elif key == "age":
            item["age"] += rng.choice((-1, 1))
        elif key == "active":
            item["active"] = not item["active"]
        elif key == "score":
            item["score"] = round(item["score"] + 0.5, 1)
        else:
            item["tags"] = sorted({*item["tags"], "vip"} - {"new"})
    return item


def overall(results: Sequence[Mapping[str, Any]]) -> float:
    """The mean score over the results (the one score with an aggregator; with none, the
    mean of the per-key scores, which weighs every key equally as ``average`` does)."""
    return sum(float(r["score"]) for r in results) / len(results)


def compare_json(rng: random.Random) -> None:
    outputs = [person(i, rng) for i in range(100)]
    shuffled = copy.deepcopy(rng.sample(outputs, len(outputs)))
    touched = set(rng.sample(range(100), 20))
    edited_reference = [
        edited(item, rng) if i in touched else item for i, item in enumerate(shuffled)
    ]
    print(
        "JSON match, 100 objects of 8 keys vs a shuffled copy, same_elements, "
        "list_aggregator=average (per call)"
    )
    print(
        f"  {'reference':18} {'aggregator':10} {'openevals':>11} {'ours':>11}  ratio"
        "    score openevals / ours"
    )
    worst: tuple[float, str] = (float("inf"), "")
    for name, reference in (("pure shuffle", shuffled), ("20 objects edited", edited_reference)):
        for aggregator in (None, "average"):
            options: dict[str, Any] = {
                "aggregator": aggregator,
                "list_aggregator": "average",
                "list_match_mode": "same_elements",
            }
            ours_ev: Evaluator = create_json_match_evaluator(**options)
            theirs_ev: Evaluator = oe_json_match(**options)
            ours = ours_ev(outputs=outputs, reference_outputs=reference)
            theirs = theirs_ev(outputs=outputs, reference_outputs=reference)
            assert [r["key"] for r in ours] == [r["key"] for r in theirs], (ours, theirs)
            ours_score, theirs_score = overall(ours), overall(theirs)
            assert ours_score >= theirs_score - 1e-12, (ours, theirs)
            if name == "pure shuffle":
                assert (
                    [r["score"] for r in ours] == [r["score"] for r in theirs] == [1.0] * len(ours)
                ), (ours, theirs)
            t_theirs = time_evaluator(theirs_ev, outputs, reference, budget=0.05, repeats=7)
            t_ours = time_evaluator(ours_ev, outputs, reference, budget=0.05, repeats=7)
            ratio = t_theirs / t_ours
            label = f"{name} / {aggregator}"
            worst = min(worst, (ratio, label))
            relation = "=" if abs(ours_score - theirs_score) < 1e-12 else "<"
            print(
                f"  {name:18} {aggregator!s:10} {duration(t_theirs)} {duration(t_ours)}"
                f"  {ratio:6.2f}x  {theirs_score:.4f} {relation} {ours_score:.4f}"
            )
    print(
        f"  worst: {worst[0]:.2f}x ({worst[1]})  (target >= 1x; "
        "our score >= OpenEvals', equal on a pure shuffle)"
    )


def main() -> None:
    rng = random.Random(SEED)
    compare_trajectories(
        "trajectory match, typical run: 13 messages, 8 tool calls, passing (per call)",
        {args_mode: typical_cases(args_mode) for args_mode in ARGS_MODES},
        target=1.0,
        budget=0.04,
        repeats=7,
    )
    compare_trajectories(
        "trajectory match, 200 tool calls in 402 messages, passing (per call)",
        bulk_cases(rng),
        target=5.0,
        budget=0.1,
        repeats=3,
    )
    compare_json(rng)


if __name__ == "__main__":
    main()
