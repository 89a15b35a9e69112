"""Experiments: run an application over a dataset, score it, compare with last time.

A ``Dataset`` is a sequence of ``Case`` (``id``, ``inputs``, ``reference_outputs``,
``metadata``: a LangSmith example's shape) read from a list of dicts, a JSONL, JSON or CSV
file, or a LangSmith dataset. A case's id is given or derived from its content, so it is the
same in every run and results pair across experiments. A bad row raises ``DatasetError``
naming the file, the line and the field; nothing is skipped. ``Target`` wraps the application
(a Runnable, a compiled graph, a function or ``"module:attr"``) and captures what it did on
each case with the runtime's capture machinery. ``run_experiment`` runs a target over a
dataset, ``trials`` times per case, scores each run with the evaluators and returns an
``ExperimentResult`` whose ``statistics()`` and ``compare(baseline)`` come from
``reporting.statistics``. Everything is written to an ``ExperimentStore`` as it finishes (a
SQLite file under ``.langchain-evals/`` by default, PostgreSQL for teams), so an interrupted
experiment resumes where it stopped, ``rescore`` scores stored outputs again without the
target, and ``langchain-evals worker`` processes can share an experiment's runs. Judges answer
from a persistent cache by default. ``write_report`` writes an experiment's Markdown, JSON and
HTML report (the HTML page is ``report_html``'s, the one the console shows and
``langchain-evals report`` writes), ``print_summary`` and ``print_comparison`` print its
figures as a table (``problem_lines`` says why results did not pass), ``pairwise_compare``
asks a ``PairwiseLLMJudge`` which of two experiments answered each shared case better (the
candidate's win rate with its interval), and ``upload_to_langsmith`` sends it to LangSmith
as an experiment. The command line (``langchain-evals run``, ``compare``, ``experiments``,
``rescore``) is the same workflow.

Example:
    >>> from langchain_evals_port.experiments import Dataset, Target
    >>> dataset = Dataset.from_records([{"inputs": {"q": "2 + 2?"}, "reference_outputs": "4"}])
    >>> [(case.id, case.reference_outputs) for case in dataset]
    [('ed390c1fd1b86ac9', '4')]
    >>> case = dataset[0]
    >>> Target(lambda inputs: "4").run(case.inputs, case_id=case.id).outputs
    '4'
"""

from ._case import Case
from ._dataset import Dataset
from ._errors import DatasetError
from ._page import report_html
from ._pairwise import PairwiseCase, PairwiseComparison, apairwise_compare, pairwise_compare
from ._report import (
    REPORT_SCHEMA_VERSION,
    print_comparison,
    print_summary,
    problem_lines,
    write_report,
)
from ._result import CaseResult, ExperimentResult, JudgeCacheUse
from ._run import (
    CacheLike,
    EvaluatorConfigs,
    ExperimentMismatchError,
    JudgeCacheMode,
    StoreLike,
    arescore,
    arun_experiment,
    awork_on,
    rescore,
    run_experiment,
)
from ._store import (
    DEFAULT_STORE,
    ExperimentInfo,
    ExperimentNotFoundError,
    ExperimentStore,
    ExperimentSummary,
)
from ._target import Target, TargetLike, TargetRun
from ._upload import LangSmithUploadError, upload_to_langsmith

__all__ = [
    "DEFAULT_STORE",
    "REPORT_SCHEMA_VERSION",
    "CacheLike",
    "Case",
    "CaseResult",
    "Dataset",
    "DatasetError",
    "EvaluatorConfigs",
    "ExperimentInfo",
    "ExperimentMismatchError",
    "ExperimentNotFoundError",
    "ExperimentResult",
    "ExperimentStore",
    "ExperimentSummary",
    "JudgeCacheMode",
    "JudgeCacheUse",
    "LangSmithUploadError",
    "PairwiseCase",
    "PairwiseComparison",
    "StoreLike",
    "Target",
    "TargetLike",
    "TargetRun",
    "apairwise_compare",
    "arescore",
    "arun_experiment",
    "awork_on",
    "pairwise_compare",
    "print_comparison",
    "print_summary",
    "problem_lines",
    "report_html",
    "rescore",
    "run_experiment",
    "upload_to_langsmith",
    "write_report",
]
