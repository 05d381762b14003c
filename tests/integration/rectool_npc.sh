# SPDX-License-Identifier: MIT
# rectool npc script: for a hand-written samp-player manifest (walk, drive, drive another car,
# walk), each dialect's script plays the parts in order and enters and leaves the vehicles with
# that dialect's calls; bad dialects and manifests are refused.
set -u
: "${RECTOOL:?RECTOOL must point at the rectool binary}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rectool_npc.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"
mkdir -p "$tmp/root/samp-player/bob"
dir="$tmp/root/samp-player/bob"
"$RECTOOL" generate --format samp-onfoot --scenario walk --duration 2s --seed 1 -o "$dir/a.rec" >/dev/null &&
    "$RECTOOL" generate --format samp-vehicle --scenario drive --duration 3s --seed 2 -o "$dir/b.rec" >/dev/null &&
    "$RECTOOL" generate --format samp-vehicle --scenario drive --duration 3s --seed 3 -o "$dir/c.rec" >/dev/null &&
    "$RECTOOL" generate --format samp-onfoot --scenario walk --duration 1s --seed 4 -o "$dir/d.rec" >/dev/null ||
    { echo "FAIL: rectool generate" >&2; exit 1; }
cat >"$dir/a.json" <<'JSON'
{"format":"samp-player","version":1,"session":"bob","start_time":0,"complete":true,"parts":[
  {"path":"samp-player/bob/a.rec","type":"onfoot","start_ms":0,"duration_ms":2000,"complete":true},
  {"path":"samp-player/bob/b.rec","type":"vehicle","start_ms":2100,"duration_ms":3000,"vehicle_model":411,"seat":0,"complete":true},
  {"path":"samp-player/bob/c.rec","type":"vehicle","start_ms":5200,"duration_ms":3000,"vehicle_model":560,"complete":true},
  {"path":"samp-player/bob/d.rec","type":"onfoot","start_ms":8300,"duration_ms":1000,"complete":true}
]}
JSON

expect_script() { # FILE DIALECT PATTERN...
    f=$1 d=$2
    shift 2
    for p in "$@"; do
        grep -qF -- "$p" "$f" || fail "$d: no '$p' in the script"
    done
}
for d in samp openmp fcnpc; do
    out="$tmp/bob.$d.pwn"
    "$RECTOOL" npc script "$dir/a.json" --dialect "$d" -o "$out" || { fail "$d: exit $?"; continue; }
    # the parts in order, their types and models
    names=$(sed -n 's/^    "\([a-d]\)",\{0,1\} \/\/ start.*/\1/p' "$out" | tr -d '\n')
    [ "$names" = abcd ] || fail "$d: parts in the order '$names', not abcd"
    expect_script "$out" "$d" "#define RECD_PARTS 4" "new const recd_part_model[RECD_PARTS] = {0, 411, 560, 0};"
    # braces balance
    [ "$(tr -cd '{' <"$out" | wc -c)" -eq "$(tr -cd '}' <"$out" | wc -c)" ] || fail "$d: unbalanced braces"
done
expect_script "$tmp/bob.samp.pwn" samp "#include <a_npc>" \
    "PLAYER_RECORDING_TYPE_ONFOOT, PLAYER_RECORDING_TYPE_DRIVER, PLAYER_RECORDING_TYPE_DRIVER, PLAYER_RECORDING_TYPE_ONFOOT" \
    'SendCommand(cmd)' 'SendCommand("/recd_exit")' "public OnNPCEnterVehicle(vehicleid, seatid)" \
    "public OnNPCExitVehicle()" "public OnRecordingPlaybackEnd()" \
    "StartRecordingPlayback(PLAYER_RECORDING_TYPE_DRIVER, recd_part_name[recd_part])"
expect_script "$tmp/bob.openmp.pwn" openmp "#include <open.mp>" 'NPC_Create(RECD_NPC_NAME)' \
    'NPC_PutInVehicle(recd_npc, recd_vehicle, recd_part_seat[recd_part])' 'NPC_RemoveFromVehicle(recd_npc)' \
    'NPC_StartPlayback(recd_npc, recd_part_name[recd_part]' 'public OnNPCPlaybackEnd(npcid, recordid)' \
    '#define RECD_NPC_NAME "bob"'
expect_script "$tmp/bob.fcnpc.pwn" fcnpc "#include <FCNPC>" 'FCNPC_Create(RECD_NPC_NAME)' \
    'FCNPC_PutInVehicle(recd_npc, recd_vehicle, recd_part_seat[recd_part])' 'FCNPC_RemoveFromVehicle(recd_npc)' \
    'FCNPC_StartPlayingPlayback(recd_npc, recd_part_name[recd_part])' 'public FCNPC_OnFinishPlayback(npcid)'
# the first vehicle's start is its part's first block
"$RECTOOL" export "$dir/b.rec" --to jsonl 2>/dev/null | sed -n 2p >"$tmp/b.first"
x=$(python3 -c 'import json,struct,sys; v = json.load(open(sys.argv[1]))["position"][0]; print("%.4f" % struct.unpack("<f", struct.pack("<f", v))[0])' "$tmp/b.first" 2>/dev/null)
[ -z "$x" ] || grep -q "^    {$x, " "$tmp/bob.fcnpc.pwn" || fail "the vehicle part's start x $x is not in the table"
"$RECTOOL" npc script "$dir/a.json" --dialect openmp --name Bob_NPC | grep -qF '#define RECD_NPC_NAME "Bob_NPC"' ||
    fail "--name to standard output"

# Each script through a compiler of the PAWN family: embryo_cc (Debian's libembryo-bin) is the
# Small 2 compiler that pawncc grew from. Against declarations of the natives and callbacks the
# scripts use, with the signatures of SA-MP's a_npc.inc, open.mp's omp_npc.inc and FCNPC.inc
# (written here, not copied), it checks syntax, every name and every call's argument count. It
# does not check tags the way pawncc does, and no server ran the scripts.
compiled=0
if command -v embryo_cc >/dev/null 2>&1; then
    inc="$tmp/inc"
    mkdir -p "$inc"
    cat >"$inc/a_npc.inc" <<'INC'
#define PLAYER_RECORDING_TYPE_NONE 0
#define PLAYER_RECORDING_TYPE_DRIVER 1
#define PLAYER_RECORDING_TYPE_ONFOOT 2
native format(output[], len, const format[], {Float,_}:...);
native SendCommand(commandtext[]);
native StartRecordingPlayback(playbacktype, recordname[]);
forward OnNPCSpawn();
forward OnRecordingPlaybackEnd();
forward OnNPCEnterVehicle(vehicleid, seatid);
forward OnNPCExitVehicle();
INC
    cat >"$inc/a_samp.inc" <<'INC'
#define INVALID_PLAYER_ID 0xFFFF
#define INVALID_VEHICLE_ID 0xFFFF
native CreateVehicle(vehicletype, Float:x, Float:y, Float:z, Float:rotation, color1, color2,
                     respawn_delay, bool:addsiren = false);
native DestroyVehicle(vehicleid);
forward OnFilterScriptInit();
forward OnFilterScriptExit();
INC
    { cat "$inc/a_samp.inc"; cat <<'INC'
#define INVALID_NPC_ID (-1)
native NPC_Create(const name[]);
native NPC_Spawn(npcid);
native NPC_SetPos(npcid, Float:x, Float:y, Float:z);
native bool:NPC_PutInVehicle(npcid, vehicleid, seatid);
native bool:NPC_RemoveFromVehicle(npcid);
native bool:NPC_StartPlayback(npcid, const recordName[], bool:autoUnload = false, Float:startX = 0.0,
                              Float:startY = 0.0, Float:startZ = 0.0, Float:rotX = 0.0,
                              Float:rotY = 0.0, Float:rotZ = 0.0);
forward OnNPCPlaybackEnd(npcid, recordid);
INC
    } >"$inc/open.mp.inc"
    cat >"$inc/FCNPC.inc" <<'INC'
#define FCNPC_INVALID_RECORD_ID -1
native FCNPC_Create(const name[]);
native FCNPC_Spawn(npcid, skinid, Float:x, Float:y, Float:z);
native FCNPC_PutInVehicle(npcid, vehicleid, seatid);
native FCNPC_RemoveFromVehicle(npcid);
native FCNPC_StartPlayingPlayback(npcid, file[] = "", recordid = FCNPC_INVALID_RECORD_ID,
                                  bool:auto_unload = false, Float:delta_x = 0.0,
                                  Float:delta_y = 0.0, Float:delta_z = 0.0, Float:delta_qw = 0.0,
                                  Float:delta_qx = 0.0, Float:delta_qy = 0.0, Float:delta_qz = 0.0);
forward FCNPC_OnFinishPlayback(npcid);
INC
    # The checker must catch what it is here for: a wrong argument count, an unknown native.
    sed 's/FCNPC_PutInVehicle(recd_npc, /FCNPC_PutInVehicle(/' "$tmp/bob.fcnpc.pwn" >"$tmp/arity.pwn"
    sed 's/NPC_RemoveFromVehicle(/NPC_LeaveVehicle(/' "$tmp/bob.openmp.pwn" >"$tmp/unknown.pwn"
    for bad in arity unknown; do
        (cd "$tmp" && embryo_cc "$bad.pwn" -i "$inc" -o "$bad.amx" >"$bad.cc" 2>&1) &&
            fail "embryo_cc accepted the broken $bad.pwn"
    done
    for d in samp openmp fcnpc; do
        if ! (cd "$tmp" && embryo_cc "bob.$d.pwn" -i "$inc" -o "bob.$d.amx" >"$d.cc" 2>&1) ||
            [ -s "$tmp/$d.cc" ]; then
            fail "$d: embryo_cc: $(cat "$tmp/$d.cc")"
        else
            compiled=$((compiled + 1))
        fi
    done
else
    echo "rectool_npc: embryo_cc is not installed (libembryo-bin): the scripts were not compiled" >&2
fi

# refusals
"$RECTOOL" npc script "$dir/a.json" --dialect rage >/dev/null 2>&1
[ $? -eq 2 ] || fail "an unknown dialect is not a usage error"
"$RECTOOL" npc script "$dir/a.json" >/dev/null 2>&1
[ $? -eq 2 ] || fail "a missing --dialect is not a usage error"
echo '{"format":"samp-player","session":"bob","parts":[{"path":"x.rec","type":"boat","start_ms":0,"duration_ms":1}]}' >"$tmp/bad.json"
"$RECTOOL" npc script "$tmp/bad.json" --dialect samp -o "$tmp/bad.pwn" 2>"$tmp/err"
[ $? -eq 1 ] || fail "a bad part type is not refused with exit 1"
grep -q 'parts\[0\]: "type"' "$tmp/err" || fail "the refusal does not name the field: $(cat "$tmp/err")"
[ ! -e "$tmp/bad.pwn" ] || fail "a script was written for a bad manifest"
mv "$dir/c.rec" "$dir/c.moved"
"$RECTOOL" npc script "$dir/a.json" --dialect samp -o "$tmp/missing.pwn" 2>/dev/null
[ $? -eq 3 ] || fail "a missing part is not an I/O error"
[ ! -e "$tmp/missing.pwn" ] || fail "a script was written with a part missing"
[ "$failures" -eq 0 ] || exit 1
echo "rectool npc script: samp, openmp and fcnpc OK ($compiled compiled by embryo_cc)"
