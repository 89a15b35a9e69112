"""Deterministic evaluators side by side with OpenEvals 0.2.2, measured in one run.

Prints three comparisons (ratios > 1 mean we are faster, except where noted):

* import cost: ``from langchain_evals_port import ExactMatch`` (the package loads its names on
  first use, so this is what using it costs) minus importing langchain-core's Runnable base
  class and messages (which the package cannot avoid: every evaluator is a
  ``RunnableSerializable``; ``import langchain_core.runnables`` alone is a lazy stub that
  imports nothing), next to ``import openevals``; each is the median of fresh interpreters;
* Levenshtein similarity of two 2,000-character strings, per call;
* exact match of a small nested dict, per call (target: within 1.1x of OpenEvals' time);
* ``langsmith.evaluate(..., upload_results=False)`` over 50 examples with our ``ExactMatch``
  and with OpenEvals' ``exact_match``, against a LangSmith stand-in on 127.0.0.1 that counts
  the runs posted to it (target: no run posted, time within 1.1x of OpenEvals').

Run: ``.venv/bin/python benchmarks/bench_string.py`` (after ``bash scripts/test.sh`` or
``bash scripts/demo.sh`` has made the virtual environment).
"""

from __future__ import annotations

import os
import random
import time
import uuid
from collections.abc import Callable

from _timing import import_seconds, langsmith_stand_in

os.environ.pop("LANGSMITH_TRACING", None)
os.environ.pop("LANGCHAIN_TRACING_V2", None)


BASELINE = (
    "from langchain_core.runnables import RunnableSerializable; "
    "from langchain_core.messages import BaseMessage"
)


def per_call(fn: Callable[[], object], calls: int, repeats: int = 5) -> float:
    """Best-of-``repeats`` mean seconds per call."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def langsmith_evaluate_seconds(evaluator: Callable[..., object], examples: int) -> float:
    """Best-of-3 wall time of ``langsmith.evaluate(upload_results=False)`` over ``examples``."""
    from langsmith import evaluate
    from langsmith.schemas import Example

    dataset = uuid.uuid4()
    data = [
        Example(id=uuid.uuid4(), dataset_id=dataset, inputs={"q": f"{i}"}, outputs={"a": f"{i}"})
        for i in range(examples)
    ]

    def target(inputs: dict[str, str]) -> dict[str, str]:
        return {"a": inputs["q"]}

    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        list(evaluate(target, data=data, evaluators=[evaluator], upload_results=False))
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    baseline = import_seconds(BASELINE)
    extra = import_seconds("from langchain_evals_port import ExactMatch", after=BASELINE)
    theirs = import_seconds("import openevals")
    print("import (median of fresh interpreters)")
    print(f"  langchain-core Runnable + messages      {baseline * 1e3:8.1f} ms")
    print(f"  langchain_evals_port on top of that     {extra * 1e3:8.1f} ms  (target <= 50 ms)")
    print(f"  openevals                               {theirs * 1e3:8.1f} ms")

    from openevals.exact import exact_match as oe_exact
    from openevals.string.levenshtein import levenshtein_distance as oe_levenshtein

    from langchain_evals_port.compat.openevals import exact_match, levenshtein_distance

    rng = random.Random(7)
    a = "".join(rng.choice("abcdefghij ") for _ in range(2000))
    b = "".join(c if rng.random() > 0.2 else rng.choice("klmno") for c in a)
    assert (
        abs(
            levenshtein_distance(outputs=a, reference_outputs=b)["score"]
            - oe_levenshtein(outputs=a, reference_outputs=b)["score"]
        )
        < 1e-12
    )
    theirs_lev = per_call(
        lambda: oe_levenshtein(outputs=a, reference_outputs=b), calls=1, repeats=3
    )
    ours_lev = per_call(lambda: levenshtein_distance(outputs=a, reference_outputs=b), calls=500)
    print("levenshtein, two 2,000-character strings (per call)")
    print(
        f"  openevals {theirs_lev * 1e3:10.2f} ms   ours {ours_lev * 1e3:8.3f} ms   "
        f"ours is {theirs_lev / ours_lev:,.0f}x faster (target >= 100x)"
    )

    left = {"id": 17, "tags": ["a", "b"], "nested": {"x": 1, "y": [1, 2, 3]}, "name": "Paris"}
    right = {"name": "Paris", "nested": {"y": [1, 2, 3], "x": 1}, "tags": ["a", "b"], "id": 17}
    assert exact_match(outputs=left, reference_outputs=right) == oe_exact(
        outputs=left, reference_outputs=right
    )
    theirs_exact = per_call(lambda: oe_exact(outputs=left, reference_outputs=right), calls=3000)
    ours_exact = per_call(lambda: exact_match(outputs=left, reference_outputs=right), calls=3000)
    print("exact match, small nested dict (per call)")
    print(
        f"  openevals {theirs_exact * 1e6:8.1f} us   ours {ours_exact * 1e6:8.1f} us   "
        f"time ratio ours/openevals {ours_exact / theirs_exact:.2f} (target <= 1.10)"
    )

    from langchain_core.tracers.langchain import wait_for_all_tracers

    from langchain_evals_port import ExactMatch

    with langsmith_stand_in() as paths:
        theirs_ls = langsmith_evaluate_seconds(oe_exact, examples=50)
        ours_ls = langsmith_evaluate_seconds(ExactMatch(), examples=50)
        wait_for_all_tracers()
        posted = sum("/runs" in path for path in paths)
    print("langsmith.evaluate(upload_results=False), 50 examples (best of 3)")
    print(
        f"  openevals {theirs_ls * 1e3:8.1f} ms   ours {ours_ls * 1e3:8.1f} ms   "
        f"time ratio ours/openevals {ours_ls / theirs_ls:.2f} (target <= 1.10); "
        f"runs posted: {posted} (target 0)"
    )


if __name__ == "__main__":
    main()
