# SPDX-License-Identifier: MIT
# rectool command-line behaviour: help and exit codes, verify on good and damaged files, sniffing
# by content whatever the file is called, info --json, repair/export/import argument rules.
set -u
: "${RECTOOL:?RECTOOL must point at the rectool binary}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rectool_cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"

# A standard .rec built byte by byte (header 1000/type, 20 Hz blocks walking along x), for when
# `rectool generate` is not available.
make_rec() { # OUT TYPE(1|2) BLOCKS
    python3 - "$1" "$2" "$3" <<'EOF'
import struct, sys
out, kind, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = bytearray(struct.pack('<II', 1000, kind))
for i in range(n):
    t, x = 100 + 50 * i, 100.0 + 0.25 * i
    if kind == 2:  # 72-byte on-foot block
        b = struct.pack('<IhhH3f4fBBBB3f3fHHH', t, 0, 0, 0, x, 50.0, 10.0, 1.0, 0.0, 0.0, 0.0,
                        100, 0, 0, 0, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0, 0)
    else:          # 67-byte vehicle block
        b = struct.pack('<IHhhH4f3f3ffBBBBBHI', t, 1, 0, 0, 0, 1.0, 0.0, 0.0, 0.0, x, 50.0, 10.0,
                        0.1, 0.0, 0.0, 1000.0, 100, 0, 0, 0, 0, 0, 0)
    data += b
open(out, 'wb').write(data)
EOF
}

have_generate=0
if "$RECTOOL" generate --help >/dev/null 2>&1; then
    have_generate=1
fi

# ---- global options and dispatch ----
expect 0 "$RECTOOL" --help
grep -q "usage: rectool" "$tmp/out" || fail "--help prints no usage"
# The general commands first, then those the formats bring (tools/rectool/formats.c's list).
awk '$1 == "plot" { p = NR } $1 == "carla" { c = NR } END { exit !(p && c > p) }' "$tmp/out" ||
    fail "--help does not list the formats' commands after the general ones"
expect 0 "$RECTOOL" --version
grep -q "rectool [0-9]" "$tmp/out" || fail "--version prints no version"
expect 2 "$RECTOOL"
expect 2 "$RECTOOL" frobnicate
grep -q "unknown command" "$tmp/err" || fail "unknown command is not named"
grep -q "see 'rectool --help'" "$tmp/err" || fail "unknown command gives no hint"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "unknown command prints more than one line: $(cat "$tmp/err")"
expect 2 "$RECTOOL" --bogus

# ---- a usage error is the one line that is wrong and a hint, not the help text ----
expect 2 "$RECTOOL" send x.rec --to tcp://127.0.0.1:1 --auth
grep -qx "rectool send: option '--auth' needs a value; see 'rectool send --help'" "$tmp/err" ||
    fail "a missing --auth value is not one line and a hint: $(cat "$tmp/err")"
expect 2 "$RECTOOL" send x.rec --to tcp://127.0.0.1:1 --auth "" # --auth "$TOKEN", TOKEN unset
grep -q "^rectool send: --auth needs a token; it is empty.*see 'rectool send --help'$" "$tmp/err" ||
    fail "an empty --auth does not say so in one line: $(cat "$tmp/err")"
for args in "verify" "export x --to xml" "generate --format nope -o x" "send --speed fast x"; do
    # shellcheck disable=SC2086 # the words are the arguments
    expect 2 "$RECTOOL" $args
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "rectool $args: a usage error of $(wc -l <"$tmp/err") lines"
    grep -q "usage:" "$tmp/err" && fail "rectool $args: a usage error prints the help text"
done
expect 0 "$RECTOOL" help verify
grep -q "usage: rectool verify" "$tmp/out" || fail "help verify prints no usage"
for cmd in info verify repair export import generate send; do
    expect 0 "$RECTOOL" "$cmd" --help
    grep -q "usage: rectool $cmd" "$tmp/out" || fail "$cmd --help prints no usage"
    expect 2 "$RECTOOL" "$cmd" --no-such-option
done
expect 2 "$RECTOOL" info
expect 2 "$RECTOOL" verify
expect 2 "$RECTOOL" repair -o
expect 2 "$RECTOOL" export "$tmp/x" --to xml
expect 2 "$RECTOOL" export "$tmp/x"

# ---- sample files ----
if [ "$have_generate" = 1 ]; then
    expect 0 "$RECTOOL" generate --format samp-onfoot --scenario walk --duration 30s --seed 7 -o "$tmp/foot.rec"
    expect 0 "$RECTOOL" generate --format samp-vehicle --scenario drive --duration 30s --seed 7 -o "$tmp/car.rec"
    expect 0 "$RECTOOL" generate --format recap --scenario mixed --duration 30s --seed 7 -o "$tmp/play.recap"
else
    echo "note: rectool generate unavailable, building .rec files with python; recap checks skipped"
    make_rec "$tmp/foot.rec" 2 300
    make_rec "$tmp/car.rec" 1 300
fi
good="$tmp/foot.rec $tmp/car.rec"
[ -f "$tmp/play.recap" ] && good="$good $tmp/play.recap"

# ---- verify exit codes ----
for f in $good; do
    expect 0 "$RECTOOL" verify "$f"
    grep -q ": ok" "$tmp/out" || fail "verify says nothing good about $f"
done
expect 0 "$RECTOOL" verify -q $good
[ -s "$tmp/out" ] && fail "verify -q printed something for valid files"

size=$(stat -c %s "$tmp/foot.rec")
head -c $((size - 10)) "$tmp/foot.rec" >"$tmp/partial.rec"
expect 1 "$RECTOOL" verify "$tmp/partial.rec"
grep -q "partial.rec: offset $((size - 72)): " "$tmp/out" ||
    fail "partial block not reported at offset $((size - 72)): $(cat "$tmp/out")"

cp "$tmp/car.rec" "$tmp/badsig.rec"
printf '\x00\x00\x00\x00' | dd of="$tmp/badsig.rec" bs=1 seek=0 conv=notrunc status=none
expect 1 "$RECTOOL" verify "$tmp/badsig.rec"
grep -q "badsig.rec: offset 0: " "$tmp/out" || fail "bad signature not reported at offset 0"

: >"$tmp/empty.rec"
expect 1 "$RECTOOL" verify "$tmp/empty.rec"
head -c 5000 /dev/urandom >"$tmp/noise.rec"
# A NUL right after the signature: random bytes make a first line that reads as CSV text about
# once in a thousand runs (a comma, then a line break before any control byte).
printf 'RCAX\000' | dd of="$tmp/noise.rec" bs=1 seek=0 conv=notrunc status=none
expect 1 "$RECTOOL" verify "$tmp/noise.rec"
expect 3 "$RECTOOL" verify "$tmp/does-not-exist.rec"
expect 1 "$RECTOOL" verify "$tmp/foot.rec" "$tmp/partial.rec"
grep -q "foot.rec: ok" "$tmp/out" || fail "verify stopped reporting after a bad file"
printf '{"type":"open","format":"samp-onfoot"}\n' >"$tmp/text.rec"
expect 1 "$RECTOOL" verify "$tmp/text.rec"

if [ -f "$tmp/play.recap" ]; then
    size=$(stat -c %s "$tmp/play.recap")
    head -c $((size - 3)) "$tmp/play.recap" >"$tmp/cut.recap"
    expect 1 "$RECTOOL" verify "$tmp/cut.recap"
    grep -q "cut.recap: offset [0-9]*: " "$tmp/out" || fail "cut recap problem has no offset"
fi

# ---- other .rec layouts are named, never valid ----
python3 - "$tmp" <<'EOF'
import random, struct, sys
random.seed(1)
# VC:MP NPC plugin file: 1000 signature, type 1 (on foot there), 76-byte blocks of non-quaternions.
d = bytearray(struct.pack('<II', 1000, 1))
for i in range(50):
    d += struct.pack('<I18f', 100 + 50 * i, *[random.uniform(-500, 500) for _ in range(18)])
open(f"{sys.argv[1]}/vcmp.rec", "wb").write(d)
# Pre-0.3d headerless file of 75-byte vehicle blocks (roll and direction vectors).
d = bytearray()
for i in range(40):
    d += struct.pack('<IHhhH12ffBBBBBHI', 100 + 50 * i, 5, 0, 0, 0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0,
                     100.0 + i, 50.0, 10.0, 0.1, 0.0, 0.0, 1000.0, 100, 0, 0, 0, 0, 0, 0)
open(f"{sys.argv[1]}/legacy75.rec", "wb").write(d)
EOF
expect 1 "$RECTOOL" verify "$tmp/vcmp.rec"
grep -q "VC:MP" "$tmp/out" || fail "verify does not name the VC:MP file: $(cat "$tmp/out")"
expect 1 "$RECTOOL" verify "$tmp/legacy75.rec"
grep -q "legacy" "$tmp/out" || fail "verify does not name the legacy file: $(cat "$tmp/out")"
expect 0 "$RECTOOL" info --json "$tmp/vcmp.rec" "$tmp/legacy75.rec"
python3 -c '
import json, sys
got = [(o["format"], o["rec"]["layout"]) for o in map(json.loads, sys.stdin)]
assert got == [("vcmp-rec", "vcmp"), ("legacy-rec", "legacy-headerless-75")], got' <"$tmp/out" ||
    fail "info does not name the VC:MP and legacy layouts"
expect 1 "$RECTOOL" repair "$tmp/legacy75.rec" -o "$tmp/legacy-fixed.rec"

# ---- sniffing ignores names ----
cp "$tmp/foot.rec" "$tmp/foot.bin"
cp "$tmp/car.rec" "$tmp/car.recap"
cp "$tmp/foot.rec" "$tmp/noext"
for f in "$tmp/foot.bin" "$tmp/car.recap" "$tmp/noext"; do
    expect 0 "$RECTOOL" verify "$f"
    expect 0 "$RECTOOL" info --json "$f"
    python3 -c 'import json,sys; o=json.load(sys.stdin); sys.exit(o["format"] != "samp-rec")' <"$tmp/out" ||
        fail "$f not recognised as samp-rec"
done
if [ -f "$tmp/play.recap" ]; then
    cp "$tmp/play.recap" "$tmp/play.rec"
    expect 0 "$RECTOOL" verify "$tmp/play.rec"
    expect 0 "$RECTOOL" info --json "$tmp/play.rec"
    python3 -c 'import json,sys; o=json.load(sys.stdin); sys.exit(o["format"] != "recap")' <"$tmp/out" ||
        fail "a .recap named .rec is not recognised as recap"
fi

# ---- info ----
for f in $good "$tmp/partial.rec" "$tmp/empty.rec"; do
    "$RECTOOL" info --json "$f" >"$tmp/info.json" 2>"$tmp/err"
    python3 -c 'import json,sys; json.load(sys.stdin)' <"$tmp/info.json" || fail "info --json $f does not parse"
done
"$RECTOOL" info --json $good >"$tmp/info.jsonl"
python3 - "$tmp/info.jsonl" <<'EOF' || fail "info --json on several files"
import json, sys
objs = [json.loads(line) for line in open(sys.argv[1])]
assert len(objs) >= 2, objs
for o in objs:
    assert o["valid"] is True, o
    t = o["timing"]
    assert t["samples"] >= 2 and t["interval_ms"]["median"] > 0 and t["samples_per_second"] > 0, t
    assert "anomalies" in o
rec = [o for o in objs if o["format"] == "samp-rec"]
assert rec[0]["rec"]["blocks"] == rec[0]["timing"]["samples"], rec[0]
EOF
expect 0 "$RECTOOL" info "$tmp/foot.rec"
grep -q "samples_per_second" "$tmp/out" || fail "text info lacks sample rate"
expect 1 "$RECTOOL" info "$tmp/noise.rec"

# ---- repair argument rules ----
expect 2 "$RECTOOL" repair "$tmp/partial.rec"
expect 2 "$RECTOOL" repair "$tmp/partial.rec" -o "$tmp/partial.rec"
expect 2 "$RECTOOL" repair "$tmp/foot.rec" "$tmp/car.rec" -o "$tmp/x.rec"
expect 0 "$RECTOOL" repair "$tmp/partial.rec" -o "$tmp/fixed.rec"
grep -q "dropped" "$tmp/out" || fail "repair does not say what it dropped"
[ -e "$tmp/fixed.rec.part" ] && fail "repair left a .part file"
expect 0 "$RECTOOL" verify "$tmp/fixed.rec"
cp "$tmp/partial.rec" "$tmp/inplace.rec"
expect 0 "$RECTOOL" repair --in-place "$tmp/inplace.rec"
cmp -s "$tmp/inplace.rec" "$tmp/fixed.rec" || fail "--in-place result differs from -o result"
expect 0 "$RECTOOL" repair "$tmp/badsig.rec" -o "$tmp/sigfixed.rec"
expect 0 "$RECTOOL" verify "$tmp/sigfixed.rec"
expect 1 "$RECTOOL" repair "$tmp/noise.rec" -o "$tmp/nothing.rec"
[ -e "$tmp/nothing.rec" ] && fail "repair wrote an output for an unrepairable file"
# The refusals list the formats from the format table: those with a repair hook, those that export.
grep -q "repair only handles standard recap, carla, samp-onfoot and samp-vehicle files" "$tmp/out" ||
    fail "repair's refusal does not list the formats with a repair hook: $(cat "$tmp/out")"
expect 1 "$RECTOOL" export --to jsonl "$tmp/noise.rec"
grep -q "only standard recap, carla, rf2-vcr, sc2replay, samp-onfoot and samp-vehicle files export" "$tmp/err" ||
    fail "export's refusal does not list the formats that export: $(cat "$tmp/err")"

# ---- export / import ----
for f in $good; do
    for enc in jsonl csv; do
        expect 0 "$RECTOOL" export "$f" --to "$enc" -o "$tmp/x.$enc"
        ext=${f##*.}
        expect 0 "$RECTOOL" import "$tmp/x.$enc" -o "$tmp/back.$ext"
        cmp -s "$f" "$tmp/back.$ext" || fail "export/import through $enc changes $f"
    done
done
# A recording larger than the 1 MiB buffer rectool writes OUT.part through (several flushes), and
# the same import to standard output, which is written as it comes.
if [ "$have_generate" = 1 ]; then
    expect 0 "$RECTOOL" generate --format samp-vehicle --scenario drive --duration 30m --seed 3 -o "$tmp/long.rec"
    expect 0 "$RECTOOL" export "$tmp/long.rec" --to jsonl -o "$tmp/long.jsonl"
    expect 0 "$RECTOOL" import "$tmp/long.jsonl" -o "$tmp/long-back.rec"
    cmp -s "$tmp/long.rec" "$tmp/long-back.rec" || fail "a 1.4 MB import does not give its recording back"
    "$RECTOOL" import "$tmp/long.jsonl" -o - --format samp-vehicle | cmp -s - "$tmp/long.rec" ||
        fail "an import to standard output does not give its recording back"
fi
"$RECTOOL" export "$tmp/foot.rec" --to jsonl | head -1 | grep -q '^{' || fail "export to stdout is not JSON"
expect 0 "$RECTOOL" export "$tmp/foot.rec" --to jsonl -o "$tmp/foot.jsonl"
expect 2 "$RECTOOL" import "$tmp/foot.jsonl" -o "$tmp/out.bin"
expect 0 "$RECTOOL" import "$tmp/foot.jsonl" -o "$tmp/out.bin" --format samp-onfoot
cmp -s "$tmp/foot.rec" "$tmp/out.bin" || fail "import --format output differs"
expect 1 "$RECTOOL" import "$tmp/foot.jsonl" -o "$tmp/wrong.recap"
[ -e "$tmp/wrong.recap" ] || [ -e "$tmp/wrong.recap.part" ] && fail "failed import left a file behind"
expect 1 "$RECTOOL" import "$tmp/foot.jsonl" -o "$tmp/wrong.rec" --format samp-vehicle
expect 1 "$RECTOOL" import "$tmp/foot.rec" -o "$tmp/x.rec"
expect 1 "$RECTOOL" export "$tmp/partial.rec" --to jsonl
if [ -f "$tmp/play.recap" ]; then
    expect 0 "$RECTOOL" export "$tmp/play.recap" --to jsonl -o "$tmp/play.jsonl"
    expect 1 "$RECTOOL" import "$tmp/play.jsonl" -o "$tmp/play-as.rec"
fi

# ---- several files in one export: a folder of NAME.jsonl, each as a lone export writes it ----
# shellcheck disable=SC2086 # $good is a list of paths without spaces
expect 0 "$RECTOOL" export $good --to jsonl -o "$tmp/batch"
for f in $good; do
    expect 0 "$RECTOOL" export "$f" --to jsonl -o "$tmp/lone.jsonl"
    cmp -s "$tmp/lone.jsonl" "$tmp/batch/${f##*/}.jsonl" || fail "batch export of $f differs from a lone one"
done
expect 0 "$RECTOOL" export "$tmp/foot.rec" "$tmp/car.rec" --to csv -o "$tmp/batch"
[ -f "$tmp/batch/car.rec.csv" ] || fail "no CSV from a batch export"
# One file refused: the others are written, it is not, and the exit says so.
expect 1 "$RECTOOL" export "$tmp/foot.rec" "$tmp/partial.rec" --to jsonl -o "$tmp/batch2"
[ -f "$tmp/batch2/foot.rec.jsonl" ] || fail "a refused file stopped the others"
[ -e "$tmp/batch2/partial.rec.jsonl" ] || [ -e "$tmp/batch2/partial.rec.jsonl.part" ] &&
    fail "a refused file was written"
# Usage errors write nothing: no folder, two inputs with one name, a file where the folder goes.
expect 2 "$RECTOOL" export "$tmp/foot.rec" "$tmp/car.rec" --to jsonl
expect 2 "$RECTOOL" export "$tmp/foot.rec" "$tmp/many/../foot.rec" --to jsonl -o "$tmp/batch3"
[ -e "$tmp/batch3" ] && fail "a batch export refused for clashing names made its folder"
expect 2 "$RECTOOL" export "$tmp/foot.rec" "$tmp/car.rec" --to jsonl -o "$tmp/foot.jsonl"

# ---- usage errors name every choice (formats in the format table's order, session-only last) ----
expect 2 "$RECTOOL" generate --format nope --duration 1s -o "$tmp/nope.rec"
grep -q "unknown format 'nope' (recap, carla, samp-onfoot, samp-vehicle, samp-player)" "$tmp/err" ||
    fail "generate's format error leaves a format out: $(head -1 "$tmp/err")"
expect 2 "$RECTOOL" generate --format rf2-vcr --duration 1s -o "$tmp/nope.rec"
grep -q "format 'rf2-vcr' has no synthetic data (these have: recap, carla, samp-onfoot, samp-vehicle, samp-player)" "$tmp/err" ||
    fail "generate's no-synthetic-data error does not list the formats that have it: $(head -1 "$tmp/err")"
[ -e "$tmp/nope.rec" ] && fail "a refused generate wrote a file"
expect 2 "$RECTOOL" generate --format carla --scenario nope --duration 1s -o "$tmp/nope.rec"
grep -q "unknown scenario 'nope' (idle, walk, drive, mixed, traffic)" "$tmp/err" ||
    fail "generate's scenario error leaves a scenario out: $(head -1 "$tmp/err")"
expect 2 "$RECTOOL" send "$tmp/foot.rec" --to ftp://127.0.0.1:1
grep -q "tcp://, tls://, udp://, unix:// or nats://" "$tmp/err" ||
    fail "send's URL error leaves a scheme out: $(head -1 "$tmp/err")"

# ---- no progress bar on a pipe ----
mkdir "$tmp/many"
for i in $(seq 1 40); do cp "$tmp/foot.rec" "$tmp/many/f$i.rec"; done
"$RECTOOL" verify "$tmp"/many/*.rec >/dev/null 2>"$tmp/progress.err"
[ -s "$tmp/progress.err" ] && fail "verify wrote to stderr (progress bar on a pipe?)"

# ---- generate --format samp-player: one session that walks and drives, the same every time ----
if [ "$have_generate" = 1 ]; then
    expect 0 "$RECTOOL" generate --format samp-player --duration 12s --seed 4 -o "$tmp/p7.jsonl"
    expect 0 "$RECTOOL" generate --format samp-player --duration 12s --seed 4 -o "$tmp/p7b.jsonl"
    cmp -s "$tmp/p7.jsonl" "$tmp/p7b.jsonl" || fail "generate --format samp-player is not deterministic"
    head -n 1 "$tmp/p7.jsonl" | grep -q '"format":"samp-player"' || fail "a samp-player session opens otherwise"
    grep -q '"vehicle_model":411,"seat":0}$' "$tmp/p7.jsonl" || fail "a samp-player session never drives"
    grep -q '"anim_id"' "$tmp/p7.jsonl" || fail "a samp-player session never walks"
fi

# ---- a paced send longer than 10 s says how long it takes and how not to wait ----
# (UDP needs no listener to start sending; timeout ends the paced run after the warning.)
if [ "$have_generate" = 1 ]; then
    "$RECTOOL" generate --format samp-onfoot --scenario walk --duration 30s --seed 1 \
        -o "$tmp/slow.rec" >/dev/null
    timeout $((5 * ${RECD_TEST_TIME_SCALE:-1})) "$RECTOOL" send "$tmp/slow.rec" \
        --to udp://127.0.0.1:9 >/dev/null 2>"$tmp/err"
    grep -q "paced at 1x the recording's own timing, this takes about 0m[23][0-9]s; --speed max" \
        "$tmp/err" || fail "a 30 s paced send does not say how long it takes: $(cat "$tmp/err")"
    timeout $((5 * ${RECD_TEST_TIME_SCALE:-1})) "$RECTOOL" send "$tmp/slow.rec" \
        --to udp://127.0.0.1:9 --speed 10 >/dev/null 2>"$tmp/err"
    grep -q "takes about" "$tmp/err" && fail "a 3 s paced send warns: $(cat "$tmp/err")"
fi

if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "rectool_cli: all checks passed"
