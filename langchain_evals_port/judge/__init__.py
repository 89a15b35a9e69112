"""LLM-as-judge: a chat model grades an output against a prompt.

``LLMJudge`` renders its prompt safely, asks the model for a structured reply (reasoning
before the score), validates it, repairs an invalid reply once, and otherwise fails loudly:
``JudgeOutputError`` with ``on_error="raise"``, a ``failed`` result with reason
``judge_parse_failure`` with ``on_error="record"`` — never a silent score of false.

``PairwiseLLMJudge`` says which of two outputs for the same input is better, asking twice
with the outputs swapped; an answer that changes with the order is ``inconclusive``.

``SqliteCache`` keeps judge replies in a SQLite file (a LangChain ``BaseCache``), each
labelled with its judge and prompt so they can be cleared by either; ``RefreshingCache``
asks the model again and writes the new replies over the old;
``LLMJudge(cache=...)`` or ``with_cache(model, cache)`` puts it in front of a judge model, so
an unchanged re-run makes no model calls. ``judge_defaults(cache=..., rate_limiter=...)``
does so for every judge model called in a block, also those of judges built inside other
evaluators, and leaves the application's model calls alone.
"""

from langchain_evals_port.core.errors import JudgeOutputError

from ._attachments import Attachment
from ._cache_layers import RefreshingCache
from ._defaults import judge_defaults
from ._ensemble import JudgeEnsemble
from ._judge import LLMJudge
from ._model import JudgeModel, default_judge_configured, set_default_judge, with_cache
from ._pairwise import PairwiseLLMJudge
from ._render import FewShotExample, PromptSource
from ._sqlite_cache import SqliteCache
from ._structured import StructuredOutputMode, extract_json

__all__ = [
    "Attachment",
    "FewShotExample",
    "JudgeEnsemble",
    "JudgeModel",
    "JudgeOutputError",
    "LLMJudge",
    "PairwiseLLMJudge",
    "PromptSource",
    "RefreshingCache",
    "SqliteCache",
    "StructuredOutputMode",
    "default_judge_configured",
    "extract_json",
    "judge_defaults",
    "set_default_judge",
    "with_cache",
]
