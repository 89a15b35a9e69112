"""Reading the OpenEvals prompt texts from the installed distribution, and verifying them.

The prompt modules are located through ``importlib.metadata`` and read with ``ast``; they are
never imported, because importing anything under ``openevals`` runs its package ``__init__``,
which imports langchain (about 0.8 s). Each text's SHA-256 must be listed in ``_manifest.json``,
committed next to this module::

    {
      "distribution": "openevals",
      "known_good_versions": ["0.2.2"],
      "prompts": {
        "CORRECTNESS_PROMPT": {
          "module": "openevals/prompts/quality/correctness.py",
          "sha256": ["<hex digest of the UTF-8 text>"]
        }
      }
    }

``sha256`` is a list so that a later openevals release that leaves a prompt unchanged keeps
working: what is checked is the text, not the version.
"""

from __future__ import annotations

import ast
import difflib
import functools
import hashlib
import json
import string
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata, resources
from pathlib import Path
from types import MappingProxyType

from ._catalog import CatalogEntry, PromptCatalogError, PromptText
from ._table import PROMPT_TRAITS, PromptTraits

_PACKAGE = __name__.rpartition(".")[0]

# OpenEvals' keyword order; other placeholders follow in the order the text uses them.
_LEADING_VARIABLES = ("inputs", "outputs", "reference_outputs")


@dataclass(frozen=True)
class _Manifest:
    distribution: str
    known_good_versions: tuple[str, ...]
    modules: Mapping[str, str]
    hashes: Mapping[str, frozenset[str]]


def _read_manifest() -> _Manifest:
    package = resources.files(_PACKAGE)
    raw = json.loads(package.joinpath("_manifest.json").read_text(encoding="utf-8"))
    prompts = raw["prompts"]
    return _Manifest(
        distribution=raw["distribution"],
        known_good_versions=tuple(raw["known_good_versions"]),
        modules={name: spec["module"] for name, spec in prompts.items()},
        hashes={name: frozenset(spec["sha256"]) for name, spec in prompts.items()},
    )


def _string_constants(path: Path) -> dict[str, str]:
    """The module-level ``NAME = "..."`` assignments of a Python file, without running it."""
    constants: dict[str, str] = {}
    for node in ast.parse(path.read_bytes(), filename=str(path)).body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            constants.update({t.id: value.value for t in targets if isinstance(t, ast.Name)})
    return constants


def placeholders(text: str) -> tuple[str, ...]:
    """The ``{name}`` placeholders of a prompt, as ``str.format`` sees them, each once.

    Ordered as OpenEvals' keywords (``inputs``, ``outputs``, ``reference_outputs``), then the
    others in the order the text first uses them.
    """
    found = dict.fromkeys(
        field for _, field, _, _ in string.Formatter().parse(text) if field is not None
    )
    leading = [name for name in _LEADING_VARIABLES if name in found]
    return (*leading, *(name for name in found if name not in _LEADING_VARIABLES))


def _entry(name: str, traits: PromptTraits, text: str, module: str) -> CatalogEntry:
    variables = placeholders(text)
    return CatalogEntry(
        name=name,
        category=traits.category,
        required_variables=tuple(v for v in variables if v not in traits.optional),
        optional_variables=tuple(v for v in variables if v in traits.optional),
        input_kind=traits.input_kind,
        classifies=traits.classifies,
        source=module,
    )


def _load_catalog(
    root: Path, *, version: str | None, manifest: _Manifest | None = None
) -> Mapping[str, PromptText]:
    """Read and verify every prompt, with module paths taken relative to ``root``.

    ``root`` is the directory the distribution's files are relative to (``site-packages`` for
    an installed openevals); tests pass a copy. ``version`` only goes into error messages.
    """
    manifest = manifest or _read_manifest()

    def error(problem: str, prompt: str) -> PromptCatalogError:
        return PromptCatalogError(
            problem,
            prompt=prompt,
            installed_version=version,
            known_good_versions=manifest.known_good_versions,
        )

    # Two modules hold two prompts each; each file is read once.
    modules: dict[str, dict[str, str]] = {}
    catalog: dict[str, PromptText] = {}
    for name, traits in PROMPT_TRAITS.items():
        module = manifest.modules.get(name)
        if module is None:
            raise error("not listed in this package's prompt manifest", name)
        if module not in modules:
            try:
                modules[module] = _string_constants(root / module)
            except (OSError, SyntaxError, ValueError) as exc:
                raise error(f"cannot read {module}: {exc}", name) from exc
        text = modules[module].get(name)
        if text is None:
            raise error(f"{module} assigns no string literal to {name}", name)
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if digest not in manifest.hashes[name]:
            raise error(
                f"the text in {module} (SHA-256 {digest}) matches no verified text in the manifest",
                name,
            )
        catalog[name] = PromptText(text, _entry(name, traits, text, module))
    return MappingProxyType(catalog)


@functools.cache
def installed_catalog() -> Mapping[str, PromptText]:
    """Every prompt, read from the installed openevals on first call and cached for the process.

    A failure is not cached: the next call tries again.
    """
    manifest = _read_manifest()
    try:
        distribution = metadata.distribution(manifest.distribution)
    except metadata.PackageNotFoundError:
        raise PromptCatalogError(
            "openevals is not installed; install langchain-evals-port's dependencies",
            prompt=None,
            installed_version=None,
            known_good_versions=manifest.known_good_versions,
        ) from None
    root = Path(str(distribution.locate_file("")))
    return _load_catalog(root, version=distribution.version, manifest=manifest)


def catalog() -> Mapping[str, CatalogEntry]:
    """Every OpenEvals prompt's ``CatalogEntry``, keyed by name, in OpenEvals' order.

    The first call reads and verifies all prompt texts; later calls reuse them.

    Raises:
        PromptCatalogError: openevals is missing, or a prompt text is not a verified one.

    Example:
        >>> from langchain_evals_port import prompts
        >>> entry = prompts.catalog()["HALLUCINATION_PROMPT"]
        >>> entry.category, entry.required_variables, entry.optional_variables
        ('quality', ('outputs', 'context'), ('inputs', 'reference_outputs'))
        >>> len(prompts.catalog())
        33
    """
    return MappingProxyType({name: text.entry for name, text in _catalog_for(None).items()})


def get_prompt(name: str) -> PromptText:
    """The OpenEvals prompt called ``name`` (e.g. ``"CORRECTNESS_PROMPT"``), verified.

    Useful when the prompt is named by configuration; in code, prefer the module attribute
    (``prompts.CORRECTNESS_PROMPT``), which the type checker knows.

    Raises:
        KeyError: No OpenEvals prompt has that name; the message suggests close names.
        PromptCatalogError: openevals is missing, or a prompt text is not a verified one.

    Example:
        >>> from langchain_evals_port import prompts
        >>> prompts.get_prompt("CONCISENESS_PROMPT") == prompts.CONCISENESS_PROMPT
        True
    """
    if name not in PROMPT_TRAITS:
        raise KeyError(f"{name!r} is not an OpenEvals prompt; {_suggest(name)}")
    return _catalog_for(name)[name]


def prompt_attribute(name: str) -> PromptText:
    """The package's module ``__getattr__`` (PEP 562): a prompt constant, loaded on first use."""
    if name in PROMPT_TRAITS:
        return get_prompt(name)
    raise AttributeError(f"module {_PACKAGE!r} has no attribute {name!r}; {_suggest(name)}")


def _catalog_for(requested: str | None) -> Mapping[str, PromptText]:
    try:
        return installed_catalog()
    except PromptCatalogError as exc:
        # A whole-catalog failure (openevals missing) should still name what the caller asked for.
        if requested is not None and exc.prompt is None:
            raise exc.for_prompt(requested) from exc
        raise


def _suggest(name: str) -> str:
    # Upper-casing lets ``prompts.correctness_prompt`` find its constant too.
    close = difflib.get_close_matches(name.upper(), PROMPT_TRAITS, n=3, cutoff=0.6)
    if close:
        return f"did you mean {', '.join(close)}?"
    return f"catalog() lists the {len(PROMPT_TRAITS)} OpenEvals prompts."
