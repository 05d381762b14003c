# SPDX-License-Identifier: MIT
# recd instant replay of samp-player sessions: a player who walks, drives and walks again is kept
# in a ring and saved during the live session by each of the three triggers (a save message over
# NDJSON, a state's save flag over binary frames, POST /sessions/KEY/save on a session that has
# its ring through ring.all). Each save is a samp-player recording of its own: LABEL.json listing
# LABEL.rec, LABEL-1.rec, LABEL-2.rec in order, with the right kinds, times and vehicle, every
# part valid for rectool verify and holding exactly the states sent in the saved window; a label
# saved again takes free names. A ring over ring.session_memory counts what it lets go, and its
# save holds exactly the rest. A ring session that idled starts a part when states come again,
# and so does the state after a switching one dropped under rec.time_policy reject.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v python3 >/dev/null || { echo "SKIP: python3 is needed to send the sessions"; exit 77; }
recd_tmpdir daemon_ring_player
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"

cat >"$tmp/recd.yaml" <<YAML
listen:
  - tcp://127.0.0.1:0
output:
  root: $tmp/out
metrics:
  listen: 127.0.0.1:0
flush:
  interval: 50ms
ring:
  all: true
  window: 1h
  session_memory: 64KiB
YAML
start_recd "$tmp/log" --config "$tmp/recd.yaml"
tcp=${tcp#tcp://}

# player.py send ADDR KEY ... / check ROOT MANIFEST LABEL TIMELINE FROM TO: the sessions and the
# check of a save. A timeline walks, drives (model 411, seat 0) and walks again, in thirds:
# "short" every 100 ms (0..1000, 1100..3000, 3100..5000), "long" every 10 ms (500 states each).
cat >"$tmp/player.py" <<'PY'
import json, os, socket, struct, sys
START = 1763213398000
def stretches(name):  # each stretch is one part: its kind and its times
    if name == "short":
        return [("onfoot", range(0, 1001, 100)), ("vehicle", range(1100, 3001, 100)),
                ("onfoot", range(3100, 5001, 100))]
    if name == "idle":  # the session goes idle (rotation.idle_timeout) between the two
        return [("onfoot", range(0, 501, 100)), ("onfoot", range(600, 1001, 100))]
    if name == "reject":  # another vehicle model; its first state comes too early (dropped)
        return [("vehicle", range(0, 501, 100)), ("vehicle", range(600, 1001, 100), 522)]
    return [("onfoot", range(0, 5000, 10)), ("vehicle", range(5000, 10000, 10)),
            ("onfoot", range(10000, 15000, 10))]
timeline = lambda name: [(st[0], t) for st in stretches(name) for t in st[1]]
model_of = lambda stretch: stretch[2] if len(stretch) > 2 else 411
x_of = lambda kind, t: 1000.0 + t / 100 if kind == "onfoot" else 1010.0 + t / 50
f32 = lambda *v: struct.pack("<%df" % len(v), *v)

def jstate(key, kind, t, save, model=411):
    if kind == "onfoot":
        m = {"left_right": 0, "up_down": -128, "keys": 8,
             "position": [x_of(kind, t), -1000.0, 13.5], "rotation": [1.0, 0.0, 0.0, 0.0],
             "health": 100, "armour": 0, "weapon": 0,
             "additional_key": 0, "special_action": 0, "velocity": [0.0, 0.0, 0.0],
             "surf_offset": [0.0, 0.0, 0.0], "surf_id": 0, "anim_id": 1189,
             "anim_flags": {"frame_delta": 4, "loop": False, "lock_x": False, "lock_y": False,
                            "freeze": False, "time": 8}}
    else:
        m = {"vehicle_id": 7, "left_right": 0, "up_down": 0, "keys": 8,
             "rotation": [1.0, 0.0, 0.0, 0.0], "position": [x_of(kind, t), -1000.0, 13.5],
             "velocity": [0.5, 0.0, 0.0], "vehicle_health": 1000.0, "driver_health": 100,
             "driver_armour": 0, "weapon": 0, "additional_key": 0, "siren": 0, "landing_gear": 0,
             "trailer_id": 0, "hydra_thrust": [0, 0], "vehicle_model": model, "seat": 0}
    m.update(type="state", session=key, t=t)
    if save:
        m["save"] = True
    return json.dumps(m).encode() + b"\n"

def frame(ftype, flags, key, body):
    body = bytes([len(key)]) + key.encode() + body
    return struct.pack("<BBBBI", 0xD7, 1, ftype, flags, len(body)) + body

def bstate(key, kind, t, save):
    if kind == "vehicle":
        p = struct.pack("<BHB", 1, 411, 0) + struct.pack("<HhhH", 7, 0, 0, 8) + f32(1, 0, 0, 0)
        p += f32(x_of(kind, t), -1000.0, 13.5) + f32(0.5, 0, 0) + f32(1000.0)
        p += bytes([100, 0, 0, 0, 0]) + struct.pack("<HI", 0, 0)
    else:
        p = struct.pack("<BhhH", 2, 0, -128, 8) + f32(x_of(kind, t), -1000.0, 13.5)
        p += f32(1, 0, 0, 0) + bytes([100, 0, 0, 0]) + f32(0, 0, 0) + f32(0, 0, 0)
        p += struct.pack("<HHH", 0, 1189, 0x8004)
    return frame(2, 0x02 | (0x10 if save else 0), key, struct.pack("<Q", t) + p)

def finish(s):
    s.shutdown(socket.SHUT_WR)
    s.settimeout(10)
    reply = b""
    while True:
        b = s.recv(4096)
        if not b:
            break
        reply += b
    if reply:
        sys.exit("daemon replied: %r" % reply)

def send(addr, key):
    host, port = addr.rsplit(":", 1)
    s = socket.create_connection((host, int(port)))
    if key == "p-wire":  # NDJSON, ring: true, a save message right after t = 4000
        out = [json.dumps({"type": "open", "session": key, "format": "samp-player", "ring": True,
                           "start_time": START}).encode() + b"\n"]
        for kind, t in timeline("short"):
            out.append(jstate(key, kind, t, False))
            if t == 4000:
                out.append(json.dumps({"type": "save", "session": key, "last_ms": 3500,
                                       "label": "wire-clip"}).encode() + b"\n")
        out.append(json.dumps({"type": "close", "session": key}).encode() + b"\n")
    elif key in ("p-flag", "p-bound"):  # binary frames, ring flag, the save flag on one state
        out = [frame(1, 0x08, key, struct.pack("<BqB", 5, 0, 0))]
        line = timeline("short" if key == "p-flag" else "long")
        at = 4000 if key == "p-flag" else line[-1][1]
        out += [bstate(key, kind, t, t == at) for kind, t in line]
        out.append(frame(5, 0, key, b""))
    elif key == "p-reject":  # NDJSON, ring: true, rec.time_policy reject; the flag on the last
        out = [json.dumps({"type": "open", "session": key, "format": "samp-player", "ring": True,
                           "start_time": START}).encode() + b"\n"]
        first, second = stretches("reject")
        out += [jstate(key, first[0], t, False) for t in first[1]]
        out.append(jstate(key, second[0], 100, False, second[2]))  # switches, and is dropped
        out += [jstate(key, second[0], t, t == second[1][-1], second[2]) for t in second[1]]
        out.append(json.dumps({"type": "close", "session": key}).encode() + b"\n")
    elif key == "p-idle":  # NDJSON, ring: true; waits for the session to idle, then the flag
        out = [json.dumps({"type": "open", "session": key, "format": "samp-player", "ring": True,
                           "start_time": START}).encode() + b"\n"]
        first, second = stretches("idle")
        s.sendall(b"".join(out + [jstate(key, first[0], t, False) for t in first[1]]))
        sys.stdout.write("sent\n")
        sys.stdout.flush()
        sys.stdin.readline()
        out = [jstate(key, second[0], t, t == second[1][-1]) for t in second[1]]
        out.append(json.dumps({"type": "close", "session": key}).encode() + b"\n")
    else:  # p-http: NDJSON without ring: true (ring.all gives it one), held open for the POST
        out = [json.dumps({"type": "open", "session": key, "format": "samp-player",
                           "start_time": START}).encode() + b"\n"]
        out += [jstate(key, kind, t, False) for kind, t in timeline("short")]
    data = b"".join(out)
    half = len(data) // 2  # two writes: the daemon reads the save among states still arriving
    s.sendall(data[:half])
    s.sendall(data[half:])
    if key == "p-http":
        sys.stdout.write("sent\n")
        sys.stdout.flush()
        sys.stdin.readline()
        s.sendall(json.dumps({"type": "close", "session": key}).encode() + b"\n")
    finish(s)

def check(root, manifest, label, line, first, last, start_time):
    parts = [(st[0], [t for t in st[1] if first <= t <= last], model_of(st))
             for st in stretches(line)]
    parts = [part for part in parts if part[1]]
    m = json.load(open(manifest))
    assert m["format"] == "samp-player" and m["complete"] and not m["recovered"], m
    if start_time is not None:
        assert m["start_time"] == start_time + first, (m["start_time"], start_time + first)
    assert len(m["parts"]) == len(parts), "%d parts, expected %d" % (len(m["parts"]), len(parts))
    base = os.path.dirname(os.path.relpath(manifest, root))
    for i, ((kind, times, model), p) in enumerate(zip(parts, m["parts"])):
        name = label + (".rec" if i == 0 else "-%d.rec" % i)
        assert p["path"] == base + "/" + name, (p["path"], name)
        assert p["type"] == kind and p["complete"], p
        assert p["start_ms"] == times[0] - first, (p, times[0] - first)
        assert p["duration_ms"] == times[-1] - times[0], (p, times)
        if kind == "vehicle":
            assert p["vehicle_model"] == model and p["seat"] == 0, p
        else:
            assert "vehicle_model" not in p and "seat" not in p, p
        data = open(os.path.join(root, p["path"]), "rb").read()
        size, xoff = (67, 28) if kind == "vehicle" else (72, 10)
        assert struct.unpack_from("<II", data, 0) == (1000, 1 if kind == "vehicle" else 2), p
        assert len(data) == 8 + size * len(times), (p, len(data), len(times))
        for j, t in enumerate(times):
            bt = struct.unpack_from("<I", data, 8 + j * size)[0]
            x = struct.unpack_from("<f", data, 8 + j * size + xoff)[0]
            assert bt == t - times[0] and abs(x - x_of(kind, t)) < 1e-3, (p, j, bt, x)
    print(" ".join(p["path"] for p in m["parts"]))

if sys.argv[1] == "send":
    for key in sys.argv[3:]:
        send(sys.argv[2], key)
else:
    root, manifest, label, line, first, last = sys.argv[2:8]
    start = int(sys.argv[8]) if len(sys.argv) > 8 else None
    check(root, manifest, label, line, int(first), int(last), start)
PY

# metric NAME: the sum of NAME's series whose line starts with NAME (labels included).
metric() { python3 "$(dirname "$0")/../shell/metric.py" "$metrics" "$1"; }

python3 "$tmp/player.py" send "$tcp" p-wire p-flag p-bound || fail "send the ring sessions"
dropped=$(metric 'recd_samples_dropped_total{reason="ring_session_memory"}')
[ "${dropped:-0}" -gt 0 ] && [ "$dropped" -lt 1500 ] ||
    fail "p-bound: '$dropped' samples counted as let go at ring.session_memory, expected 1..1499"

# p-http stays open while its save is asked over HTTP, once recd has taken all 51 states.
mkfifo "$tmp/hold"
python3 "$tmp/player.py" send "$tcp" p-http <"$tmp/hold" >"$tmp/held.out" &
sender=$!
exec 3>"$tmp/hold"
for _ in $(seq $((100 * ${RECD_TEST_TIME_SCALE:-1}))); do
    python3 - "$metrics" >"$tmp/api" 2>/dev/null <<'PY'
import json, sys, urllib.request
s = json.load(urllib.request.urlopen("http://%s/api/sessions" % sys.argv[1], timeout=10))
print(" ".join("%s:%s:%s" % (x["key"], x["samples"], x["ring"]["active"]) for x in s["sessions"]))
PY
    grep -q "p-http:51:True" "$tmp/api" && break
    sleep 0.1
done
grep -q "p-http:51:True" "$tmp/api" ||
    fail "p-http: not 51 states in an active ring: $(cat "$tmp/api")"
post() { # PATH: prints the status and the text
    python3 - "$metrics" "$1" 2>&1 <<'PY'
import sys, urllib.error, urllib.request
req = urllib.request.Request("http://%s%s" % (sys.argv[1], sys.argv[2]), data=b"", method="POST")
try:
    r = urllib.request.urlopen(req, timeout=10)
    print(r.status, r.read().decode().strip())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode().strip())
PY
}
got=$(post "/sessions/p-http/save?last=4s&label=http-clip")
[ "${got%% *}" = 200 ] || fail "POST the save of p-http: '$got'"
got=$(post "/sessions/p-http/save?last=4s&label=http-clip")
[ "${got%% *}" = 200 ] || fail "POST the save of p-http again, same label: '$got'"
echo >&3
exec 3>&-
wait "$sender" || fail "the held session p-http"

kill -TERM "$recd_pid"
wait "$recd_pid" || fail "recd exited with $? after SIGTERM"
recd_pid=

# check_save KEY LABEL TIMELINE FIRST LAST [START_TIME]: the save's manifest and parts under $out
# are what check says, and nothing but saves is written for the session.
out=$tmp/out
check_save() {
    local key=$1 label=$2 dir="$out/samp-player/$1" manifest parts p
    manifest=$(find "$dir" -name "$label.json" -type f 2>/dev/null)
    [ "$(printf '%s\n' "$manifest" | grep -c .)" -eq 1 ] ||
        { fail "$key: manifests '$manifest'"; return; }
    label=$(basename "$manifest" .json) # a flagged save's label: replay-UNIXMS
    shift 2
    parts=$(python3 "$tmp/player.py" check "$out" "$manifest" "$label" "$@" \
        2>"$tmp/check.err") ||
        { fail "$key: $(tail -1 "$tmp/check.err")"; return; }
    for p in $parts; do
        "$RECTOOL" verify "$out/$p" >/dev/null 2>&1 || fail "$key: rectool verify $p"
    done
    want=$( (cd "$dir" && for m in *.json; do echo "$m"; python3 -c 'import json, sys
for p in json.load(open(sys.argv[1]))["parts"]: print(p["path"].rsplit("/", 1)[1])' "$m"; done) |
        sort | tr '\n' ' ')
    files=$(find "$dir" -type f -printf '%f\n' | sort | tr '\n' ' ')
    [ "$files" = "$want" ] || fail "$key: files '$files', expected '$want'"
    "$RECTOOL" npc script "$manifest" --dialect samp -o "$tmp/$key.pwn" >/dev/null 2>&1 ||
        fail "$key: rectool npc script"
}
check_save p-wire wire-clip short 500 4000 1763213398000
check_save p-flag 'replay-*' short 0 4000
check_save p-http http-clip short 1000 5000 1763213398000
# The same label again: the second save's manifest and parts take free names (-1, -2 ...), and
# hold the same window.
python3 - "$tmp/out" "$tmp/out/samp-player/p-http/http-clip.json" \
    "$tmp/out/samp-player/p-http/http-clip-1.json" 2>"$tmp/check.err" <<'PY' ||
import json, sys
root = sys.argv[1]
a, b = (json.load(open(f))["parts"] for f in sys.argv[2:4])
assert len(a) == len(b) == 3, (a, b)
assert not {p["path"] for p in a} & {p["path"] for p in b}, (a, b)
for p, q in zip(a, b):
    key = lambda p: (p["type"], p["start_ms"], p["duration_ms"])
    assert key(p) == key(q), (p, q)
    assert open(root + "/" + p["path"], "rb").read() == open(root + "/" + q["path"], "rb").read(), q
PY
    fail "p-http, the second save labelled http-clip: $(tail -1 "$tmp/check.err")"
# p-bound kept its newest states: the save holds the last 1500 - dropped of them.
first=$((dropped * 10)) # the long timeline: state i at i * 10 ms
check_save p-bound 'replay-*' long "$first" 14990

# A ring session that idles (rotation.idle_timeout) starts a part when its states come again,
# as it would start a file (p-idle).
sed -e "s|root: $tmp/out|root: $tmp/idle|" "$tmp/recd.yaml" >"$tmp/idle.yaml"
printf 'rotation:\n  idle_timeout: 1s\nrec:\n  time_policy: reject\n' >>"$tmp/idle.yaml"
start_recd "$tmp/log" --config "$tmp/idle.yaml"
tcp=${tcp#tcp://}
# Under rec.time_policy reject, a state that would start a part (another vehicle model) and is
# dropped for its time still has the next state start one.
python3 "$tmp/player.py" send "$tcp" p-reject || fail "send p-reject"
mkfifo "$tmp/hold-idle"
python3 "$tmp/player.py" send "$tcp" p-idle <"$tmp/hold-idle" >"$tmp/idle.out" &
sender=$!
exec 3>"$tmp/hold-idle"
for _ in $(seq $((300 * ${RECD_TEST_TIME_SCALE:-1}))); do
    [ "$(metric recd_sessions_dormant 2>/dev/null)" = 1 ] && break
    sleep 0.1
done
[ "$(metric recd_sessions_dormant)" = 1 ] || fail "p-idle did not go idle"
echo >&3
exec 3>&-
wait "$sender" || fail "the session p-idle"
kill -TERM "$recd_pid"
wait "$recd_pid" || fail "recd exited with $? after SIGTERM"
recd_pid=
out=$tmp/idle
check_save p-idle 'replay-*' idle 0 1000 1763213398000
check_save p-reject 'replay-*' reject 0 1000 1763213398000

if [ "$failures" -ne 0 ]; then
    cat "$tmp/log" >&2
    exit 1
fi
echo "instant replay of samp-player sessions: each save is a recording of its own"
