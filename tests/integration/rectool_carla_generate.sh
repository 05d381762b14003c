# SPDX-License-Identifier: MIT
# rectool generate --format carla in every layout, and what info/verify say about it:
# --width f32|f64 x --ids 0.9.13|0.9.15|0.9.16 each verify (with that table and width named) and
# export; every actor spawned gets a BoundingBox record in the frame it spawns in (all of frame 1's
# vehicles and walkers); bad values and carla-only options with other formats are refused (exit 2);
# info --json prints doubles as the shortest text that reads back exactly (2.0500000000000003,
# not 10 digits' 2.05).
set -u
: "${RECTOOL:?RECTOOL must point at the rectool binary}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rectool_carla_generate.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"

log=$tmp/g.log
for width in f32 f64; do
    for ids in 0.9.13 0.9.15 0.9.16; do
        expect 0 "$RECTOOL" generate --format carla --actors 35 --duration 6s --seed 3 \
            --width "$width" --ids "$ids" -o "$log"
        expect 0 "$RECTOOL" verify "$log"
        grep -q "(carla $ids $width, 121 frames" "$tmp/out" ||
            fail "verify of a $width $ids log says: $(cat "$tmp/out")"
        expect 0 "$RECTOOL" export --to jsonl "$log"
        expect 0 "$RECTOOL" info --all --json "$log"
        python3 - "$tmp/out" "$ids" >"$tmp/check" 2>&1 <<'PY' || fail "$width $ids: $(cat "$tmp/check")"
import json, sys
info = json.load(open(sys.argv[1]))["carla"]
recs = info["records"]
spawned = {r["frame"]: set() for r in recs}
boxed = {r["frame"]: set() for r in recs}
for r in recs:
    if r["kind"] == "add" and r["record"]["actor_type"] in (1, 2):
        spawned[r["frame"]].add(r["record"]["id"])
    if r["kind"] == "bounding_boxes":
        boxed[r["frame"]].add(r["record"]["id"])
assert len(spawned[1]) == 35, "frame 1 spawns %d actors" % len(spawned[1])
assert boxed[1] == spawned[1], "frame 1: boxes %s, spawned %s" % (sorted(boxed[1]), sorted(spawned[1]))
later = [(f, a) for f in spawned if f > 1 for a in spawned[f]]
assert later, "no actor spawns after frame 1"
for f, a in later:  # a walker arriving later is boxed in the next frame, the first it is in
    assert a in boxed.get(f + 1, set()), "actor %d of frame %d has no box" % (a, f)
assert info["ids"] == sys.argv[2]
PY
    done
done
expect 0 "$RECTOOL" info --all "$log"
grep -q "^ Actor bounding boxes: 35$" "$tmp/out" || fail "info --all shows no 35 bounding boxes"

# bad values, and carla's options with other formats
expect 2 "$RECTOOL" generate --format carla --duration 1s --width f16 -o "$tmp/x.log"
grep -q "bad --width 'f16'" "$tmp/err" || fail "--width f16: $(head -1 "$tmp/err")"
expect 2 "$RECTOOL" generate --format carla --duration 1s --width 8 -o "$tmp/x.log"
expect 2 "$RECTOOL" generate --format carla --duration 1s --ids 0.9.14 -o "$tmp/x.log"
grep -q "bad --ids '0.9.14'" "$tmp/err" || fail "--ids 0.9.14: $(head -1 "$tmp/err")"
expect 2 "$RECTOOL" generate --format recap --duration 1s --ids 0.9.13 -o "$tmp/x.recap"
grep -q -- "--ids is for --format carla only" "$tmp/err" || fail "--ids with recap: $(head -1 "$tmp/err")"
expect 2 "$RECTOOL" generate --format samp-onfoot --duration 1s --width f64 -o "$tmp/x.rec"
[ ! -e "$tmp/x.log" ] && [ ! -e "$tmp/x.recap" ] && [ ! -e "$tmp/x.rec" ] || fail "a refused generate wrote a file"

# info --json: the exact double, as export prints it (41 x 0.05 = 2.0500000000000003)
expect 0 "$RECTOOL" generate --format carla --actors 3 --duration 2050ms -o "$log"
expect 0 "$RECTOOL" info --json "$log"
python3 - "$tmp/out" >"$tmp/check" 2>&1 <<'PY' || fail "info --json numbers: $(cat "$tmp/check")"
import json, sys
text = open(sys.argv[1]).read()
floats = []
info = json.loads(text, parse_float=lambda s: floats.append(s) or float(s))
assert info["carla"]["duration"] == 41 * 0.05, info["carla"]["duration"]
assert '"duration": 2.0500000000000003' in text
for s in floats:  # every real: the shortest text that reads back (Python's repr is that)
    assert s == repr(float(s)) or "e" in s, "%s is not the shortest text (%r)" % (s, float(s))
PY
[ "$failures" -eq 0 ]
