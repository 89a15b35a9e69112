# Sourced by scripts/test.sh: makes LANGCHAIN_EVALS_PG_DSN point at a PostgreSQL database for
# the PostgreSQL ledger tests.
#
# A DSN already in the environment is used as it is. Otherwise this starts a throwaway
# cluster: installed from Debian packages when missing (root only), created in a temporary
# directory, listening on 127.0.0.1 only (a free port, trust authentication), and stopped and
# deleted when the sourcing shell exits. When that is impossible it warns loudly and leaves
# the variable unset: the PostgreSQL tests then skip (and fail under CI=true).

_pg_log() { echo "postgres: $*" >&2; }

_pg_warn() {
    _pg_log "WARNING: $*"
    _pg_log "WARNING: the PostgreSQL ledger tests will be SKIPPED (and FAIL under CI=true);" \
        "set LANGCHAIN_EVALS_PG_DSN to use a server of your own"
}

# The bin directory of the newest PostgreSQL server installed from Debian packages, or "".
_pg_bindir() {
    local dir found=""
    # Version order (9.6 before 15): the last one that has a server wins.
    for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V); do
        [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ] && found="$dir"
    done
    echo "$found"
}

# Run a server command as the cluster's owner: `postgres` when we are root (the server
# refuses to run as root), ourselves otherwise.
_pg_as_owner() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

_pg_free_port() {
    "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

_pg_stop() {
    if [ -n "${_PG_DIR:-}" ] && [ -d "$_PG_DIR" ]; then
        if [ -f "$_PG_DIR/data/postmaster.pid" ]; then
            (cd "$_PG_DIR" && _pg_as_owner "$_PG_BIN/pg_ctl" -D "$_PG_DIR/data" -m immediate \
                -w -t 30 stop >/dev/null 2>&1) || true
        fi
        rm -rf "$_PG_DIR"
    fi
    _PG_DIR=""
}

_pg_start() {
    local started_ns bin attempt port
    started_ns="$(date +%s%N)"
    bin="$(_pg_bindir)"
    if [ -z "$bin" ]; then
        if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
            _pg_warn "PostgreSQL is not installed and cannot be installed here (needs root and apt-get)"
            return 1
        fi
        _pg_log "installing postgresql with apt-get"
        if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            postgresql >/dev/null; }; then
            _pg_warn "installing postgresql with apt-get failed"
            return 1
        fi
        bin="$(_pg_bindir)"
        if [ -z "$bin" ]; then
            _pg_warn "postgresql was installed but no server binaries were found"
            return 1
        fi
    fi
    if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
        _pg_warn "there is no 'postgres' user to run the server as (it refuses to run as root)"
        return 1
    fi
    _PG_BIN="$bin"
    _PG_DIR="$(mktemp -d "${TMPDIR:-/tmp}/langchain-evals-pg.XXXXXX")"
    trap '_pg_stop' EXIT
    # An interrupted run still exits through the EXIT trap, which stops the server.
    trap 'exit 130' INT
    trap 'exit 143' TERM HUP
    [ "$(id -u)" = 0 ] && chown postgres: "$_PG_DIR"
    # The server's working directory must be readable by its owner; use the cluster's own.
    if ! (cd "$_PG_DIR" && _pg_as_owner "$bin/initdb" -D "$_PG_DIR/data" -U postgres -A trust \
        -E UTF8 --locale=C.UTF-8 --no-sync >"$_PG_DIR/initdb.log" 2>&1); then
        cat "$_PG_DIR/initdb.log" >&2
        _pg_warn "initdb failed"
        _pg_stop
        return 1
    fi
    # A throwaway cluster: durability is traded for speed.
    for attempt in 1 2 3; do
        port="$(_pg_free_port)"
        if (cd "$_PG_DIR" && _pg_as_owner "$bin/pg_ctl" -D "$_PG_DIR/data" \
            -l "$_PG_DIR/server.log" -w -t 30 \
            -o "-c listen_addresses=127.0.0.1 -p $port -k $_PG_DIR -c fsync=off" \
            -o "-c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
            start >/dev/null 2>&1); then
            break
        fi
        port=""
    done
    if [ -z "$port" ]; then
        tail -n 20 "$_PG_DIR/server.log" >&2 || true
        _pg_warn "the throwaway server did not start"
        _pg_stop
        return 1
    fi
    if ! "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -t 30 ||
        ! (cd "$_PG_DIR" && _pg_as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres evals); then
        _pg_warn "the throwaway server on 127.0.0.1:$port is not answering"
        _pg_stop
        return 1
    fi
    export LANGCHAIN_EVALS_PG_DSN="postgresql://postgres@127.0.0.1:$port/evals"
    local elapsed_ms=$((($(date +%s%N) - started_ns) / 1000000))
    _pg_log "throwaway PostgreSQL $("$bin/postgres" --version | awk '{print $3}') ready at" \
        "$LANGCHAIN_EVALS_PG_DSN in ${elapsed_ms} ms (stopped and deleted on exit)"
}

if [ -n "${LANGCHAIN_EVALS_PG_DSN:-}" ]; then
    _pg_log "using LANGCHAIN_EVALS_PG_DSN from the environment"
else
    _pg_start || true
fi
