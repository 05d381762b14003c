# SPDX-License-Identifier: MIT
# rectool against the real CARLA 0.9.13 recording of the shared corpus, with the corpus's
# reference reader (carla_log_reader.py) as the oracle: `info` prints exactly its text,
# `info --all` too where the oracle prints a block, the log verifies, and export + import (JSON lines
# and CSV) gives the same bytes back. Generated logs with 1, 50 and 500 actors verify and survive the round trip.
# cut, split, concat and plot work on it (a cut's first frame adds the hero again); retime is refused.
set -u
: "${RECTOOL:?RECTOOL must point at the rectool binary}"
corpus="${RECD_CORPUS_DIR:-}/carla"
log="$corpus/DistanceToLaneCenter.log"
oracle="$corpus/carla_log_reader.py"
if [ -z "${RECD_CORPUS_DIR:-}" ] || [ ! -f "$log" ] || [ ! -f "$oracle" ]; then
    echo "skipped: the CARLA corpus ($corpus) is not available; set RECD_CORPUS_DIR" >&2
    exit 77
fi
command -v python3 >/dev/null || { echo "skipped: python3 is needed for the oracle" >&2; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rectool_carla.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"
export TZ=UTC LC_ALL=C # CARLA prints the date in the server's local time

"$RECTOOL" verify "$log" >"$tmp/v" 2>&1 || fail "the corpus log does not verify: $(cat "$tmp/v")"
grep -q "carla 0.9.13 f32, 432 frames" "$tmp/v" || fail "verify summary: $(cat "$tmp/v")"

"$RECTOOL" info "$log" >"$tmp/info.txt" || fail "info"
python3 "$oracle" "$log" --info >"$tmp/oracle.txt" || fail "oracle --info"
cmp -s "$tmp/info.txt" "$tmp/oracle.txt" || fail "info differs from the oracle: $(diff "$tmp/info.txt" "$tmp/oracle.txt" | head -5)"

# The oracle's show_all prints a subset of CARLA's blocks: drop the others before comparing.
"$RECTOOL" info --all "$log" >"$tmp/all.txt" || fail "info --all"
python3 "$oracle" "$log" --all 1000000 >"$tmp/oracle_all.txt" || fail "oracle --all"
cat >"$tmp/subset.py" <<'PY'
import sys
titles = (" Dynamic actors:", " Actor bounding boxes:", " Actor trigger volumes:",
          " Physics Control events:", " Traffic Light time events:", " Walkers Bones:",
          " Vehicle door animations:")
skip = False
for line in open(sys.argv[1]):
    if line.startswith(titles):
        skip = True
        continue
    if skip and line.startswith("  "):
        continue
    if skip and line == "\n":  # the blank line WalkerBones ends with
        skip = False
        continue
    skip = False
    sys.stdout.write(line)
PY
python3 "$tmp/subset.py" "$tmp/all.txt" >"$tmp/all_subset.txt"
cmp -s "$tmp/all_subset.txt" "$tmp/oracle_all.txt" || fail "info --all differs from the oracle: $(diff "$tmp/all_subset.txt" "$tmp/oracle_all.txt" | head -5)"
grep -q "^ Dynamic actors: 1$" "$tmp/all.txt" || fail "info --all lacks the Kinematics block"

"$RECTOOL" info --json "$log" >"$tmp/info.json" || fail "info --json"
python3 -c 'import json,sys; o=json.load(sys.stdin); c=o["carla"]; sys.exit(not (o["valid"] and c["frames"] == 432 and c["map"] == "Town01" and len(c["events"]) == 193))' \
    <"$tmp/info.json" || fail "info --json: $(head -c 300 "$tmp/info.json")"

for enc in jsonl csv; do
    "$RECTOOL" export "$log" --to $enc -o "$tmp/c.$enc" || fail "export $enc"
    "$RECTOOL" import "$tmp/c.$enc" -o "$tmp/back.log" || fail "import $enc"
    cmp -s "$log" "$tmp/back.log" || fail "the corpus log changes through export/import as $enc"
done

"$RECTOOL" carla blocked "$log" --min-time 5 >"$tmp/blocked.txt" || fail "carla blocked"
head -5 "$tmp/blocked.txt" | tail -1 | grep -q '^    Time     Id Actor                                 Duration$' ||
    fail "blocked header: $(sed -n 5p "$tmp/blocked.txt")"
grep -q '^       0    234 vehicle.lincoln.mkz_2017                     5$' "$tmp/blocked.txt" ||
    fail "blocked lacks the hero vehicle's 5 s stop"
"$RECTOOL" carla collisions "$log" a a >"$tmp/coll.txt" || fail "carla collisions"
tail -2 "$tmp/coll.txt" | grep -q '^Duration: 12.5282 seconds$' || fail "collisions footer (no rows: %g)"

for n in 1 50 500; do
    g="$tmp/gen$n.log"
    "$RECTOOL" generate --format carla --scenario traffic --actors $n --duration 5s --seed $n -o "$g" >/dev/null ||
        { fail "generate $n actors"; continue; }
    "$RECTOOL" verify "$g" >/dev/null || fail "generated log with $n actors does not verify"
    python3 "$oracle" "$g" >"$tmp/st" && grep -q "size mismatches: none" "$tmp/st" &&
        grep -q "unknown ids: none" "$tmp/st" || fail "the oracle finds problems in the $n-actor log"
    for enc in jsonl csv; do
        "$RECTOOL" export "$g" --to $enc -o "$g.$enc" && "$RECTOOL" import "$g.$enc" -o "$g.back.log" &&
            cmp -s "$g" "$g.back.log" || fail "the $n-actor log changes through export/import as $enc"
    done
done
# The 0.9.16 layout (VisualTime, doors, wheels, bikers, walker bones) against the oracle too
"$RECTOOL" info "$tmp/gen50.log" >"$tmp/g.txt" && python3 "$oracle" "$tmp/gen50.log" --info >"$tmp/g_oracle.txt" &&
    cmp -s "$tmp/g.txt" "$tmp/g_oracle.txt" || fail "info of a generated log differs from the oracle"
"$RECTOOL" info --all "$tmp/gen50.log" >"$tmp/ga.txt" || fail "info --all of a generated log"
python3 "$oracle" "$tmp/gen50.log" --all 1000000 >"$tmp/ga_oracle.txt"
python3 "$tmp/subset.py" "$tmp/ga.txt" | cmp -s - "$tmp/ga_oracle.txt" ||
    fail "info --all of a generated log differs from the oracle"
"$RECTOOL" carla collisions "$tmp/gen50.log" h v >"$tmp/c50.txt" || fail "collisions on a generated log"
grep -q '^       5   h v ' "$tmp/c50.txt" || fail "no hero collision at 5 s: $(cat "$tmp/c50.txt")"

# A file that is no CARLA log: CARLA's own line on stdout, the reason on stderr, exit 1.
printf 'not a recording' >"$tmp/junk.log"
for query in collisions blocked; do
    if [ "$query" = collisions ]; then
        "$RECTOOL" carla collisions "$tmp/junk.log" a a >"$tmp/junk.out" 2>"$tmp/junk.err"
    else
        "$RECTOOL" carla blocked "$tmp/junk.log" >"$tmp/junk.out" 2>"$tmp/junk.err"
    fi
    rc=$?
    [ "$rc" = 1 ] || fail "rectool carla $query on a non-CARLA file exits $rc, not 1"
    grep -qx 'File is not a CARLA recorder' "$tmp/junk.out" ||
        fail "rectool carla $query: no CARLA line: $(cat "$tmp/junk.out")"
    grep -q 'not a CARLA recorder log' "$tmp/junk.err" ||
        fail "rectool carla $query: no reason on stderr: $(cat "$tmp/junk.err")"
done

# Edits (docs/editing.md): a cut replays on its own, as the oracle reads it; split, concat, plot.
"$RECTOOL" cut "$log" --from 5s --to 10s -q -o "$tmp/cut.log" || fail "cut of the corpus log"
"$RECTOOL" verify "$tmp/cut.log" >/dev/null || fail "the cut log does not verify"
python3 "$oracle" "$tmp/cut.log" >"$tmp/cst" && grep -q "size mismatches: none" "$tmp/cst" ||
    fail "the oracle finds problems in the cut log"
python3 "$oracle" "$tmp/cut.log" --info | awk '/^Frame 1 at 0 seconds$/ { on = 1; next } /^Frame / { on = 0 } on' |
    grep -q '^ Create 234: vehicle.lincoln.mkz_2017 (1)' || fail "the cut's frame 1 does not add the hero vehicle"
"$RECTOOL" split "$log" --at 4s --at 8s -q -o "$tmp/piece" || fail "split of the corpus log"
for i in 1 2 3; do
    "$RECTOOL" verify "$tmp/piece-$i.log" >/dev/null || fail "split piece $i does not verify"
done
"$RECTOOL" concat "$tmp/piece-1.log" "$tmp/piece-2.log" "$tmp/piece-3.log" -q -o "$tmp/joined.log" &&
    "$RECTOOL" verify "$tmp/joined.log" >"$tmp/jv" || fail "concat of the pieces"
grep -q ", 432 frames" "$tmp/jv" || fail "the joined pieces do not hold the 432 frames: $(cat "$tmp/jv")"
"$RECTOOL" retime "$log" --speed 2 -o "$tmp/fast.log" 2>"$tmp/re"
[ $? -eq 1 ] && grep -q "time factor" "$tmp/re" && [ ! -e "$tmp/fast.log" ] ||
    fail "retime of a CARLA log is not refused with its reason: $(cat "$tmp/re")"
"$RECTOOL" plot "$log" "$tmp/gen50.log" -o "$tmp/plot.svg" && grep -q '<path' "$tmp/plot.svg" ||
    fail "plot of CARLA logs"

[ "$failures" -eq 0 ] || exit 1
echo "ok"
