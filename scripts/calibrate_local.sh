#!/usr/bin/env bash
# Calibrate the catalog's judge prompts against a real model over HTTP: a smoke test of the
# real-model path, outside the default test suite.
#
#   bash scripts/calibrate_local.sh MODEL.gguf [langchain-evals calibrate options...]
#
# Installs llama-cpp-python's OpenAI-compatible server into .calibrate-server/ (built from
# source the first time: minutes, and it needs cmake and a C++ compiler), serves MODEL.gguf on
# 127.0.0.1, and runs `langchain-evals calibrate --model openai:local-judge` against it with
# OPENAI_BASE_URL. Without options it calibrates CONCISENESS_PROMPT and writes the report to
# calibration-local/; pass e.g. `--prompt CORRECTNESS_PROMPT --report out` to choose. No GGUF
# model is published on PyPI, so bring one; a small instruction-tuned model (a few billion
# parameters at most, 4-bit quantised) keeps a CPU-only run short.
#
# Environment: PORT (default 8631), N_CTX (context length, default 4096),
# LLAMA_CPP_PYTHON (the requirement, default 'llama-cpp-python[server]>=0.3.16,<0.4').
set -euo pipefail

if [ $# -lt 1 ] || [ ! -f "$1" ]; then
    echo "usage: bash scripts/calibrate_local.sh MODEL.gguf [calibrate options...]" >&2
    [ $# -ge 1 ] && echo "calibrate_local: no model file at $1" >&2
    exit 2
fi
model="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
shift

source "$(dirname "${BASH_SOURCE[0]}")/_bootstrap.sh"
port="${PORT:-8631}"
server_env="$ROOT/.calibrate-server"
requirement="${LLAMA_CPP_PYTHON:-llama-cpp-python[server]>=0.3.16,<0.4}"

if [ ! -x "$server_env/bin/python" ]; then
    "$UV" venv --quiet --python python3 "$server_env"
fi
if ! "$server_env/bin/python" -c "import llama_cpp.server" 2>/dev/null; then
    echo "calibrate_local: installing $requirement (built from source; this takes a while)" >&2
    "$UV" pip install --quiet --python "$server_env/bin/python" "$requirement"
fi

log="$(mktemp)"
"$server_env/bin/python" -m llama_cpp.server --model "$model" --model_alias local-judge \
    --host 127.0.0.1 --port "$port" --n_ctx "${N_CTX:-4096}" >"$log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -f "$log"' EXIT

url="http://127.0.0.1:$port/v1"
for _ in $(seq 1 120); do
    if "$PY" -c "import urllib.request; urllib.request.urlopen('$url/models', timeout=2)" \
        2>/dev/null; then
        break
    fi
    if ! kill -0 "$server" 2>/dev/null; then
        echo "calibrate_local: the server stopped; its log:" >&2
        cat "$log" >&2
        exit 1
    fi
    sleep 1
done

if [ $# -eq 0 ]; then
    set -- --prompt CONCISENESS_PROMPT --report calibration-local
fi
# One case at a time: the server answers one request at a time anyway.
OPENAI_BASE_URL="$url" OPENAI_API_KEY="local" \
    "$ROOT/.venv/bin/langchain-evals" calibrate --model openai:local-judge --concurrency 1 "$@"
