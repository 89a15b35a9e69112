# Sourced by scripts/test.sh: makes LANGCHAIN_EVALS_DOCKER_IMAGE name a local Python image on
# a Docker daemon that answers, for the DockerSandboxRunner tests.
#
# A daemon that already answers (DOCKER_HOST or the default socket) is used as it is, and so
# is LANGCHAIN_EVALS_DOCKER_IMAGE when it is already set. Otherwise, as root: Debian's
# docker.io and debootstrap are installed when missing, dockerd is started in the background
# (logging to a temporary file, stopped when the sourcing shell exits, only if we started
# it), and the image is built without any registry: a minimal Debian root filesystem with
# python3 made by debootstrap from the mirror apt uses, imported as langchain-evals-python:1.
# The root filesystem tarball is cached in /var/cache/langchain-evals/ so the image can be
# re-imported in seconds; an image of the same recipe already in the daemon is reused. When any of this is impossible it warns loudly and leaves the
# variable unset: the Docker tests then skip (and fail under CI=true).

_DK_IMAGE="langchain-evals-python:1"
_DK_CACHE="/var/cache/langchain-evals"
# What the image holds; a cached tarball or image of another recipe is rebuilt. python3 (not
# just python3-minimal) for the whole standard library: json, unittest, ... are not minimal.
_DK_SUITE="bookworm"
_DK_PACKAGES="python3"
_DK_RECIPE="debootstrap-minbase-$_DK_SUITE-$_DK_PACKAGES-1"
_DK_PID=""
_DK_TMP=""

_dk_log() { echo "docker: $*" >&2; }

_dk_warn() {
    _dk_log "WARNING: $*"
    _dk_log "WARNING: the Docker sandbox tests will be SKIPPED (and FAIL under CI=true);" \
        "set LANGCHAIN_EVALS_DOCKER_IMAGE to an image with python3 on a daemon that answers"
}

_dk_now_ms() { echo $(($(date +%s%N) / 1000000)); }

_dk_since() { echo "$(($(_dk_now_ms) - $1)) ms"; }

_dk_answers() { docker info >/dev/null 2>&1; }

# Stop the daemon we started (never one that was already running) and drop its log.
_dk_stop() {
    if [ -n "$_DK_PID" ] && kill -0 "$_DK_PID" 2>/dev/null; then
        kill "$_DK_PID" 2>/dev/null || true
        local waited=0
        while kill -0 "$_DK_PID" 2>/dev/null && [ "$waited" -lt 150 ]; do
            sleep 0.1
            waited=$((waited + 1))
        done
        kill -9 "$_DK_PID" 2>/dev/null || true
    fi
    _DK_PID=""
    [ -n "$_DK_TMP" ] && rm -rf "$_DK_TMP"
    _DK_TMP=""
}

# Run _dk_stop on exit, after whatever exit trap an earlier sourced script set.
_dk_chain_exit_trap() {
    local previous
    previous="$(trap -p EXIT)"
    if [ -n "$previous" ]; then
        eval "set -- $previous"
        # shellcheck disable=SC2064  # expand the earlier handler now, on purpose
        trap "$3; _dk_stop" EXIT
    else
        trap '_dk_stop' EXIT
    fi
    trap 'exit 130' INT
    trap 'exit 143' TERM HUP
}

# Install packages with apt-get; a stale list is refreshed once (unreachable extra sources
# make `apt-get update` report an error even when Debian's own lists were fetched).
_dk_apt_install() {
    if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" \
        >/dev/null 2>&1; then
        return 0
    fi
    apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# Install what is missing of the given commands (dockerd, debootstrap) from Debian packages.
_dk_install() {
    local missing=() started command
    for command in "$@"; do
        if ! command -v "$command" >/dev/null 2>&1; then
            case "$command" in
                dockerd) missing+=(docker.io) ;;
                *) missing+=("$command") ;;
            esac
        fi
    done
    [ "${#missing[@]}" = 0 ] && return 0
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        _dk_warn "${missing[*]} missing and cannot be installed here (needs root and apt-get)"
        return 1
    fi
    started="$(_dk_now_ms)"
    _dk_log "installing ${missing[*]} with apt-get"
    if ! _dk_apt_install "${missing[@]}"; then
        _dk_warn "installing ${missing[*]} with apt-get failed"
        return 1
    fi
    _dk_log "installed ${missing[*]} in $(_dk_since "$started")"
}

_dk_start_daemon() {
    local started waited=0 dead=0
    if [ "$(id -u)" != 0 ]; then
        _dk_warn "no Docker daemon answers and only root can start one here"
        return 1
    fi
    command -v dockerd >/dev/null 2>&1 || return 1
    started="$(_dk_now_ms)"
    _DK_TMP="$(mktemp -d "${TMPDIR:-/tmp}/langchain-evals-docker.XXXXXX")"
    _dk_chain_exit_trap
    # The default pid file: dockerd refuses to start next to a live daemon (a concurrent
    # run's), and then we wait for that one instead, and leave it running on exit.
    dockerd >"$_DK_TMP/dockerd.log" 2>&1 &
    _DK_PID=$!
    while ! _dk_answers; do
        # Ours exited: another daemon has 10 s to answer. Ours runs: 60 s.
        kill -0 "$_DK_PID" 2>/dev/null || dead=$((dead + 1))
        if [ "$waited" -ge 600 ] || [ "$dead" -ge 100 ]; then
            tail -n 20 "$_DK_TMP/dockerd.log" >&2 || true
            _dk_warn "dockerd did not start (log above)"
            _dk_stop
            return 1
        fi
        sleep 0.1
        waited=$((waited + 1))
    done
    if ! kill -0 "$_DK_PID" 2>/dev/null; then
        _DK_PID=""
        _dk_log "another dockerd answered first; using it (not stopped on exit)"
        return 0
    fi
    _dk_log "started dockerd (pid $_DK_PID, log $_DK_TMP/dockerd.log) in $(_dk_since "$started");" \
        "stopped on exit"
}

# The apt source URI of Debian's main archive (not the security one), for debootstrap.
_dk_mirror() {
    local uri
    uri="$(grep -hsE '^(URIs:|deb )' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
        /etc/apt/sources.list.d/*.sources 2>/dev/null |
        grep -oE 'https?://[^ ]+/debian/?( |$)' | head -n 1 | tr -d ' ')"
    echo "${uri:-http://deb.debian.org/debian}"
}

_dk_build_image() {
    local started tarball="$_DK_CACHE/rootfs-$_DK_RECIPE.tar" dir mirror
    started="$(_dk_now_ms)"
    if [ ! -s "$tarball" ]; then
        if [ "$(id -u)" != 0 ] || ! command -v debootstrap >/dev/null 2>&1; then
            _dk_warn "the image $_DK_IMAGE is missing and cannot be built here (needs root and debootstrap)"
            return 1
        fi
        mirror="$(_dk_mirror)"
        mkdir -p "$_DK_CACHE"
        dir="$(mktemp -d "$_DK_CACHE/rootfs.XXXXXX")"
        _dk_log "building a minimal Debian $_DK_SUITE root filesystem with $_DK_PACKAGES from $mirror"
        if ! debootstrap --variant=minbase --include="$_DK_PACKAGES" "$_DK_SUITE" "$dir" "$mirror" \
            >"$dir.log" 2>&1; then
            tail -n 20 "$dir.log" >&2 || true
            _dk_warn "debootstrap failed (log above)"
            rm -rf "$dir" "$dir.log"
            return 1
        fi
        # Apt caches and lists are not needed to run Python.
        rm -rf "$dir/var/cache/apt/archives/"*.deb "$dir/var/lib/apt/lists/"*
        tar -C "$dir" -cf "$tarball.partial" . && mv "$tarball.partial" "$tarball"
        rm -rf "$dir" "$dir.log"
        _dk_log "built the root filesystem ($(du -h "$tarball" | cut -f1)) in $(_dk_since "$started")"
        started="$(_dk_now_ms)"
    fi
    if ! docker import -c 'CMD ["python3"]' -c "LABEL langchain-evals.recipe=$_DK_RECIPE" \
        "$tarball" "$_DK_IMAGE" >/dev/null; then
        _dk_warn "docker import of $tarball failed"
        return 1
    fi
    _dk_log "imported $_DK_IMAGE from the cached root filesystem in $(_dk_since "$started")"
}

_dk_setup() {
    local started
    started="$(_dk_now_ms)"
    if ! command -v docker >/dev/null 2>&1 || ! _dk_answers; then
        _dk_install dockerd debootstrap || return 1
        if ! _dk_answers; then
            _dk_start_daemon || return 1
        fi
    fi
    if [ "$(docker image inspect -f '{{index .Config.Labels "langchain-evals.recipe"}}' \
        "$_DK_IMAGE" 2>/dev/null)" != "$_DK_RECIPE" ]; then
        _dk_install debootstrap || return 1
        _dk_build_image || return 1
    fi
    export LANGCHAIN_EVALS_DOCKER_IMAGE="$_DK_IMAGE"
    _dk_log "LANGCHAIN_EVALS_DOCKER_IMAGE=$_DK_IMAGE ready in $(_dk_since "$started")"
}

if [ -n "${LANGCHAIN_EVALS_DOCKER_IMAGE:-}" ]; then
    _dk_log "using LANGCHAIN_EVALS_DOCKER_IMAGE=$LANGCHAIN_EVALS_DOCKER_IMAGE from the environment"
else
    _dk_setup || true
fi
