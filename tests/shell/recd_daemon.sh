# SPDX-License-Identifier: MIT
# Starts the recd under test for a shell test. `require_recd` first (it skips the test when this
# build has no recd), then `recd_tmpdir NAME`: it makes the scratch directory $tmp and installs the
# EXIT trap that kills recd and removes $tmp (a script that sets its own EXIT trap must call
# stop_recd_at_exit in it). Then `start_recd LOG ARG...` with recd's arguments (--config FILE,
# --listen URL, ...): it waits for recd's "ready" line (--print-ports) and sets recd_pid and tcp,
# udp, unix and metrics to what recd bound (empty when not listening there). When recd does not
# start, it prints LOG and exits 1. `require_corpus SUB` skips when the shared corpus has no SUB.
recd_pid=

# Exits 77 (ctest's skip) when $RECD names no built recd; $RECTOOL must be set.
require_recd() {
    if [ -z "${RECD:-}" ] || [ ! -x "${RECD:-}" ]; then
        echo "SKIP: \$RECD does not name the recd binary (the daemon is not built)"
        exit 77
    fi
    : "${RECTOOL:?RECTOOL must point at the rectool binary}"
}

# Exits 77 when $RECD_CORPUS_DIR/SUB is missing; sets corpus to that folder.
require_corpus() {
    corpus="${RECD_CORPUS_DIR:-}/$1"
    if [ -z "${RECD_CORPUS_DIR:-}" ] || [ ! -d "$corpus" ]; then
        echo "SKIP: the $1 corpus ($corpus) is not available; set RECD_CORPUS_DIR"
        exit 77
    fi
}

# Makes $tmp (named after NAME) and kills recd and removes $tmp when the script exits.
recd_tmpdir() {
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
    trap 'stop_recd_at_exit; rm -rf "$tmp"' EXIT
}

stop_recd_at_exit() {
    [ -n "$recd_pid" ] && kill -9 "$recd_pid" 2>/dev/null
    wait "$recd_pid" 2>/dev/null
}

start_recd() {
    local log=$1
    shift
    # Emptied here, not only by the redirection below: that runs in the background child, so on
    # a restart the wait could still read the last recd's "ready" and its ports.
    : >"$tmp/ports"
    "$RECD" "$@" --print-ports >"$tmp/ports" 2>>"$log" & # appended: a test may restart recd
    recd_pid=$!
    # Up to 60 s: a sanitizer build on a busy machine starts slowly.
    for _ in $(seq 600); do
        grep -qx 'ready' "$tmp/ports" 2>/dev/null && break
        kill -0 "$recd_pid" 2>/dev/null || break
        sleep 0.1
    done
    if ! grep -qx 'ready' "$tmp/ports" 2>/dev/null; then
        cat "$log" >&2
        echo "FAIL: recd did not start" >&2
        exit 1
    fi
    tcp=$(sed -n 's/^listen \(tcp:.*\)/\1/p' "$tmp/ports" | head -1)
    udp=$(sed -n 's/^listen \(udp:.*\)/\1/p' "$tmp/ports" | head -1)
    unix=$(sed -n 's/^listen \(unix:.*\)/\1/p' "$tmp/ports" | head -1)
    metrics=$(sed -n 's/^metrics \(.*\)/\1/p' "$tmp/ports" | head -1)
}
