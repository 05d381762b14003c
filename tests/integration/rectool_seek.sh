# SPDX-License-Identifier: MIT
# Seek index tests (docs/formats/seek-index.md): `rectool index` writes FILE.idx, and a cut that
# starts at the keyframe the index points to gives the same bytes as a cut that reads the whole
# file (RECTOOL_FULL_SCAN=1), at every keyframe boundary, next to it, between keyframes and at a
# gzip member that starts without a keyframe; with a missing, truncated, damaged or foreign index
# too (the reader keeps the longest valid prefix and scans beyond it). `index --check` tells a
# stale index from a current one; formats of fixed-size blocks need none.
set -u
: "${RECTOOL:?RECTOOL must point at the rectool binary}"
"$RECTOOL" generate --help >/dev/null 2>&1 || { echo "rectool generate is not available" >&2; exit 77; }
command -v python3 >/dev/null || { echo "python3 is needed to read the index" >&2; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rectool_seek.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
die() { echo "FAIL: $*" >&2; exit 1; }

f=$tmp/walk.recap
"$RECTOOL" generate --format recap --scenario walk --duration 5m -o "$f" >/dev/null || die generate
"$RECTOOL" index --check -q "$f" && die "index --check passes without an index"
"$RECTOOL" index -q "$f" || die "rectool index"
[ -s "$f.idx" ] || die "no $f.idx"
"$RECTOOL" index --check -q "$f" || die "index --check fails on a fresh index"
cmp -s "$f" "$tmp/walk.recap" || die "indexing changed the data file"

# The index's entries: "time offset aux" lines; the test needs more than one gzip member and a
# member that does not start with a keyframe, or it would not test the skip to the keyframe.
entries() {
    python3 - "$1" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
for i in range((len(d) - 64) // 32):
    t, off, aux, _, _ = struct.unpack('<qqqII', d[64 + 32 * i:96 + 32 * i])
    print(t, off, aux)
PY
}
entries "$f.idx" >"$tmp/entries"
n=$(wc -l <"$tmp/entries")
[ "$n" -ge 20 ] || die "only $n keyframes indexed"
# Keyframes every 200 ticks: entry i is tick 200 i.
awk '$1 != 200 * (NR - 1) { exit 1 }' "$tmp/entries" || die "keyframe ticks are not 0, 200, 400, ..."
members=$(awk '{ print $3 }' "$tmp/entries" | sort -u)
late=$(awk '$3 % 200 != 0 { print $3; exit }' "$tmp/entries")
[ "$(echo "$members" | wc -l)" -ge 2 ] || die "one gzip member only"
[ -n "$late" ] || die "every member starts with a keyframe"

# same FROM [TO]: the cut through the index and the full-scan cut are the same bytes.
checks=0
same() {
    local args=(--from "$1") name=$1
    [ -n "${2:-}" ] && args+=(--to "$2") && name=$1-$2
    "$RECTOOL" cut "$f" "${args[@]}" -q -o "$tmp/seek-$name.recap" || die "cut ${args[*]}"
    RECTOOL_FULL_SCAN=1 "$RECTOOL" cut "$f" "${args[@]}" -q -o "$tmp/full-$name.recap" ||
        die "full-scan cut ${args[*]}"
    cmp -s "$tmp/seek-$name.recap" "$tmp/full-$name.recap" || die "cut ${args[*]}: differs from the full scan"
    rm -f "$tmp/seek-$name.recap" "$tmp/full-$name.recap"
    checks=$((checks + 1))
}
ticks=$((n * 200))
# Every keyframe boundary and between keyframes is compared in-process (test_format_seek); here
# the command's own path: a few cuts through FILE.idx against RECTOOL_FULL_SCAN=1.
for t in 0 199 200 1000 $((late - 1)) "$late" $((late + 1)); do
    same "$t" $((t + 250))
done
same $((ticks - 30))
echo "cuts compared with the full scan: $checks"

# export --from/--until, plot --from/--to and info --at read from the seek point: same output.
for range in "0 250" "4000 4400" "$((late - 3)) $((late + 50))" "$((ticks - 500)) $ticks"; do
    set -- $range
    "$RECTOOL" export "$f" --to jsonl --from "$1" --until "$2" -o "$tmp/seek.jsonl" || die "export $range"
    RECTOOL_FULL_SCAN=1 "$RECTOOL" export "$f" --to jsonl --from "$1" --until "$2" -o "$tmp/full.jsonl" ||
        die "full-scan export $range"
    cmp -s "$tmp/seek.jsonl" "$tmp/full.jsonl" || die "export --from $1 --until $2 differs from the full scan"
    [ "$(grep -c '"type":"state"' "$tmp/seek.jsonl")" -gt 0 ] || die "export $range holds no state"
    "$RECTOOL" info --at "$1" "$f" | grep -v '^seek point:' >"$tmp/seek.txt" || die "info --at $1"
    RECTOOL_FULL_SCAN=1 "$RECTOOL" info --at "$1" "$f" >"$tmp/full.txt" || die "full-scan info --at $1"
    cmp -s "$tmp/seek.txt" "$tmp/full.txt" || die "info --at $1 differs from the full scan"
done
"$RECTOOL" info --at "$late" "$f" | grep -q "^seek point: tick $(( late / 200 * 200 )) .*from the index" ||
    die "info --at does not name the keyframe before it from the index"
if "$RECTOOL" plot --help 2>/dev/null | grep -q svg; then
    "$RECTOOL" plot "$f" --from 200s --to 260s -o "$tmp/seek.svg" 2>/dev/null || die "plot"
    RECTOOL_FULL_SCAN=1 "$RECTOOL" plot "$f" --from 200s --to 260s -o "$tmp/full.svg" 2>/dev/null || die "full plot"
    cmp -s "$tmp/seek.svg" "$tmp/full.svg" || die "plot --from/--to differs from the full scan"
fi

# A damaged index: each variant must give the full scan's result, and --check must see it.
cp "$f.idx" "$tmp/good.idx"
mid=$(sed -n "$((n / 2))p" "$tmp/entries" | awk '{ print $1 }')
damaged() {
    python3 - "$f.idx" "$1" <<'PY'
import sys
p, how = sys.argv[1], sys.argv[2]
d = bytearray(open(p, 'rb').read())
n = (len(d) - 64) // 32
if how == 'torn':      d = d[:64 + 32 * (n // 2) + 13]          # a crash inside an entry
elif how == 'flip':    d[64 + 32 * (n // 2) + 9] ^= 0x40        # an offset bit: the entry's CRC fails
elif how == 'header':  d[30] ^= 1                                # the header CRC fails
elif how == 'empty':   d = d[:64]
open(p, 'wb').write(bytes(d))
PY
}
for how in torn flip header empty; do
    cp "$tmp/good.idx" "$f.idx"
    damaged "$how"
    "$RECTOOL" index --check -q "$f" >/dev/null && die "index --check passes a $how index"
    same "$mid" $((mid + 300))
done
# An index of another recording of the same format is not used.
g=$tmp/other.recap
"$RECTOOL" generate --format recap --scenario drive --duration 5m -o "$g" >/dev/null || die generate other
"$RECTOOL" index -q "$g" || die "index other"
cp "$g.idx" "$f.idx"
"$RECTOOL" index --check -q "$f" >/dev/null && die "index --check passes another file's index"
same "$mid" $((mid + 300))
# A data file cut short (repair keeps its first member): entries past its end are ignored.
cp "$tmp/good.idx" "$f.idx"
second=$(awk '{ print $2 }' "$tmp/entries" | sort -un | sed -n 2p)
python3 -c "import sys; d=open(sys.argv[1],'rb').read(); open(sys.argv[2],'wb').write(d[:int(sys.argv[3])])" \
    "$f" "$tmp/short.recap" "$second"
"$RECTOOL" repair "$tmp/short.recap" -o "$tmp/short-fixed.recap" >/dev/null 2>&1 || die "repair short"
mv "$tmp/short-fixed.recap" "$f"
"$RECTOOL" index --check -q "$f" >/dev/null && die "index --check passes an index that points past the data"
same 100 300
"$RECTOOL" index -q "$f" && "$RECTOOL" index --check -q "$f" || die "rebuilt index is not current"

# Fixed-size blocks: no index, the seek is arithmetic.
r=$tmp/foot.rec
"$RECTOOL" generate --format samp-onfoot --duration 30s -o "$r" >/dev/null || die "generate rec"
out=$("$RECTOOL" index "$r") || die "index of a .rec"
case $out in *arithmetic*) ;; *) die "index of a .rec says: $out" ;; esac
[ ! -e "$r.idx" ] || die "an index was written for a .rec"
echo "seek index: all checks passed"
