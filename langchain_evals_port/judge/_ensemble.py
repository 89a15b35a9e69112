"""``JudgeEnsemble``: several evaluators judge one request and a strategy decides.

The deciding is written once (``decide``) for the two places that combine verdicts: an
ensemble of different judges, and one judge asked several times (``LLMJudge(samples=k)``).

How a decision is made from the votes (each member's or sample's result):

* only verdicts vote; a member that failed (a judge error) or was inconclusive abstains, and
  is listed with its reason;
* no verdict at all: when every vote failed there is nothing to decide and the evaluation
  fails (``on_error`` applies); otherwise it is inconclusive;
* disagreement among the verdicts beyond ``max_disagreement`` makes it inconclusive — for
  true/false verdicts the share of verdicts in the minority (0 to 0.5), for numbers their
  spread (highest minus lowest);
* ``"majority"``: true when more verdicts say true than false, false when more say false,
  inconclusive on a tie;
* ``"mean"``: the mean of the verdicts, true/false counting as 1/0;
* ``"unanimous"``: false as soon as one verdict is false (even when others abstained), true
  when every vote is a true verdict, and inconclusive when no verdict is false but some vote
  failed or was inconclusive (unanimity cannot be known without it).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import get_executor_for_config
from langchain_core.runnables.utils import gather_with_concurrency
from pydantic import Field, PrivateAttr, SkipValidation

from langchain_evals_port.core import EvalRequest, Evaluator, EvaluatorResult, Score
from langchain_evals_port.core.errors import (
    EvaluationFailure,
    EvaluatorInputError,
    EvaluatorUsageError,
)

Strategy = Literal["majority", "mean", "unanimous"]
"""How an ensemble decides (see ``JudgeEnsemble``)."""


@dataclass(frozen=True)
class Vote:
    """One member's (or one sample's) result, and the exception behind it when it failed."""

    label: str
    result: EvaluatorResult
    error: BaseException | None = None

    @classmethod
    def of_error(cls, label: str, key: str, error: BaseException) -> Vote:
        """The vote of a member or sample that raised ``error``."""
        return cls(label, EvaluatorResult.of_error(key, error), error)

    def to_dict(self) -> dict[str, Any]:
        """The vote as result metadata shows it."""
        result = self.result
        entry: dict[str, Any] = {
            "name": self.label,
            "key": result.key,
            "outcome": result.outcome,
            "score": result.score,
            "reasoning": result.comment,
        }
        if not result.is_verdict:
            entry["reason"] = result.reason
        if result.error_code is not None:
            entry["error_code"] = result.error_code
        if result.metadata:
            entry["metadata"] = result.metadata
        return entry

    def line(self) -> str:
        """One line for the result's comment: the name, the verdict, the reasoning."""
        result = self.result
        if result.is_verdict:
            head = f"{self.label}: {_shown(result.score)}"
            reasoning = " ".join((result.comment or "").split())
            return f"{head} — {reasoning}" if reasoning else head
        code = f": {result.error_code}" if result.error_code else ""
        return f"{self.label}: [{result.outcome}{code}] {result.reason}"


@dataclass(frozen=True)
class Decision:
    """What ``decide`` made of the votes.

    Attributes:
        score: The decided score, or None when there is no verdict.
        reason: Why there is no verdict (None when there is one).
        all_failed: True when every vote failed, so there was nothing to decide.
        summary: One line saying how the decision was reached.
        metadata: The strategy, the votes, their agreement (see ``decide``).
        representative: The first verdict that agrees with the decision (for ``"mean"``:
            the one closest to the mean), whose reasoning best explains it.
    """

    score: bool | float | None
    reason: str | None
    all_failed: bool
    summary: str
    metadata: dict[str, Any] = field(default_factory=dict)
    representative: Vote | None = None

    def to_score(self, comment: str, **metadata: Any) -> Score:
        """The decision as a ``Score`` with ``comment``, extra ``metadata`` first."""
        merged = {**metadata, **self.metadata}
        if self.reason is not None:
            return Score(None, comment, merged, inconclusive=self.reason)
        return Score(self.score, comment, merged)


def decide(
    votes: Sequence[Vote],
    strategy: Strategy,
    *,
    max_disagreement: float | None,
    what: str,
) -> Decision:
    """Decide from ``votes`` by ``strategy`` (see the module docstring).

    ``what`` names the voters in messages and in the metadata (``"members"``,
    ``"samples"``). The metadata holds the ``strategy``, the votes (under ``what``), the
    number of ``verdicts``, and their ``disagreement``: for true/false verdicts also
    ``votes`` (how many said true and false) and ``agreement`` (the share agreeing with the
    most common verdict), for numbers ``spread`` and ``stdev``.

    Raises:
        EvaluatorUsageError: ``"majority"`` or ``"unanimous"`` got a numeric verdict.
    """
    verdicts = [vote for vote in votes if vote.result.is_verdict]
    abstained = [vote for vote in votes if not vote.result.is_verdict]
    failed = sum(vote.result.outcome == "failed" for vote in votes)
    metadata: dict[str, Any] = {
        "strategy": strategy,
        what: [vote.to_dict() for vote in votes],
        "verdicts": len(verdicts),
    }
    abstentions = _abstentions(abstained, failed)
    if not verdicts:
        reason = f"no {what[:-1]} reached a verdict ({abstentions})"
        return Decision(None, reason, failed == len(votes), reason, metadata)
    if strategy != "mean":
        for vote in verdicts:
            if not isinstance(vote.result.score, bool):
                raise EvaluatorUsageError(
                    f"strategy {strategy!r} needs true/false verdicts, but {vote.label} "
                    f"scored {vote.result.score!r}; use strategy='mean' for numeric scores"
                )
    scores = [vote.result.score for vote in verdicts]
    count = len(scores)
    if strategy == "mean":
        values = [float(score) for score in scores if score is not None]
        disagreement = max(values) - min(values)
        mean = statistics.fmean(values)
        metadata.update(spread=disagreement, stdev=statistics.pstdev(values))
        described = f"spread {disagreement:.2f}"
    else:
        trues = sum(score is True for score in scores)
        falses = count - trues
        disagreement = min(trues, falses) / count
        metadata.update(
            votes={"true": trues, "false": falses}, agreement=max(trues, falses) / count
        )
        described = f"{trues} true, {falses} false"
    metadata["disagreement"] = disagreement
    of = f"{count} of {len(votes)} {what} gave a verdict ({described})"
    if abstentions:
        of += f"; {abstentions}"
    if max_disagreement is not None and disagreement > max_disagreement:
        reason = (
            f"the {what} disagree: disagreement {disagreement:.2f} exceeds "
            f"max_disagreement {max_disagreement:g}"
        )
        return Decision(None, reason, False, f"{strategy}: {of}; {reason}", metadata)
    if strategy == "mean":
        closest = min(verdicts, key=lambda vote: abs(float(vote.result.score or 0) - mean))
        return Decision(mean, None, False, f"mean {mean:.2f}: {of}", metadata, closest)
    decided: bool | None
    if strategy == "majority":
        decided = None if trues == falses else trues > falses
        why = "a tie" if decided is None else None
    elif falses:
        decided, why = False, None
    else:
        decided = None if abstained else True
        why = f"unanimity needs every {what[:-1]}'s verdict ({abstentions})"
    if decided is None:
        reason = f"no {strategy} decision: {why}"
        return Decision(None, reason, False, f"{strategy}: {of}; {reason}", metadata)
    agreeing = next(vote for vote in verdicts if vote.result.score is decided)
    summary = f"{strategy} says {_shown(decided)}: {of}"
    return Decision(decided, None, False, summary, metadata, agreeing)


class JudgeEnsemble(Evaluator):
    """Several evaluators judge the same request concurrently; a strategy decides.

    The result's metadata lists every member's score, outcome and reasoning
    (``metadata["members"]``) and how much they agree (``agreement`` or ``spread``, and
    ``disagreement``); its comment says how the decision was reached, then one line per
    member. A member that fails (its judge's model raised, its reply could not be read) is
    reported there and abstains: the others still decide when the strategy allows.

    Strategies (only verdicts vote; failed and inconclusive members abstain):

    * ``"majority"`` (true/false verdicts): the side with more verdicts; a tie is
      inconclusive.
    * ``"mean"``: the mean of the verdicts, true/false counting as 1/0; the score is a number.
    * ``"unanimous"`` (true/false verdicts): false when any verdict is false, true when every
      member passes; when none says false but one failed or was inconclusive, inconclusive.

    When no member reaches a verdict the result is inconclusive, or, when every member
    failed, a failure (raised, or recorded with ``on_error="record"``).

    Args:
        members: The evaluators (``LLMJudge``s, ``@evaluator`` functions, any evaluator with
            one result), given first, positionally.
        strategy: ``"majority"`` (default), ``"mean"`` or ``"unanimous"``.
        feedback_key: The result key; by default the key the members share (members with
            different keys need one given here).
        max_disagreement: When the verdicts disagree beyond this, the result is inconclusive
            with the reason: for true/false verdicts the share in the minority (0 to 0.5:
            ``0.25`` lets 4 of 5 decide but not 2 of 3), for numbers their spread (highest
            minus lowest score). None (default): no limit.
        name: The run name shown in traces.
        on_error: What happens when every member failed (see ``Evaluator``).

    Members run concurrently: ``ainvoke`` gathers them (at most ``max_concurrency`` of the
    run's config at once), ``invoke`` runs them in LangChain's thread pool for the config.

    Example:
        >>> from langchain_evals_port import LLMJudge, evaluator
        >>> from langchain_evals_port.testing import ScriptedChatModel
        >>> def judge(score):
        ...     model = ScriptedChatModel([{"reasoning": "Checked.", "score": score}])
        ...     return LLMJudge(prompt="Correct? {outputs}", feedback_key="ok", model=model)
        >>> @evaluator(feedback_key="ok")
        ... def non_empty(*, outputs):
        ...     return bool(outputs)
        >>> ensemble = JudgeEnsemble([judge(True), judge(False), non_empty])
        >>> result = ensemble.invoke({"outputs": "Paris"})
        >>> result.score, result.metadata["votes"], round(result.metadata["agreement"], 2)
        (True, {'true': 2, 'false': 1}, 0.67)
    """

    default_name: ClassVar[str | None] = "judge_ensemble"

    members: Annotated[tuple[Evaluator, ...], SkipValidation] = Field(exclude=True)
    strategy: Strategy = "majority"
    feedback_key: str = ""
    max_disagreement: float | None = Field(default=None, ge=0)

    _labels: tuple[str, ...] = PrivateAttr(default=())

    def __init__(self, members: Sequence[Evaluator] | None = None, /, **fields: Any) -> None:
        """Build the ensemble of ``members`` (also accepted as ``members=``)."""
        if members is not None:
            if "members" in fields:
                raise EvaluatorUsageError("JudgeEnsemble() got members twice")
            fields["members"] = members
        super().__init__(**fields)

    def model_post_init(self, context: Any, /) -> None:
        """Check the members and work out the feedback key."""
        members = self.members
        if isinstance(members, Evaluator) or not isinstance(members, Sequence) or not members:
            raise ValueError("JudgeEnsemble needs a non-empty list of evaluators as members")
        for index, member in enumerate(members):
            if not isinstance(member, Evaluator):
                raise ValueError(
                    f"members[{index}] is a {type(member).__name__}, not an evaluator; wrap a "
                    "scoring function with @evaluator"
                )
            if self.strategy != "mean" and member.numeric_scores:
                raise ValueError(
                    f"members[{index}] ({member.get_name()}) scores numbers, which strategy "
                    f"{self.strategy!r} cannot count; use strategy='mean'"
                )
        self.members = tuple(members)
        if "feedback_key" not in self.model_fields_set:
            keys = sorted({member.feedback_key for member in self.members})
            if len(keys) > 1:
                raise ValueError(
                    f"the members score different feedback keys ({', '.join(keys)}); give the "
                    "ensemble its own with feedback_key=..."
                )
            self.feedback_key = keys[0]
        names = [member.get_name() for member in self.members]
        self._labels = tuple(
            f"{name} #{index + 1}" if names.count(name) > 1 else name
            for index, name in enumerate(names)
        )

    @property
    def numeric_scores(self) -> bool:
        """Scores are numbers with the ``"mean"`` strategy."""
        return self.strategy == "mean"

    def _score(self, request: EvalRequest, config: RunnableConfig) -> Score:
        config = _for_members(config)

        def vote(index: int) -> Vote:
            member = self.members[index]
            try:
                output = member.invoke(request, config)
            except (EvaluatorInputError, EvaluatorUsageError):
                raise
            except Exception as error:
                return Vote.of_error(self._labels[index], member.feedback_key, error)
            return self._vote(index, output)

        with get_executor_for_config(config) as executor:
            votes = list(executor.map(vote, range(len(self.members))))
        return self._decide(votes)

    async def _ascore(self, request: EvalRequest, config: RunnableConfig) -> Score:
        config = _for_members(config)

        async def vote(index: int) -> Vote:
            member = self.members[index]
            try:
                output = await member.ainvoke(request, config)
            except (EvaluatorInputError, EvaluatorUsageError):
                raise
            except Exception as error:
                return Vote.of_error(self._labels[index], member.feedback_key, error)
            return self._vote(index, output)

        votes = await gather_with_concurrency(
            config.get("max_concurrency"), *(vote(index) for index in range(len(self.members)))
        )
        return self._decide(list(votes))

    def _vote(self, index: int, output: Any) -> Vote:
        if isinstance(output, list):
            if len(output) != 1:
                raise EvaluatorUsageError(
                    f"ensemble member {self._labels[index]!r} returned {len(output)} results; "
                    "an ensemble's members must each score one key"
                )
            output = output[0]
        return Vote(self._labels[index], output)

    def _decide(self, votes: list[Vote]) -> Score:
        decision = decide(
            votes, self.strategy, max_disagreement=self.max_disagreement, what="members"
        )
        if decision.all_failed:
            first = votes[0]
            raise EvaluationFailure(
                "every member of the ensemble failed: " + "; ".join(vote.line() for vote in votes),
                code=first.result.error_code or "evaluator_error",
            ) from first.error
        comment = "\n".join([decision.summary, *(f"- {vote.line()}" for vote in votes)])
        return decision.to_score(comment)


def _for_members(config: RunnableConfig) -> RunnableConfig:
    # The ensemble's own run name and id must not be given to each member's run.
    members = config.copy()
    members.pop("run_name", None)
    members.pop("run_id", None)
    return members


def _abstentions(abstained: Sequence[Vote], failed: int) -> str:
    parts = []
    if failed:
        parts.append(f"{failed} failed")
    if len(abstained) > failed:
        parts.append(f"{len(abstained) - failed} inconclusive")
    return ", ".join(parts)


def _shown(score: Any) -> str:
    if isinstance(score, bool):
        return "true" if score else "false"
    return f"{score:g}" if isinstance(score, float) else str(score)
