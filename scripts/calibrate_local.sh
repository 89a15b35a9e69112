#!/usr/bin/env bash
# Calibrate the catalog's judge prompts against a real model over HTTP: a smoke test of the
# real-model path, outside the default test suite.
#
#   bash scripts/calibrate_local.sh MODEL.gguf [langchain-evals calibrate options...]
#   bash scripts/calibrate_local.sh --tiny [langchain-evals calibrate options...]
#
# Installs llama-cpp-python's OpenAI-compatible server into .calibrate-server/ (built from
# source the first time: minutes, and it needs cmake and a C++ compiler), serves MODEL.gguf on
# 127.0.0.1, and runs `langchain-evals calibrate --model openai:local-judge` against it with
# OPENAI_BASE_URL. Without options it calibrates CONCISENESS_PROMPT and writes the report to
# calibration-local/; pass e.g. `--prompt CORRECTNESS_PROMPT --report out` to choose. No GGUF
# model is published on PyPI, so bring one; a small instruction-tuned model (a few billion
# parameters at most, 4-bit quantised) keeps a CPU-only run short.
#
# --tiny instead serves a tiny llama model with random weights, written by
# scripts/tiny_gguf.py (with the `gguf` package, installed into .calibrate-server/) into
# .calibrate-server/tiny-random-llama.gguf: a few MB, and no download of weights. Its verdicts
# are noise, so the numbers mean nothing; the run proves the HTTP path, structured output (the
# server constrains replies to the JSON schema sent as response_format) and the report end to
# end. Replies that still fail to parse are counted as parse failures, and a reply cut off by
# the context length (random text can fill it) as an other failure: valid results either way.
# The tokenizer is llama.cpp's llama-spm vocabulary when its vocab-only file is found (in the
# installed package, or in the uv cache of the llama-cpp-python source build); otherwise
# tiny_gguf.py makes up a byte-level one.
#
# Environment: PORT (default 8631), N_CTX (context length, default 4096),
# LLAMA_CPP_PYTHON (the requirement, default 'llama-cpp-python[server]>=0.3.16,<0.4').
set -euo pipefail

usage="usage: bash scripts/calibrate_local.sh MODEL.gguf|--tiny [calibrate options...]"
if [ $# -lt 1 ]; then
    echo "$usage" >&2
    exit 2
fi
tiny=0
if [ "$1" = "--tiny" ]; then
    tiny=1
elif [ -f "$1" ]; then
    model="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
else
    echo "$usage" >&2
    echo "calibrate_local: no model file at $1" >&2
    exit 2
fi
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

if [ "$tiny" = 1 ]; then
    if ! "$server_env/bin/python" -c "import gguf" 2>/dev/null; then
        "$UV" pip install --quiet --python "$server_env/bin/python" "gguf>=0.19,<1"
    fi
    vocab_name=ggml-vocab-llama-spm.gguf
    vocab="$(find "$server_env" -name "$vocab_name" -print -quit 2>/dev/null || true)"
    if [ -z "$vocab" ]; then
        # The source distribution uv built the server from keeps llama.cpp's vocab files.
        vocab="$(find "$("$UV" cache dir)" -path "*llama-cpp-python*/models/$vocab_name" \
            -print -quit 2>/dev/null || true)"
    fi
    model="$server_env/tiny-random-llama.gguf"
    "$server_env/bin/python" "$ROOT/scripts/tiny_gguf.py" "$model" ${vocab:+--vocab "$vocab"}
fi

log="$(mktemp)"
# llama_server.py: llama_cpp.server, taking the json_schema response_format judges send.
"$server_env/bin/python" "$ROOT/scripts/llama_server.py" --model "$model" \
    --model_alias local-judge --host 127.0.0.1 --port "$port" --n_ctx "${N_CTX:-4096}" \
    >"$log" 2>&1 &
server=$!
# `|| true`: set -e holds in the trap too, and the stopped server's status (143) would
# otherwise become the script's.
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -f "$log"' EXIT

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
