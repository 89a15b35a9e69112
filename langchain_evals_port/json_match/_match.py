"""``JsonMatch``: structured outputs against references, key by key."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Annotated, Any, ClassVar

from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.utils import gather_with_concurrency
from pydantic import Field, PrivateAttr, SkipValidation

from langchain_evals_port.core import EvalRequest, Evaluator, EvaluatorResult, OutputsKind
from langchain_evals_port.judge import LLMJudge, default_judge_configured

from ._objects import KeyPaths
from ._pairing import ListMatchMode
from ._plan import Plan, build_plan
from ._results import Aggregator, build_results
from ._rubric import SYSTEM_PROMPT, USER_PROMPT, JudgeCall, collect, judge_calls

Reply = Mapping[str, Any] | Exception

# Schemas differ with the number of list rows, so the judges kept per schema are capped.
_MAX_JUDGES = 64


class JsonMatch(Evaluator):
    """Compares a JSON object (or a list of them) with a reference, key by key.

    Keys without a rubric are compared with the canonical equality rule (``1`` equals
    ``1.0``, key order is ignored; ``True`` is not ``1``). Rubric keys present in both
    objects are graded by a judge model against their criterion. Lists of objects are
    paired first (``list_match_mode``), maximising the number of equal keys over all pairs.

    Results follow OpenEvals: ``json_match:<key>`` per key, sorted by key, or one
    ``json_match:average`` / ``json_match:all`` with an aggregator. For lists, a key's
    scores across pairs (or, with an aggregator, each pair's aggregate) are combined by
    ``list_aggregator``. PARITY.md lists where results differ from OpenEvals' and why.

    Args:
        aggregator: ``None`` (one result per key), ``"average"`` (the mean of the keys'
            scores) or ``"all"`` (1 when every key scores 1, else 0).
        list_aggregator: How scores combine across the pairs of two lists: ``"all"``
            (default) or ``"average"``.
        rubric: Key → criterion for keys graded by the judge instead of by equality.
        exclude_keys: Keys left out of the comparison.
        model: The judge for rubric keys: a chat model or a ``"provider:model"`` string.
            Without one, a rubric uses the default judge, which must be configured
            (``set_default_judge(...)`` or ``LANGCHAIN_EVALS_JUDGE``) when the evaluator is
            built; the default in force when it evaluates is the one used. A model without
            a rubric is an error, as in OpenEvals.
        use_reasoning: Ask the judge for its reasoning on each rubric key (the comment).
        list_match_mode: How lists pair up: ``"same_elements"`` (every output with a
            reference; leftovers on either side score 0), ``"subset"`` (outputs are among
            the references; extra references do not count), ``"superset"`` (the references
            are among the outputs; extra outputs do not count) or ``"ordered"`` (by
            position).
        feedback_key: The prefix of the result keys.

    ``rubric`` and ``exclude_keys`` accept dotted paths into nested objects
    (``"time.start"``): the path is graded (or left out) on its own, and the top-level key
    holding it is compared without it. With an aggregator, all rubric keys go to the judge
    in one call; without, each rubric key gets its own call, and ``ainvoke`` makes those
    calls concurrently (bounded by the config's ``max_concurrency``). A judge failure
    raises, or with ``on_error="record"`` becomes a ``failed`` result for the keys it
    concerns.

    Example:
        >>> ev = JsonMatch(exclude_keys=["id"])
        >>> [(r["key"], r["score"]) for r in ev(
        ...     outputs={"id": 1, "name": "Ada", "year": 1815},
        ...     reference_outputs={"id": 2, "name": "Ada", "year": 1816})]
        [('json_match:name', 1.0), ('json_match:year', 0.0)]
        >>> ev = JsonMatch(aggregator="average", list_aggregator="average")
        >>> [result] = ev.invoke({
        ...     "outputs": [{"a": 1, "b": 1, "c": 0}, {"a": 1, "b": 1, "c": 1}],
        ...     "reference_outputs": [{"a": 1, "b": 1, "c": 1}, {"a": 1, "b": 9, "c": 0}],
        ... })
        >>> result.score
        0.8333333333333333
    """

    aggregator: Aggregator | None = None
    list_aggregator: Aggregator = "all"
    rubric: dict[str, str] = Field(default_factory=dict)
    exclude_keys: list[str] = Field(default_factory=list)
    model: Annotated[str | Runnable[Any, Any] | None, SkipValidation] = Field(
        default=None, exclude=True
    )
    use_reasoning: bool = True
    list_match_mode: ListMatchMode = "same_elements"
    feedback_key: str = "json_match"
    default_name: ClassVar[str | None] = "json_match_evaluator"
    outputs_kind: ClassVar[OutputsKind] = "json"

    @property
    def numeric_scores(self) -> bool:
        """Scores are numbers: each key's (or the aggregate's) share of matching fields."""
        return True

    _paths: KeyPaths = PrivateAttr()
    _judges: dict[str, LLMJudge] = PrivateAttr(default_factory=dict)

    def model_post_init(self, context: Any, /) -> None:
        """Check the rubric against the judge model and resolve the key paths once."""
        if self.model is not None and not isinstance(self.model, (str, Runnable)):
            raise ValueError(
                "model must be a LangChain chat model or a 'provider:model' string, got "
                f"{type(self.model).__name__}"
            )
        if self.model is not None and not self.rubric:
            raise ValueError(
                "a judge model is only used for rubric keys; pass rubric={key: criterion} "
                "or drop the model"
            )
        if self.rubric and self.model is None and not default_judge_configured():
            raise ValueError(
                "rubric keys are graded by a judge model: pass model=..., or configure a "
                "default judge (langchain_evals_port.set_default_judge(model) or "
                "LANGCHAIN_EVALS_JUDGE='provider:model') before building the evaluator"
            )
        self._paths = KeyPaths.of(self.rubric, self.exclude_keys)

    def _score(self, request: EvalRequest, config: RunnableConfig) -> list[EvaluatorResult]:
        plan, calls = self._prepare(request)
        # A generator: with on_error="raise" the first failure stops further calls.
        replies = (_ask(self._judge(call).evaluate_raw, call) for call in calls)
        return self._finish(plan, calls, replies)

    async def _ascore(self, request: EvalRequest, config: RunnableConfig) -> list[EvaluatorResult]:
        # Pairing is CPU work of milliseconds; only the judge's calls are worth awaiting.
        plan, calls = self._prepare(request)
        replies = await gather_with_concurrency(
            config.get("max_concurrency"),
            *(_aask(self._judge(call).aevaluate_raw, call) for call in calls),
        )
        return self._finish(plan, calls, replies)

    def _prepare(self, request: EvalRequest) -> tuple[Plan, list[JudgeCall]]:
        outputs, references = request.require(
            "outputs", "reference_outputs", evaluator=self.get_name()
        )
        plan = build_plan(
            outputs, references, self._paths, self.list_match_mode, evaluator=self.get_name()
        )
        calls = judge_calls(
            plan.entries,
            self.rubric,
            use_reasoning=self.use_reasoning,
            together=self.aggregator is not None,
        )
        return plan, calls

    def _judge(self, call: JudgeCall) -> LLMJudge:
        # One judge per output schema, kept across evaluations, so what a judge learns about
        # its model (auto mode's fallback, the structured runnable) is not thrown away.
        key = json.dumps(call.schema, sort_keys=True)
        judge = self._judges.get(key)
        if judge is None:
            if len(self._judges) >= _MAX_JUDGES:
                self._judges.pop(next(iter(self._judges)))
            judge = self._judges[key] = LLMJudge(
                prompt=USER_PROMPT,
                system=SYSTEM_PROMPT,
                model=self.model,
                output_schema=call.schema,
                feedback_key=self.feedback_key,
            )
        return judge

    def _finish(
        self, plan: Plan, calls: Sequence[JudgeCall], replies: Iterable[Reply]
    ) -> list[EvaluatorResult]:
        verdicts, failures = collect(calls, replies, record_failures=self.on_error == "record")
        return build_results(
            plan,
            verdicts,
            failures,
            feedback_key=self.feedback_key,
            aggregator=self.aggregator,
            list_aggregator=self.list_aggregator,
        )


def _ask(evaluate_raw: Callable[..., dict[str, Any]], call: JudgeCall) -> Reply:
    try:
        return evaluate_raw(**call.variables)
    except Exception as error:
        return error


async def _aask(evaluate_raw: Callable[..., Awaitable[dict[str, Any]]], call: JudgeCall) -> Reply:
    try:
        return await evaluate_raw(**call.variables)
    except Exception as error:
        return error
