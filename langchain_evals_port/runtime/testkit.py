"""Testing online evaluators: one evaluator on the request the runtime would build, or a
whole runtime.

An evaluator bound online is an ordinary evaluator, so a unit test calls it with
``request_for(record, evaluator, config=...)`` — the request the runtime would give it for
that interaction — and reads the result. ``runtime_testkit`` builds a real
``EvaluationRuntime`` on an in-memory or temporary SQLite ledger with fast polling, for
integration tests with ``ScriptedChatModel`` agents and judges.

Example:
    >>> from langchain_evals_port import evaluator
    >>> from langchain_evals_port.runtime import InteractionRecord, request_for
    >>> @evaluator
    ... def min_length(outputs, config):
    ...     return len(outputs) >= config.get_int("min_length")
    >>> record = InteractionRecord(interaction_id="i-1", agent_id="support", output_text="Hello!")
    >>> min_length.invoke(request_for(record, min_length, config={"min_length": 3})).score
    True
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from langchain_evals_port.storage import InMemoryLedger, Ledger, SqliteLedger

from ._config import EvaluationConfig
from ._context import request_for
from ._registry import RegistrationTarget
from ._runtime import EvaluationRuntime

__all__ = ["request_for", "runtime_testkit"]


@contextmanager
def runtime_testkit(
    config: EvaluationConfig | Mapping[str, Any] | None,
    evaluators: Mapping[str, RegistrationTarget],
    *,
    ledger: Literal["memory", "sqlite"] | Ledger = "memory",
    **options: Any,
) -> Iterator[EvaluationRuntime]:
    """A real ``EvaluationRuntime`` for integration tests, closed (drained) on exit.

    Args:
        config: The runtime configuration.
        evaluators: The evaluators by configuration id, as for ``EvaluationRuntime``.
        ledger: ``"memory"`` (an ``InMemoryLedger``), ``"sqlite"`` (a ``SqliteLedger`` in a
            temporary directory removed afterwards) or a ledger of your own.
        options: Constructor options of ``EvaluationRuntime``; polling defaults to 10 ms.
    """
    options.setdefault("poll_interval", 0.01)
    with tempfile.TemporaryDirectory(prefix="langchain-evals-") as directory:
        if ledger == "memory":
            store: Ledger = InMemoryLedger()
        elif ledger == "sqlite":
            store = SqliteLedger(Path(directory) / "evals.db")
        elif isinstance(ledger, str):
            raise ValueError(f"ledger must be 'memory', 'sqlite' or a Ledger, got {ledger!r}")
        else:
            store = ledger
        runtime = EvaluationRuntime(config, evaluators=evaluators, ledger=store, **options)
        try:
            yield runtime
        finally:
            runtime.close()
            if store is not ledger:
                store.close()
