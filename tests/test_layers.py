"""The package's layers: imports point down, the runtime has no import cycle, and no import
inside a function papers over one.

Layers, bottom up: ``core``; ``judge`` and ``prompts``; the families (``string``,
``trajectory``, ``json_match``, ``code``); ``simulation``, ``reporting``, ``integrations``;
``runtime``; ``experiments``; ``console`` and ``calibration``; the entry points (``cli``, ``pytest_plugin``, ``compat``, ``testing``).
"""

from __future__ import annotations

import ast
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
    "runtime": 4,
    "experiments": 5,
    "console": 6,
    "calibration": 6,
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
