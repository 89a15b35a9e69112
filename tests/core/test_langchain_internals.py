"""The langchain-core internals the evaluators' fast path uses still behave as relied on.

If one of these fails after a langchain-core upgrade, ``core/_langchain_internals.py`` must
change with it: evaluators would otherwise lose their runs' nesting in traces.
"""

import asyncio
import contextvars

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableLambda
from langchain_core.runnables.config import ensure_config

from langchain_evals_port.core import evaluator
from langchain_evals_port.core._langchain_internals import (
    coro_with_context,
    no_callback_handlers,
    set_config_context,
    var_child_runnable_config,
)


def test_the_child_config_variable_is_what_ensure_config_reads():
    assert isinstance(var_child_runnable_config, contextvars.ContextVar)
    token = var_child_runnable_config.set({"tags": ["parent"]})
    try:
        assert ensure_config()["tags"] == ["parent"]
    finally:
        var_child_runnable_config.reset(token)


def test_set_config_context_runs_code_in_a_context_holding_the_config():
    with set_config_context({"tags": ["run"]}) as context:
        assert isinstance(context, contextvars.Context)
        seen = context.run(lambda: ensure_config()["tags"])
    assert seen == ["run"]
    assert var_child_runnable_config.get() is None


def test_coro_with_context_awaits_in_that_context():
    async def tags():
        return ensure_config()["tags"]

    async def main():
        with set_config_context({"tags": ["async"]}) as context:
            return await coro_with_context(tags(), context)

    assert asyncio.run(main()) == ["async"]


class _Runs(BaseCallbackHandler):
    def __init__(self):
        self.parents = {}

    def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, **kwargs):
        self.parents[kwargs.get("name")] = parent_run_id
        self.ids = {**getattr(self, "ids", {}), kwargs.get("name"): run_id}


def test_a_runnable_inside_an_evaluator_is_traced_as_its_child_sync_and_async():
    inner = RunnableLambda(lambda value: value, name="inner")

    def score(*, outputs):
        return inner.invoke(outputs) == "x"

    async def ascore(*, outputs):
        return await inner.ainvoke(outputs) == "x"

    for function in (score, ascore):
        runs = _Runs()
        ev = evaluator(function, run_name="outer", feedback_key="k")
        if function is score:
            ev.invoke({"outputs": "x"}, {"callbacks": [runs]})
        else:
            asyncio.run(ev.ainvoke({"outputs": "x"}, {"callbacks": [runs]}))
        assert runs.parents["inner"] == runs.ids["outer"]


def test_the_beta_warning_of_load_is_quieted_by_langchain_s_helper():
    import warnings

    from langchain_core.load import dumpd, load
    from langchain_core.messages import AIMessage

    from langchain_evals_port.core._langchain_internals import suppress_langchain_beta_warning

    stored = dumpd(AIMessage("hi"))
    with warnings.catch_warnings(record=True) as unquieted:
        warnings.simplefilter("always")
        load(stored, allowed_objects=[AIMessage])
    assert [w for w in unquieted if "beta" in str(w.message).lower()]  # what needs quieting
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with suppress_langchain_beta_warning():
            restored = load(stored, allowed_objects=[AIMessage])
    assert restored == AIMessage("hi")
    assert not [w for w in caught if "beta" in str(w.message).lower()]


class _Handler(BaseCallbackHandler):
    pass


_HOOK: contextvars.ContextVar[BaseCallbackHandler | None] = contextvars.ContextVar(
    "langchain_evals_port_test_hook", default=None
)


@pytest.fixture
def registered_hook():
    from langchain_core.tracers.context import _configure_hooks, register_configure_hook

    register_configure_hook(_HOOK, inheritable=True)
    yield _HOOK
    _configure_hooks[:] = [hook for hook in _configure_hooks if hook[0] is not _HOOK]


@pytest.fixture
def no_tracing_variables(monkeypatch):
    for name in (
        "LANGSMITH_TRACING",
        "LANGCHAIN_TRACING_V2",
        "LANGSMITH_TRACING_V2",
        "LANGCHAIN_TRACING",
        "LANGCHAIN_HANDLER",
    ):
        monkeypatch.delenv(name, raising=False)
    from langsmith.utils import get_env_var

    get_env_var.cache_clear()  # LangSmith reads each variable once
    yield
    get_env_var.cache_clear()  # nothing read while a test set them stays


def _handlers(config: dict) -> list[BaseCallbackHandler]:
    from langchain_core.runnables.config import get_callback_manager_for_config

    return get_callback_manager_for_config(ensure_config(config)).handlers


@pytest.mark.usefixtures("no_tracing_variables")
def test_no_callback_handlers_agrees_with_configure(registered_hook):
    from langchain_core.callbacks import CallbackManager
    from langchain_core.globals import set_debug

    without = [{}, {"callbacks": []}, {"callbacks": CallbackManager(handlers=[])}]
    with_one = [
        {"callbacks": [_Handler()]},
        {"callbacks": CallbackManager(handlers=[_Handler()])},
    ]
    for config in without:
        assert no_callback_handlers(ensure_config(config))
        assert not _handlers(config)
    for config in with_one:
        assert not no_callback_handlers(ensure_config(config))
        assert _handlers(config)
    set_debug(True)
    try:
        assert not no_callback_handlers(ensure_config({}))
        assert _handlers({})
    finally:
        set_debug(False)
    token = registered_hook.set(_Handler())
    try:
        assert not no_callback_handlers(ensure_config({}))
        assert _handlers({})
    finally:
        registered_hook.reset(token)
    assert no_callback_handlers(ensure_config({}))


@pytest.mark.usefixtures("no_tracing_variables")
def test_no_callback_handlers_is_false_under_langsmith_tracing(monkeypatch):
    # configure would add a LangChainTracer in each of these (not built here: it connects).
    from langsmith.run_helpers import tracing_context

    with tracing_context(enabled=True):
        assert not no_callback_handlers(ensure_config({}))
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    assert not no_callback_handlers(ensure_config({}))
    with tracing_context(enabled=False):
        assert no_callback_handlers(ensure_config({}))
        assert not _handlers({})


@pytest.mark.usefixtures("no_tracing_variables")
def test_no_callback_handlers_leaves_the_v1_tracing_variables_to_configure(monkeypatch):
    from langsmith.utils import get_env_var

    for name in ("LANGCHAIN_TRACING", "LANGCHAIN_HANDLER"):
        with monkeypatch.context() as patched:
            patched.setenv(name, "true")
            assert not no_callback_handlers(ensure_config({}))
        get_env_var.cache_clear()


@pytest.mark.usefixtures("no_tracing_variables")
def test_langsmith_traces_agrees_with_langsmith_in_every_state_it_reads(monkeypatch):
    from langsmith import run_trees
    from langsmith.run_helpers import tracing_context
    from langsmith.utils import get_env_var, tracing_is_enabled

    from langchain_evals_port.core._langchain_internals import _langsmith_traces

    def agree() -> bool:
        assert _langsmith_traces() is bool(tracing_is_enabled())
        return _langsmith_traces()

    assert agree() is False
    for enabled in (True, False, "local"):
        with tracing_context(enabled=enabled):
            assert agree() is bool(enabled)
    with tracing_context(parent=run_trees.RunTree(name="parent", run_type="chain")):
        assert agree() is True
    for name in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2"):
        with monkeypatch.context() as patched:
            patched.setenv(name, "true")
            get_env_var.cache_clear()
            assert agree() is True
            with tracing_context(enabled=False):
                assert agree() is False
        get_env_var.cache_clear()
    for enabled in (True, False):
        run_trees.configure(enabled=enabled)
        try:
            assert agree() is enabled
        finally:
            run_trees.configure(enabled=None)
    assert agree() is False


def test_langsmith_tracing_setting_is_what_get_tracing_context_reports():
    from langsmith.run_helpers import get_tracing_context, tracing_context

    from langchain_evals_port.core._langchain_internals import langsmith_tracing_setting

    assert langsmith_tracing_setting() is get_tracing_context()["enabled"] is None
    for enabled in (True, False, "local"):
        with tracing_context(enabled=enabled):
            assert langsmith_tracing_setting() == get_tracing_context()["enabled"] == enabled
