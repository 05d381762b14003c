# SPDX-License-Identifier: MIT
# rectool's editing commands and plot from the command line: each writes a file that verifies (or
# nothing, with exit 1/2), times come out as docs/editing.md says, .recap gets cut/split/concat/
# diff and a clear refusal for retime/transform, plots are PNG or SVG, and corpus .rec files
# survive cut, four quarter turns and plot.
set -u
: "${RECTOOL:?RECTOOL must point at the rectool binary}"
if ! "$RECTOOL" cut --help >/dev/null 2>&1; then
    echo "rectool cut is not available in this build" >&2
    exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rectool_edit.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"
R=$RECTOOL

# first_last FILE: "blocks first_ms last_ms" from info --json.
first_last() {
    "$R" info --json "$1" | python3 -c 'import json,sys; r=json.load(sys.stdin)["rec"]; print(r["blocks"], r["first_time_ms"], r["last_time_ms"])'
}
# no_output PATH: neither PATH nor PATH.part exists.
no_output() {
    [ ! -e "$1" ] && [ ! -e "$1.part" ] || fail "$1 (or its .part) was written"
}

expect 0 "$R" generate --format samp-vehicle --scenario drive --duration 60s --seed 4 -o "$tmp/car.rec"
expect 0 "$R" generate --format samp-onfoot --scenario walk --duration 30s --seed 4 -o "$tmp/foot.rec"
expect 0 "$R" generate --format recap --scenario mixed --duration 30s --seed 4 -o "$tmp/play.recap"

# cut: ms or seconds, rebased to 0 unless --keep-time.
expect 0 "$R" cut "$tmp/car.rec" --from 10s --to 20000 -q -o "$tmp/cut.rec"
read -r blocks first last <<<"$(first_last "$tmp/cut.rec")"
[ "$first" -eq 0 ] && [ "$last" -lt 10000 ] && [ "$blocks" -gt 10 ] || fail "cut: $blocks $first $last"
expect 0 "$R" cut "$tmp/car.rec" --from 10s --to 20000 --keep-time -q -o "$tmp/cutk.rec"
read -r _ first last <<<"$(first_last "$tmp/cutk.rec")"
[ "$first" -ge 10000 ] && [ "$last" -lt 20000 ] || fail "cut --keep-time: $first $last"
expect 2 "$R" cut "$tmp/car.rec" --from 20s --to 10s -o "$tmp/bad.rec"
no_output "$tmp/bad.rec"
# Past the end: the message gives the file's length in seconds, not the range in raw ms.
expect 2 "$R" cut "$tmp/car.rec" --from 500s -o "$tmp/bad.rec"
grep -q "the cut starts at 500 s, past the end: the file is only 59.9[0-9]* s long" "$tmp/err" ||
    fail "cut past the end does not give the file's length: $(cat "$tmp/err")"
grep -q "500000" "$tmp/err" && fail "cut past the end names the range in raw ms: $(cat "$tmp/err")"
no_output "$tmp/bad.rec"
# A range between blocks of a gappy file (none here: a range inside one 50 ms step) says so too.
expect 2 "$R" cut "$tmp/car.rec" --from 10001 --to 10002 -o "$tmp/bad.rec"
grep -q "no block from 10.001 s to 10.002 s (the file's last block is at 59.9[0-9]* s)" "$tmp/err" ||
    fail "an empty cut inside the file: $(cat "$tmp/err")"
no_output "$tmp/bad.rec"
expect 2 "$R" cut "$tmp/car.rec" --from x -o "$tmp/bad.rec"
expect 2 "$R" cut "$tmp/car.rec"

# retime: speed halves the times; resampling keeps a valid, denser file.
expect 0 "$R" retime "$tmp/foot.rec" --speed 2 -q -o "$tmp/fast.rec"
read -r b1 f1 l1 <<<"$(first_last "$tmp/foot.rec")"
read -r b2 f2 l2 <<<"$(first_last "$tmp/fast.rec")"
[ "$b1" -eq "$b2" ] && [ $(((l1 + 1) / 2)) -ge "$l2" ] && [ $((l1 / 2)) -le "$l2" ] || fail "retime --speed 2: $b1 $l1 -> $b2 $l2"
expect 0 "$R" retime "$tmp/foot.rec" --rate 50 -q -o "$tmp/r50.rec"
read -r b3 _ _ <<<"$(first_last "$tmp/r50.rec")"
[ "$b3" -gt "$b1" ] || fail "retime --rate 50 did not add samples ($b1 -> $b3)"
expect 2 "$R" retime "$tmp/foot.rec" -o "$tmp/bad.rec"
expect 2 "$R" retime "$tmp/foot.rec" --speed 0 -o "$tmp/bad.rec"
expect 1 "$R" retime "$tmp/play.recap" --speed 2 -o "$tmp/bad.recap"
grep -q "recap" "$tmp/err" || fail "retime of a .recap does not say why"
no_output "$tmp/bad.recap"

# transform: four quarter turns give the input back within float precision.
cp "$tmp/car.rec" "$tmp/turn0.rec"
for i in 1 2 3 4; do
    expect 0 "$R" transform "$tmp/turn$((i - 1)).rec" --rotate-z 90 --pivot 1000,-500,0 -q -o "$tmp/turn$i.rec"
done
expect 0 "$R" export "$tmp/car.rec" --to jsonl -o "$tmp/a.jsonl"
expect 0 "$R" export "$tmp/turn4.rec" --to jsonl -o "$tmp/b.jsonl"
python3 - "$tmp/a.jsonl" "$tmp/b.jsonl" <<'PY' || fail "four quarter turns changed the recording"
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
assert len(a) == len(b)
for x, y in zip(a, b):
    for k in ("position", "velocity", "rotation"):
        if k in x:
            for u, v in zip(x[k], y[k]):
                assert abs(u - v) <= 1e-3 + 1e-6 * abs(u), (k, x[k], y[k])
PY
expect 2 "$R" transform "$tmp/car.rec" --translate 1,2 -o "$tmp/bad.rec"
expect 1 "$R" transform "$tmp/play.recap" --translate 1,2,3 -o "$tmp/bad.recap"
no_output "$tmp/bad.recap"

# concat and split: split then concat with the split's own step gives the same samples.
expect 0 "$R" split "$tmp/car.rec" --at 20s --at 40000 --keep-time -q -o "$tmp/piece"
for i in 1 2 3; do [ -f "$tmp/piece-$i.rec" ] || fail "split: piece-$i.rec missing"; done
expect 0 "$R" verify -q "$tmp"/piece-*.rec
expect 0 "$R" split "$tmp/car.rec" --at 30s -q
[ -f "$tmp/car-1.rec" ] && [ -f "$tmp/car-2.rec" ] || fail "split: default names car-1.rec, car-2.rec"
expect 2 "$R" split "$tmp/car.rec" --at 30s,20s -o "$tmp/bad"
expect 2 "$R" split "$tmp/car.rec" --at 59999,59999.5s -o "$tmp/bad"
no_output "$tmp/bad-1.rec"
expect 0 "$R" concat "$tmp/cut.rec" "$tmp/cut.rec" -q -o "$tmp/twice.rec"
read -r bt _ lt <<<"$(first_last "$tmp/twice.rec")"
read -r bc _ lc <<<"$(first_last "$tmp/cut.rec")"
[ "$bt" -eq $((2 * bc)) ] && [ "$lt" -gt $((2 * lc)) ] || fail "concat: $bc/$lc -> $bt/$lt"
expect 1 "$R" concat "$tmp/car.rec" "$tmp/foot.rec" -o "$tmp/bad.rec"
no_output "$tmp/bad.rec"

# diff
expect 0 "$R" diff "$tmp/car.rec" "$tmp/car.rec"
expect 1 "$R" diff "$tmp/car.rec" "$tmp/cutk.rec"
grep -q "first difference at block 0" "$tmp/out" || fail "diff does not name the first block"
expect 1 "$R" diff "$tmp/car.rec" "$tmp/turn1.rec"
grep -q "position\[0\]" "$tmp/out" || fail "diff does not list fields"

# .recap: cut by ticks, split, concat, diff.
expect 0 "$R" cut "$tmp/play.recap" --from 100 --to 300 -q -o "$tmp/pc.recap"
"$R" info --json "$tmp/pc.recap" | python3 -c 'import json,sys; r=json.load(sys.stdin)["recap"]; assert r["ticks"]==200, r' ||
    fail "recap cut does not hold 200 ticks"
expect 0 "$R" split "$tmp/play.recap" --at 200 -q -o "$tmp/pp"
expect 0 "$R" concat "$tmp/pp-1.recap" "$tmp/pp-2.recap" -q -o "$tmp/pj.recap"
expect 0 "$R" diff "$tmp/play.recap" "$tmp/pj.recap"

# plot: PNG and SVG, several files, a time range; a wrong extension writes nothing.
expect 0 "$R" plot "$tmp/car.rec" -o "$tmp/car.png"
python3 - "$tmp/car.png" <<'PY' || fail "plot: not a 1000x1000 PNG"
import struct, sys
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", d[16:24]) == (1000, 1000)
PY
expect 0 "$R" plot "$tmp/car.rec" "$tmp/turn1.rec" "$tmp/play.recap" --from 5 --to 25 --size 640x480 -o "$tmp/all.svg"
grep -q "<svg" "$tmp/all.svg" || fail "plot: no SVG"
expect 2 "$R" plot "$tmp/car.rec" -o "$tmp/car.gif"
no_output "$tmp/car.gif"
expect 1 "$R" plot "$tmp/car.rec" --from 500 -o "$tmp/empty.png"
no_output "$tmp/empty.png"

# Corpus .rec files: cut, four quarter turns and plot on real recordings.
corpus="${RECD_CORPUS_DIR:-}/samp-rec"
if [ -d "$corpus" ]; then
    n=0
    for f in "$corpus"/*.rec; do
        "$R" verify -q "$f" >/dev/null 2>&1 || continue # legacy and damaged files are not edited
        name=$(basename "$f" .rec)
        expect 0 "$R" cut "$f" --from 1000 -q -o "$tmp/c-$name.rec"
        if ! grep -q "no block" "$tmp/err"; then :; fi
        cp "$f" "$tmp/t0-$name.rec"
        for i in 1 2 3 4; do
            expect 0 "$R" transform "$tmp/t$((i - 1))-$name.rec" --rotate-z 90 -q -o "$tmp/t$i-$name.rec"
        done
        expect 0 "$R" plot "$f" --size 300x300 -o "$tmp/p-$name.png"
        n=$((n + 1))
    done
    [ "$n" -ge 5 ] || fail "only $n corpus files edited"
else
    echo "corpus not found at $corpus: corpus edits skipped"
fi

[ "$failures" -eq 0 ]
