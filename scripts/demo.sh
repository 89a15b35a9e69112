#!/usr/bin/env bash
# The main job: score a recorded agent run offline and print the results.
source "$(dirname "${BASH_SOURCE[0]}")/_bootstrap.sh"
exec "$PY" cookbook/score_recorded_agent_run.py "$@"
