# SPDX-License-Identifier: MIT
# Shared helpers for the shell-driven CLI tests. Source after setting $tmp (a scratch directory).
# fail MSG counts a failure and goes on; expect CODE CMD... runs CMD with its output in $tmp/out and
# $tmp/err and checks its exit code; expect_no_parts and expect_sent_back check what a recd under
# test wrote. Scripts end with: [ "$failures" -eq 0 ].
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

# Fails when a .part file is left under DIR (after a clean stop every part is finalized).
expect_no_parts() {
    local left
    left=$(find "$1" -name '*.part')
    [ -z "$left" ] || fail ".part files left after a clean stop: $left"
}

# SENT lists "N FILE" lines, each a recording sent as session TRANSPORT-N over every TRANSPORT
# given: each must come out under OUT as one file (a seek index beside it aside), byte for byte.
expect_sent_back() {
    local sent=$1 out=$2
    shift 2
    local n f transport files count
    while read -r n f; do
        for transport in "$@"; do
            files=$(find "$out" -path "*/$transport-$n/*" -type f ! -name "*.idx")
            count=$(printf '%s\n' "$files" | grep -c .)
            if [ "$count" -ne 1 ]; then
                fail "$(basename "$f") over $transport: $count output files"
                continue
            fi
            cmp -s "$f" "$files" || fail "$(basename "$f") over $transport: output differs ($(cmp "$f" "$files" 2>&1 | head -1))"
        done
    done <"$sent"
}
