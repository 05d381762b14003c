# SPDX-License-Identifier: MIT
# rectool import and repair keep a Recap header what it says, its members' compressor too: import
# refuses an open whose frame_count disagrees with the ticks (it used to write a file that verify
# rejects), and a version-1 open with weather or time_of_day (version 1 has neither; they were
# dropped silently); repair keeps a complete file's end time (it recomputed start + ticks x 50 ms).
set -u
: "${RECTOOL:?RECTOOL must point at the rectool binary}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rectool_header_fidelity.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"

"$RECTOOL" generate --help >/dev/null 2>&1 || { echo "rectool generate unavailable"; exit 77; }
expect 0 "$RECTOOL" generate --format recap --scenario mixed --duration 10s --seed 3 -o "$tmp/a.recap"
expect 0 "$RECTOOL" export "$tmp/a.recap" --to jsonl -o "$tmp/a.jsonl"
grep -q '"frame_count":200,' "$tmp/a.jsonl" || fail "the export does not say frame_count 200"

# ---- open.recap.frame_count must match the ticks the messages hold ----
for count in 150 199 201 5000; do
    sed "1s/\"frame_count\":200,/\"frame_count\":$count,/" "$tmp/a.jsonl" >"$tmp/count.jsonl"
    expect 1 "$RECTOOL" import "$tmp/count.jsonl" -o "$tmp/count.recap"
    grep -q "frame_count" "$tmp/err" || fail "frame_count $count: the error does not name the field"
    [ -e "$tmp/count.recap" ] && fail "frame_count $count: an output file was left behind"
done
# Ticks past the declared count are refused at the line that holds them.
sed '1s/"frame_count":200,/"frame_count":150,/' "$tmp/a.jsonl" >"$tmp/count.jsonl"
expect 1 "$RECTOOL" import "$tmp/count.jsonl" -o "$tmp/count.recap"
grep -q "line [0-9]" "$tmp/err" || fail "frame_count 150: the error names no line"
# 0 means "not finalized" and stays valid; a missing count is counted.
sed '1s/"frame_count":200,/"frame_count":0,/' "$tmp/a.jsonl" >"$tmp/zero.jsonl"
expect 0 "$RECTOOL" import "$tmp/zero.jsonl" -o "$tmp/zero.recap"
expect 0 "$RECTOOL" verify "$tmp/zero.recap"
sed '1s/"frame_count":200,//' "$tmp/a.jsonl" >"$tmp/none.jsonl"
expect 0 "$RECTOOL" import "$tmp/none.jsonl" -o "$tmp/none.recap"
cmp -s "$tmp/none.recap" "$tmp/a.recap" || fail "a counted frame_count differs from the original"
expect 0 "$RECTOOL" import "$tmp/a.jsonl" -o "$tmp/same.recap"
cmp -s "$tmp/same.recap" "$tmp/a.recap" || fail "export + import is no longer byte-identical"

# ---- the members' compressor is in the header, so a libdeflate file re-imports byte for byte ----
sed '1s/\("member_limit":[0-9]*\)}/\1,"compressor":"libdeflate"}/' "$tmp/a.jsonl" >"$tmp/ld.jsonl"
grep -q '"compressor":"libdeflate"' "$tmp/ld.jsonl" || fail "the test could not set the compressor"
expect 0 "$RECTOOL" import "$tmp/ld.jsonl" -o "$tmp/ld.recap"
expect 0 "$RECTOOL" verify "$tmp/ld.recap"
cmp -s "$tmp/ld.recap" "$tmp/a.recap" && fail "libdeflate members are the same bytes as zlib's"
# The compressor is how a file is packed, like its member ends: diff finds the two the same.
expect 0 "$RECTOOL" diff "$tmp/a.recap" "$tmp/ld.recap"
expect 0 "$RECTOOL" export "$tmp/ld.recap" --to jsonl -o "$tmp/ld-again.jsonl"
cmp -s "$tmp/ld-again.jsonl" "$tmp/ld.jsonl" || fail "a libdeflate file does not export as it was imported"
expect 0 "$RECTOOL" import "$tmp/ld-again.jsonl" -o "$tmp/ld-same.recap"
cmp -s "$tmp/ld-same.recap" "$tmp/ld.recap" || fail "libdeflate: export + import is not byte-identical"
sed '1s/"compressor":"libdeflate"/"compressor":"lz4"/' "$tmp/ld.jsonl" >"$tmp/lz4.jsonl"
expect 1 "$RECTOOL" import "$tmp/lz4.jsonl" -o "$tmp/lz4.recap"
grep -q "encoder.compressor" "$tmp/err" || fail "an unknown compressor: the error does not name the field"
[ -e "$tmp/lz4.recap" ] && fail "an unknown compressor: an output file was left behind"

# ---- version 1 has no weather and no time of day ----
sed '1s/"version":4/"version":1/; 1s/"weather":0/"weather":2/' "$tmp/a.jsonl" >"$tmp/v1.jsonl"
expect 1 "$RECTOOL" import "$tmp/v1.jsonl" -o "$tmp/v1.recap"
grep -q "weather" "$tmp/err" || fail "version 1 + weather: the error does not name weather"
[ -e "$tmp/v1.recap" ] && fail "version 1 + weather: an output file was left behind"
sed '1s/"version":4/"version":1/' "$tmp/a.jsonl" >"$tmp/v1.jsonl" # time_of_day is 5044
expect 1 "$RECTOOL" import "$tmp/v1.jsonl" -o "$tmp/v1.recap"
grep -q "time_of_day" "$tmp/err" || fail "version 1 + time_of_day: the error does not name it"
sed '1s/"version":4/"version":1/; 1s/"time_of_day":[0-9]*/"time_of_day":0/' "$tmp/a.jsonl" >"$tmp/v1.jsonl"
expect 0 "$RECTOOL" import "$tmp/v1.jsonl" -o "$tmp/v1.recap"
expect 0 "$RECTOOL" export "$tmp/v1.recap" --to jsonl -o "$tmp/v1-again.jsonl"
cmp -s "$tmp/v1.jsonl" "$tmp/v1-again.jsonl" || fail "a version-1 export does not read back the same"
# The CSV open cell goes through the same reader.
expect 0 "$RECTOOL" export "$tmp/a.recap" --to csv -o "$tmp/a.csv"
sed 's/""version"":4/""version"":1/' "$tmp/a.csv" >"$tmp/v1.csv"
expect 1 "$RECTOOL" import "$tmp/v1.csv" -o "$tmp/v1csv.recap"
grep -q "time_of_day" "$tmp/err" || fail "CSV version 1 + time_of_day: the error does not name it"

# ---- repair keeps a complete file's end time, even one that is not start + ticks x 50 ms ----
sed '1s/"end_time":[0-9]*,//; $s/{"type":"close"}/{"type":"close","end_time":1748288499999}/' \
    "$tmp/a.jsonl" >"$tmp/end.jsonl"
expect 0 "$RECTOOL" import "$tmp/end.jsonl" -o "$tmp/end.recap"
expect 0 "$RECTOOL" verify "$tmp/end.recap"
expect 0 "$RECTOOL" repair "$tmp/end.recap" -o "$tmp/end-repaired.recap"
grep -q "nothing to repair" "$tmp/out" || fail "repair changed a complete file: $(cat "$tmp/out")"
cmp -s "$tmp/end.recap" "$tmp/end-repaired.recap" || fail "repair rewrote a complete file's header"
cp "$tmp/end.recap" "$tmp/inplace.recap"
expect 0 "$RECTOOL" repair --in-place "$tmp/inplace.recap"
cmp -s "$tmp/end.recap" "$tmp/inplace.recap" || fail "repair --in-place rewrote a complete file"
# A cut file still gets both fields recomputed from the ticks it keeps.
size=$(stat -c %s "$tmp/end.recap")
head -c $((size - 5)) "$tmp/end.recap" >"$tmp/cut.recap"
expect 0 "$RECTOOL" repair "$tmp/cut.recap" -o "$tmp/cut-repaired.recap"
expect 0 "$RECTOOL" verify "$tmp/cut-repaired.recap"
# A complete file that was never finalized (frame count 0) gets both fields filled in.
sed '1s/"frame_count":200,/"frame_count":0,/' "$tmp/a.jsonl" >"$tmp/zero.jsonl"
expect 0 "$RECTOOL" import "$tmp/zero.jsonl" -o "$tmp/zero.recap"
expect 0 "$RECTOOL" repair "$tmp/zero.recap" -o "$tmp/zero-repaired.recap"
grep -q "rewritten" "$tmp/out" || fail "repair left an unfinalized header alone"
expect 0 "$RECTOOL" info --json "$tmp/zero-repaired.recap"
grep -q '"frame_count": 200' "$tmp/out" || fail "repair did not count the ticks of an unfinalized file"

[ "$failures" -eq 0 ]
