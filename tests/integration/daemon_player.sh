# SPDX-License-Identifier: MIT
# recd samp-player sessions: a walk-drive-walk session (NDJSON, and binary frames) becomes three
# .rec parts, each rebased to 0 and valid, and a manifest listing them; after kill -9 in the
# middle of a session, recovery completes the manifest.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v python3 >/dev/null || { echo "SKIP: python3 is needed to send the sessions"; exit 77; }
recd_tmpdir daemon_player
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"

cat >"$tmp/recd.yaml" <<YAML
listen:
  - tcp://127.0.0.1:0
output:
  root: $tmp/out
metrics:
  enabled: false
flush:
  interval: 50ms
YAML
start() {
    start_recd "$tmp/log" --config "$tmp/recd.yaml"
    tcp=${tcp#tcp://}
}

# send.py ADDR SESSION ENCODING SCALE [noclose]: on foot 0..1000 ms, driving model 411
# 1100..3000 ms, on foot 3100..4000 ms, every time divided by SCALE.
cat >"$tmp/send.py" <<'PY'
import json, socket, struct, sys, time
host, port = sys.argv[1].rsplit(":", 1)
key, enc, scale = sys.argv[2], sys.argv[3], int(sys.argv[4])
close = len(sys.argv) < 6
s = socket.create_connection((host, int(port)))
def onfoot(t):
    return {"type": "state", "t": t, "left_right": 0, "up_down": -128, "keys": 8,
            "position": [1000.0 + t / 100, -1000.0, 13.5], "rotation": [1.0, 0.0, 0.0, 0.0],
            "health": 100, "armour": 0, "weapon": 0, "additional_key": 0, "special_action": 0,
            "velocity": [0.0, 0.0, 0.0], "surf_offset": [0.0, 0.0, 0.0], "surf_id": 0,
            "anim_id": 1189, "anim_flags": {"frame_delta": 4, "loop": False, "lock_x": False,
                                             "lock_y": False, "freeze": False, "time": 8}}
def vehicle(t):
    return {"type": "state", "t": t, "vehicle_id": 7, "left_right": 0, "up_down": 0, "keys": 8,
            "rotation": [1.0, 0.0, 0.0, 0.0], "position": [1010.0 + t / 50, -1000.0, 13.5],
            "velocity": [0.5, 0.0, 0.0], "vehicle_health": 1000.0, "driver_health": 100,
            "driver_armour": 0, "weapon": 0, "additional_key": 0, "siren": 0, "landing_gear": 0,
            "trailer_id": 0, "hydra_thrust": [0, 0], "vehicle_model": 411, "seat": 0}
states = [onfoot(t // scale) for t in range(0, 1001, 100)] \
    + [vehicle(t // scale) for t in range(1100, 3001, 100)] \
    + [onfoot(t // scale) for t in range(3100, 4001, 100)]
def frame(ftype, flags, body):
    return struct.pack("<BBBBI", 0xD7, 1, ftype, flags, len(body)) + body
def keyed(body):
    return bytes([len(key)]) + key.encode() + body
f32 = lambda *v: struct.pack("<%df" % len(v), *v)
def binary_state(m):
    t = struct.pack("<Q", m["t"])
    if "vehicle_id" in m:
        p = struct.pack("<BHB", 1, m["vehicle_model"], m["seat"])
        p += struct.pack("<HhhH", 7, 0, 0, 8) + f32(*m["rotation"]) + f32(*m["position"])
        p += f32(*m["velocity"]) + f32(1000.0) + bytes([100, 0, 0, 0, 0]) + struct.pack("<HI", 0, 0)
    else:
        p = struct.pack("<BhhH", 2, 0, -128, 8) + f32(*m["position"]) + f32(*m["rotation"])
        p += bytes([100, 0, 0, 0]) + f32(0, 0, 0) + f32(0, 0, 0) + struct.pack("<HHH", 0, 1189, 0x8004)
    return frame(2, 2, keyed(t + p))
if enc == "ndjson":
    out = [json.dumps({"type": "open", "session": key, "format": "samp-player"})]
    out += [json.dumps(dict(m, session=key)) for m in states]
    if close:
        out.append(json.dumps({"type": "close", "session": key}))
    s.sendall(("\n".join(out) + "\n").encode())
else:
    data = frame(1, 0, keyed(struct.pack("<BqB", 5, 0, 0)))
    data += b"".join(binary_state(m) for m in states)
    if close:
        data += frame(5, 0, keyed(b""))
    s.sendall(data)
if not close:
    time.sleep(0.5)  # the daemon reads it all and flushes (flush.interval 50ms)
s.shutdown(socket.SHUT_WR)
s.settimeout(10)
reply = s.recv(4096)
if reply:
    sys.exit("daemon replied: %r" % reply)
PY

# check.py ROOT MANIFEST SCALE: the manifest lists walk-drive-walk and every part starts at 0 and
# ends at its duration.
cat >"$tmp/check.py" <<'PY'
import json, struct, sys
root, path, scale = sys.argv[1], sys.argv[2], int(sys.argv[3])
m = json.load(open(path))
want = [("onfoot", 0, 1000 // scale), ("vehicle", 1100 // scale, 3000 // scale - 1100 // scale),
        ("onfoot", 3100 // scale, 4000 // scale - 3100 // scale)]
got = [(p["type"], p["start_ms"], p["duration_ms"]) for p in m["parts"]]
assert got == want, "parts %r, expected %r" % (got, want)
assert m["format"] == "samp-player" and m["complete"], m
assert m["parts"][1]["vehicle_model"] == 411 and m["parts"][1]["seat"] == 0, m["parts"][1]
assert "vehicle_model" not in m["parts"][0], m["parts"][0]
for p in m["parts"]:
    assert p["complete"], p
    data = open(root + "/" + p["path"], "rb").read()
    size = 67 if p["type"] == "vehicle" else 72
    n = (len(data) - 8) // size
    assert (len(data) - 8) % size == 0 and n > 0, (p, len(data))
    assert struct.unpack_from("<I", data, 4)[0] == (1 if p["type"] == "vehicle" else 2), p
    first = struct.unpack_from("<I", data, 8)[0]
    last = struct.unpack_from("<I", data, 8 + (n - 1) * size)[0]
    assert first == 0 and last == p["duration_ms"], (p, first, last)
print(" ".join(p["path"] for p in m["parts"]))
PY

check_session() { # NAME SCALE
    manifest=$(find "$tmp/out" -path "*/$1/*.json" -type f)
    [ "$(printf '%s\n' "$manifest" | grep -c .)" -eq 1 ] || { fail "$1: manifests: '$manifest'"; return; }
    [ "$(basename "$manifest")" = "$1.json" ] || fail "$1: the manifest is $(basename "$manifest"), not $1.json"
    parts=$(python3 "$tmp/check.py" "$tmp/out" "$manifest" "$2" 2>"$tmp/check.err") ||
        { fail "$1: $(tail -1 "$tmp/check.err")"; return; }
    n=$(find "$tmp/out" -path "*/$1/*.rec" -type f | grep -c .)
    [ "$n" -eq 3 ] || fail "$1: $n .rec files, not 3"
    for p in $parts; do
        "$RECTOOL" verify "$tmp/out/$p" >/dev/null 2>&1 || fail "$1: rectool verify $p"
    done
    for d in samp openmp fcnpc; do
        "$RECTOOL" npc script "$manifest" --dialect "$d" -o "$tmp/$1.$d.pwn" >/dev/null 2>&1 ||
            fail "$1: rectool npc script --dialect $d"
    done
}

start
python3 "$tmp/send.py" "$tcp" walk-ndjson ndjson 1 || fail "send NDJSON"
python3 "$tmp/send.py" "$tcp" walk-binary binary 1 || fail "send binary frames"
# All three parts within 400 ms: the default path template gives them one name, and later
# parts get their part number added.
python3 "$tmp/send.py" "$tcp" walk-quick ndjson 10 || fail "send the quick session"
kill -TERM "$recd_pid"
wait "$recd_pid" || fail "recd exited with $? after SIGTERM"
recd_pid=
check_session walk-ndjson 1
check_session walk-binary 1
check_session walk-quick 10

# One key recorded twice: each recording has its own manifest, the second as KEY-1.json, and
# each lists its own three parts.
start
python3 "$tmp/send.py" "$tcp" walk-twice ndjson 10 || fail "send walk-twice"
python3 "$tmp/send.py" "$tcp" walk-twice ndjson 10 || fail "send walk-twice again"
kill -TERM "$recd_pid"
wait "$recd_pid" || fail "recd exited with $? after SIGTERM"
recd_pid=
twice=$(find "$tmp/out" -path "*/walk-twice/*.json" -type f -printf '%f\n' | sort | tr '\n' ' ')
[ "$twice" = "walk-twice-1.json walk-twice.json " ] || fail "walk-twice: manifests '$twice'"
listed=$(python3 -c 'import json,sys; print(" ".join(sorted(p["path"] for f in sys.argv[1:] for p in json.load(open(f))["parts"])))' "$tmp"/out/*/walk-twice/*.json)
[ "$(find "$tmp/out" -path "*/walk-twice/*.rec" -type f | wc -l)" -eq 6 ] || fail "walk-twice: not 6 parts"
[ "$(printf '%s' "$listed" | tr ' ' '\n' | sort -u | wc -l)" -eq 6 ] || fail "walk-twice: parts listed: $listed"

# kill -9 with the last part open: recovery finalizes it and completes the manifest.
start
python3 "$tmp/send.py" "$tcp" walk-killed ndjson 1 noclose || fail "send the session killed"
kill -9 "$recd_pid"
wait "$recd_pid" 2>/dev/null
recd_pid=
manifest=$(find "$tmp/out" -path "*/walk-killed/*.json" -type f)
grep -q '"complete":false' "$manifest" 2>/dev/null || fail "walk-killed: the manifest before recovery: $(cat "$manifest" 2>&1)"
start
grep -q "samp-player manifests completed" "$tmp/log" || fail "recovery did not complete the manifest"
kill -TERM "$recd_pid"
wait "$recd_pid" || fail "recd exited with $? after SIGTERM"
recd_pid=
check_session walk-killed 1
grep -q '"recovered":true' "$manifest" || fail "walk-killed: the manifest is not marked recovered"

if [ "$failures" -ne 0 ]; then
    cat "$tmp/log" >&2
    exit 1
fi
echo "samp-player sessions: parts, manifests and recovery OK"
