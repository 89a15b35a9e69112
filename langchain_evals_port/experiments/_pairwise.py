"""``pairwise_compare``: which of two experiments answered each shared case better."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from langchain_evals_port.core import EvalInput, EvalOutput, EvalRequest, EvaluatorResult
from langchain_evals_port.judge import PairwiseLLMJudge
from langchain_evals_port.reporting import Interval, wilson_interval

from ._result import CaseResult, ExperimentResult

__all__ = ["PairwiseCase", "PairwiseComparison", "apairwise_compare", "pairwise_compare"]

Winner = Literal["candidate", "baseline", "tie"]
"""Whose output the judge preferred for a case."""

_WINNER: dict[float, Winner] = {1.0: "candidate", 0.0: "baseline", 0.5: "tie"}


@dataclass(frozen=True)
class PairwiseCase:
    """The judge's preference on one case shared by two experiments.

    Attributes:
        case_id: The case.
        preferred: ``"candidate"``, ``"baseline"`` or ``"tie"``; None when the judge reached
            no verdict (``result.outcome`` says whether it was inconclusive or failed).
        result: The judge's result, with the candidate's output as output A (its score is the
            candidate's preference: 1.0, 0.5 or 0.0).
    """

    case_id: str
    preferred: Winner | None
    result: EvaluatorResult


@dataclass(frozen=True)
class PairwiseComparison:
    """A pairwise judge's verdicts on the cases two experiments share.

    The win rate is the candidate's share of the decided cases — wins over wins and losses —
    with its 95 % Wilson interval. Ties are left out of it and counted on their own: a tie
    says neither answer is better, and counting it as half a win would add trials that carry
    no evidence either way, narrowing the interval. Inconclusive cases (the judge changed its
    mind when the outputs were swapped) and failed ones are counted apart too, never as
    losses.

    Attributes:
        baseline: The baseline experiment's name.
        candidate: The candidate experiment's name.
        cases: One ``PairwiseCase`` per shared case, in the candidate's order.
        skipped: Shared cases not judged because the target raised in either experiment.
    """

    baseline: str
    candidate: str
    cases: tuple[PairwiseCase, ...]
    skipped: tuple[str, ...] = ()

    def _count(self, preferred: Winner) -> int:
        return sum(1 for case in self.cases if case.preferred == preferred)

    @property
    def wins(self) -> int:
        """Cases where the candidate's output was preferred."""
        return self._count("candidate")

    @property
    def losses(self) -> int:
        """Cases where the baseline's output was preferred."""
        return self._count("baseline")

    @property
    def ties(self) -> int:
        """Cases judged a tie."""
        return self._count("tie")

    @property
    def inconclusive(self) -> int:
        """Cases the judge answered differently with the outputs swapped."""
        return sum(1 for case in self.cases if case.result.outcome == "inconclusive")

    @property
    def failed(self) -> int:
        """Cases where the judge failed."""
        return sum(1 for case in self.cases if case.result.outcome == "failed")

    @property
    def win_rate(self) -> float | None:
        """Wins over wins and losses; None when no case was decided either way."""
        decided = self.wins + self.losses
        return self.wins / decided if decided else None

    @property
    def interval(self) -> Interval | None:
        """The 95 % Wilson interval of ``win_rate``; None when there is no win rate."""
        decided = self.wins + self.losses
        return wilson_interval(self.wins, decided) if decided else None

    def __str__(self) -> str:
        rate = "—" if self.win_rate is None else f"{self.win_rate:.3f} {self.interval}"
        return (
            f"{self.candidate} vs {self.baseline}: win rate {rate}; {self.wins} wins, "
            f"{self.losses} losses, {self.ties} ties, {self.inconclusive} inconclusive, "
            f"{self.failed} failed"
        )


def pairwise_compare(
    baseline: ExperimentResult,
    candidate: ExperimentResult,
    judge: PairwiseLLMJudge,
    *,
    max_concurrency: int = 8,
) -> PairwiseComparison:
    """Ask ``judge`` which experiment answered each shared case better.

    Each case both experiments ran is judged once, on its first trial in each, with the
    candidate's output as output A and the baseline's as output B (the judge asks both
    ways, so the order is no advantage). Judge failures are recorded as ``failed`` cases
    whatever the judge's ``on_error``; bad input still raises.

    Args:
        baseline: The experiment to compare against.
        candidate: The experiment to judge.
        judge: The pairwise judge.
        max_concurrency: How many cases are judged at once.

    Example:
        >>> from langchain_evals_port.experiments import Dataset, run_experiment
        >>> from langchain_evals_port.testing import ScriptedChatModel
        >>> dataset = Dataset.from_records([{"inputs": "Capital of France?"}])
        >>> old = run_experiment(lambda q: "A city.", dataset, [], name="old", store=False)
        >>> new = run_experiment(lambda q: "Paris.", dataset, [], name="new", store=False)
        >>> model = ScriptedChatModel(
        ...     [
        ...         {"reasoning": "A names it.", "preferred": "A"},
        ...         {"reasoning": "B names it.", "preferred": "B"},
        ...     ]
        ... )
        >>> comparison = pairwise_compare(old, new, PairwiseLLMJudge(model=model))
        >>> comparison.wins, comparison.losses, comparison.cases[0].preferred
        (1, 0, 'candidate')
    """
    case_ids, requests, skipped = _requests(baseline, candidate, max_concurrency)
    outputs = _recording(judge).batch(requests, config={"max_concurrency": max_concurrency})
    return _comparison(baseline, candidate, case_ids, outputs, skipped)


async def apairwise_compare(
    baseline: ExperimentResult,
    candidate: ExperimentResult,
    judge: PairwiseLLMJudge,
    *,
    max_concurrency: int = 8,
) -> PairwiseComparison:
    """The async twin of ``pairwise_compare`` (each case's two asks also run at once)."""
    case_ids, requests, skipped = _requests(baseline, candidate, max_concurrency)
    outputs = await _recording(judge).abatch(requests, config={"max_concurrency": max_concurrency})
    return _comparison(baseline, candidate, case_ids, outputs, skipped)


def _recording(judge: PairwiseLLMJudge) -> PairwiseLLMJudge:
    if not isinstance(judge, PairwiseLLMJudge):
        raise TypeError(f"judge must be a PairwiseLLMJudge, got {type(judge).__name__}")
    return judge.model_copy(update={"on_error": "record"})


def _requests(
    baseline: ExperimentResult, candidate: ExperimentResult, max_concurrency: int
) -> tuple[list[str], list[EvalInput], tuple[str, ...]]:
    if max_concurrency < 1:
        raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
    theirs = _first_trials(baseline)
    case_ids: list[str] = []
    requests: list[EvalInput] = []
    skipped: list[str] = []
    for case_id, ours in _first_trials(candidate).items():
        other = theirs.get(case_id)
        if other is None:
            continue
        if ours.run.failed or other.run.failed:
            skipped.append(case_id)
            continue
        case_ids.append(case_id)
        requests.append(
            EvalRequest.of(
                inputs=ours.case.inputs,
                outputs=[ours.run.outputs, other.run.outputs],
                reference_outputs=ours.case.reference_outputs,
            )
        )
    return case_ids, requests, tuple(skipped)


def _first_trials(experiment: ExperimentResult) -> dict[str, CaseResult]:
    first: dict[str, CaseResult] = {}
    for run in experiment.runs:
        known = first.get(run.case.id)
        if known is None or run.trial < known.trial:
            first[run.case.id] = run
    return first


def _comparison(
    baseline: ExperimentResult,
    candidate: ExperimentResult,
    case_ids: Sequence[str],
    outputs: Sequence[EvalOutput],
    skipped: tuple[str, ...],
) -> PairwiseComparison:
    cases = []
    for case_id, output in zip(case_ids, outputs, strict=True):
        # A pairwise judge returns one result per evaluation.
        result = output[0] if isinstance(output, list) else output
        preferred = None if result.score is None else _WINNER[float(result.score)]
        cases.append(PairwiseCase(case_id, preferred, result))
    return PairwiseComparison(baseline.name, candidate.name, tuple(cases), skipped)
