"""The undocumented langchain-core names the evaluators' fast path relies on, in one place.

``Evaluator.invoke`` does what ``Runnable._call_with_config`` does minus its per-call
signature inspection, which costs more than a whole exact match (measured in
``benchmarks/bench_string.py``). That needs three names langchain-core uses itself but does
not document: the context variable nested runnables read their parent's config from, the
context manager that sets it for a run, and the helper that runs a coroutine in a given
context. The judge cache also reads replies back with ``langchain_core.load.load``, which
warns that it is in beta on every call, and quiets that with langchain-core's own helper.
``tests/core/test_langchain_internals.py`` fails loudly when langchain-core changes any of
them, before a user's traces silently lose their nesting.
"""

from langchain_core._api import suppress_langchain_beta_warning
from langchain_core.runnables.config import set_config_context, var_child_runnable_config
from langchain_core.runnables.utils import coro_with_context

__all__ = [
    "coro_with_context",
    "set_config_context",
    "suppress_langchain_beta_warning",
    "var_child_runnable_config",
]
