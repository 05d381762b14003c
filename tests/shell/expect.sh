# SPDX-License-Identifier: MIT
# Shared helpers for the shell-driven CLI tests. Source after setting $tmp (a scratch directory).
# fail MSG counts a failure and goes on; expect CODE CMD... runs CMD with its output in $tmp/out and
# $tmp/err and checks its exit code. Scripts end with: [ "$failures" -eq 0 ].
failures=0

fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

expect() {
    local want=$1
    shift
    "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    if [ "$got" -ne "$want" ]; then
        fail "exit $got, wanted $want: $*"
        sed 's/^/    /' "$tmp/out" "$tmp/err" | head -20 >&2
    fi
}
