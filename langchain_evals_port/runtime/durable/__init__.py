"""Durable evaluators: LangGraph graphs that survive restarts and wait for people.

``DurableEvaluator(builder, evaluation_timeout=...)`` registers a ``StateGraph`` builder: its
nodes are the steps, its state the evaluation's state, ``RetryPolicy`` per node, LangGraph's
``interrupt()`` waits for a person, and the ``score`` the graph leaves in its final state is
the outcome. The runtime compiles it with a checkpointer on the ledger's own storage.
``testkit.DurableTestKit`` runs one in-process for unit tests (node failures, restarts
between nodes, answers to ``interrupt``).
"""

from ._evaluator import DurableEvaluator

__all__ = ["DurableEvaluator"]
