#!/usr/bin/env bash
# The whole test suite. Extra arguments go to pytest.
source "$(dirname "${BASH_SOURCE[0]}")/_bootstrap.sh"

# The HTML report and the console are also checked in headless Chromium (the console through
# Playwright, on the system's chromium); install it where we can.
if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "test: installing chromium with apt-get for the browser tests (HTML report, console)" >&2
        if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium \
            >/dev/null; }; then
            echo "test: WARNING: installing chromium failed; the browser tests (HTML report, console)" \
                "will be SKIPPED (and FAIL under CI=true)" >&2
        fi
    else
        echo "test: WARNING: chromium is missing and cannot be installed here (needs root and" \
            "apt-get); the browser tests (HTML report, console) will be SKIPPED (and FAIL under CI=true)" >&2
    fi
fi

# The sandbox tests run generated code under bubblewrap (bwrap) with prlimit (util-linux).
if ! command -v bwrap >/dev/null 2>&1 || ! command -v prlimit >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "test: installing bubblewrap and util-linux with apt-get for the sandbox tests" >&2
        bwrap_started=$(date +%s)
        if { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            bubblewrap util-linux >/dev/null; }; then
            echo "test: bubblewrap installed in $(($(date +%s) - bwrap_started)) s" >&2
        else
            echo "test: WARNING: installing bubblewrap failed; the bubblewrap sandbox tests" \
                "will be SKIPPED (and FAIL under CI=true)" >&2
        fi
    else
        echo "test: WARNING: bubblewrap (bwrap) or prlimit is missing and cannot be installed" \
            "here (needs root and apt-get); the bubblewrap sandbox tests will be SKIPPED" \
            "(and FAIL under CI=true)" >&2
    fi
fi

# PyrightCheck and the OpenEvals pyright parity tests run the real pyright (a Node.js tool).
PYRIGHT_VERSION=1.1.414
if ! command -v pyright >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v npm >/dev/null 2>&1; then
        echo "test: installing pyright@$PYRIGHT_VERSION with npm for the pyright tests" >&2
        pyright_started=$(date +%s)
        if npm install -g --no-fund --no-audit --loglevel=error "pyright@$PYRIGHT_VERSION" >/dev/null; then
            echo "test: pyright installed in $(( $(date +%s) - pyright_started ))s" >&2
        else
            echo "test: WARNING: installing pyright failed; the pyright tests will be SKIPPED" \
                "(and FAIL under CI=true)" >&2
        fi
    else
        echo "test: WARNING: pyright is missing and cannot be installed here (needs root and" \
            "npm); the pyright tests will be SKIPPED (and FAIL under CI=true)" >&2
    fi
fi

# The PostgreSQL ledger tests need a server: LANGCHAIN_EVALS_PG_DSN, or a throwaway one.
source "$(dirname "${BASH_SOURCE[0]}")/postgres.sh"

# The Docker sandbox tests need a daemon and a local Python image (built without a registry):
# LANGCHAIN_EVALS_DOCKER_IMAGE, or dockerd started here and stopped on exit. Sourced after
# postgres.sh: its exit trap runs the earlier one first.
source "$(dirname "${BASH_SOURCE[0]}")/docker.sh"

# Not exec: the throwaway PostgreSQL server is stopped by this shell's exit trap.
"$PY" -m pytest "$@"
