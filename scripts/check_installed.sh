#!/usr/bin/env bash
# Check a built wheel where a user has it: a fresh virtual environment with nothing but the
# wheel and pytest (no pytest-xdist, no dev tools, no extras), where scripts/check_installed.py
# runs what executes inside a user's process (the pytest plugin, imports, langsmith.evaluate).
# Usage: bash scripts/check_installed.sh WHEEL
source "$(dirname "${BASH_SOURCE[0]}")/_bootstrap.sh"
wheel="$(realpath "${1:?usage: check_installed.sh WHEEL}")"
started=$SECONDS
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
"$UV" venv --quiet --python python3 "$scratch/venv"
# The lock pins every version, so the check is reproducible and served from the installer's
# cache (which the bootstrap filled); it adds no package of its own.
"$UV" pip install --quiet --python "$scratch/venv" --constraint requirements.lock "$wheel" pytest
status=0
"$scratch/venv/bin/python" scripts/check_installed.py || status=$?
echo "check_installed: environment made and checked in $((SECONDS - started)) s"
exit "$status"
