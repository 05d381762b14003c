# SPDX-License-Identifier: MIT
# Retention touches only what recd wrote (docs/reliability.md, round 3, rule 7; issue 35 row 8):
# with retention.max_age set, old foreign files under the root (an operator's notes.log and
# README.rec, a foreign .recap, a .rec in recd's own naming scheme and session folder) survive
# every retention run, while recd's own old recordings are deleted: one finalized normally, and
# one left as a .part by a killed recd and finalized by crash recovery at the next start.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
recd_tmpdir daemon_retention_own
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"
scale=${RECD_TEST_TIME_SCALE:-1}
out=$tmp/root

cat >"$tmp/recd.yaml" <<YAML
listen:
  - tcp://127.0.0.1:0
output:
  root: $out
metrics:
  listen: 127.0.0.1:0
flush:
  interval: 50ms
retention:
  max_age: 1h
YAML

# The operator's files, all three days old.
foreign="ops/notes.log README.rec notes.log recap/theirs/old.recap samp-onfoot/walker/20200101T000000Z.rec"
for f in $foreign; do
    mkdir -p "$(dirname "$out/$f")"
    echo "operator's $f" >"$out/$f"
    touch -d '3 days ago' "$out/$f"
done
# A filesystem without user extended attributes lets recd mark nothing: it then deletes nothing.
if ! python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.recd", b"probe"); os.removexattr(sys.argv[1], "user.recd")' \
    "$out/notes.log" 2>/dev/null; then
    echo "SKIP: $out keeps no user extended attributes" >&2
    exit 77
fi

# wait_for DESC CMD...: polls CMD every 0.1 s for up to 30 s x the time scale.
wait_for() {
    local desc=$1
    shift
    for _ in $(seq $((300 * scale))); do
        "$@" && return 0
        sleep 0.1
    done
    fail "timed out waiting for $desc"
    return 1
}
# own_files: recd's recordings of the sessions sent below (finalized, not the operator's).
own_files() { find "$out/samp-onfoot/walker" "$out/samp-onfoot/crashed" -name '*.rec' ! -name '20200101T000000Z.rec' 2>/dev/null; }
has_finalized() { [ -n "$(find "$out/samp-onfoot/$1" -name '*.rec' ! -name '20200101T000000Z.rec' 2>/dev/null)" ]; }
has_part() { [ -n "$(find "$out/samp-onfoot/$1" -name '*.rec.part' -size +0 2>/dev/null)" ]; }
no_own_files() { [ -z "$(own_files)" ]; }

expect 0 "$RECTOOL" generate --format samp-onfoot --scenario walk --duration 3s --seed 1 -o "$tmp/walk.rec"
expect 0 "$RECTOOL" generate --format samp-onfoot --scenario walk --duration 600s --seed 2 -o "$tmp/long.rec"

start_recd "$tmp/log" --config "$tmp/recd.yaml"
expect 0 "$RECTOOL" send "$tmp/walk.rec" --to "$tcp" --session walker --speed max
wait_for "the walker's finalized recording" has_finalized walker

# A session cut short by a crash: its .part is recovered at the next start.
"$RECTOOL" send "$tmp/long.rec" --to "$tcp" --session crashed --speed 1 >/dev/null 2>&1 &
sender=$!
wait_for "the crashed session's .part" has_part crashed
kill -9 "$recd_pid"
wait "$recd_pid" 2>/dev/null
kill "$sender" 2>/dev/null
wait "$sender" 2>/dev/null

start_recd "$tmp/log" --config "$tmp/recd.yaml"
wait_for "crash recovery of the crashed session" has_finalized crashed
[ "$(own_files | wc -l)" -eq 2 ] || fail "expected 2 recordings of recd's, found: $(own_files | tr '\n' ' ')"

# recd's own recordings grow old; a reload runs retention (retried: a pass already running
# skips it).
own_files | while read -r f; do touch -d '3 days ago' "$f"; done
for _ in $(seq $((30 * scale))); do
    kill -HUP "$recd_pid"
    for _ in $(seq 10); do no_own_files && break 2; sleep 0.1; done
done
no_own_files || fail "retention kept recd's old recordings: $(own_files | tr '\n' ' ')"
for s in walker crashed; do
    grep -q "retention: deleted samp-onfoot/$s/.*\.rec (age" "$tmp/log" || fail "the log names no deletion in $s"
done

for f in $foreign; do
    [ -f "$out/$f" ] || fail "retention deleted the operator's $f"
    grep -q "retention: deleted $f " "$tmp/log" && fail "the log says $f was deleted"
done
grep -q "retention: keeping 5 files named like recordings that recd did not mark" "$tmp/log" ||
    fail "recd did not say why it keeps the 5 unmarked files"
if [ "$failures" -ne 0 ]; then
    sed 's/^/    /' "$tmp/log" | tail -40 >&2
    find "$out" >&2
fi
[ "$failures" -eq 0 ]
