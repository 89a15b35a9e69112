#!/usr/bin/env bash
# Build the wheel into a scratch folder and check what it ships.
source "$(dirname "${BASH_SOURCE[0]}")/_bootstrap.sh"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$UV" build --wheel --quiet --out-dir "$out"
"$PY" scripts/check_wheel.py "$out"/*.whl
