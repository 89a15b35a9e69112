#!/usr/bin/env bash
# The whole test suite. Extra arguments go to pytest.
source "$(dirname "${BASH_SOURCE[0]}")/_bootstrap.sh"
exec "$PY" -m pytest "$@"
