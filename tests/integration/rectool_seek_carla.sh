# SPDX-License-Identifier: MIT
# CARLA cuts that start at the seek point (docs/formats/seek-index.md, docs/formats/carla.md): the
# cut learns the actors alive at its first frame from the frames before it without decoding them,
# and must give the same bytes as the cut that reads the whole log (RECTOOL_FULL_SCAN=1): at frame
# boundaries and between them, at frames that add, delete or attach actors and next to them, with
# and without --to and --keep-time, with a missing or damaged index, in a log whose time goes back,
# and in the real log of the corpus (skipped when absent). export --from/--until, info --at and
# plot --from/--to (the same SVG, or the same error) too.
set -u
: "${RECTOOL:?RECTOOL must point at the rectool binary}"
"$RECTOOL" generate --help >/dev/null 2>&1 || { echo "rectool generate is not available" >&2; exit 77; }
command -v python3 >/dev/null || { echo "python3 is needed to read the log's frames" >&2; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rectool_seek_carla.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
die() { echo "FAIL: $*" >&2; exit 1; }

# frames LOG: "ms event" per frame (ms as the edit operations round it; event 1 when the frame
# holds an EventAdd, EventDel or EventParent record).
frames() {
    python3 - "$1" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
pos = 28 + struct.unpack_from('<H', d, 26)[0]
ms = None
ev = 0
while pos + 5 <= len(d):
    pid, size = struct.unpack_from('<BI', d, pos)
    body = d[pos + 5:pos + 5 + size]
    if pid == 0:
        ms = int(round(struct.unpack_from('<d', body, 16)[0] * 1000))
        ev = 0
    elif pid in (2, 3, 4) and size >= 2 and struct.unpack_from('<H', body, 0)[0] > 0:
        ev = 1
    elif pid == 1:
        print(ms, ev)
    pos += 5 + size
PY
}

checks=0
# A sanitizer build runs each full scan about ten times slower: the same code from fewer starting
# points there (the first two events, every 36th frame of the real log).
events_max=6 stride=9
if grep -q '^RECD_SANITIZE:BOOL=ON' "${RECD_BUILD_DIR:-/nonexistent}/CMakeCache.txt" 2>/dev/null; then
    events_max=2 stride=36
fi
# same LOG FROM [TO [--keep-time]]: the cut through the seek point and the full-scan cut agree.
same() {
    local log=$1 args=(--from "$2")
    [ -n "${3:-}" ] && args+=(--to "$3")
    [ -n "${4:-}" ] && args+=("$4")
    local a=0 b=0
    "$RECTOOL" cut "$log" "${args[@]}" -q -o "$tmp/seek.log" 2>"$tmp/seek.err" || a=$?
    RECTOOL_FULL_SCAN=1 "$RECTOOL" cut "$log" "${args[@]}" -q -o "$tmp/full.log" 2>"$tmp/full.err" || b=$?
    [ "$a" = "$b" ] || die "cut $log ${args[*]}: exit $a, the full scan's $b"
    if [ "$a" = 0 ]; then
        cmp -s "$tmp/seek.log" "$tmp/full.log" || die "cut $log ${args[*]}: differs from the full scan"
    else
        cmp -s "$tmp/seek.err" "$tmp/full.err" || die "cut $log ${args[*]}: another error than the full scan's"
    fi
    rm -f "$tmp/seek.log" "$tmp/full.log"
    checks=$((checks + 1))
}

# ranged LOG FROM UNTIL: export --from/--until and info --at agree with the full scan.
ranged() {
    "$RECTOOL" export "$1" --to jsonl --from "$2" --until "$3" -o "$tmp/seek.jsonl" || die "export $1 $2 $3"
    RECTOOL_FULL_SCAN=1 "$RECTOOL" export "$1" --to jsonl --from "$2" --until "$3" -o "$tmp/full.jsonl" ||
        die "full-scan export $1 $2 $3"
    cmp -s "$tmp/seek.jsonl" "$tmp/full.jsonl" || die "export $1 --from $2 --until $3 differs from the full scan"
    "$RECTOOL" info --at "$2" "$1" | grep -v '^seek point:' >"$tmp/seek.txt" || die "info --at $2"
    RECTOOL_FULL_SCAN=1 "$RECTOOL" info --at "$2" "$1" >"$tmp/full.txt" || die "full-scan info --at $2"
    cmp -s "$tmp/seek.txt" "$tmp/full.txt" || die "info --at $2 $1 differs from the full scan"
    checks=$((checks + 1))
}

# plotted LOG FROM TO: plot --from/--to (milliseconds; TO "" for the end) draws the same SVG as the
# full scan, or fails with the same message.
plotted() {
    local args=(--from "$2ms") a=0 b=0
    [ -n "${3:-}" ] && args+=(--to "$3ms")
    "$RECTOOL" plot "$1" "${args[@]}" -o "$tmp/seek.svg" 2>"$tmp/seek.err" || a=$?
    RECTOOL_FULL_SCAN=1 "$RECTOOL" plot "$1" "${args[@]}" -o "$tmp/full.svg" 2>"$tmp/full.err" ||
        b=$?
    [ "$a" = "$b" ] || die "plot $1 ${args[*]}: exit $a, the full scan's $b"
    if [ "$a" = 0 ]; then
        cmp -s "$tmp/seek.svg" "$tmp/full.svg" || die "plot $1 ${args[*]}: not the full scan's"
    else
        cmp -s "$tmp/seek.err" "$tmp/full.err" || die "plot $1 ${args[*]}: another error"
    fi
    rm -f "$tmp/seek.svg" "$tmp/full.svg"
    checks=$((checks + 1))
}

g=$tmp/gen.log
"$RECTOOL" generate --format carla --duration 2m --seed 11 --actors 30 -o "$g" >/dev/null || die generate
"$RECTOOL" index -q "$g" || die "rectool index"
frames "$g" >"$tmp/frames"
n=$(wc -l <"$tmp/frames")
[ "$n" -ge 2000 ] || die "only $n frames"
# Frames that change the world after the first, and the frames around them.
events=$(awk 'NR > 1 && $2 == 1 { print $1 }' "$tmp/frames" | head -n "$events_max")
[ -n "$events" ] || die "no frame adds or deletes an actor after the first"
for t in $events; do
    for d in -50 -1 0 1 25 50; do
        same "$g" $((t + d)) $((t + d + 3000))
    done
done
# Spread over the log: at frame boundaries and between them, open-ended, keeping times.
last=$(tail -n 1 "$tmp/frames" | cut -d' ' -f1)
for t in 0 1 50 51000 60000 61025 $((last - 1000)) "$last"; do
    same "$g" "$t" $((t + 2000))
done
same "$g" 30000 "" ; same "$g" 70050 80000 --keep-time; same "$g" $((last - 100)) ""
# Ranges with no frame: the same error as the full scan.
same "$g" $((last + 1000)) ""; same "$g" 30001 30002
# Without the index (found by a scan) and with a damaged one.
mv "$g.idx" "$tmp/good.idx"
same "$g" 45000 47000
cp "$tmp/good.idx" "$g.idx"
python3 -c "import sys; p=sys.argv[1]; d=bytearray(open(p,'rb').read()); d[64+32*40+9]^=0x40; open(p,'wb').write(d)" "$g.idx"
same "$g" 45000 47000
cp "$tmp/good.idx" "$g.idx"
for r in "0 1000" "45000 47000" "$((last - 500)) $last"; do
    ranged "$g" $r
done
# Plots: the start, the middle, the end, past it, open-ended, and ranges that add or delete actors
# inside them or start right at such a frame.
for r in "0 5000" "60000 70000" "61025 61075" "$((last - 3000)) $last" \
         "$((last - 100)) $((last + 5000))" "$((last + 1000)) $((last + 9000))" "90000 "; do
    plotted "$g" $r
done
for t in $(echo "$events" | head -n 3); do
    plotted "$g" $((t - 2000)) $((t + 2000))
    plotted "$g" "$t" $((t + 1000))
done

# A log whose time goes back (a frame at the middle claims an earlier time): cuts and exports
# still agree, the export reading on past --until.
b=$tmp/back.log
python3 - "$g" "$b" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
pos = 28 + struct.unpack_from('<H', d, 26)[0]
k = 0
while pos + 5 <= len(d):
    pid, size = struct.unpack_from('<BI', d, pos)
    if pid == 0:
        k += 1
        if k == 1200:  # 59.95 s -> 20 s
            struct.pack_into('<d', d, pos + 5 + 16, 20.0)
    pos += 5 + size
open(sys.argv[2], 'wb').write(bytes(d))
PY
"$RECTOOL" index -q "$b" || die "index back"
for t in 19000 20000 30000 59900 60000; do
    same "$b" "$t" $((t + 1500))
done
ranged "$b" 19000 21000
ranged "$b" 59000 61000
plotted "$b" 19000 21000
plotted "$b" 59000 61000
plotted "$b" 30000 ""

# The real log: every 9th frame's time and the millisecond after it (every 36th in a sanitizer
# build).
real=${RECD_CORPUS_DIR:-/nonexistent}/carla/DistanceToLaneCenter.log
if [ -f "$real" ]; then
    cp "$real" "$tmp/real.log"
    "$RECTOOL" index -q "$tmp/real.log" || die "index real"
    frames "$tmp/real.log" | awk -v s="$stride" 'NR % s == 2 { print $1 }' >"$tmp/real-frames"
    while read -r t; do
        same "$tmp/real.log" "$t" $((t + 2000))
        same "$tmp/real.log" $((t + 1)) ""
    done <"$tmp/real-frames"
    ranged "$tmp/real.log" 5000 6000
    rlast=$(frames "$tmp/real.log" | tail -n 1 | cut -d' ' -f1)
    rfirst=$(frames "$tmp/real.log" | head -n 1 | cut -d' ' -f1)
    # plot times count from the first frame
    for r in "0 2000" "$(((rlast - rfirst) / 2)) $(((rlast - rfirst) / 2 + 3000))" \
             "$((rlast - rfirst - 1500)) $((rlast - rfirst))" "$(((rlast - rfirst) / 3)) "; do
        plotted "$tmp/real.log" $r
    done
else
    echo "the CARLA corpus log is not available (RECD_CORPUS_DIR): not cut nor plotted"
fi
echo "CARLA seeks compared with the full scan: $checks"
