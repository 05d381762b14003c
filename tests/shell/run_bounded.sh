# SPDX-License-Identifier: MIT
# Runs one shell test (ctest's command for every tests/*/*.sh) in a session of its own, bounded by
# RECD_TEST_LIMIT seconds (600 unless set; ctest's own timeout is 900). A test still running then
# has hung: before anything is killed, the report names every process of the session with its
# state and kernel wait channel, and the threads' backtraces of each program that is neither a
# shell nor python (gdb, where installed). Then the whole session is stopped and the test fails,
# so a hang on a CI machine says where it hung instead of only "Timeout".
# Usage: bash tests/shell/run_bounded.sh SCRIPT [ARG...]
set -u
limit=${RECD_TEST_LIMIT:-600}
script=$1
shift

setsid bash "$script" "$@" &
test_pid=$! # setsid execs in place (a background job is no group leader): the session's id
sleep "$limit" </dev/null >/dev/null 2>&1 &
timer_pid=$!

report() {
    echo "FAIL: $(basename "$script") still running after ${limit} s (RECD_TEST_LIMIT); its processes:" >&2
    ps -s "$test_pid" -o pid,ppid,stat,etime,wchan:24,args >&2
    echo "their threads:" >&2
    ps -L -s "$test_pid" -o pid,tid,stat,wchan:24,comm >&2
    command -v gdb >/dev/null || { echo "(gdb is not installed: no backtraces)" >&2; return; }
    local pid comm
    for pid in $(ps -s "$test_pid" -o pid=); do
        comm=$(ps -p "$pid" -o comm= 2>/dev/null) || continue
        case "$comm" in bash | sh | sleep | python3* | timeout | ps | nats-server) continue ;; esac # nats-server: Go, no frames
        echo "--- backtraces of $pid ($comm)" >&2
        timeout 60 gdb -p "$pid" -batch -nx -ex 'set pagination off' -ex 'thread apply all bt 30' \
            2>/dev/null | grep -E '^(Thread|#)' | head -n 300 >&2
    done
}

wait -n -p ended "$test_pid" "$timer_pid"
rc=$?
if [ "$ended" = "$test_pid" ]; then
    kill "$timer_pid" 2>/dev/null
    exit "$rc"
fi
report
kill -TERM -- "-$test_pid" 2>/dev/null # the test's EXIT trap cleans up what it started
for _ in $(seq 50); do
    [ -z "$(ps -s "$test_pid" -o pid= 2>/dev/null)" ] && break
    sleep 0.1
done
kill -KILL -- "-$test_pid" 2>/dev/null
pkill -KILL -s "$test_pid" 2>/dev/null
exit 1
