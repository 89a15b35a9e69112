"""Trust: how far a judge can be believed. People's labels (``Annotation`` records, kept by
``storage``; ``import_annotations`` from CSV or JSONL), how well a judge agrees with them
(``agreement``: accuracy, Cohen's κ with its interval, precision and recall of "fail",
Spearman's rho; ``ledger_agreement`` and ``agreement_by_key`` per feedback key), and
``calibration`` of the catalog's judge prompts against shipped labelled sets.

Online and offline results are judged alike: both modes build on this package, neither on the
other.
"""

from ._agreement import Agreement, agreement
from ._annotation_files import AnnotationImportError, import_annotations
from ._pairs import JudgedPair, agreement_by_key, ledger_agreement, pair_annotations

__all__ = [
    "Agreement",
    "AnnotationImportError",
    "JudgedPair",
    "agreement",
    "agreement_by_key",
    "import_annotations",
    "ledger_agreement",
    "pair_annotations",
]
