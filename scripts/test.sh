#!/usr/bin/env bash
# The whole test suite. Extra arguments go to pytest.
source "$(dirname "${BASH_SOURCE[0]}")/_bootstrap.sh"

# The HTML report is also checked in headless Chromium; install it where we can.
if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "test: installing chromium with apt-get for the browser test of the HTML report" >&2
        if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium \
            >/dev/null; }; then
            echo "test: WARNING: installing chromium failed; the browser test of the HTML report" \
                "will be SKIPPED (and FAIL under CI=true)" >&2
        fi
    else
        echo "test: WARNING: chromium is missing and cannot be installed here (needs root and" \
            "apt-get); the browser test of the HTML report will be SKIPPED (and FAIL under CI=true)" >&2
    fi
fi

# The PostgreSQL ledger tests need a server: LANGCHAIN_EVALS_PG_DSN, or a throwaway one.
source "$(dirname "${BASH_SOURCE[0]}")/postgres.sh"

# Not exec: the throwaway PostgreSQL server is stopped by this shell's exit trap.
"$PY" -m pytest "$@"
