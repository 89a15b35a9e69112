#!/usr/bin/env bash
# Re-resolve requirements.lock after a dependency change in pyproject.toml.
source "$(dirname "${BASH_SOURCE[0]}")/_bootstrap.sh"
exec "$UV" pip compile pyproject.toml --group pyproject.toml:dev --universal --generate-hashes \
    --python-version 3.10 --quiet -o requirements.lock "$@"
