# SPDX-License-Identifier: MIT
# rectool send streams: a one-hour .recap goes to recd in bounded memory (the sender's peak RSS
# stays near what a 10-second file takes; it used to hold every decoded message, 131 MB for this
# file) and arrives complete; --auth carries the daemon's auth.token, and without it the daemon
# refuses; a text file with a bad line is refused before anything is sent.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
recd_tmpdir rectool_send_stream
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"
# Sanitizer builds: a small quarantine, or freed memory counts as held (harmless otherwise).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4"

token=0123456789abcdef-stream-test
mkdir -p "$tmp/recordings"
cat >"$tmp/recd.yaml" <<EOF
listen:
  - tcp://127.0.0.1:0
output:
  root: $tmp/recordings
metrics:
  enabled: false
auth:
  token: $token
EOF
start_recd "$tmp/recd.log" --config "$tmp/recd.yaml"
url=$tcp

# Runs a command; $peak gets its peak RSS in KiB, $peak_rc its exit code ($tmp/out, $tmp/err).
measure() {
    /usr/bin/time -f %M -o "$tmp/rss" "$@" >"$tmp/out" 2>"$tmp/err"
    peak_rc=$?
    peak=$(tail -n 1 "$tmp/rss")
}

expect 0 "$RECTOOL" generate --format recap --scenario mixed --duration 10s --seed 5 -o "$tmp/short.recap"
expect 0 "$RECTOOL" generate --format recap --scenario mixed --duration 1h --seed 5 -o "$tmp/hour.recap"

# ---- bounded memory, complete output ----
if [ -x /usr/bin/time ]; then
    measure "$RECTOOL" send "$tmp/short.recap" --to "$url" --speed max --auth "$token"
    [ "$peak_rc" -eq 0 ] || fail "sending the 10 s file: exit $peak_rc: $(cat "$tmp/err")"
    small=$peak
    measure "$RECTOOL" send "$tmp/hour.recap" --to "$url" --speed max --auth "$token"
    [ "$peak_rc" -eq 0 ] || fail "sending the 1 h file: exit $peak_rc: $(cat "$tmp/err")"
    big=$peak
    echo "peak RSS: $small KiB for 10 s, $big KiB for 1 h"
    [ "$big" -le $((small + 32768)) ] ||
        fail "sending 1 h took $big KiB at peak, 10 s took $small KiB: memory grows with the file"
else
    echo "note: /usr/bin/time not installed; peak memory not checked"
    expect 0 "$RECTOOL" send "$tmp/hour.recap" --to "$url" --speed max --auth "$token"
fi
grep -q "sent 57177 messages" "$tmp/out" || fail "the 1 h file: $(cat "$tmp/out")"

# ---- without the token the daemon refuses; a bad token is a usage error ----
expect 1 "$RECTOOL" send "$tmp/short.recap" --session no-token --to "$url" --speed max
grep -qi "auth" "$tmp/err" || fail "the refusal does not mention auth: $(cat "$tmp/err")"
expect 1 "$RECTOOL" send "$tmp/short.recap" --session wrong-token --to "$url" --speed max \
    --auth wrong-token-0123456789
expect 2 "$RECTOOL" send "$tmp/short.recap" --to "$url" --auth "has space"
expect 2 "$RECTOOL" send "$tmp/short.recap" --to "$url" --auth ""
expect 0 "$RECTOOL" send --synthetic --format samp-onfoot --sessions 2 --rate 50 --duration 1s \
    --session synth-auth --to "$url" --auth "$token"

# ---- a text file is checked whole before its first message goes out ----
expect 0 "$RECTOOL" export "$tmp/short.recap" --to jsonl -o "$tmp/short.jsonl"
sed '$s/.*/{"type":"bogus"}/' "$tmp/short.jsonl" >"$tmp/bad-end.jsonl"
expect 1 "$RECTOOL" send "$tmp/bad-end.jsonl" --to "$url" --speed max --auth "$token"
grep -q "line [0-9]" "$tmp/err" || fail "a bad line is not named: $(cat "$tmp/err")"
expect 0 "$RECTOOL" send "$tmp/short.jsonl" "$tmp/short.recap" --session two --to "$url" \
    --speed max --auth "$token"

kill -TERM "$recd_pid"
wait "$recd_pid"
recd_rc=$?
recd_pid=
[ "$recd_rc" -eq 0 ] || fail "recd exited $recd_rc after SIGTERM"

# What recd wrote holds every state and event of the original (members may end elsewhere, and
# recd's members come from its own compressor, recap.compressor, which its header names).
same_messages() { # ORIGINAL SESSION
    local got
    got=$(find "$tmp/recordings/recap/$2" -name '*.recap' | head -n 1)
    if [ -z "$got" ]; then
        fail "session $2: recd wrote no .recap"
        return
    fi
    "$RECTOOL" export "$1" --to jsonl | grep -v '"type":"flush"' >"$tmp/want.jsonl"
    "$RECTOOL" export "$got" --to jsonl | grep -v '"type":"flush"' |
        sed '1s/,"compressor":"libdeflate"}/}/' >"$tmp/got.jsonl"
    cmp -s "$tmp/want.jsonl" "$tmp/got.jsonl" || fail "session $2: recd's file differs from $1"
}
same_messages "$tmp/hour.recap" hour
same_messages "$tmp/short.recap" short
same_messages "$tmp/short.recap" two-1
same_messages "$tmp/short.recap" two-2
for refused in no-token wrong-token bad-end; do
    [ -e "$tmp/recordings/recap/$refused" ] && fail "session $refused: recd recorded it"
done
[ -d "$tmp/recordings/samp-onfoot/synth-auth-1" ] || fail "the synthetic sessions with --auth were not recorded"

[ "$failures" -eq 0 ]
