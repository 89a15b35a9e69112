"""The OpenEvals prompt catalog: the 33 judge prompts of OpenEvals, byte for byte.

The texts are not copied into this package. On first use they are read from the installed
``openevals`` distribution (located through ``importlib.metadata``, parsed with ``ast``, never
imported) and each is checked against the SHA-256 committed in ``_manifest.json``; a text that
differs raises ``PromptCatalogError`` naming the prompt and the openevals versions. Importing
this module reads nothing; the first prompt or ``catalog()`` access reads all of them, once.

Each constant is a ``PromptText``: a ``str`` equal to OpenEvals' constant, usable with
``str.format``, carrying its ``CatalogEntry`` as ``.entry``.

How the entries were decided, by reading each prompt:

* **Variables** are the ``{name}`` placeholders parsed from the text, listed as OpenEvals' keywords
  (``inputs``, ``outputs``, ``reference_outputs``) first, then the others in text order.
* A variable is **optional** when the prompt says so ("If available, you may also use the
  reference outputs") or when the rubric judges something else and shows the variable only as
  framing, so the prompt still reads correctly with that block empty: ``inputs`` for toxicity,
  fairness, PII leakage, plan adherence ("plan obedience only") and hallucination (claims are
  checked against ``{context}``), and ``inputs``/``outputs`` for the image and voice prompts,
  which judge the ``{attachments}``. Everything the rubric judges or compares against is
  required. The LLM judge fills an optional variable the caller leaves out with ``""``.
* **Input kind** is ``"attachments"`` for prompts with ``{attachments}`` (image, voice),
  ``"messages"`` for the conversation and trajectory prompts (``outputs`` is a whole message
  list), and ``"text"`` otherwise.
* A prompt **classifies** when it asks for a label rather than a pass/fail or a score:
  ``LANGUAGE_DETECTION_PROMPT`` (a language name) and ``SUPPORT_INTENT_PROMPT`` (one of nine
  intent categories). Their judge needs an output schema of its own.

Example:
    >>> from langchain_evals_port import prompts
    >>> prompts.CORRECTNESS_PROMPT.entry.required_variables
    ('inputs', 'outputs', 'reference_outputs')
    >>> "{reference_outputs}" in prompts.CORRECTNESS_PROMPT
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._catalog import CatalogEntry, InputKind, PromptCatalogError, PromptCategory, PromptText
from ._loader import catalog, get_prompt
from ._loader import prompt_attribute as _prompt_attribute

if TYPE_CHECKING:
    # Declared for type checkers and IDEs; at run time ``__getattr__`` loads them on first use.
    # quality
    CORRECTNESS_PROMPT: PromptText
    CONCISENESS_PROMPT: PromptText
    HALLUCINATION_PROMPT: PromptText
    ANSWER_RELEVANCE_PROMPT: PromptText
    CODE_CORRECTNESS_PROMPT: PromptText
    CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS: PromptText
    PLAN_ADHERENCE_PROMPT: PromptText
    LAZINESS_PROMPT: PromptText
    # rag
    RAG_GROUNDEDNESS_PROMPT: PromptText
    RAG_HELPFULNESS_PROMPT: PromptText
    RAG_RETRIEVAL_RELEVANCE_PROMPT: PromptText
    # safety
    TOXICITY_PROMPT: PromptText
    FAIRNESS_PROMPT: PromptText
    # security
    PII_LEAKAGE_PROMPT: PromptText
    PROMPT_INJECTION_PROMPT: PromptText
    CODE_INJECTION_PROMPT: PromptText
    # trajectory
    TRAJECTORY_ACCURACY_PROMPT: PromptText
    TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE: PromptText
    TOOL_SELECTION_PROMPT: PromptText
    # conversation
    PERCEIVED_ERROR_PROMPT: PromptText
    WINS_PROMPT: PromptText
    TASK_COMPLETION_PROMPT: PromptText
    KNOWLEDGE_RETENTION_PROMPT: PromptText
    USER_SATISFACTION_PROMPT: PromptText
    AGENT_TONE_PROMPT: PromptText
    LANGUAGE_DETECTION_PROMPT: PromptText
    SUPPORT_INTENT_PROMPT: PromptText
    # image
    EXPLICIT_CONTENT_PROMPT: PromptText
    SENSITIVE_IMAGERY_PROMPT: PromptText
    # voice
    AUDIO_QUALITY_PROMPT: PromptText
    TRANSCRIPTION_ACCURACY_PROMPT: PromptText
    USER_INTERRUPTS_PROMPT: PromptText
    VOCAL_AFFECT_PROMPT: PromptText

__all__ = [
    "AGENT_TONE_PROMPT",
    "ANSWER_RELEVANCE_PROMPT",
    "AUDIO_QUALITY_PROMPT",
    "CODE_CORRECTNESS_PROMPT",
    "CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS",
    "CODE_INJECTION_PROMPT",
    "CONCISENESS_PROMPT",
    "CORRECTNESS_PROMPT",
    "EXPLICIT_CONTENT_PROMPT",
    "FAIRNESS_PROMPT",
    "HALLUCINATION_PROMPT",
    "KNOWLEDGE_RETENTION_PROMPT",
    "LANGUAGE_DETECTION_PROMPT",
    "LAZINESS_PROMPT",
    "PERCEIVED_ERROR_PROMPT",
    "PII_LEAKAGE_PROMPT",
    "PLAN_ADHERENCE_PROMPT",
    "PROMPT_INJECTION_PROMPT",
    "RAG_GROUNDEDNESS_PROMPT",
    "RAG_HELPFULNESS_PROMPT",
    "RAG_RETRIEVAL_RELEVANCE_PROMPT",
    "SENSITIVE_IMAGERY_PROMPT",
    "SUPPORT_INTENT_PROMPT",
    "TASK_COMPLETION_PROMPT",
    "TOOL_SELECTION_PROMPT",
    "TOXICITY_PROMPT",
    "TRAJECTORY_ACCURACY_PROMPT",
    "TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE",
    "TRANSCRIPTION_ACCURACY_PROMPT",
    "USER_INTERRUPTS_PROMPT",
    "USER_SATISFACTION_PROMPT",
    "VOCAL_AFFECT_PROMPT",
    "WINS_PROMPT",
    "CatalogEntry",
    "InputKind",
    "PromptCatalogError",
    "PromptCategory",
    "PromptText",
    "catalog",
    "get_prompt",
]


def __dir__() -> list[str]:
    """The module's names, including the prompt constants not loaded yet."""
    return sorted({*globals(), *__all__})


if not TYPE_CHECKING:
    # Hidden from type checkers so that they flag a misspelt prompt name instead of typing
    # every unknown attribute as ``PromptText``; the 33 real names are declared above.
    __getattr__ = _prompt_attribute
