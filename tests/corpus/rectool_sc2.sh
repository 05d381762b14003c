#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rectool on the StarCraft II replays of the shared corpus: info --json holds the keys other tools
# rely on with the values of corpus/sc2/SOURCES.md, text info, export to JSON lines and CSV (one
# line per tracker event), verify, the sc2 views, and cut copies reported with a byte offset
# (exit 1, never a crash).
set -u
corpus="${RECD_CORPUS_DIR:-}/sc2"
if [ -z "${RECD_CORPUS_DIR:-}" ] || [ ! -d "$corpus" ]; then
    echo "skipped: the SC2 corpus ($corpus) is not available; set RECD_CORPUS_DIR" >&2
    exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rectool_sc2.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"

# file | version | base build | loops | map | player 1 | race 1 | result 1 | player 2 | race 2 | result 2
cat >"$tmp/expected" <<'TABLE'
wol_1.0.0.16117_b15405|1.0.0.16117|15405|6349|Lost Temple|Froadac|Protoss|win|Jdorty|Terran|loss
wol_1.2.2.17811_b17326|1.2.2.17811|17326|8796|Lost Temple|Laquendi|Protoss|loss|Boom|Terran|win
hots_2.0.9.26147_b24944|2.0.9.26147|24944|2804|Derelict Watcher TE|KansasFF|Terran|loss|Lowrisk|Terran|win
hots_2.1.3.30508_b28667|2.1.3.30508|28667|3787|Habitation Station LE|[GGTr] GGTracker|Protoss|loss|A.I. 1 (Elite)|Zerg|win
lotv_3.0.0.38215_b38215|3.0.0.38215|38215|9096|Cactus Valley LE|ImNew|Protoss|win|A.I. 1 (Very Easy)|Protoss|loss
lotv_4.7.0.70154_b70154|4.7.0.70154|70154|4724|Acid Plant LE|<WoS> StoicLoofah|Protoss|loss|A.I. 1 (Very Easy)|Terran|win
lotv_5.0.0.80949_b80949|5.0.0.80949|80949|24908|Ever Dream LE|JiaanN|Terran|loss|Rairden|Zerg|win
TABLE

checked=0
while IFS='|' read -r name version build loops map n1 r1 res1 n2 r2 res2; do
    f="$corpus/$name.SC2Replay"
    [ -f "$f" ] || { fail "corpus file $f is missing"; continue; }
    checked=$((checked + 1))
    "$RECTOOL" info --json "$f" >"$tmp/info.json" || { fail "info --json $name exits $?"; continue; }
    python3 - "$tmp/info.json" "$version" "$build" "$loops" "$map" "$n1" "$r1" "$res1" "$n2" "$r2" "$res2" <<'PY' || fail "info --json $name disagrees with SOURCES.md"
import json, sys
o = json.load(open(sys.argv[1]))
version, build, loops, map_ = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
want = [sys.argv[6:9], sys.argv[9:12]]
for key in ("format", "version", "base_build", "game_loops", "duration_s", "map", "time_utc",
            "players", "members"):
    assert key in o, key
assert o["format"] == "sc2replay" and o["valid"] is True
assert (o["version"], o["base_build"], o["game_loops"], o["map"]) == (version, build, loops, map_), o
assert o["duration_s"] == loops / 16
for p, (name, race, result) in zip(o["players"], want):
    for key in ("name", "name_plain", "race", "result", "team", "control", "color"):
        assert key in p, key
    assert (p["name_plain"], p["race"], p["result"]) == (name, race, result), p
has_tracker = "replay.tracker.events" in o["members"]
assert has_tracker == ("tracker_counts" in o)
if has_tracker:
    kinds = {"player_stats", "unit_born", "unit_died", "unit_owner_change", "unit_type_change",
             "upgrade", "unit_init", "unit_done", "unit_positions", "player_setup"}
    assert set(o["tracker_counts"]) == kinds
PY
    "$RECTOOL" info "$f" >"$tmp/info.txt" || fail "text info $name"
    grep -q "^map: $map" "$tmp/info.txt" || fail "text info of $name lacks its map"
    "$RECTOOL" verify "$f" >/dev/null 2>&1 || fail "verify $name"
    events=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("tracker_events", 0))' "$tmp/info.json")
    "$RECTOOL" export "$f" --to jsonl -o "$tmp/$name.jsonl" || fail "export $name to jsonl"
    "$RECTOOL" export "$f" --to csv -o "$tmp/$name.csv" || fail "export $name to csv"
    [ "$(wc -l <"$tmp/$name.jsonl")" -eq "$events" ] || fail "$name: jsonl lines != $events tracker events"
    [ "$(wc -l <"$tmp/$name.csv")" -eq $((events + 1)) ] || fail "$name: csv rows != $events + header"
    python3 -c '
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    assert set(e) == {"source", "t", "t_raw", "actor", "kind", "fields"} and e["source"] == "sc2replay"
' "$tmp/$name.jsonl" || fail "$name: a JSON line is not a common-stream record"
    "$RECTOOL" sc2 build-order "$f" --json >"$tmp/bo.json" 2>/dev/null || fail "sc2 build-order $name"
    "$RECTOOL" sc2 stats "$f" --csv >"$tmp/stats.csv" 2>/dev/null || fail "sc2 stats $name"
    if [ "$events" -gt 0 ]; then
        python3 -c 'import json,sys; b=json.load(open(sys.argv[1])); assert b and all(r["player"] in (1, 2) for r in b)' \
            "$tmp/bo.json" || fail "sc2 build-order $name is empty or names other players"
        head -1 "$tmp/stats.csv" | grep -q '^loop,t,player,food_used' || fail "sc2 stats $name has no CSV header"
        [ "$(wc -l <"$tmp/stats.csv")" -gt 2 ] || fail "sc2 stats $name has no rows"
    fi

    # A cut copy: exit 1, an offset in the message, the header's values kept.
    size=$(stat -c %s "$f")
    head -c $((size / 2)) "$f" >"$tmp/cut.SC2Replay"
    "$RECTOOL" info --json "$tmp/cut.SC2Replay" >"$tmp/cut.json" 2>"$tmp/cut.err"
    rc=$?
    [ "$rc" -eq 1 ] || fail "info on cut $name exits $rc, not 1"
    python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
assert o["valid"] is False and "byte" in o["error"] and o["version"] == sys.argv[2], o
' "$tmp/cut.json" "$version" || fail "info on cut $name: no offset or lost header"
    "$RECTOOL" export "$tmp/cut.SC2Replay" --to jsonl -o "$tmp/cut.jsonl" 2>"$tmp/cut.err"
    rc=$?
    [ "$rc" -eq 1 ] || fail "export of cut $name exits $rc, not 1"
    [ ! -e "$tmp/cut.jsonl" ] || fail "export of cut $name left an output file"
    grep -q "byte" "$tmp/cut.err" || fail "export of cut $name: no offset in $(cat "$tmp/cut.err")"
done <"$tmp/expected"

# One run over every replay, with copies that make StormLib abort in between: each good replay
# exports exactly as on its own (the worker that crashed is not the one that reads the next), the
# damaged ones leave no file, and no worker outlives rectool.
python3 - "$corpus/wol_1.0.0.16117_b15405.SC2Replay" "$tmp/aborts1.SC2Replay" "$tmp/aborts2.SC2Replay" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
for at, value in ((1061, 4), (1071, 162), (1092, 117)): # a failed assertion in StormLib 9.22
    data[at] = value
for out in sys.argv[2:]:
    open(out, "wb").write(data)
PY
batch=()
for name in $(cut -d'|' -f1 "$tmp/expected"); do
    batch+=("$corpus/$name.SC2Replay")
    case "$name" in hots_2.0*) batch+=("$tmp/aborts1.SC2Replay") ;; lotv_3*) batch+=("$tmp/aborts2.SC2Replay") ;; esac
done
"$RECTOOL" export "${batch[@]}" --to jsonl -o "$tmp/batch" 2>"$tmp/batch.err"
rc=$?
[ "$rc" -eq 1 ] || fail "batch export with two damaged replays exits $rc, not 1"
for name in $(cut -d'|' -f1 "$tmp/expected"); do
    cmp -s "$tmp/$name.jsonl" "$tmp/batch/$name.SC2Replay.jsonl" || fail "batch export of $name differs from its own export"
done
[ ! -e "$tmp/batch/aborts1.SC2Replay.jsonl" ] && [ ! -e "$tmp/batch/aborts2.SC2Replay.jsonl" ] || fail "a damaged replay left an output"
[ "$(grep -c "StormLib stopped" "$tmp/batch.err")" -eq 2 ] || fail "batch export: $(cat "$tmp/batch.err")"
[ "$(grep -c "Assertion" "$tmp/batch.err")" -eq 2 ] || fail "batch export: a damaged replay was read twice"
! pgrep -f "$tmp/batch" >/dev/null || fail "a StormLib worker outlived rectool"

[ "$checked" -eq 7 ] || fail "only $checked of 7 corpus files checked"
[ "$failures" -eq 0 ] || exit 1
echo "rectool_sc2: $checked replays described, exported and cut"
