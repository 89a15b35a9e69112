"""How ``SqliteCache`` keys and serializes an entry: a SHA-256 key, and replies in
langchain-core's own serialization, read back as generations and AI messages only."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from langchain_core.load import load
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import (
    ChatGeneration,
    ChatGenerationChunk,
    Generation,
    GenerationChunk,
)

from langchain_evals_port.core._langchain_internals import suppress_langchain_beta_warning

__all__ = ["entry_key", "has_reply", "restore", "unrestorable"]

_RESTORABLE = (
    Generation,
    GenerationChunk,
    ChatGeneration,
    ChatGenerationChunk,
    AIMessage,
    AIMessageChunk,
)
"""The only classes an entry may hold: what chat models and LLMs reply with."""

_RESTORABLE_IDS = {tuple(kind.lc_id()) for kind in _RESTORABLE}


def entry_key(prompt: str, llm_string: str) -> bytes:
    """The key an entry for ``prompt`` and ``llm_string`` is kept under (32 bytes)."""
    # The prompt is JSON text (LangChain's ``dumps`` of the messages), which never holds a
    # raw NUL, so the separator keeps every pair of strings apart.
    return hashlib.sha256(f"{prompt}\0{llm_string}".encode()).digest()


def restore(text: str) -> list[Generation]:
    """The generations stored as ``text``; ``ValueError`` when it is not a list of them."""
    with suppress_langchain_beta_warning():
        generations = load(json.loads(text), allowed_objects=_RESTORABLE)
    if not isinstance(generations, list) or not all(
        isinstance(generation, Generation) for generation in generations
    ):
        raise ValueError(f"expected a list of generations, got {type(generations).__name__}")
    return generations


def has_reply(generation: Generation) -> bool:
    """Whether a generation says something: content or tool calls (for a chat model), text
    (for an LLM)."""
    if isinstance(generation, ChatGeneration):
        message = generation.message
        return bool(message.content) or bool(getattr(message, "tool_calls", None))
    return bool(generation.text)


def unrestorable(value: Any) -> str | None:
    """Why serialized generations would not read back (an object langchain-core could not
    serialize, or one ``restore`` does not build), or None: a walk of the JSON, which costs
    a fraction of reading it back."""
    if isinstance(value, list):
        return next(filter(None, map(unrestorable, value)), None)
    if not isinstance(value, dict):
        return None
    if value.get("lc") == 1 and "type" in value:
        ident = tuple(value.get("id") or ())
        if value["type"] == "not_implemented":
            return f"{'.'.join(ident)} cannot be serialized"
        if value["type"] == "constructor" and ident not in _RESTORABLE_IDS:
            return f"{'.'.join(ident)} is not a generation or an AI message"
        return unrestorable(value.get("kwargs", {}))
    return next(filter(None, map(unrestorable, value.values())), None)
