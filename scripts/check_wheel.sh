#!/usr/bin/env bash
# Build the wheel into a scratch folder, check what it ships, then check it installed in a
# bare environment (scripts/check_installed.sh).
source "$(dirname "${BASH_SOURCE[0]}")/_bootstrap.sh"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$UV" build --wheel --quiet --out-dir "$out"
"$PY" scripts/check_wheel.py "$out"/*.whl
bash scripts/check_installed.sh "$out"/*.whl
