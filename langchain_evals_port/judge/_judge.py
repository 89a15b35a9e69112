"""``LLMJudge``: a chat model grades an output against a prompt."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from langchain_core.caches import BaseCache
from langchain_core.messages import BaseMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.prompts.structured import StructuredPrompt
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config, get_executor_for_config
from langchain_core.runnables.utils import gather_with_concurrency
from langchain_core.utils.function_calling import convert_to_json_schema
from pydantic import BaseModel, Field, PrivateAttr, SkipValidation, StrictBool, field_validator

from langchain_evals_port.core import EvalRequest, Evaluator, Score
from langchain_evals_port.core.errors import EvaluatorInputError, EvaluatorUsageError
from langchain_evals_port.prompts import PromptText

from ._cache_scope import CacheLabels
from ._defaults import current_defaults, judge_model
from ._ensemble import Vote, decide
from ._model import (
    JudgeModel,
    ResolvedJudge,
    checked_cache,
    checked_model,
    keyed_by_sample,
    resolve_judge,
)
from ._render import FewShotExample, PromptSource, Template, build_messages
from ._structured import (
    Conversation,
    JudgeReply,
    StructuredOutputMode,
    Validator,
    ask_for_json,
    run_async,
    run_sync,
)

_CONTINUOUS = (
    "How well the output meets the prompt's criteria, from 0.0 (not at all) to 1.0 (fully); "
    "0.5 means half of them are met."
)
_CHOICES = "How well the output meets the prompt's criteria, as one of the allowed values."
_BOOLEAN = "true when the output meets the prompt's criteria, false when it does not."
_REASONING = (
    "Your step-by-step reasoning about the criteria, written before you decide the score, "
    "ending with a sentence that states the score you give."
)


@dataclass(frozen=True)
class _Plan:
    """What a judge works out once from its configuration (read once per evaluation)."""

    prompt: Template | PromptSource
    prompt_name: str
    optional: tuple[str, ...]
    schema: Any
    schema_json: dict[str, Any]
    validate: Validator
    custom: bool
    cache_label: str


class LLMJudge(Evaluator):
    """Grades outputs with a chat model and a prompt; the result's comment is its reasoning.

    Args:
        prompt: A template string with ``{variables}`` (e.g. ``prompts.CORRECTNESS_PROMPT``),
            a ``ChatPromptTemplate`` or ``StructuredPrompt``, or a callable returning messages.
        model: A ``BaseChatModel`` (also wrapped by ``.bind``/``.with_retry``/
            ``.with_config``), a ``"provider:model"`` string, or None for the default judge.
        feedback_key: The result key. By default the catalog prompt's name for a prompt of
            the catalog (``prompts.CONCISENESS_PROMPT`` → ``"conciseness"``), else
            ``"score"`` as in OpenEvals (whose ``create_llm_as_judge`` in
            ``compat.openevals`` keeps ``"score"`` for every prompt).
        system: A system message, for template-string prompts.
        continuous: Score from 0.0 to 1.0 instead of true/false.
        choices: Restrict the score to these numbers (wins over ``continuous``).
        use_reasoning: Ask for reasoning before the score (the result's comment).
        few_shot_examples: Graded examples appended to the prompt.
        output_schema: A JSON schema, pydantic model or TypedDict for classification; read
            the object with ``evaluate_raw`` (a ``score`` field, if any, also scores).
        structured_output_mode: ``"auto"``, ``"native"`` or ``"prompted"`` (see
            ``langchain_evals_port.judge``).
        structured_output_method: Force the ``with_structured_output`` method (e.g.
            ``"function_calling"``); by default ``"json_schema"`` for OpenAI-style providers
            and the provider's own default otherwise.
        prompt_without_reference: A second prompt, used for evaluations that pass no
            ``reference_outputs`` (e.g. a trajectory prompt with and without a reference).
        cache: A LangChain cache (e.g. ``SqliteCache(path)``) the judge's model calls answer
            from: the judge calls ``with_cache(model, cache)``, so an unchanged re-run makes
            no model calls, and the model passed in stays uncached. Only replies the judge
            accepts are stored. ``None`` (default): the cache of ``judge_defaults``, if any,
            else the model's own ``cache`` setting.
        samples: Ask the model this many times and combine the replies (self-consistency):
            true/false scores by majority (a tie is inconclusive, so prefer an odd number),
            numeric ones by their mean. The samples are asked concurrently with ``ainvoke``
            (in LangChain's thread pool with ``invoke``); the result's metadata lists each
            sample's score and reasoning (``samples``) and their agreement (``agreement``
            or ``spread``, and ``disagreement``), and its comment says how they decided,
            then gives the reasoning of a sample that agrees with the decision. A sample
            whose reply cannot be read or whose call fails abstains; only when every sample
            fails does the evaluation fail. With a cache, each sample is its own entry (the
            first sample shares the entry of the same judge asking once): a first run makes
            ``samples`` model calls, a re-run none.
            ``evaluate_raw`` asks once. Default 1: one call, as without this setting.
        max_disagreement: With ``samples`` > 1, an inconclusive result when the samples
            disagree beyond this: the share of true/false verdicts in the minority (0 to
            0.5), or the spread of numeric scores (highest minus lowest).

    Subclasses adapt requests by overriding ``prepare_request`` (called before every
    rendering, for ``invoke``, ``ainvoke`` and ``evaluate_raw`` alike).

    Example:
        >>> from langchain_evals_port.testing import ScriptedChatModel
        >>> judge = LLMJudge(
        ...     prompt="Is this answer concise? {outputs}",
        ...     feedback_key="conciseness",
        ...     model=ScriptedChatModel([{"reasoning": "One word.", "score": True}]),
        ... )
        >>> judge(outputs="Paris")["score"]
        True
    """

    prompt: Annotated[PromptSource, SkipValidation] = Field(exclude=True)
    model: Annotated[JudgeModel | None, SkipValidation] = Field(default=None, exclude=True)
    feedback_key: str = "score"
    system: str | None = None
    # Strict: "yes" or 1 is a mistake to name, not a truthy value to read as True.
    continuous: StrictBool = False
    choices: list[float] | None = None
    use_reasoning: StrictBool = True
    few_shot_examples: Sequence[FewShotExample] = ()
    # Stored under another name: ``output_schema`` is a Runnable property (its output type).
    custom_schema: Annotated[dict[str, Any] | type | None, SkipValidation] = Field(
        default=None, alias="output_schema", exclude=True
    )
    structured_output_mode: StructuredOutputMode = "auto"
    structured_output_method: str | None = None
    prompt_without_reference: Annotated[PromptSource | None, SkipValidation] = Field(
        default=None, exclude=True
    )
    cache: Annotated[BaseCache | None, SkipValidation] = Field(default=None, exclude=True)
    samples: int = Field(default=1, ge=1)
    max_disagreement: float | None = Field(default=None, ge=0)

    _plan: _Plan = PrivateAttr()
    _plan_without_reference: _Plan | None = PrivateAttr(default=None)
    # The resolved judge, with the model, cache and ``judge_defaults`` it was made from, and
    # the judges of the samples after the first (their replies cached under their number).
    _resolved: tuple[tuple[Any, ...], ResolvedJudge, list[ResolvedJudge]] | None = PrivateAttr(
        default=None
    )

    @field_validator("model")
    @classmethod
    def _check_model(cls, model: Any) -> Any:
        return None if model is None else checked_model(model)

    @field_validator("cache")
    @classmethod
    def _check_cache(cls, cache: Any) -> Any:
        return None if cache is None else checked_cache(cache)

    def model_post_init(self, context: Any, /) -> None:
        """Check the configuration and build the output schema once."""
        if self.system is not None and not isinstance(self.prompt, str):
            raise ValueError("system is only supported when prompt is a template string")
        if self.choices is not None and (
            not self.choices
            or not all(
                isinstance(c, (int, float)) and not isinstance(c, bool) for c in self.choices
            )
        ):
            raise ValueError(f"choices must be a non-empty list of numbers, got {self.choices!r}")
        if self.max_disagreement is not None and self.samples == 1:
            raise ValueError("max_disagreement compares samples: set samples to 2 or more")
        self.few_shot_examples = tuple(_few_shot(example) for example in self.few_shot_examples)
        custom = self.custom_schema
        if isinstance(self.prompt, StructuredPrompt):
            if custom is not None:
                raise ValueError(
                    "pass either output_schema or a StructuredPrompt with a schema, not both"
                )
            custom = self.prompt.schema_
        schema: Any
        schema_json: dict[str, Any]
        validate: Validator
        if custom is None:
            schema = schema_json = self._score_schema()
            validate = self._check_score
        else:
            schema = custom
            schema_json, validate = _custom_schema(custom)
        self._plan = _plan(self.prompt, schema, schema_json, validate, custom is not None)
        if self.prompt_without_reference is not None:
            self._plan_without_reference = _plan(
                self.prompt_without_reference, schema, schema_json, validate, custom is not None
            )
        if isinstance(self.prompt, PromptText) and not self._feedback_key_chosen():
            self.feedback_key = self.prompt.entry.feedback_key
        if self.name is None:
            key = self.feedback_key
            self.name = "llm_as_judge" if key == "score" else f"llm_as_{key}_judge"

    def _feedback_key_chosen(self) -> bool:
        """Whether the key was given, or is a subclass's own (``"trajectory_accuracy"``)."""
        class_default = type(self).model_fields["feedback_key"].default
        return "feedback_key" in self.model_fields_set or class_default != "score"

    @property
    def numeric_scores(self) -> bool:
        """Scores are numbers when the judge is ``continuous`` or has ``choices``."""
        return self.continuous or bool(self.choices)

    @property
    def response_schema(self) -> Any:
        """What the judge hands to ``with_structured_output``: the score schema (a JSON
        schema dict, reasoning before score) or the custom output schema as given."""
        return self._plan.schema

    @property
    def has_output_schema(self) -> bool:
        """True when the judge answers in its own output schema (read it with
        ``evaluate_raw``) rather than the score schema."""
        return self._plan.custom

    # --- scoring ---------------------------------------------------------------------------

    def _score(self, request: EvalRequest, config: RunnableConfig) -> Score:
        self._check_scorable()
        started = time.perf_counter()
        if self.samples > 1:
            return self._sampled(request, config, started)
        conversation, model, labels = self._conversation(request)
        return self._to_score(run_sync(conversation, config, labels), model, started)

    async def _ascore(self, request: EvalRequest, config: RunnableConfig) -> Score:
        self._check_scorable()
        started = time.perf_counter()
        if self.samples > 1:
            return await self._asampled(request, config, started)
        conversation, model, labels = self._conversation(request)
        return self._to_score(await run_async(conversation, config, labels), model, started)

    def _sampled(self, request: EvalRequest, config: RunnableConfig, started: float) -> Score:
        asks, labels = self._conversations(request)

        def sample(index: int) -> Vote:
            conversation, judge = asks[index]
            began = time.perf_counter()
            try:
                reply = run_sync(conversation, config, labels)
            except (EvaluatorInputError, EvaluatorUsageError):
                raise
            except Exception as error:
                return Vote.of_error(f"sample {index + 1}", self.feedback_key, error)
            return self._sample_vote(index, reply, judge, began)

        with get_executor_for_config(config) as executor:
            votes = list(executor.map(sample, range(len(asks))))
        return self._combine(votes, asks[0][1], started)

    async def _asampled(
        self, request: EvalRequest, config: RunnableConfig, started: float
    ) -> Score:
        asks, labels = self._conversations(request)

        async def sample(index: int) -> Vote:
            conversation, judge = asks[index]
            began = time.perf_counter()
            try:
                reply = await run_async(conversation, config, labels)
            except (EvaluatorInputError, EvaluatorUsageError):
                raise
            except Exception as error:
                return Vote.of_error(f"sample {index + 1}", self.feedback_key, error)
            return self._sample_vote(index, reply, judge, began)

        votes = await gather_with_concurrency(
            config.get("max_concurrency"), *(sample(index) for index in range(len(asks)))
        )
        return self._combine(list(votes), asks[0][1], started)

    def _sample_vote(
        self, index: int, reply: JudgeReply, judge: ResolvedJudge, started: float
    ) -> Vote:
        score = self._to_score(reply, judge, started)
        metadata = {key: value for key, value in score.metadata.items() if key != "judge_model"}
        result = Score(score.value, score.comment, metadata).to_result(self.feedback_key)
        return Vote(f"sample {index + 1}", result)

    def _combine(self, votes: list[Vote], judge: ResolvedJudge, started: float) -> Score:
        if all(vote.result.outcome == "failed" for vote in votes):
            # As when asking once: the judge's own error, which ``on_error`` then handles.
            error = votes[0].error
            assert error is not None
            raise error
        numbers = any(
            vote.result.is_verdict and not isinstance(vote.result.score, bool) for vote in votes
        )
        decision = decide(
            votes,
            "mean" if numbers else "majority",
            max_disagreement=self.max_disagreement,
            what="samples",
        )
        samples = [vote.result.metadata for vote in votes]
        metadata: dict[str, Any] = {
            "judge_model": judge.name,
            "structured_output": next(
                (m["structured_output"] for m in samples if "structured_output" in m), None
            ),
            "repairs": sum(m.get("repairs", 0) for m in samples),
            "latency_ms": round((time.perf_counter() - started) * 1000, 3),
        }
        usage: dict[str, int] = {}
        for sample in samples:
            for key, value in sample.get("token_usage", {}).items():
                usage[key] = usage.get(key, 0) + value
        if usage:
            metadata["token_usage"] = usage
        chosen = decision.representative
        if self._plan.custom and chosen is not None:
            metadata["output"] = chosen.result.metadata.get("output")
        reasoning = chosen.result.comment if chosen is not None else None
        comment = decision.summary + (f"\n\n{reasoning}" if reasoning else "")
        return decision.to_score(comment, **metadata)

    def evaluate_raw(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **variables: Any,
    ) -> dict[str, Any]:
        """The judge's validated JSON object itself, for a custom ``output_schema``."""
        request = EvalRequest.of(
            inputs=inputs, outputs=outputs, reference_outputs=reference_outputs, **variables
        )
        conversation, _, labels = self._conversation(request)
        return run_sync(conversation, ensure_config(), labels).parsed

    async def aevaluate_raw(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **variables: Any,
    ) -> dict[str, Any]:
        """The async twin of ``evaluate_raw``."""
        request = EvalRequest.of(
            inputs=inputs, outputs=outputs, reference_outputs=reference_outputs, **variables
        )
        conversation, _, labels = self._conversation(request)
        return (await run_async(conversation, ensure_config(), labels)).parsed

    def _check_scorable(self) -> None:
        # Checked before the model is called: a schema without a score cannot be scored.
        plan = self._plan
        if plan.custom and "score" not in plan.schema_json.get("properties", {}):
            raise EvaluatorUsageError(
                f"judge {self.get_name()!r} has an output schema without a 'score' field; "
                "read its object with evaluate_raw(...)"
            )

    def prepare_request(self, request: EvalRequest) -> EvalRequest:
        """The request as the prompt should see it; subclasses override this to reshape
        values (the base judge passes the request through)."""
        return request

    def _conversation(
        self, request: EvalRequest
    ) -> tuple[Conversation, ResolvedJudge, CacheLabels]:
        """The conversation with the judge's model, the judge, and the labels its cache
        entries carry (this judge's key, the prompt rendered)."""
        judge = self._judge()
        messages, plan = self._messages(request)
        return self._ask(messages, plan, judge), judge, self._cache_labels(plan)

    def _conversations(
        self, request: EvalRequest
    ) -> tuple[list[tuple[Conversation, ResolvedJudge]], CacheLabels]:
        """One conversation per sample, each with its own judge (see ``_judge``), and the
        labels of their cache entries."""
        first = self._judge()
        messages, plan = self._messages(request)
        judges = [first, *self._sample_judges(first)]
        asks = [(self._ask(messages, plan, judge), judge) for judge in judges]
        return asks, self._cache_labels(plan)

    def _cache_labels(self, plan: _Plan) -> CacheLabels:
        return CacheLabels(judge=self.feedback_key, prompt=plan.cache_label)

    def _messages(self, request: EvalRequest) -> tuple[list[BaseMessage], _Plan]:
        """The prompt's messages for ``request``, and the plan they were rendered with."""
        request = self.prepare_request(request)
        plan = self._plan
        if self._plan_without_reference is not None and not request.reference_outputs:
            plan = self._plan_without_reference
        messages = build_messages(
            plan.prompt,
            request,
            system=self.system,
            few_shot_examples=self.few_shot_examples,
            optional=plan.optional,
            prompt_name=plan.prompt_name,
        )
        return messages, plan

    def _ask(self, messages: list[BaseMessage], plan: _Plan, judge: ResolvedJudge) -> Conversation:
        return ask_for_json(
            judge,
            messages,
            schema=plan.schema,
            schema_json=plan.schema_json,
            validate=plan.validate,
            mode=self.structured_output_mode,
        )

    def _judge(self) -> ResolvedJudge:
        # What is fixed about a model (its name, its structured-output runnable, what auto
        # mode learnt) is worked out once per model, cache and ``judge_defaults`` scope; the
        # default judge may change between evaluations, so it is looked up every time, and
        # a copy of the judge may have another cache.
        model = resolve_judge(self.model)
        defaults = current_defaults()
        key = (model, self.cache, defaults)
        memo = self._resolved
        if memo is not None and all(a is b for a, b in zip(memo[0], key, strict=True)):
            return memo[1]
        judged = judge_model(model, cache=self.cache, defaults=defaults)
        resolved = ResolvedJudge.of(judged, self.structured_output_method)
        self._resolved = (key, resolved, [])
        return resolved

    def _sample_judges(self, first: ResolvedJudge) -> list[ResolvedJudge]:
        # The same model asked the same messages has one cache key; the samples after the
        # first are keyed by their number too (``keyed_by_sample``), so a cache answers
        # each with its own reply rather than all with the first's.
        memo = self._resolved
        judges = memo[2] if memo is not None and memo[1] is first else []
        while len(judges) < self.samples - 1:
            model = keyed_by_sample(first.model, len(judges) + 2)
            judges.append(ResolvedJudge(model, first.name, first.method, first.prompted))
        return judges[: self.samples - 1]

    def _to_score(self, reply: JudgeReply, judge: ResolvedJudge, started: float) -> Score:
        metadata: dict[str, Any] = {
            "judge_model": judge.name,
            "structured_output": reply.path,
            "repairs": reply.repairs,
            "latency_ms": round((time.perf_counter() - started) * 1000, 3),
        }
        if reply.usage:
            metadata["token_usage"] = reply.usage
        parsed = reply.parsed
        if self._plan.custom:
            metadata["output"] = parsed
        comment = parsed.get("reasoning")
        return Score(parsed["score"], comment if isinstance(comment, str) else None, metadata)

    # --- the default score schema ----------------------------------------------------------

    def _score_schema(self) -> dict[str, Any]:
        if self.choices:
            description = _CHOICES
            score: dict[str, Any] = {
                "type": "number",
                "description": description,
                "enum": self.choices,
            }
        elif self.continuous:
            description = _CONTINUOUS
            score = {"type": "number", "description": description}
        else:
            description = _BOOLEAN
            score = {"type": "boolean", "description": description}
        properties: dict[str, Any] = {}
        if self.use_reasoning:
            # Reasoning comes first so the model reasons before it commits to a score.
            properties["reasoning"] = {"type": "string", "description": _REASONING}
        properties["score"] = score
        return {
            "title": "score",
            "description": description,
            "type": "object",
            "additionalProperties": False,
            "properties": properties,
            "required": list(properties),
        }

    def _check_score(self, parsed: Any) -> str | None:
        if not isinstance(parsed, Mapping):
            return "the reply is not a JSON object"
        if "score" not in parsed:
            return "the reply has no 'score'"
        score = parsed["score"]
        if self.use_reasoning and not isinstance(parsed.get("reasoning"), str):
            return "the reply has no 'reasoning' string"
        if self.choices:
            if not _is_number(score) or score not in self.choices:
                return f"score {score!r} is not one of the choices {self.choices}"
        elif self.continuous:
            if not _is_number(score) or not 0.0 <= score <= 1.0:
                return f"score {score!r} is not a number from 0.0 to 1.0"
        elif not isinstance(score, bool):
            return f"score {score!r} is not true or false"
        return None


def _cache_label(prompt: PromptSource) -> str:
    """How the judge cache labels a prompt: its text, a chat prompt's ``pretty_repr``, a
    prompt function's qualified name."""
    if isinstance(prompt, str):
        return str(prompt)
    if isinstance(prompt, ChatPromptTemplate):
        return prompt.pretty_repr()
    return f"{getattr(prompt, '__module__', '?')}.{getattr(prompt, '__qualname__', repr(prompt))}"


def _plan(
    prompt: PromptSource,
    schema: Any,
    schema_json: dict[str, Any],
    validate: Validator,
    custom: bool,
) -> _Plan:
    if not isinstance(prompt, (str, ChatPromptTemplate)) and not callable(prompt):
        raise ValueError(
            "prompt must be a template string, a ChatPromptTemplate or a callable returning "
            f"messages, got {type(prompt).__name__}"
        )
    entry: Any = getattr(prompt, "entry", None)
    if getattr(entry, "classifies", False) and not custom:
        raise ValueError(
            f"{entry.name} asks for a label, not a score: pass output_schema=... describing "
            "the label and read it with evaluate_raw(...)"
        )
    template = Template.parse(prompt) if isinstance(prompt, str) else prompt
    variables = (
        template.variables
        if isinstance(template, Template)
        else getattr(template, "input_variables", None)
    )
    if variables is not None and not variables:
        raise ValueError(
            f"the prompt {_shown(prompt)} has no variables, so the judge would never see the "
            "output it grades; put {outputs} where the answer goes (and {inputs}, "
            "{reference_outputs} or your own variables as needed)"
        )
    return _Plan(
        prompt=template,
        prompt_name=_prompt_name(prompt),
        optional=tuple(getattr(entry, "optional_variables", ())),
        schema=schema,
        schema_json=schema_json,
        validate=validate,
        custom=custom,
        cache_label=_cache_label(prompt),
    )


def _shown(prompt: PromptSource) -> str:
    if isinstance(prompt, str):
        return repr(prompt if len(prompt) <= 60 else prompt[:57] + "...")
    return type(prompt).__name__


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _few_shot(example: FewShotExample | Mapping[str, Any]) -> FewShotExample:
    if isinstance(example, FewShotExample):
        return example
    if isinstance(example, Mapping):
        return FewShotExample(
            inputs=example.get("inputs"),
            outputs=example.get("outputs"),
            score=example["score"],
            reasoning=example.get("reasoning"),
        )
    raise ValueError(
        f"few_shot_examples must hold FewShotExample or dicts, got {type(example).__name__}"
    )


def _custom_schema(schema: Any) -> tuple[dict[str, Any], Validator]:
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        model = schema

        def validate_model(parsed: Any) -> str | None:
            try:
                model.model_validate(parsed)
            except ValueError as error:
                return f"the reply does not match {model.__name__}: {error}"
            return None

        return model.model_json_schema(), validate_model
    json_schema = schema if isinstance(schema, dict) else convert_to_json_schema(schema)
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(json_schema)

    def validate_json(parsed: Any) -> str | None:
        error = next(iter(validator.iter_errors(parsed)), None)
        return None if error is None else f"the reply does not match the schema: {error.message}"

    return json_schema, validate_json


def _prompt_name(prompt: PromptSource) -> str:
    entry = getattr(prompt, "entry", None)
    if entry is not None:
        return str(entry.name)
    if isinstance(prompt, str):
        first = prompt.strip().splitlines()[0] if prompt.strip() else ""
        return repr(first[:60] + ("..." if len(first) > 60 else ""))
    if isinstance(prompt, ChatPromptTemplate):
        return type(prompt).__name__
    return getattr(prompt, "__name__", type(prompt).__name__)
