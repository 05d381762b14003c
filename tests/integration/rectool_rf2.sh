# SPDX-License-Identifier: MIT
# `rectool rf2 laps` on the test writer's sample replay (plain and gzip'd, whatever it is called):
# the lap and sector table as text, JSON and CSV; a cut replay prints the laps before the cut and
# exits 1 with the offset; other files and bad arguments are refused.
set -u
: "${RECTOOL:?RECTOOL must point at the rectool binary}"
: "${RF2_SAMPLE_VCR:?RF2_SAMPLE_VCR must point at the rf2_sample_vcr test tool}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rectool_rf2.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"

"$RF2_SAMPLE_VCR" "$tmp/sample.vcr" || fail "writing the sample"
"$RF2_SAMPLE_VCR" --gzip "$tmp/sample.bin" || fail "writing the gzip'd sample"

expect 0 "$RECTOOL" rf2 laps "$tmp/sample.vcr"
grep -q '^slot 0: Alice Example (Sample Car #1), 3 timed laps, best 78.250$' "$tmp/out" ||
    fail "text: driver line"
grep -Eq '^ +2 +78\.250 +24\.750 +26\.250 +27\.250  best$' "$tmp/out" || fail "text: best lap row"
cp "$tmp/out" "$tmp/plain.txt"
expect 0 "$RECTOOL" rf2 laps "$tmp/sample.bin"
cmp -s "$tmp/out" "$tmp/plain.txt" || fail "gzip'd and plain replays give different tables"

expect 0 "$RECTOOL" rf2 laps --csv "$tmp/sample.bin"
[ "$(head -1 "$tmp/out")" = "slot,driver,vehicle,lap,crossing_time,lap_time,s1,s2,s3" ] || fail "csv: header"
grep -qx '0,Alice Example,Sample Car #1,1,85.500,80.500,25.250,27.250,28.000' "$tmp/out" || fail "csv: lap 1"
[ "$(grep -c '^3,Long L' "$tmp/out")" -eq 3 ] || fail "csv: three laps of the 200-byte name"

expect 0 "$RECTOOL" rf2 laps "$tmp/sample.vcr" --json
python3 - "$tmp/out" <<'PY' || fail "json: table"
import json, sys
d = json.load(open(sys.argv[1]))
cars = d["drivers"]
assert [c["slot"] for c in cars] == [0, 3], cars
assert len(cars[1]["name"]) == 200
assert cars[0]["best"] == 78.25 and cars[1]["best"] == 79.5
lap = cars[1]["laps"][0]
assert (lap["lap"], lap["lap_time"], lap["s1"], lap["s2"], lap["s3"]) == (1, 81.75, 26.0, 27.25, 28.5), lap
PY

# info and export reach the entry through the format table, with no rf2 code in rectool.
expect 0 "$RECTOOL" info --json "$tmp/sample.bin"
python3 - "$tmp/out" <<'PY' || fail "info --json: summary"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "rf2-vcr" and d["valid"] is True, d
assert d["track"] == "Locations/Sample/Track", d["track"]
assert [x["laps"] for x in d["drivers"]][:1] == [3], d["drivers"]
PY
expect 0 "$RECTOOL" export "$tmp/sample.vcr" --to jsonl -o "$tmp/events.jsonl"
python3 - "$tmp/events.jsonl" <<'PY' || fail "export: the common event stream"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert rows and all(set(r) == {"source", "t", "t_raw", "actor", "kind", "fields"} for r in rows)
assert all(r["source"] == "rf2-vcr" for r in rows)
kinds = {r["kind"] for r in rows}
assert {"checkpoint", "pose", "unknown"} <= kinds, kinds
assert all(a["t"] <= b["t"] for a, b in zip(rows, rows[1:])), "not in time order"
PY
expect 0 "$RECTOOL" export "$tmp/sample.vcr" --to csv -o "$tmp/events.csv"
[ "$(head -1 "$tmp/events.csv")" = "source,t,t_raw,actor,kind,fields" ] || fail "export csv: header"

# A cut replay: the laps before the cut, the damage with its offset, exit 1.
head -c 2500 "$tmp/sample.vcr" >"$tmp/cut.vcr"
expect 1 "$RECTOOL" rf2 laps --csv "$tmp/cut.vcr"
grep -q 'offset [0-9]*:' "$tmp/err" || fail "cut: no offset in: $(cat "$tmp/err")"
[ "$(grep -c '^[03],' "$tmp/out")" -eq 6 ] || fail "cut: the six laps before the cut"
expect 1 "$RECTOOL" verify "$tmp/cut.vcr"
grep -q 'offset 2485: event (class 3, type 48)' "$tmp/out" || fail "verify: the cut event and its offset"

# A read-only replay is not edited; the refusal lists the formats with edit hooks (format table).
expect 1 "$RECTOOL" cut "$tmp/sample.vcr" --from 0 --to 1 -o "$tmp/cut-edit.vcr"
grep -q 'rf2-vcr files cannot be edited (recap, carla, samp-onfoot and samp-vehicle can)' "$tmp/err" ||
    fail "cut: the refusal does not list the editable formats: $(cat "$tmp/err")"

# Not a replay, bad arguments.
printf 'hello\n' >"$tmp/text.vcr"
expect 1 "$RECTOOL" rf2 laps "$tmp/text.vcr"
grep -q 'not an rFactor 2 replay' "$tmp/err" || fail "text file: message"
expect 2 "$RECTOOL" rf2 laps
expect 2 "$RECTOOL" rf2 laps "$tmp/sample.vcr" "$tmp/sample.vcr"
expect 2 "$RECTOOL" rf2 laps --bogus "$tmp/sample.vcr"
expect 2 "$RECTOOL" rf2 pits "$tmp/sample.vcr"
expect 0 "$RECTOOL" rf2 --help
expect 3 "$RECTOOL" rf2 laps "$tmp/missing.vcr"

[ "$failures" -eq 0 ]
