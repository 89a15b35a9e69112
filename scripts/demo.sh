#!/usr/bin/env bash
# The main job: run the support agent of cookbook/support_experiment over its six cases with
# `langchain-evals run`, scored by an LLM judge, a trajectory matcher and an exact match
# (all offline: the models are scripted), and print the table. Run it again: the judges'
# cache answers every judge call, and the table compares the run with the previous one.
# Extra arguments go to `langchain-evals run` (e.g. --trials 3, --report report/).
source "$(dirname "${BASH_SOURCE[0]}")/_bootstrap.sh"
cd cookbook/support_experiment
exec "$ROOT/.venv/bin/langchain-evals" run cases.jsonl \
    --target agent:target --evaluators evaluators:EVALUATORS "$@"
