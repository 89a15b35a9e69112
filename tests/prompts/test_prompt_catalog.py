"""The OpenEvals prompt catalog: texts byte for byte, verified by SHA-256, loaded lazily."""

import ast
import copy
import hashlib
import importlib
import json
import pickle
import re
import shutil
import subprocess
import sys
import textwrap
from importlib import metadata, resources
from pathlib import Path

import openevals.prompts as openevals_prompts
import pytest

from langchain_evals_port import EvalsError, prompts
from langchain_evals_port.prompts import CatalogEntry, PromptCatalogError, PromptText
from langchain_evals_port.prompts._loader import _load_catalog, installed_catalog
from langchain_evals_port.prompts._table import PROMPT_TRAITS

MANIFEST = json.loads(
    resources.files("langchain_evals_port.prompts").joinpath("_manifest.json").read_text()
)
KNOWN_GOOD = MANIFEST["known_good_versions"]
NAMES = list(openevals_prompts.__all__)
CATEGORIES = [
    "quality",
    "rag",
    "safety",
    "security",
    "trajectory",
    "conversation",
    "image",
    "voice",
]
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")

# The contract the LLM judge relies on: (required, optional) variables of every prompt.
EXPECTED_VARIABLES = {
    "CORRECTNESS_PROMPT": (("inputs", "outputs", "reference_outputs"), ()),
    "CONCISENESS_PROMPT": (("inputs", "outputs"), ()),
    "HALLUCINATION_PROMPT": (("outputs", "context"), ("inputs", "reference_outputs")),
    "ANSWER_RELEVANCE_PROMPT": (("inputs", "outputs"), ()),
    "CODE_CORRECTNESS_PROMPT": (("inputs", "outputs"), ()),
    "CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS": (
        ("inputs", "outputs", "reference_outputs"),
        (),
    ),
    "PLAN_ADHERENCE_PROMPT": (("outputs", "plan"), ("inputs",)),
    "LAZINESS_PROMPT": (("inputs", "outputs"), ()),
    "RAG_GROUNDEDNESS_PROMPT": (("outputs", "context"), ()),
    "RAG_HELPFULNESS_PROMPT": (("inputs", "outputs"), ()),
    "RAG_RETRIEVAL_RELEVANCE_PROMPT": (("inputs", "context"), ()),
    "TOXICITY_PROMPT": (("outputs",), ("inputs",)),
    "FAIRNESS_PROMPT": (("outputs",), ("inputs",)),
    "PII_LEAKAGE_PROMPT": (("outputs",), ("inputs",)),
    "PROMPT_INJECTION_PROMPT": (("inputs",), ()),
    "CODE_INJECTION_PROMPT": (("inputs",), ()),
    "TRAJECTORY_ACCURACY_PROMPT": (("outputs",), ()),
    "TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE": (("outputs", "reference_outputs"), ()),
    "TOOL_SELECTION_PROMPT": (("outputs",), ()),
    "PERCEIVED_ERROR_PROMPT": (("outputs",), ()),
    "WINS_PROMPT": (("outputs",), ()),
    "TASK_COMPLETION_PROMPT": (("outputs",), ()),
    "KNOWLEDGE_RETENTION_PROMPT": (("outputs",), ()),
    "USER_SATISFACTION_PROMPT": (("outputs",), ()),
    "AGENT_TONE_PROMPT": (("outputs",), ()),
    "LANGUAGE_DETECTION_PROMPT": (("outputs",), ()),
    "SUPPORT_INTENT_PROMPT": (("outputs",), ()),
    "EXPLICIT_CONTENT_PROMPT": (("attachments",), ("inputs", "outputs")),
    "SENSITIVE_IMAGERY_PROMPT": (("attachments",), ("inputs", "outputs")),
    "AUDIO_QUALITY_PROMPT": (("attachments",), ("inputs", "outputs")),
    "TRANSCRIPTION_ACCURACY_PROMPT": (("inputs", "outputs", "attachments"), ()),
    "USER_INTERRUPTS_PROMPT": (("attachments",), ("inputs", "outputs")),
    "VOCAL_AFFECT_PROMPT": (("attachments",), ("inputs", "outputs")),
}


def openevals_root():
    distribution = metadata.distribution("openevals")
    return Path(str(distribution.locate_file("")))


def copy_openevals_prompts(tmp_path):
    shutil.copytree(openevals_root() / "openevals" / "prompts", tmp_path / "openevals" / "prompts")
    return tmp_path


# --- the texts ------------------------------------------------------------------------------


def test_the_catalog_has_every_openevals_prompt_in_openevals_order():
    assert len(NAMES) == 33
    assert list(prompts.catalog()) == NAMES
    assert list(PROMPT_TRAITS) == NAMES
    assert list(MANIFEST["prompts"]) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_each_prompt_is_openevals_text_byte_for_byte(name):
    ours, theirs = getattr(prompts, name), getattr(openevals_prompts, name)
    assert isinstance(ours, PromptText)
    assert ours == theirs
    assert str(ours).encode("utf-8") == theirs.encode("utf-8")
    assert hash(ours) == hash(theirs)
    assert prompts.get_prompt(name) is ours


@pytest.mark.parametrize("name", NAMES)
def test_each_text_hash_and_module_are_the_manifest_ones(name):
    text = getattr(openevals_prompts, name)
    spec = MANIFEST["prompts"][name]
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() in spec["sha256"]
    module = importlib.import_module(spec["module"].removesuffix(".py").replace("/", "."))
    assert getattr(module, name) == text


def test_the_installed_openevals_is_a_known_good_version():
    installed = metadata.version("openevals")
    assert installed in KNOWN_GOOD, (
        f"openevals {installed} is installed; if the hash tests pass, add it to "
        "known_good_versions in langchain_evals_port/prompts/_manifest.json"
    )


def test_the_manifest_ships_inside_the_package():
    assert resources.files("langchain_evals_port.prompts").joinpath("_manifest.json").is_file()


# --- entries --------------------------------------------------------------------------------


@pytest.mark.parametrize("category", CATEGORIES)
def test_categories_are_the_openevals_subpackages(category):
    subpackage = importlib.import_module(f"openevals.prompts.{category}")
    entries = prompts.catalog()
    assert {n for n, e in entries.items() if e.category == category} == set(subpackage.__all__)
    for name in subpackage.__all__:
        assert entries[name].source.startswith(f"openevals/prompts/{category}/")


@pytest.mark.parametrize("name", NAMES)
def test_variables_are_the_placeholders_of_the_text(name):
    entry = prompts.catalog()[name]
    parsed = set(PLACEHOLDER.findall(getattr(openevals_prompts, name)))
    assert set(entry.variables) == parsed
    assert len(entry.variables) == len(parsed)
    assert entry.required_variables, "every prompt needs something to judge"
    # The hand-written table names only variables the text really has.
    assert set(PROMPT_TRAITS[name].optional) <= parsed
    assert (entry.required_variables, entry.optional_variables) == EXPECTED_VARIABLES[name]


@pytest.mark.parametrize("name", NAMES)
def test_input_kind_follows_the_documented_rule(name):
    entry = prompts.catalog()[name]
    if "attachments" in entry.variables:
        assert entry.input_kind == "attachments"
    elif entry.category in ("conversation", "trajectory"):
        assert entry.input_kind == "messages"
    else:
        assert entry.input_kind == "text"


def test_only_language_detection_and_support_intent_classify():
    classifying = {n for n, e in prompts.catalog().items() if e.classifies}
    assert classifying == {"LANGUAGE_DETECTION_PROMPT", "SUPPORT_INTENT_PROMPT"}


@pytest.mark.parametrize("name", NAMES)
def test_each_constant_carries_its_entry_and_a_docstring_naming_its_variables(name):
    text = getattr(prompts, name)
    assert isinstance(text.entry, CatalogEntry)
    assert text.entry == prompts.catalog()[name]
    assert text.__doc__.startswith(f"{name} ({text.entry.category}).")
    assert f"Required variables: {', '.join(text.entry.required_variables)}." in text.__doc__
    optional = ", ".join(text.entry.optional_variables) or "none"
    assert f"Optional: {optional}." in text.__doc__
    assert f"Input kind: {text.entry.input_kind}." in text.__doc__


def test_the_docstring_reads_like_a_summary_of_the_entry():
    doc = prompts.RAG_GROUNDEDNESS_PROMPT.__doc__
    assert doc.startswith(
        "RAG_GROUNDEDNESS_PROMPT (rag). Required variables: outputs, context. Optional: none. "
        "Input kind: text."
    )
    assert "Classifies" in prompts.SUPPORT_INTENT_PROMPT.__doc__
    assert PromptText.__doc__ != doc, "the class keeps its own docstring"


def test_entries_are_frozen():
    with pytest.raises(AttributeError):
        prompts.catalog()["WINS_PROMPT"].classifies = True
    with pytest.raises(TypeError):
        prompts.catalog()["WINS_PROMPT"] = None


# --- behaving like a str --------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_each_prompt_formats_like_the_openevals_text(name):
    values = {v: f"<value of {v}>" for v in prompts.catalog()[name].variables}
    formatted = getattr(prompts, name).format(**values)
    assert type(formatted) is str
    assert formatted == getattr(openevals_prompts, name).format(**values)
    assert "{" not in formatted


def test_a_missing_variable_fails_in_format_as_for_any_str():
    with pytest.raises(KeyError, match="reference_outputs"):
        prompts.CORRECTNESS_PROMPT.format(inputs="q", outputs="a")


def test_copies_and_pickles_keep_the_entry():
    for clone in (
        copy.copy(prompts.WINS_PROMPT),
        copy.deepcopy(prompts.WINS_PROMPT),
        pickle.loads(pickle.dumps(prompts.WINS_PROMPT)),
    ):
        assert isinstance(clone, PromptText)
        assert clone == prompts.WINS_PROMPT
        assert clone.entry == prompts.WINS_PROMPT.entry
        assert clone.__doc__ == prompts.WINS_PROMPT.__doc__


# --- the module surface ---------------------------------------------------------------------


def test_all_and_dir_list_the_prompts_and_the_api():
    api = {
        "CatalogEntry",
        "InputKind",
        "PromptCatalogError",
        "PromptCategory",
        "PromptText",
        "catalog",
        "get_prompt",
    }
    assert set(prompts.__all__) == set(NAMES) | api
    assert len(prompts.__all__) == len(set(prompts.__all__))
    assert set(prompts.__all__) <= set(dir(prompts))


def test_type_checkers_see_every_prompt_declared_as_prompt_text():
    source = Path(prompts.__file__).read_text()
    declared = {
        node.target.id: ast.unparse(node.annotation)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    }
    assert declared == dict.fromkeys(NAMES, "PromptText")


def test_star_import_gives_every_prompt():
    namespace = {}
    exec("from langchain_evals_port.prompts import *", namespace)
    assert all(isinstance(namespace[name], PromptText) for name in NAMES)


def test_an_unknown_name_is_an_attribute_error_suggesting_close_names():
    with pytest.raises(AttributeError, match="did you mean CORRECTNESS_PROMPT"):
        prompts.CORECTNESS_PROMPT  # noqa: B018
    with pytest.raises(AttributeError, match="did you mean TOXICITY_PROMPT"):
        prompts.toxicity_prompt  # noqa: B018
    with pytest.raises(AttributeError, match=r"catalog\(\) lists the 33 OpenEvals prompts"):
        prompts.NOTHING_LIKE_IT  # noqa: B018
    assert not hasattr(prompts, "__wrapped__")


def test_get_prompt_with_an_unknown_name_is_a_key_error_suggesting_close_names():
    with pytest.raises(KeyError, match="did you mean RAG_HELPFULNESS_PROMPT"):
        prompts.get_prompt("RAG_HELPFULLNESS_PROMPT")


def test_the_files_are_read_once_per_process():
    assert installed_catalog() is installed_catalog()
    assert prompts.get_prompt("WINS_PROMPT") is prompts.WINS_PROMPT


IMPORT_PROBE = textwrap.dedent(
    """
    import json, sys

    opened = []

    def audit(event, args):
        if event == "open" and isinstance(args[0], str):
            opened.append(args[0])

    sys.addaudithook(audit)

    def loaded(top):
        return sorted(m for m in sys.modules if m == top or m.startswith(top + "."))

    import langchain_evals_port.prompts as prompts
    import langchain_evals_port

    report = {"on_import": {"opened": opened[:], "openevals": loaded("openevals"),
                            "langchain": loaded("langchain")}}
    prompts.CORRECTNESS_PROMPT, prompts.TOXICITY_PROMPT, prompts.catalog()
    prompts.get_prompt("CODE_CORRECTNESS_PROMPT"), prompts.CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS
    report["on_use"] = {"opened": opened[:], "openevals": loaded("openevals"),
                        "langchain": loaded("langchain")}
    print(json.dumps(report))
    """
)


@pytest.mark.processes
def test_importing_reads_nothing_and_using_reads_each_prompt_module_once():
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_PROBE], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)

    on_import = report["on_import"]
    assert on_import["openevals"] == []
    assert on_import["langchain"] == []
    read = [p for p in on_import["opened"] if "/openevals/" in p or p.endswith("_manifest.json")]
    assert read == []

    on_use = report["on_use"]
    assert on_use["openevals"] == [], "prompt modules are parsed, never imported"
    assert on_use["langchain"] == []
    prompt_files = [p for p in on_use["opened"] if "/openevals/prompts/" in p]
    modules = {spec["module"] for spec in MANIFEST["prompts"].values()}
    assert len(prompt_files) == len(modules) == 31
    assert {p.split("site-packages/", 1)[-1] for p in prompt_files} == modules
    assert len([p for p in on_use["opened"] if p.endswith("_manifest.json")]) == 1


# --- verification failures ------------------------------------------------------------------


def test_an_unchanged_copy_of_the_prompt_files_loads(tmp_path):
    loaded = _load_catalog(copy_openevals_prompts(tmp_path), version="0.2.2")
    assert dict(loaded) == {name: getattr(openevals_prompts, name) for name in NAMES}


def test_a_prompt_changed_by_one_character_is_rejected_naming_it_and_the_versions(tmp_path):
    root = copy_openevals_prompts(tmp_path)
    module = root / "openevals" / "prompts" / "rag" / "groundedness.py"
    source = module.read_text()
    assert source.count("A well-grounded output") == 1
    module.write_text(source.replace("A well-grounded output", "A well-grounded outpus"))

    with pytest.raises(PromptCatalogError) as raised:
        _load_catalog(root, version="0.2.9")
    message = str(raised.value)
    assert "RAG_GROUNDEDNESS_PROMPT" in message
    assert "installed openevals: 0.2.9" in message
    assert f"known good openevals versions: {', '.join(KNOWN_GOOD)}" in message
    assert raised.value.prompt == "RAG_GROUNDEDNESS_PROMPT"
    assert raised.value.installed_version == "0.2.9"
    assert raised.value.known_good_versions == tuple(KNOWN_GOOD)
    assert isinstance(raised.value, EvalsError)


def test_a_missing_prompt_module_is_rejected_naming_the_prompt(tmp_path):
    root = copy_openevals_prompts(tmp_path)
    (root / "openevals" / "prompts" / "voice" / "vocal_affect.py").unlink()
    with pytest.raises(PromptCatalogError, match=r"^VOCAL_AFFECT_PROMPT: cannot read .*0\.2\.2"):
        _load_catalog(root, version="0.2.2")


def test_a_missing_prompt_constant_is_rejected_naming_it(tmp_path):
    root = copy_openevals_prompts(tmp_path)
    module = root / "openevals" / "prompts" / "trajectory" / "accuracy.py"
    module.write_text(
        module.read_text().replace("TRAJECTORY_ACCURACY_PROMPT =", "RENAMED_PROMPT =")
    )
    with pytest.raises(
        PromptCatalogError, match=r"^TRAJECTORY_ACCURACY_PROMPT: .* assigns no string"
    ):
        _load_catalog(root, version="0.2.2")


@pytest.fixture
def fresh_catalog_cache():
    installed_catalog.cache_clear()
    yield
    installed_catalog.cache_clear()


def test_without_openevals_using_a_prompt_names_it_and_the_known_good_versions(
    monkeypatch, fresh_catalog_cache
):
    def not_installed(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr("langchain_evals_port.prompts._loader.metadata.distribution", not_installed)
    with pytest.raises(PromptCatalogError) as raised:
        prompts.CORRECTNESS_PROMPT  # noqa: B018
    assert str(raised.value).startswith("CORRECTNESS_PROMPT: openevals is not installed")
    assert (
        f"installed openevals: not installed; known good openevals versions: {KNOWN_GOOD[0]}"
        in str(raised.value)
    )
    with pytest.raises(
        PromptCatalogError, match=r"^the OpenEvals prompt catalog: openevals is not"
    ):
        prompts.catalog()
