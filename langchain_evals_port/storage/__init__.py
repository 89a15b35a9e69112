"""Storage (floor 2, below both modes): the ledger, where interactions, evaluation records,
the work queue between them, experiments' runs and people's annotations live.

``Ledger`` is the protocol; ``InMemoryLedger`` (tests, short runs), ``SqliteLedger`` (one file,
the default) and ``PostgresLedger`` (a shared database) implement it, and ``open_storage``
opens the SQL ledger a path or DSN names (typed ``SqlLedger``; ``open_ledger``, its old name,
warns). Each of them also keeps durable evaluations' LangGraph checkpoints on its own storage
(``SupportsCheckpoints``), and the SQL ledgers keep the experiments of
``langchain_evals_port.experiments`` (``ExperimentRuns``). ``ConsoleQueries`` holds the
console's reads of a SQL ledger (its overview, lists, waiting reviews and retries), so the
console holds no SQL.
``langchain_evals_port.storage.contract`` holds the tests every ledger passes, for a
ledger of your own to run too. One connection and dialect layer (``_sql``), ``MIGRATIONS``
and ``setup()`` serve every concern; the records it keeps (``EvaluationRecord``,
``WorkUnit``, ``Claim``, ``Annotation``) are defined here, the interaction's in ``capture``.
"""

from ._annotation import Annotation, AnnotationConflictError, AnnotationSubject, case_subject
from ._console_queries import (
    TEXT_WINDOW,
    ConsoleQueries,
    EvaluationSummary,
    InteractionRow,
    OverviewBucket,
    OverviewSeries,
    WorkState,
    bucket_seconds,
)
from ._errors import (
    CheckpointerUnavailableError,
    InteractionNotFoundError,
    LedgerSchemaError,
    WouldWait,
)
from ._experiment_runs import ExperimentRow, ExperimentRuns, RunClaim, RunRow, RunWrite
from ._export import export_jsonl
from ._holder import Holder
from ._ids import evaluation_id
from ._memory import InMemoryLedger
from ._open import is_dsn, open_ledger, open_storage

# Exported directly: the module imports psycopg (the ``postgres`` extra) only when a
# ``PostgresLedger`` is created, so this package imports without it.
from ._postgres import PostgresLedger
from ._protocol import Ledger, SupportsCheckpoints
from ._records import Claim, EvaluationRecord, Page, Trigger, WorkUnit
from ._sql import SqlLedger
from ._sqlite import SqliteLedger

__all__ = [
    "TEXT_WINDOW",
    "Annotation",
    "AnnotationConflictError",
    "AnnotationSubject",
    "CheckpointerUnavailableError",
    "Claim",
    "ConsoleQueries",
    "EvaluationRecord",
    "EvaluationSummary",
    "ExperimentRow",
    "ExperimentRuns",
    "Holder",
    "InMemoryLedger",
    "InteractionNotFoundError",
    "InteractionRow",
    "Ledger",
    "LedgerSchemaError",
    "OverviewBucket",
    "OverviewSeries",
    "Page",
    "PostgresLedger",
    "RunClaim",
    "RunRow",
    "RunWrite",
    "SqlLedger",
    "SqliteLedger",
    "SupportsCheckpoints",
    "Trigger",
    "WorkState",
    "WorkUnit",
    "WouldWait",
    "bucket_seconds",
    "case_subject",
    "evaluation_id",
    "export_jsonl",
    "is_dsn",
    "open_ledger",
    "open_storage",
]
