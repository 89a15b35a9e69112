"""The judgements made by reading each OpenEvals prompt: category, optional variables, kind.

The variable names themselves are not here: they are parsed from the verified text, and a test
checks that every optional variable listed below is a placeholder of its prompt. The order is
OpenEvals' own (``openevals.prompts.__all__``), so ``catalog()`` lists prompts as OpenEvals does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ._catalog import InputKind, PromptCategory


@dataclass(frozen=True)
class PromptTraits:
    """Metadata of one prompt that cannot be parsed from its text."""

    category: PromptCategory
    input_kind: InputKind = "text"
    optional: tuple[str, ...] = ()
    classifies: bool = False


# Shorthands for the recurring cases, to keep the table one line per prompt.
_CONVERSATION: Final = PromptTraits("conversation", "messages")
_TRAJECTORY: Final = PromptTraits("trajectory", "messages")

PROMPT_TRAITS: Final[dict[str, PromptTraits]] = {
    "CORRECTNESS_PROMPT": PromptTraits("quality"),
    "CONCISENESS_PROMPT": PromptTraits("quality"),
    # Judges output claims against {context}; says "If available" of the reference outputs.
    "HALLUCINATION_PROMPT": PromptTraits("quality", optional=("inputs", "reference_outputs")),
    "ANSWER_RELEVANCE_PROMPT": PromptTraits("quality"),
    "CODE_CORRECTNESS_PROMPT": PromptTraits("quality"),
    "CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS": PromptTraits("quality"),
    # "You are evaluating plan obedience only": the trace against {plan}, not the task.
    "PLAN_ADHERENCE_PROMPT": PromptTraits("quality", optional=("inputs",)),
    "LAZINESS_PROMPT": PromptTraits("quality"),
    "RAG_GROUNDEDNESS_PROMPT": PromptTraits("rag"),
    "RAG_HELPFULNESS_PROMPT": PromptTraits("rag"),
    "RAG_RETRIEVAL_RELEVANCE_PROMPT": PromptTraits("rag"),
    # Toxicity, bias and PII are properties of the output's own language; the input is context.
    "TOXICITY_PROMPT": PromptTraits("safety", optional=("inputs",)),
    "FAIRNESS_PROMPT": PromptTraits("safety", optional=("inputs",)),
    "PII_LEAKAGE_PROMPT": PromptTraits("security", optional=("inputs",)),
    "PROMPT_INJECTION_PROMPT": PromptTraits("security"),
    "CODE_INJECTION_PROMPT": PromptTraits("security"),
    "TRAJECTORY_ACCURACY_PROMPT": _TRAJECTORY,
    "TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE": _TRAJECTORY,
    "TOOL_SELECTION_PROMPT": _TRAJECTORY,
    "PERCEIVED_ERROR_PROMPT": _CONVERSATION,
    "WINS_PROMPT": _CONVERSATION,
    "TASK_COMPLETION_PROMPT": _CONVERSATION,
    "KNOWLEDGE_RETENTION_PROMPT": _CONVERSATION,
    "USER_SATISFACTION_PROMPT": _CONVERSATION,
    "AGENT_TONE_PROMPT": _CONVERSATION,
    # These two answer with a language name and with one of nine intent categories.
    "LANGUAGE_DETECTION_PROMPT": PromptTraits("conversation", "messages", classifies=True),
    "SUPPORT_INTENT_PROMPT": PromptTraits("conversation", "messages", classifies=True),
    # The image or audio is what these judge; the input and output text only frame it.
    "EXPLICIT_CONTENT_PROMPT": PromptTraits("image", "attachments", ("inputs", "outputs")),
    "SENSITIVE_IMAGERY_PROMPT": PromptTraits("image", "attachments", ("inputs", "outputs")),
    "AUDIO_QUALITY_PROMPT": PromptTraits("voice", "attachments", ("inputs", "outputs")),
    # Compares the transcription with "a reference transcript" and the audio: all three count.
    "TRANSCRIPTION_ACCURACY_PROMPT": PromptTraits("voice", "attachments"),
    "USER_INTERRUPTS_PROMPT": PromptTraits("voice", "attachments", ("inputs", "outputs")),
    "VOCAL_AFFECT_PROMPT": PromptTraits("voice", "attachments", ("inputs", "outputs")),
}
"""Each prompt's traits, keyed by constant name, in OpenEvals' order."""
