# Sourced by the project's commands: finds or installs `uv`, then makes .venv match
# requirements.lock (hash-checked) with this project installed in editable mode.
# Needs only Python 3.10+ with venv and pip on PATH as python3.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    echo "error: python3 (3.10 or newer) is required on PATH" >&2
    exit 2
fi

if command -v uv >/dev/null 2>&1; then
    UV="$(command -v uv)"
else
    # A private venv holds the installer, so the user's Python stays untouched.
    if [ ! -x .tools/bin/uv ]; then
        echo "bootstrap: installing uv into .tools/" >&2
        python3 -m venv .tools
        .tools/bin/python -m pip install --quiet "uv==0.13.9"
    fi
    UV="$ROOT/.tools/bin/uv"
fi
export UV_PYTHON_DOWNLOADS=never
[ -x .venv/bin/python ] || "$UV" venv --quiet --python python3 .venv
echo "-e ." > .venv/project-requirements.txt
"$UV" pip sync --quiet --compile-bytecode --python .venv requirements.lock \
    .venv/project-requirements.txt
PY="$ROOT/.venv/bin/python"
export PY
