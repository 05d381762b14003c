# SPDX-License-Identifier: MIT
# The last mile to the NPC: a samp-player session (walk, drive, walk) recorded through a real
# recd, its script written by `rectool npc script` in each dialect, and each script compiled by
# the real Pawn compiler (pawncc 3.10) against the real include files of its playback system
# (SA-MP's a_npc; open.mp's open.mp; a_samp with FCNPC), with no error and no warning.
# The compiler and the includes are test material in ../shared/third_party/pawn (beside the
# source tree, never copied into it): without them the test skips.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
: "${RECD_SOURCE_DIR:?RECD_SOURCE_DIR must point at the source tree}"
: "${RECD_BUILD_DIR:?RECD_BUILD_DIR must point at the build folder}"
pawn="$RECD_SOURCE_DIR/../shared/third_party/pawn"
if [ ! -x "$pawn/build.sh" ] || [ ! -d "$pawn/include" ]; then
    echo "SKIP: the Pawn compiler and includes ($pawn) are not available; the NPC scripts were not compiled"
    exit 77
fi
command -v python3 >/dev/null || { echo "SKIP: python3 is needed to send the session"; exit 77; }
command -v cmake >/dev/null || { echo "SKIP: cmake is needed to build the Pawn compiler"; exit 77; }
recd_tmpdir npc_pawncc
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"

# pawncc, built once per build folder (about 20 s; a lock keeps two runs from building at once).
pawn_out="$RECD_BUILD_DIR/pawn"
mkdir -p "$pawn_out"
lock=""
command -v flock >/dev/null 2>&1 && lock="flock $pawn_out/.lock"
if ! pawncc=$($lock "$pawn/build.sh" "$pawn_out") || [ ! -x "$pawncc" ]; then
    tail -20 "$pawn_out/build.log" "$pawn_out/configure.log" >&2 2>/dev/null
    echo "FAIL: the Pawn compiler did not build (see $pawn_out/*.log)" >&2
    exit 1
fi

# A walk-drive-walk session through recd (as tests/integration/daemon_player.sh sends it).
cat >"$tmp/recd.yaml" <<YAML
listen:
  - tcp://127.0.0.1:0
output:
  root: $tmp/out
metrics:
  enabled: false
YAML
cat >"$tmp/send.py" <<'PY'
import json, socket, sys
host, port = sys.argv[1].rsplit(":", 1)
key, scale = sys.argv[2], float(sys.argv[3])
def onfoot(t):
    return {"type": "state", "session": key, "t": t, "left_right": 0, "up_down": -128, "keys": 8,
            "position": [1000.0 + t / 100, -1000.0, 13.5], "rotation": [1.0, 0.0, 0.0, 0.0],
            "health": 100, "armour": 0, "weapon": 0, "additional_key": 0, "special_action": 0,
            "velocity": [0.0, 0.0, 0.0], "surf_offset": [0.0, 0.0, 0.0], "surf_id": 0,
            "anim_id": 1189, "anim_flags": {"frame_delta": 4, "loop": False, "lock_x": False,
                                             "lock_y": False, "freeze": False, "time": 8}}
def vehicle(t):
    return {"type": "state", "session": key, "t": t, "vehicle_id": 7, "left_right": 0,
            "up_down": 0, "keys": 8, "rotation": [0.9238795, 0.0, 0.0, 0.3826834],
            "position": [1010.0 + t / 50, -1000.0, 13.5], "velocity": [0.5, 0.0, 0.0],
            "vehicle_health": 1000.0, "driver_health": 100, "driver_armour": 0, "weapon": 0,
            "additional_key": 0, "siren": 0, "landing_gear": 0, "trailer_id": 0,
            "hydra_thrust": [0, 0], "vehicle_model": 411, "seat": 0}
states = [onfoot(t) for t in range(0, 1001, 100)] + [vehicle(t) for t in range(1100, 3001, 100)] \
    + [onfoot(t) for t in range(3100, 4001, 100)]
out = [json.dumps({"type": "open", "session": key, "format": "samp-player"})]
out += [json.dumps(m) for m in states] + [json.dumps({"type": "close", "session": key})]
s = socket.create_connection((host, int(port)))
s.sendall(("\n".join(out) + "\n").encode())
s.shutdown(socket.SHUT_WR)
s.settimeout(30 * scale)  # recd closes after reading it all
reply = s.recv(4096)
if reply:
    sys.exit("daemon replied: %r" % reply)
PY
start_recd "$tmp/log" --config "$tmp/recd.yaml"
python3 "$tmp/send.py" "${tcp#tcp://}" npc_bob "${RECD_TEST_TIME_SCALE:-1}" || fail "send the session"
kill -TERM "$recd_pid"
wait "$recd_pid" || fail "recd exited with $? after SIGTERM"
recd_pid=
manifest=$(find "$tmp/out" -path "*/npc_bob/*.json" -type f)
if [ "$(printf '%s\n' "$manifest" | grep -c .)" -ne 1 ]; then
    cat "$tmp/log" >&2
    echo "FAIL: no single manifest for the session: '$manifest'" >&2
    exit 1
fi

# compile DIALECT INCLUDE_DIR...: writes the script, compiles it, and checks for the .amx and
# for no error or warning line in the compiler's output.
inc="$pawn/include"
compile() {
    local d=$1 flags="" dir
    shift
    for dir in "$@"; do flags="$flags -i$inc/$dir"; done
    "$RECTOOL" npc script "$manifest" --dialect "$d" -o "$tmp/npc_bob.$d.pwn" ||
        { fail "$d: rectool npc script exited $?"; return; }
    # shellcheck disable=SC2086 # the -i flags are one word each
    (cd "$tmp" && "$pawncc" $flags "npc_bob.$d.pwn" "-onpc_bob.$d.amx" >"$d.cc" 2>&1)
    local rc=$?
    if [ $rc -ne 0 ] || [ ! -s "$tmp/npc_bob.$d.amx" ] ||
        grep -Eiq '(error|warning) [0-9]+|fatal error' "$tmp/$d.cc"; then
        fail "$d: pawncc (exit $rc) on npc_bob.$d.pwn:"
        sed 's/^/    /' "$tmp/$d.cc" >&2
        nl -ba "$tmp/npc_bob.$d.pwn" | sed 's/^/    /' >&2
    fi
}
compile samp samp
compile openmp openmp
compile fcnpc samp fcnpc

# A recording may hold what PAWN has no literal for: the session again, its vehicle part's first
# position made NaN, infinity and 3e38 (a .rec stores any float), still compiles.
vehicle=$(python3 -c 'import json,sys; print([p["path"] for p in json.load(open(sys.argv[1]))["parts"] if p["type"] == "vehicle"][0])' "$manifest")
python3 - "$tmp/out/$vehicle" <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
struct.pack_into("<3f", data, 8 + 12 + 16, float("nan"), float("inf"), 3e38)  # header, ids/keys, rotation
open(sys.argv[1], "wb").write(data)
PY
cp "$tmp/npc_bob.fcnpc.pwn" "$tmp/finite.fcnpc.pwn"
compile samp samp
compile openmp openmp
compile fcnpc samp fcnpc
cmp -s "$tmp/finite.fcnpc.pwn" "$tmp/npc_bob.fcnpc.pwn" && fail "the NaN position did not reach the script"

# The check must catch what it is here for: a wrong call and a tag mismatch.
sed 's/FCNPC_PutInVehicle(recd_npc, /FCNPC_PutInVehicle(/' "$tmp/npc_bob.fcnpc.pwn" >"$tmp/arity.pwn"
sed 's/^new bool:recd_in_vehicle = false;/new bool:recd_in_vehicle = 0.5;/' "$tmp/npc_bob.samp.pwn" >"$tmp/tag.pwn"
grep -q '= 0.5;' "$tmp/tag.pwn" || fail "the samp script has no recd_in_vehicle to break"
for bad in arity tag; do
    [ "$bad" = arity ] && flags="-i$inc/samp -i$inc/fcnpc" || flags="-i$inc/samp"
    # shellcheck disable=SC2086
    (cd "$tmp" && "$pawncc" $flags "$bad.pwn" "-o$bad.amx" >"$bad.cc" 2>&1)
    grep -Eiq '(error|warning) [0-9]+' "$tmp/$bad.cc" || fail "pawncc passed the broken $bad.pwn"
done

if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "npc scripts: samp, openmp and fcnpc compile with pawncc, no error and no warning"
