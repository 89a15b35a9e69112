"""The package's layers: imports point down, the two modes never import each other, the
runtime has no import cycle, and no import inside a function papers over one.

Layers, bottom up: ``core``; ``judge``, ``prompts`` and ``capture`` (binding an app, the
interaction record, the one request builder); ``storage`` (the ledger, its records and
migrations) beside the families (``string``, ``trajectory``, ``json_match``, ``code``);
``simulation``, ``reporting``, ``integrations``; ``trust`` (annotations, agreement,
calibration); the two modes as peers, ``runtime`` (online) and ``experiments`` (offline);
``console`` over both; the entry points (``cli``, ``pytest_plugin``, ``compat``, ``testing``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "langchain_evals_port"
NAME = "langchain_evals_port"

LAYER = {
    "core": 0,
    "prompts": 1,
    "judge": 1,
    "capture": 1,
    "storage": 2,
    "string": 2,
    "trajectory": 2,
    "json_match": 2,
    "code": 2,
    "simulation": 3,
    "reporting": 3,
    "integrations": 3,
    "trust": 4,
    # The two modes are peers: at one level, neither may import the other.
    "runtime": 5,
    "experiments": 5,
    "console": 6,
}


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _target(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if path.name != "__init__.py":
        base.pop()
    base = base[: len(base) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def _type_checking_only(tree: ast.Module) -> set[ast.AST]:
    hidden: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            hidden.update(ast.walk(node))
    return hidden


def _imports() -> list[tuple[str, str, bool]]:
    """Every import of the package by the package: (importer, imported, inside a function)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        hidden = _type_checking_only(tree)
        in_function: set[ast.AST] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                in_function.update(ast.walk(node))
        for node in ast.walk(tree):
            if node in hidden or not isinstance(node, ast.ImportFrom):
                continue
            target = _target(module, path, node)
            if target.startswith(NAME):
                found.append((module, target, node in in_function))
    return found


def _family(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYER else None


def test_imports_point_down():
    upward = []
    for importer, imported, _ in _imports():
        source, target = _family(importer), _family(imported)
        if source is None or target is None or source == target:
            continue
        if not (LAYER[target] < LAYER[source] or LAYER[target] == LAYER[source] == 1):
            upward.append(f"{importer} ({source}) imports {imported} ({target})")
    assert upward == []


def test_the_runtime_has_no_import_cycle():
    graph: dict[str, set[str]] = {}
    for importer, imported, _ in _imports():
        if importer.startswith(f"{NAME}.runtime") and imported.startswith(f"{NAME}.runtime"):
            graph.setdefault(importer, set()).add(imported)
    visiting: list[str] = []
    done: set[str] = set()

    def visit(module: str) -> None:
        if module in done:
            return
        assert module not in visiting, " -> ".join([*visiting, module])
        visiting.append(module)
        for imported in graph.get(module, ()):
            if imported != module and not module.startswith(f"{imported}."):
                visit(imported)
        visiting.pop()
        done.add(module)

    for module in list(graph):
        visit(module)


def test_no_import_inside_a_runtime_function_reaches_another_runtime_module():
    # Imports inside functions are for optional dependencies, not for breaking cycles.
    inside = [
        (importer, imported)
        for importer, imported, in_function in _imports()
        if in_function
        and importer.startswith(f"{NAME}.runtime")
        and imported.startswith(f"{NAME}.runtime")
    ]
    assert inside == []


def test_the_two_modes_never_import_each_other_and_the_console_imports_no_runtime() -> None:
    forbidden = {("runtime", "experiments"), ("experiments", "runtime"), ("console", "runtime")}
    crossing = [
        f"{importer} imports {imported}"
        for importer, imported, _ in _imports()
        if (_family(importer), _family(imported)) in forbidden
    ]
    assert crossing == []


def test_no_import_inside_a_function_reaches_another_layered_package() -> None:
    # Lazy imports are for optional dependencies; between our own packages they hide a circle.
    # The one exception: LangSmith feedback loads langsmith.testing, which imports pytest.
    inside = [
        f"{importer} imports {imported}"
        for importer, imported, in_function in _imports()
        if in_function
        and _family(importer) is not None
        and _family(imported) is not None
        and _family(importer) != _family(imported)
        and imported != f"{NAME}.integrations.langsmith"
    ]
    assert inside == []


def test_the_import_paths_of_before_the_layers_warn_and_give_the_same_objects() -> None:
    import importlib
    import warnings

    moved = [
        ("reporting", "Agreement", "trust"),
        ("reporting", "agreement", "trust"),
        ("runtime", "ledger_agreement", "trust"),
        ("runtime", "import_annotations", "trust"),
        ("calibration", "calibrate", "trust.calibration"),
        ("runtime.capture", "BoundAgent", "capture"),
        ("runtime.ledger", "PostgresLedger", "storage"),
        ("console", "ConsoleQueries", "storage"),
    ]
    for old, name, new in moved:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            value = getattr(importlib.import_module(f"{NAME}.{old}"), name)
        assert value is getattr(importlib.import_module(f"{NAME}.{new}"), name)
        assert [w.category for w in seen] == [DeprecationWarning], (old, name)
        assert f"{NAME}.{new}" in str(seen[0].message)


_SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|WITH RECURSIVE)\b|\bledger_[a-z]")


def test_the_console_holds_no_sql_against_the_ledger_s_tables() -> None:
    # The console's queries are storage's (storage.ConsoleQueries), beside the tables they read.
    found = [
        f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.value[:60]!r}"
        for path in sorted((PACKAGE / "console").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and _SQL.search(node.value)
    ]
    assert found == []


def test_the_console_uses_storage_s_public_names_only() -> None:
    private = []
    for path in sorted((PACKAGE / "console").rglob("*.py")):
        module = _module(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                target = _target(module, path, node)
                if _family(target) == "storage" and (
                    target != f"{NAME}.storage"
                    or any(alias.name.startswith("_") for alias in node.names)
                ):
                    private.append(f"{module}:{node.lineno} imports {target}")
            elif isinstance(node, ast.Import):
                private += [
                    f"{module}:{node.lineno} imports {alias.name}"
                    for alias in node.names
                    if alias.name.startswith(f"{NAME}.storage.")
                ]
            elif (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                # A private member of another object: a ledger's _rows, a store's _ledger.
                private.append(f"{module}:{node.lineno} reads .{node.attr}")
    assert private == []
