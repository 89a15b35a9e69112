import asyncio
import contextvars
import re
import threading
from operator import itemgetter

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate

from langchain_evals_port import (
    EvalRequest,
    EvaluationFailure,
    Evaluator,
    EvaluatorInputError,
    EvaluatorResult,
    EvaluatorUsageError,
    ExactMatch,
    Score,
    evaluator,
)
from langchain_evals_port.core import eval_scope
from langchain_evals_port.core.errors import failure_reason
from langchain_evals_port.testing import RecordingTracer, ScriptedChatModel


class ProviderDown(Exception):
    status_code = 503


def test_keyword_call_and_invoke_give_the_two_shapes():
    ev = ExactMatch()
    assert ev(outputs="a", reference_outputs="a") == {
        "key": "exact_match",
        "score": True,
        "comment": None,
        "metadata": None,
    }
    result = ev.invoke({"outputs": "a", "reference_outputs": "b"})
    assert isinstance(result, EvaluatorResult)
    assert result.score is False
    assert ev.invoke(EvalRequest(outputs=[1], reference_outputs=[1.0])).score is True


def test_evaluate_and_evaluate_all_are_deprecated_for_invoke():
    ev = ExactMatch()
    with pytest.warns(DeprecationWarning, match=r"Evaluator\.evaluate is deprecated; use invoke"):
        assert ev.evaluate(outputs=1, reference_outputs=1).score is True
    with pytest.warns(DeprecationWarning, match="evaluate_all is deprecated"):
        assert [r.key for r in ev.evaluate_all(outputs=1, reference_outputs=2)] == ["exact_match"]


async def test_async_conventions():
    ev = ExactMatch()
    assert (await ev.acall(outputs="x", reference_outputs="x"))["score"] is True
    assert (await ev.ainvoke({"outputs": "x", "reference_outputs": "y"})).score is False
    assert (await ev.ainvoke({"outputs": 1, "reference_outputs": 1})).score is True
    with pytest.warns(DeprecationWarning, match="aevaluate_all is deprecated"):
        assert len(await ev.aevaluate_all(outputs=1, reference_outputs=1)) == 1


def test_batch_and_abatch_keep_order():
    ev = ExactMatch()
    requests = [{"outputs": i, "reference_outputs": i % 2} for i in range(6)]
    expected = [i in (0, 1) for i in range(6)]
    assert [r.score for r in ev.batch(requests, config={"max_concurrency": 3})] == expected
    results = asyncio.run(ev.abatch(requests, config={"max_concurrency": 2}))
    assert [r.score for r in results] == expected


def test_wrong_argument_names_raise_a_clear_type_error():
    with pytest.raises(TypeError, match="did you mean 'outputs'"):
        ExactMatch()(output="a", reference_outputs="a")


def test_missing_outputs_raise_an_input_error_naming_the_field():
    with pytest.raises(
        EvaluatorInputError,
        match="exact_match requires outputs and reference_outputs; outputs is None",
    ):
        ExactMatch()(outputs=None, reference_outputs="a")


def test_input_errors_raise_even_when_recording_failures():
    with pytest.raises(EvaluatorInputError):
        ExactMatch(on_error="record")(outputs="a")


# --- custom evaluators -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("returned", "score", "comment", "metadata"),
    [
        (True, True, None, {}),
        (3, 3.0, None, {}),
        (0.5, 0.5, None, {}),
        ((0.5, "half"), 0.5, "half", {}),
        ((False, "no", {"n": 1}), False, "no", {"n": 1}),
        (Score(0.25, "quarter", {"m": 2}), 0.25, "quarter", {"m": 2}),
        ({"score": 1, "reasoning": "why"}, 1.0, "why", {}),
    ],
)
def test_function_return_shapes(returned, score, comment, metadata):
    ev = evaluator(lambda *, outputs: returned, run_name="my_run", feedback_key="my_key")
    result = ev.invoke({"outputs": "x"})
    assert (result.key, result.score, result.comment, result.metadata) == (
        "my_key",
        score,
        comment,
        metadata,
    )
    assert ev.get_name() == "my_run"


def test_a_dict_of_keys_gives_several_results():
    ev = evaluator(
        lambda *, outputs: {
            "length": len(outputs),
            "polite": (True, "said please"),
            "tags": [1, 0],
        },
        run_name="multi",
        feedback_key="unused",
    )
    results = ev.invoke({"outputs": "please"})
    assert [(r.key, r.score) for r in results] == [
        ("length", 6.0),
        ("polite", True),
        ("tags", 1.0),
        ("tags", 0.0),
    ]
    assert [d["key"] for d in ev(outputs="x")] == ["length", "polite", "tags", "tags"]
    with (
        pytest.warns(DeprecationWarning, match="evaluate is deprecated"),
        pytest.raises(ValueError, match="produced 4 results; use invoke"),
    ):
        ev.evaluate(outputs="x")


def test_unscored_is_inconclusive_not_a_low_score():
    ev = evaluator(
        lambda *, outputs: Score.unscored("empty answer"), run_name="r", feedback_key="k"
    )
    result = ev.invoke({"outputs": ""})
    assert result.outcome == "inconclusive"
    assert result.score is None
    assert ev(outputs="")["metadata"] == {"outcome": "inconclusive", "reason": "empty answer"}


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        (None, "returned None"),
        ("yes", "returned a str"),
        ((1, 2, 3, 4), "tuple of 4 items"),
    ],
)
def test_bad_return_values_raise_type_errors(returned, message):
    ev = evaluator(lambda *, outputs: returned, run_name="r", feedback_key="k")
    with pytest.raises(TypeError, match=message):
        ev.invoke({"outputs": "x"})


def test_functions_receive_only_what_they_ask_for():
    seen = {}

    def fn(*, inputs, context, request, tone="neutral"):
        seen.update(inputs=inputs, context=context, request=request, tone=tone)
        return True

    ev = evaluator(fn, run_name="r", feedback_key="k")
    ev(inputs="q", outputs="a", context="docs")
    assert seen["inputs"] == "q"
    assert seen["context"] == "docs"
    assert seen["tone"] == "neutral"
    assert isinstance(seen["request"], EvalRequest)


def test_var_keyword_functions_receive_fields_and_variables():
    ev = evaluator(lambda **kw: (True, ",".join(sorted(kw))), run_name="r", feedback_key="k")
    assert (
        ev(outputs="a", plan="p")["comment"] == "attachments,inputs,outputs,plan,reference_outputs"
    )


def test_a_missing_variable_names_the_variable_and_the_evaluator():
    ev = evaluator(lambda *, outputs, context: True, run_name="rag_check", feedback_key="k")
    with pytest.raises(EvaluatorInputError, match="'rag_check' needs variable 'context'"):
        ev(outputs="a")


def test_positional_only_functions_are_rejected_at_construction():
    with pytest.raises(TypeError, match="keyword parameters"):
        evaluator(lambda outputs, /: True, run_name="r", feedback_key="k")


def test_decorator_with_and_without_arguments():
    @evaluator
    def short(*, outputs):
        return len(outputs) < 5

    @evaluator(feedback_key="has_paris", run_name="paris_check")
    def mentions(*, outputs):
        return "Paris" in outputs

    assert short(outputs="abc") == {
        "key": "short",
        "score": True,
        "comment": None,
        "metadata": None,
    }
    assert mentions.feedback_key == "has_paris"
    assert mentions.get_name() == "paris_check"


async def test_async_functions_run_on_the_event_loop():
    loop_threads = []

    @evaluator
    async def slow(*, outputs):
        loop_threads.append(threading.get_ident())
        await asyncio.sleep(0)
        return outputs == "ok"

    assert (await slow.ainvoke({"outputs": "ok"})).score is True
    assert loop_threads == [threading.get_ident()]
    with pytest.raises(EvaluatorUsageError, match="running event loop"):
        slow.invoke({"outputs": "ok"})


async def test_async_callable_objects_and_wrapped_async_functions():
    class Judge:
        async def __call__(self, *, outputs):
            return outputs == "ok"

    def decorate(fn):
        def wrapper(**kwargs):
            return fn(**kwargs)

        return wrapper

    async def check(*, outputs, **_):
        return outputs == "ok"

    for fn in (Judge(), decorate(check)):
        ev = evaluator(fn, run_name="r", feedback_key="k")
        assert (await ev.ainvoke({"outputs": "ok"})).score is True
        assert (await ev.abatch([{"outputs": "ok"}, {"outputs": "no"}]))[1].score is False


def test_wrapped_async_functions_work_synchronously():
    async def check(*, outputs, **_):
        return outputs == "ok"

    ev = evaluator(lambda **kwargs: check(**kwargs), run_name="r", feedback_key="k")
    assert ev(outputs="ok")["score"] is True


def test_numbers_of_any_real_type_are_scores():
    from decimal import Decimal
    from fractions import Fraction

    for value in (Decimal("0.25"), Fraction(1, 4)):
        assert (
            evaluator(lambda *, outputs, v=value: v, run_name="r", feedback_key="k")(outputs="x")[
                "score"
            ]
            == 0.25
        )


def test_nested_runnables_see_the_config_without_callbacks():
    from langchain_core.runnables import RunnableLambda
    from langchain_core.runnables.config import ensure_config

    seen = []
    inner = RunnableLambda(lambda x: seen.append(ensure_config().get("configurable")) or x)
    ev = evaluator(lambda *, outputs: inner.invoke(outputs) == "x", run_name="r", feedback_key="k")
    ev.invoke({"outputs": "x"}, config={"configurable": {"judge": 42}})
    assert seen == [{"judge": 42}]


def test_async_functions_also_work_synchronously_outside_a_loop():
    @evaluator
    async def check(*, outputs):
        return outputs == "ok"

    assert check(outputs="ok")["score"] is True


async def test_sync_functions_run_off_the_event_loop_in_ainvoke():
    threads = []

    @evaluator
    def check(*, outputs):
        threads.append(threading.get_ident())
        return True

    await check.ainvoke({"outputs": "x"})
    assert threads != [threading.get_ident()]


# --- failures ----------------------------------------------------------------------------


def _raising(error):
    def fn(*, outputs):
        raise error

    return fn


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (EvaluationFailure("sandbox crashed", code="sandbox_error"), "sandbox_error"),
        (TimeoutError("judge took too long"), "timeout"),
        (type("RateLimitError", (Exception,), {"status_code": 429})("slow down"), "rate_limited"),
        (ProviderDown("unavailable"), "provider_error"),
        (KeyError("boom"), "evaluator_error"),
    ],
)
def test_record_turns_failures_into_failed_results_with_a_code(error, code):
    ev = evaluator(_raising(error), run_name="r", feedback_key="k", on_error="record")
    result = ev.invoke({"outputs": "x"})
    assert result.outcome == "failed"
    assert result.error_code == code
    # failure_reason's rule: our own errors say what happened, anyone else's with their type.
    assert result.reason == failure_reason(error)
    assert str(error).strip("'") in result.reason
    assert result.score is None


@pytest.mark.parametrize("on_error", ["record", "raise"])
def test_sys_exit_in_scoring_code_fails_the_evaluation_and_a_keyboard_interrupt_interrupts(
    on_error,
):
    ev = evaluator(_raising(SystemExit(3)), run_name="r", feedback_key="k", on_error=on_error)
    message = r"SystemExit raised inside the evaluation \(sys.exit\(3\)\)"
    if on_error == "record":
        result = ev.invoke({"outputs": "x"})
        assert (result.outcome, result.error_code) == ("failed", "evaluator_error")
        assert re.search(message, result.reason)
    else:
        with pytest.raises(EvaluationFailure, match=message) as raised:
            ev.invoke({"outputs": "x"})
        assert isinstance(raised.value.__cause__, SystemExit)
    # Ctrl-C is the caller's: never recorded as a result.
    interrupted = evaluator(
        _raising(KeyboardInterrupt()), run_name="r", feedback_key="k", on_error=on_error
    )
    with pytest.raises(KeyboardInterrupt):
        interrupted.invoke({"outputs": "x"})


def test_raise_is_the_default_and_raises_a_typed_failure_with_the_cause():
    ev = evaluator(_raising(TimeoutError("late")), run_name="r", feedback_key="k")
    with pytest.raises(
        EvaluationFailure, match="evaluator 'r' failed: TimeoutError: late"
    ) as raised:
        ev(outputs="x")
    assert raised.value.code == "timeout"
    assert isinstance(raised.value.__cause__, TimeoutError)


def test_our_own_failures_are_raised_unwrapped():
    failure = EvaluationFailure("sandbox crashed", code="sandbox_error")
    with pytest.raises(EvaluationFailure) as raised:
        evaluator(_raising(failure), run_name="r", feedback_key="k")(outputs="x")
    assert raised.value is failure


@pytest.mark.parametrize(
    "returned",
    [None, "yes", {}, [], {"k": []}],
    ids=["none", "str", "empty-dict", "empty-list", "empty-key"],
)
def test_usage_errors_are_raised_even_when_recording(returned):
    ev = evaluator(lambda *, outputs: returned, run_name="r", feedback_key="k", on_error="record")
    with pytest.raises(EvaluatorUsageError):
        ev(outputs="x")


async def test_record_works_on_the_async_path():
    async def fn(*, outputs):
        raise EvaluationFailure("no JSON in reply", code="judge_parse_failure")

    ev = evaluator(fn, run_name="r", feedback_key="k", on_error="record")
    result = await ev.ainvoke({"outputs": "x"})
    assert (result.outcome, result.error_code) == ("failed", "judge_parse_failure")


# --- tracers -----------------------------------------------------------------------------


def test_tracer_sees_start_result_and_error():
    tracer = RecordingTracer()
    ev = evaluator(
        _raising(TimeoutError("x")),
        run_name="r",
        feedback_key="k",
        on_error="record",
        tracer=tracer,
    )
    ev.invoke({"outputs": "x"})
    assert [e.kind for e in tracer.events] == ["start", "error", "result"]
    assert tracer.events[0].evaluator == "r"
    assert tracer.events[2].payload.outcome == "failed"


def test_configured_tracer_beats_the_ambient_one():
    mine, ambient = RecordingTracer(), RecordingTracer()
    with eval_scope(ambient):
        ExactMatch(tracer=mine)(outputs=1, reference_outputs=1)
        ExactMatch()(outputs=1, reference_outputs=1)
    assert len(mine.events) == 2
    assert len(ambient.events) == 2
    ExactMatch()(outputs=1, reference_outputs=1)
    assert len(ambient.events) == 2


def test_a_configured_tracer_wins_even_when_it_is_falsy():
    class EmptyFirst(RecordingTracer):
        def __len__(self):
            return len(self.events)

    mine, ambient = EmptyFirst(), RecordingTracer()
    with eval_scope(ambient):
        ExactMatch(tracer=mine)(outputs=1, reference_outputs=1)
    assert len(mine.events) == 2
    assert ambient.events == []


def test_a_broken_tracer_does_not_change_the_outcome(caplog):
    class Broken(RecordingTracer):
        def on_result(self, evaluator, result):
            raise RuntimeError("tracer down")

    assert ExactMatch(tracer=Broken())(outputs=1, reference_outputs=1)["score"] is True
    assert "tracer" in caplog.text


def test_a_tracer_must_be_a_tracer():
    with pytest.raises(ValueError, match="on_start, on_result and on_error"):
        ExactMatch(tracer="stdout")


def test_ambient_scope_reaches_batch_threads():
    tracer = RecordingTracer()
    with eval_scope(tracer):
        ExactMatch().batch(
            [{"outputs": i, "reference_outputs": i} for i in range(8)],
            config={"max_concurrency": 4},
        )
    assert sum(e.kind == "result" for e in tracer.events) == 8


async def test_ambient_scope_reaches_asyncio_tasks():
    tracer = RecordingTracer()
    ev = ExactMatch()
    with eval_scope(tracer):
        tasks = [
            asyncio.create_task(ev.ainvoke({"outputs": 1, "reference_outputs": 1}))
            for _ in range(3)
        ]
    await asyncio.gather(*tasks)
    assert sum(e.kind == "result" for e in tracer.events) == 3


def test_raw_threads_need_copy_context():
    tracer = RecordingTracer()
    ev = ExactMatch()
    request = {"outputs": 1, "reference_outputs": 1}
    with eval_scope(tracer):
        bare = threading.Thread(target=ev.invoke, args=(request,))
        context = contextvars.copy_context()
        carried = threading.Thread(target=context.run, args=(ev.invoke, request))
    bare.start()
    bare.join()
    assert tracer.events == []
    carried.start()
    carried.join()
    assert [e.kind for e in tracer.events] == ["start", "result"]


def test_custom_and_builtin_evaluators_emit_the_same_events():
    tracer = RecordingTracer()
    custom = evaluator(
        lambda *, outputs, reference_outputs: outputs == reference_outputs,
        run_name="custom",
        feedback_key="custom",
    )
    with eval_scope(tracer):
        custom(outputs=1, reference_outputs=1)
        ExactMatch()(outputs=1, reference_outputs=1)
    assert [(e.kind, e.evaluator) for e in tracer.events] == [
        ("start", "custom"),
        ("result", "custom"),
        ("start", "exact_match"),
        ("result", "exact_match"),
    ]


# --- LangChain integration ------------------------------------------------------------


class ChainEvents(BaseCallbackHandler):
    def __init__(self):
        self.started = []
        self.ended = []
        self.errors = []

    def on_chain_error(self, error, **kwargs):
        self.errors.append(error)

    def on_chain_start(self, serialized, inputs, **kwargs):
        self.started.append(kwargs.get("name"))

    def on_chain_end(self, outputs, **kwargs):
        self.ended.append(outputs)


def test_callbacks_see_the_evaluator_run_by_name():
    events = ChainEvents()
    ExactMatch().invoke({"outputs": 1, "reference_outputs": 1}, config={"callbacks": [events]})
    assert events.started == ["exact_match"]
    assert events.ended[0].score is True


async def test_callbacks_see_errors_on_both_paths():
    events = ChainEvents()
    ev = ExactMatch()
    with pytest.raises(EvaluatorInputError):
        ev.invoke({"outputs": 1}, config={"callbacks": [events]})
    with pytest.raises(EvaluatorInputError):
        await ev.ainvoke({"outputs": 1}, config={"callbacks": [events]})
    assert len(events.errors) == 2
    assert (
        await ev.ainvoke({"outputs": 1, "reference_outputs": 1}, config={"callbacks": [events]})
    ).score
    assert events.started == ["exact_match"] * 3


def test_run_name_from_config_wins():
    events = ChainEvents()
    ExactMatch().invoke(
        {"outputs": 1, "reference_outputs": 1}, config={"callbacks": [events], "run_name": "mine"}
    )
    assert events.started == ["mine"]


def test_evaluators_pipe_into_chains_with_a_real_model():
    model = ScriptedChatModel(
        responder=lambda messages: "Paris" if "France" in messages[-1].content else "?"
    )
    app = (
        ChatPromptTemplate.from_messages([("human", "Capital of {country}?")])
        | model
        | StrOutputParser()
    )
    chain = {
        "inputs": itemgetter("country"),
        "outputs": app,
        "reference_outputs": itemgetter("expected"),
    } | ExactMatch()
    results = chain.batch(
        [{"country": "France", "expected": "Paris"}, {"country": "Peru", "expected": "Lima"}]
    )
    assert [r.score for r in results] == [True, False]


def test_piping_a_bare_answer_says_what_came_and_shows_the_working_pattern():
    app = (
        ChatPromptTemplate.from_messages([("human", "Capital of {country}?")])
        | ScriptedChatModel(["Paris"])
        | StrOutputParser()
    )
    with pytest.raises(EvaluatorInputError) as caught:
        (app | ExactMatch()).invoke({"country": "France", "expected": "Paris"})
    message = str(caught.value)
    assert "received str 'Paris'" in message
    assert "TextAccessor" not in message
    assert '{"outputs": chain, "reference_outputs": itemgetter("answer")} | evaluator' in message


def test_with_retry_retries_failures():
    attempts = []

    def flaky(*, outputs):
        attempts.append(1)
        if len(attempts) < 3:
            raise EvaluationFailure("judge hiccup", code="provider_error")
        return True

    ev = evaluator(flaky, run_name="flaky", feedback_key="k").with_retry(
        retry_if_exception_type=(EvaluationFailure,),
        stop_after_attempt=3,
        wait_exponential_jitter=False,
    )
    assert ev.invoke({"outputs": "x"}).score is True
    assert len(attempts) == 3


def test_a_falsy_ambient_tracer_still_receives_events():
    class EmptyFirst(RecordingTracer):
        def __len__(self):
            return len(self.events)

    tracer = EmptyFirst()
    with eval_scope(tracer):
        ExactMatch()(outputs=1, reference_outputs=1)
    assert [e.kind for e in tracer.events] == ["start", "result"]


def test_eval_scope_fans_out_to_several_tracers():
    first, second = RecordingTracer(), RecordingTracer()
    with eval_scope(first, second):
        ExactMatch()(outputs=1, reference_outputs=1)
    assert len(first.events) == len(second.events) == 2


def test_numpy_bools_and_numbers_are_read_as_bools_and_numbers():
    import numpy

    cases = [
        (numpy.bool_(True), True),
        (numpy.bool_(False), False),
        (numpy.int64(3), 3.0),
        (numpy.float32(0.5), 0.5),
        ((numpy.bool_(False), "too long"), False),
        (Score(numpy.bool_(True), "ok"), True),
        ({"score": numpy.int32(2)}, 2.0),
    ]
    for returned, score in cases:
        result = evaluator(lambda *, outputs, v=returned: v, run_name="r", feedback_key="k").invoke(
            {"outputs": "x"}
        )
        assert result.score == score
        assert type(result.score) is type(score)  # a bool stays a pass/fail, not 1.0


def test_a_function_s_return_annotation_says_whether_it_scores_numbers():
    def as_float(*, outputs) -> float:
        return 0.5

    def as_int_or_none(*, outputs) -> int | None:
        return 1

    def as_tuple(*, outputs) -> tuple[float, str]:
        return 0.5, "half"

    def as_bool(*, outputs) -> bool:
        return True

    def unannotated(*, outputs):
        return True

    numeric = {f.__name__: evaluator(f).numeric_scores for f in (as_float, as_int_or_none)}
    numeric |= {f.__name__: evaluator(f).numeric_scores for f in (as_tuple, as_bool, unannotated)}
    assert numeric == {
        "as_float": True,
        "as_int_or_none": True,
        "as_tuple": True,
        "as_bool": False,
        "unannotated": False,
    }


@pytest.mark.parametrize(
    ("parameter", "meant"),
    [("output", "outputs"), ("input", "inputs"), ("reference_output", "reference_outputs")],
)
def test_a_misspelt_standard_parameter_is_named_at_construction(parameter, meant):
    namespace: dict[str, object] = {}
    exec(f"def judge(*, {parameter}):\n    return True", namespace)
    with pytest.raises(EvaluatorUsageError, match=f"'{parameter}'.*did you mean `{meant}`"):
        evaluator(namespace["judge"])
    # With a default it is a variable of that name, kept.
    exec(f"def judge(*, {parameter}=None):\n    return True", namespace)
    assert evaluator(namespace["judge"])(outputs="x")["score"] is True


def test_an_empty_feedback_key_is_refused():
    with pytest.raises(ValueError, match="feedback_key must name the results, got ''"):
        evaluator(feedback_key="")(lambda *, outputs: True)
    with pytest.raises(ValueError, match="feedback_key must name the results"):
        ExactMatch(feedback_key=" ")


def test_the_top_level_has_the_main_verbs_and_helpers_moved_to_their_packages_warn() -> None:
    import langchain_evals_port as package
    from langchain_evals_port import core, experiments

    assert package.run_experiment is experiments.run_experiment
    assert package.arun_experiment is experiments.arun_experiment
    assert "canonical_equal" not in package.__all__
    with pytest.warns(DeprecationWarning, match=r"import it from langchain_evals_port\.core$"):
        moved = package.canonical_equal
    assert moved is core.canonical_equal


def test_from_function_is_deprecated_for_evaluator() -> None:
    with pytest.warns(DeprecationWarning, match=r"use evaluator\(fn, run_name=\.\.\."):
        made = Evaluator.from_function("judge", "quality", lambda *, outputs: True)
    assert (made.get_name(), made.feedback_key) == ("judge", "quality")
    called = evaluator(lambda *, outputs: True, run_name="judge", feedback_key="quality")
    assert (called.get_name(), called.feedback_key) == ("judge", "quality")
