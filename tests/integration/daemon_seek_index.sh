# SPDX-License-Identifier: MIT
# The daemon's seek indexes (docs/formats/seek-index.md): a .recap and a CARLA .log session each
# leave NAME.idx beside each part NAME (a rotation starts a new one), the same bytes `rectool index` builds from the part. kill -9 while
# the parts are written leaves NAME.part.idx valid for what NAME.part holds (a cut through it is
# the full scan's); at the next start recovery keeps and completes it, rebuilds one of another
# file and builds a missing one, and every recovered part ends with a current index and no
# .part.idx left.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v python3 >/dev/null || { echo "SKIP: python3 is needed"; exit 77; }
recd_tmpdir daemon_seek_index
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
scale=${RECD_TEST_TIME_SCALE:-1}

"$RECTOOL" generate --format recap --scenario walk --duration 5m -o "$tmp/walk.recap" >/dev/null
"$RECTOOL" generate --format carla --duration 60s -o "$tmp/traffic.log" >/dev/null
cat >"$tmp/recd.yaml" <<YAML
listen:
  - tcp://127.0.0.1:0
output:
  root: $tmp/out
metrics:
  enabled: false
flush:
  interval: 50ms
rotation:
  max_size: 1MiB
YAML

# current FILE: FILE.idx is there, current, and the same bytes rectool index builds.
current() {
    [ -s "$1.idx" ] || { fail "no index beside $1"; return; }
    "$RECTOOL" index --check -q "$1" || fail "index of $1 is not current"
    cp "$1.idx" "$tmp/kept.idx"
    "$RECTOOL" index -q "$1" && cmp -s "$1.idx" "$tmp/kept.idx" || fail "index of $1 differs from a rebuilt one"
}

# 1. Whole sessions: each part is finalized with its own index (the CARLA session rotates).
start_recd "$tmp/log" --config "$tmp/recd.yaml"
"$RECTOOL" send "$tmp/walk.recap" --to "$tcp" --session walk --speed max >/dev/null || fail "send recap"
"$RECTOOL" send "$tmp/traffic.log" --to "$tcp" --session traffic --speed max >/dev/null || fail "send carla"
kill -TERM "$recd_pid"; wait "$recd_pid"; recd_pid=
for f in $(find "$tmp/out" -name '*.recap' -o -name '*.log' | sort); do current "$f"; done
parts=$(find "$tmp/out" -name '*.recap' -o -name '*.log' | wc -l)
[ "$parts" -ge 4 ] || fail "the CARLA session did not rotate: $parts parts"
[ "$(find "$tmp/out" -name '*.idx' | wc -l)" -eq "$parts" ] || fail "indexes: $(find "$tmp/out" -name '*.idx')"
find "$tmp/out" -name '*.part*' | grep -q . && fail "left: $(find "$tmp/out" -name '*.part*')"

# 2. kill -9 mid-session, three times: the index as left is valid for the part; recovery keeps it
# and completes it (run a), rebuilds it when its header names another file (run b), builds it
# when it was deleted (run c).
for run in a b c; do
    rm -rf "$tmp/out"
    start_recd "$tmp/log-$run" --config "$tmp/recd.yaml"
    "$RECTOOL" send "$tmp/walk.recap" --to "$tcp" --session "k$run" --speed 60 >/dev/null 2>&1 &
    sender=$!
    idx=
    for _ in $(seq $((300 * scale))); do # the index has entries past its first member's
        idx=$(find "$tmp/out" -name '*.recap.part.idx' 2>/dev/null | head -1)
        [ -n "$idx" ] && [ "$(stat -c %s "$idx")" -ge $((64 + 32 * 12)) ] && break
        sleep 0.1
    done
    kill -9 "$recd_pid"; wait "$recd_pid" 2>/dev/null; recd_pid=
    kill "$sender" 2>/dev/null; wait "$sender" 2>/dev/null
    part=${idx%.idx}
    [ -n "$idx" ] && [ -f "$part" ] || { fail "run $run: no .part with an index after kill -9"; continue; }
    cp "$part" "$tmp/crash.recap"; cp "$idx" "$tmp/crash.recap.idx"
    "$RECTOOL" repair "$tmp/crash.recap" -o "$tmp/crash-fixed.recap" >/dev/null 2>&1
    mv "$tmp/crash.recap.idx" "$tmp/crash-fixed.recap.idx"
    for from in 1 850 2100; do # the index as kill -9 left it, against the full scan
        "$RECTOOL" cut "$tmp/crash-fixed.recap" --from $from --to $((from + 300)) -q -o "$tmp/s.recap" 2>/dev/null
        a=$?
        RECTOOL_FULL_SCAN=1 "$RECTOOL" cut "$tmp/crash-fixed.recap" --from $from --to $((from + 300)) -q -o "$tmp/f.recap" 2>/dev/null
        b=$?
        [ $a -eq $b ] && { [ $a -ne 0 ] || cmp -s "$tmp/s.recap" "$tmp/f.recap"; } ||
            fail "run $run: a cut at $from through the crashed index differs from the full scan"
        rm -f "$tmp/s.recap" "$tmp/f.recap"
    done
    case $run in
        b) python3 -c 'import sys; p=sys.argv[1]; d=bytearray(open(p,"rb").read()); d[17]^=1; open(p,"wb").write(d)' "$idx" ;;
        c) rm -f "$idx" ;;
    esac
    start_recd "$tmp/log2-$run" --config "$tmp/recd.yaml"
    kill -TERM "$recd_pid"; wait "$recd_pid"; recd_pid=
    recovered=${part%.part}
    [ -f "$recovered" ] || { fail "run $run: recovery did not finalize $part"; continue; }
    "$RECTOOL" verify "$recovered" >/dev/null || fail "run $run: recovered part does not verify"
    current "$recovered"
    find "$tmp/out" -name '*.part*' | grep -q . && fail "run $run left: $(find "$tmp/out" -name '*.part*')"
    want=kept; [ $run = a ] || want=rebuilt
    grep -q "seek indexes: .*$( [ $want = kept ] && echo '1 kept' || echo '1 rebuilt')" "$tmp/log2-$run" ||
        fail "run $run: recovery did not say the index was $want: $(grep 'seek index' "$tmp/log2-$run")"
done

if [ "$failures" -ne 0 ]; then
    tail -20 "$tmp/log" >&2
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "daemon seek indexes: finalized with their parts, valid after kill -9, kept or rebuilt by recovery"
