#!/usr/bin/env bash
# The main job: check a recorded LangGraph agent run's trajectory offline and print the results.
source "$(dirname "${BASH_SOURCE[0]}")/_bootstrap.sh"
exec "$PY" cookbook/check_agent_trajectory.py "$@"
