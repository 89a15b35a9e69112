"""The undocumented langchain-core names the evaluators' fast path relies on, in one place.

``Evaluator.invoke`` does what ``Runnable._call_with_config`` does minus its per-call
signature inspection, which costs more than a whole exact match (measured in
``benchmarks/bench_string.py``). That needs three names langchain-core uses itself but does
not document: the context variable nested runnables read their parent's config from, the
context manager that sets it for a run, and the helper that runs a coroutine in a given
context. The judge cache also reads replies back with ``langchain_core.load.load``, which
warns that it is in beta on every call, and quiets that with langchain-core's own helper.
``no_callback_handlers`` answers "would ``CallbackManager.configure`` give this run any
handler?" without building the manager (about 10 us, a third of an exact match's call),
from the places ``langchain_core.callbacks.manager._configure`` takes handlers from.
It asks LangSmith whether it traces as ``langsmith.utils.tracing_is_enabled`` does, from the
same context variables and globals, without that function's imports on every call (they
were about half of what the question cost).
``tests/core/test_langchain_internals.py`` fails loudly when langchain-core changes any of
them, before a user's traces silently lose their nesting.
"""

from langchain_core._api import suppress_langchain_beta_warning
from langchain_core.callbacks import BaseCallbackManager
from langchain_core.globals import get_debug
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import set_config_context, var_child_runnable_config
from langchain_core.runnables.utils import coro_with_context
from langchain_core.tracers.context import _configure_hooks, tracing_v2_callback_var
from langchain_core.utils.env import env_var_is_set
from langsmith._internal import _context as langsmith_context
from langsmith.utils import get_env_var

__all__ = [
    "coro_with_context",
    "langsmith_tracing_setting",
    "no_callback_handlers",
    "set_config_context",
    "suppress_langchain_beta_warning",
    "var_child_runnable_config",
]


_V1 = ("LANGCHAIN",)
"""The namespace of LangChain's v1 tracing variables, ``LANGCHAIN_TRACING`` and
``LANGCHAIN_HANDLER``."""


def no_callback_handlers(config: RunnableConfig) -> bool:
    """Whether a run with ``config`` (from ``ensure_config``) certainly gets no callback
    handler from ``CallbackManager.configure``: no callbacks in the config, LangChain's
    debug mode off, no LangSmith tracing (environment, ``tracing_context`` or an enclosing
    ``tracing_v2_enabled``), no configure hook set (``register_configure_hook``). ``False``
    whenever in doubt (the v1 tracing variables, which ``configure`` refuses), so the
    caller then configures the manager as LangChain does."""
    callbacks = config.get("callbacks")
    if callbacks and (not isinstance(callbacks, BaseCallbackManager) or callbacks.handlers):
        return False
    if get_debug() or tracing_v2_callback_var.get() is not None or _langsmith_traces():
        return False
    # Read through LangSmith's cached reader (once per process, as LangSmith reads its own
    # tracing variables): a lookup of a variable that is not set raises and catches a
    # KeyError: three evaluations' worth per experiment run were about a tenth of its CPU.
    if get_env_var("TRACING", namespaces=_V1) or get_env_var("HANDLER", namespaces=_V1):
        return False
    for var, _, handler_class, env_var in _configure_hooks:
        if var.get() is not None:
            return False
        if env_var is not None and handler_class is not None and env_var_is_set(env_var):
            return False
    return True


def langsmith_tracing_setting() -> bool | str | None:
    """What the innermost ``langsmith.tracing_context(enabled=...)`` set (``True``,
    ``False``, ``"local"``), or ``None``: ``get_tracing_context()["enabled"]``, without
    building the rest of that dict."""
    return langsmith_context._TRACING_ENABLED.get()


def _langsmith_traces() -> bool:
    """Whether LangSmith traces here: ``langsmith.utils.tracing_is_enabled``'s answer (a
    ``tracing_context`` setting, a parent run, ``configure(enabled=)``, the environment)."""
    enabled = langsmith_tracing_setting()
    if enabled is not None:
        return bool(enabled)
    if langsmith_context.get_current_run_tree() is not None:
        return True
    if langsmith_context._GLOBAL_TRACING_ENABLED is not None:
        return bool(langsmith_context._GLOBAL_TRACING_ENABLED)
    return get_env_var("TRACING_V2", default=get_env_var("TRACING", default="")) == "true"
