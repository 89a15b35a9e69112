"""Check a built wheel: every package file (modules and data such as the prompt manifest),
py.typed, and the declared entry points."""

from __future__ import annotations

import configparser
import sys
import zipfile
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "langchain_evals_port"


def main(wheel_path: str) -> int:
    with zipfile.ZipFile(wheel_path) as wheel:
        names = set(wheel.namelist())
        entry_text = next(
            (wheel.read(n).decode() for n in names if n.endswith(".dist-info/entry_points.txt")),
            "",
        )
    problems = []
    sources = {
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / PACKAGE).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    problems += [f"missing file {name}" for name in sorted(sources - names)]
    if f"{PACKAGE}/py.typed" not in names:
        problems.append("missing py.typed")
    problems += [f"unexpected file {n}" for n in sorted(names) if n.startswith("tests/")]

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {"console_scripts": project.get("scripts", {})}
    declared.update(project.get("entry-points", {}))
    shipped = configparser.ConfigParser()
    shipped.read_string(entry_text)
    for group, entries in declared.items():
        for name, target in entries.items():
            if not shipped.has_option(group, name) or shipped.get(group, name) != target:
                problems.append(f"entry point {group}:{name} = {target} is not in the wheel")

    for problem in problems:
        print(f"check_wheel: {problem}", file=sys.stderr)
    count = sum(len(entries) for entries in declared.values())
    name = Path(wheel_path).name
    print(f"check_wheel: {name}: {len(sources)} package files, py.typed, {count} entry points")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
