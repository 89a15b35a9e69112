"""What the catalog holds: ``CatalogEntry``, ``PromptText`` and ``PromptCatalogError``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from langchain_evals_port.core.errors import EvalsError

PromptCategory = Literal[
    "quality", "rag", "safety", "security", "trajectory", "conversation", "image", "voice"
]
"""The OpenEvals subpackage (``openevals.prompts.<category>``) a prompt comes from."""

InputKind = Literal["text", "messages", "attachments"]
"""What a prompt is fed: plain text, a whole message list as ``outputs``, or ``{attachments}``."""


class PromptCatalogError(EvalsError):
    """An OpenEvals prompt cannot be loaded, or its text is not the one this package verified.

    Raised on first use of a prompt when openevals is not installed, a prompt's module or
    constant is missing, or a text's SHA-256 is not in the committed manifest.

    Args:
        problem: What went wrong.
        prompt: The prompt concerned, or ``None`` when the whole catalog is unavailable.
        installed_version: The installed openevals version, or ``None`` when not installed.
        known_good_versions: The openevals versions whose prompt texts the manifest lists.
    """

    def __init__(
        self,
        problem: str,
        *,
        prompt: str | None,
        installed_version: str | None,
        known_good_versions: tuple[str, ...],
    ) -> None:
        self.problem = problem
        self.prompt = prompt
        self.installed_version = installed_version
        self.known_good_versions = known_good_versions
        subject = prompt or "the OpenEvals prompt catalog"
        installed = installed_version or "not installed"
        known = ", ".join(known_good_versions) or "none"
        super().__init__(
            f"{subject}: {problem} (installed openevals: {installed}; "
            f"known good openevals versions: {known})"
        )

    def for_prompt(self, prompt: str) -> PromptCatalogError:
        """The same error, naming ``prompt`` (used when the whole catalog failed to load)."""
        return PromptCatalogError(
            self.problem,
            prompt=prompt,
            installed_version=self.installed_version,
            known_good_versions=self.known_good_versions,
        )


@dataclass(frozen=True)
class CatalogEntry:
    """What a judge needs to know about one OpenEvals prompt.

    Attributes:
        name: The constant's name, e.g. ``"CORRECTNESS_PROMPT"``.
        category: The OpenEvals subpackage it comes from.
        required_variables: Placeholders the caller must fill.
        optional_variables: Placeholders that may be left empty (see the package docstring).
        input_kind: ``"text"``, ``"messages"`` (``outputs`` is a whole message list) or
            ``"attachments"`` (the prompt has an ``{attachments}`` block for images or audio).
        classifies: Whether the prompt asks for a label (a language, an intent category)
            rather than a pass/fail or a score, so the judge needs a custom output schema.
        source: The module holding the text, relative to the openevals distribution.
    """

    name: str
    category: PromptCategory
    required_variables: tuple[str, ...]
    optional_variables: tuple[str, ...]
    input_kind: InputKind
    classifies: bool
    source: str

    @property
    def variables(self) -> tuple[str, ...]:
        """Every placeholder of the prompt: the required ones, then the optional ones."""
        return self.required_variables + self.optional_variables

    @property
    def feedback_key(self) -> str:
        """The key a judge on this prompt reports under by default: the name in lower case
        without ``_PROMPT`` (``CORRECTNESS_PROMPT`` → ``"correctness"``)."""
        return self.name.lower().removesuffix("_prompt")

    def describe(self) -> str:
        """One paragraph naming the prompt's category, variables and input kind."""
        required = ", ".join(self.required_variables) or "none"
        optional = ", ".join(self.optional_variables) or "none"
        text = (
            f"{self.name} ({self.category}). Required variables: {required}. "
            f"Optional: {optional}. Input kind: {self.input_kind}."
        )
        if self.classifies:
            text += " Classifies: the judge answers with a label, not a pass/fail or a score."
        return text + f" Text: OpenEvals {self.source}, verified by SHA-256."


class PromptText(str):
    """An OpenEvals prompt: the exact text as a ``str``, plus its ``CatalogEntry``.

    It compares equal to the plain text and formats like it; the instance's ``__doc__``
    names its variables, so ``help()`` and IDE hovers show what to pass.

    Example:
        >>> from langchain_evals_port import prompts
        >>> prompts.RAG_GROUNDEDNESS_PROMPT.entry.required_variables
        ('outputs', 'context')
        >>> text = prompts.RAG_GROUNDEDNESS_PROMPT.format(context="Paris...", outputs="Yes")
        >>> text.endswith("<outputs>\\nYes\\n</outputs>\\n")
        True
    """

    entry: CatalogEntry

    def __new__(cls, text: str, entry: CatalogEntry) -> PromptText:
        self = super().__new__(cls, text)
        self.entry = entry
        self.__doc__ = entry.describe()
        return self

    def __getnewargs__(self) -> tuple[str, CatalogEntry]:  # type: ignore[override]
        # ``str`` would hand ``__new__`` the text alone; copy and pickle need the entry too.
        return (str(self), self.entry)
