# SPDX-License-Identifier: MIT
# Runs one shell test (ctest's command for every tests/*/*.sh) in a session of its own, bounded by
# RECD_TEST_LIMIT seconds (600 unless set; ctest's own timeout is 900). A test still running then
# has hung: before anything is killed, the report names every process of the session with its
# state and kernel wait channel, and the threads' backtraces of each program that is neither a
# shell nor python (gdb, where installed). Then the whole session is stopped and the test fails,
# so a hang on a CI machine says where it hung instead of only "Timeout".
# The test runs in the foreground: bash would start a background job with SIGINT ignored, and the
# tests that stop rectool with Ctrl-C need it to reach them.
# Usage: bash tests/shell/run_bounded.sh SCRIPT [ARG...]
set -u
limit=${RECD_TEST_LIMIT:-600}
script=$1
shift
state=$(mktemp -d "${TMPDIR:-/tmp}/run_bounded.XXXXXX")

report() { # SID
    echo "FAIL: $(basename "$script") still running after ${limit} s (RECD_TEST_LIMIT); its processes:"
    ps -s "$1" -o pid,ppid,stat,etime,wchan:24,args
    echo "their threads:"
    ps -L -s "$1" -o pid,tid,stat,wchan:24,comm
    command -v gdb >/dev/null || { echo "(gdb is not installed: no backtraces)"; return; }
    local pid comm
    for pid in $(ps -s "$1" -o pid=); do
        comm=$(ps -p "$pid" -o comm= 2>/dev/null) || continue
        case "$comm" in bash | sh | sleep | python3* | timeout | ps | nats-server) continue ;; esac # nats-server: Go, no frames
        echo "--- backtraces of $pid ($comm)"
        timeout 60 gdb -p "$pid" -batch -nx -ex 'set pagination off' -ex 'thread apply all bt 30' \
            2>/dev/null | grep -E '^(Thread|#)' | head -n 300
    done
}

stop_session() { # SID: TERM first, so the test's EXIT trap cleans up what it started
    kill -TERM -- "-$1" 2>/dev/null
    for _ in $(seq 50); do
        [ -z "$(ps -s "$1" -o pid= 2>/dev/null)" ] && return
        sleep 0.1
    done
    kill -KILL -- "-$1" 2>/dev/null
    pkill -KILL -s "$1" 2>/dev/null
}

# The watchdog writes to files only: a process of it left behind holds none of ctest's pipes.
(
    sleep "$limit"
    touch "$state/expired"
    sid=$(cat "$state/sid" 2>/dev/null) || exit 0
    report "$sid" >"$state/report" 2>&1
    stop_session "$sid"
) </dev/null >/dev/null 2>&1 &
watchdog=$!

setsid -w bash -c 'echo $$ >"$0"; exec bash "$@"' "$state/sid" "$script" "$@"
rc=$?
if [ -e "$state/expired" ]; then
    wait "$watchdog"
    cat "$state/report" >&2
    rm -rf "$state"
    exit 1
fi
pkill -P "$watchdog" 2>/dev/null # its sleep
kill "$watchdog" 2>/dev/null
rm -rf "$state"
exit "$rc"
