# SPDX-License-Identifier: MIT
# recd instant replay: a session opened with ring: true writes nothing until a save; a save sent
# between samples that keep arriving writes a valid .rec named by its label that holds exactly
# the asked window (NDJSON and binary frames); the ring's memory is in the metrics; a save for a
# session without a ring is refused. POST /sessions/KEY/save on the metrics listener does the
# same, with the auth token when one is set.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v python3 >/dev/null || { echo "SKIP: python3 is needed to send the sessions"; exit 77; }
recd_tmpdir daemon_ring
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
  window: 10s
  session_memory: 64KiB
YAML
start_recd "$tmp/log" --config "$tmp/recd.yaml"
tcp=${tcp#tcp://}

# send.py ADDR KEY ENCODING: on foot every 50 ms from 0 to 20000 ms (x = 1000 + t/100), a save
# of the last 5000 ms labelled KEY-clip right after t = 15000, and the same session's close.
cat >"$tmp/send.py" <<'PY'
import json, socket, struct, sys
host, port = sys.argv[1].rsplit(":", 1)
key, enc = sys.argv[2], sys.argv[3]
s = socket.create_connection((host, int(port)))
f32 = lambda *v: struct.pack("<%df" % len(v), *v)
def frame(ftype, flags, body):
    return struct.pack("<BBBBI", 0xD7, 1, ftype, flags, len(body)) + body
keyed = lambda body: bytes([len(key)]) + key.encode() + body
out = []
def state(t):
    if enc == "ndjson":
        return json.dumps({"type": "state", "session": key, "t": t, "left_right": 0, "up_down": 0,
            "keys": 0, "position": [1000.0 + t / 100, 5.0, 3.0], "rotation": [1.0, 0.0, 0.0, 0.0],
            "health": 100, "armour": 0, "weapon": 0, "additional_key": 0, "special_action": 0,
            "velocity": [0.0, 0.0, 0.0], "surf_offset": [0.0, 0.0, 0.0], "surf_id": 0, "anim_id": 0,
            "anim_flags": {"frame_delta": 0, "loop": False, "lock_x": False, "lock_y": False,
                           "freeze": False, "time": 0}}).encode() + b"\n"
    p = struct.pack("<hhH", 0, 0, 0) + f32(1000.0 + t / 100, 5.0, 3.0) + f32(1, 0, 0, 0)
    p += bytes([100, 0, 0, 0]) + f32(0, 0, 0) + f32(0, 0, 0) + struct.pack("<HHH", 0, 0, 0)
    return frame(2, 2, keyed(struct.pack("<Q", t) + p))
label = key + "-clip"
if enc == "ndjson":
    out.append(json.dumps({"type": "open", "session": key, "format": "samp-onfoot", "ring": True}).encode() + b"\n")
    save = json.dumps({"type": "save", "session": key, "last_ms": 5000, "label": label}).encode() + b"\n"
    close = json.dumps({"type": "close", "session": key}).encode() + b"\n"
else:
    out.append(frame(1, 0x08, keyed(struct.pack("<BqB", 1, 0, 0))))
    save = frame(6, 0, keyed(struct.pack("<IB", 5000, len(label)) + label.encode()))
    close = frame(5, 0, keyed(b""))
for t in range(0, 20001, 50):
    out.append(state(t))
    if t == 15000:
        out.append(save)
data = b"".join(out)
half = len(data) // 2  # two writes: the daemon reads the save among samples still arriving
s.sendall(data[:half])
s.sendall(data[half:])
if len(sys.argv) > 4:  # keep the session open and its ring full: the metrics are read now
    sys.stdout.write("sent\n")
    sys.stdout.flush()
    sys.stdin.readline()
s.sendall(close)
s.shutdown(socket.SHUT_WR)
s.settimeout(10)
reply = s.recv(4096)
if reply:
    sys.exit("daemon replied: %r" % reply)
PY

# check.py FILE: blocks every 50 ms from 0 to 5000 whose x says they were sent at 10000..15000.
cat >"$tmp/check.py" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
assert (len(data) - 8) % 72 == 0, len(data)
n = (len(data) - 8) // 72
assert n == 101, "%d blocks, expected 101 (10000..15000 ms every 50 ms)" % n
for i in range(n):
    t = struct.unpack_from("<I", data, 8 + i * 72)[0]
    x = struct.unpack_from("<f", data, 8 + i * 72 + 10)[0]
    assert t == i * 50, (i, t)
    assert abs(x - (1000.0 + (10000 + i * 50) / 100)) < 1e-3, (i, x)
PY

python3 "$tmp/send.py" "$tcp" r-ndjson ndjson || fail "send the NDJSON ring session"
python3 "$tmp/send.py" "$tcp" r-binary binary || fail "send the binary ring session"
# While a ring session is open, its memory shows in the metrics, within ring.session_memory.
# wait_metric NAME OP VALUE: polls /metrics (up to 10 s x $RECD_TEST_TIME_SCALE) until NAME (the sum
# of its series) OP VALUE.
wait_metric() {
    local v
    for _ in $(seq $((100 * ${RECD_TEST_TIME_SCALE:-1}))); do
        v=$(python3 "$(dirname "$0")/../shell/metric.py" "$metrics" "$1")
        [ "${v%.*}" "$2" "$3" ] 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
mkfifo "$tmp/hold"
python3 "$tmp/send.py" "$tcp" r-held ndjson hold <"$tmp/hold" >"$tmp/held.out" &
sender=$!
exec 3>"$tmp/hold"
for _ in $(seq 100); do grep -q sent "$tmp/held.out" 2>/dev/null && break; sleep 0.1; done
wait_metric recd_ring_sessions -eq 1 || fail "recd_ring_sessions did not come to 1 with r-held open"
python3 - "$metrics" >"$tmp/metrics" <<'PY' || fail "read the metrics"
import sys, urllib.request
print(urllib.request.urlopen("http://%s/metrics" % sys.argv[1], timeout=10).read().decode())
PY
ring_bytes=$(sed -n 's/^recd_ring_bytes \([0-9]*\)$/\1/p' "$tmp/metrics")
ring_sessions=$(sed -n 's/^recd_ring_sessions \([0-9]*\)$/\1/p' "$tmp/metrics")
[ "${ring_sessions:-x}" = 1 ] || fail "recd_ring_sessions is '$ring_sessions' with one ring session open"
[ -n "$ring_bytes" ] && [ "$ring_bytes" -gt 0 ] && [ "$ring_bytes" -le 65536 ] ||
    fail "recd_ring_bytes is '$ring_bytes', not within 1..64KiB"
# post.py METRICS PATH [TOKEN]: prints the status and the text.
cat >"$tmp/post.py" <<'PY'
import sys, urllib.error, urllib.request
req = urllib.request.Request("http://%s%s" % (sys.argv[1], sys.argv[2]), data=b"", method="POST")
if len(sys.argv) > 3:
    req.add_header("Authorization", "Bearer " + sys.argv[3])
try:
    r = urllib.request.urlopen(req, timeout=10)
    print(r.status, r.read().decode().strip())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode().strip())
PY
post() { python3 "$tmp/post.py" "$@" 2>&1; }
expect_post() { # STATUS PATH [TOKEN]
    want=$1
    shift
    got=$(post "$metrics" "$@")
    [ "${got%% *}" = "$want" ] || fail "POST $1: '$got', expected $want"
}
expect_post 200 "/sessions/r-held/save?last=2s&label=http-clip"
expect_post 200 "/sessions/r-held/save?last=1h"
expect_post 400 "/sessions/r-held/save"
expect_post 400 "/sessions/r-held/save?last=2s&label=.x"
# A label longer than a key is refused, not replaced by a default name.
expect_post 400 "/sessions/r-held/save?last=2s&label=$(printf 'L%.0s' $(seq 100))"
expect_post 404 "/sessions/nobody/save?last=2s"
got=$(python3 -c 'import sys,urllib.request,urllib.error
try: urllib.request.urlopen("http://%s/sessions/r-held/save?last=2s" % sys.argv[1], timeout=10)
except urllib.error.HTTPError as e: print(e.code)' "$metrics")
[ "$got" = 405 ] || fail "GET of a save: '$got', expected 405"
echo >&3
exec 3>&-
wait "$sender" || fail "the held ring session"
grep -q '^recd_ring_saves_total' "$tmp/metrics" || fail "no recd_ring_saves_total"

# A save for a session without a ring is refused with an error reply.
python3 - "$tcp" >"$tmp/refused" 2>&1 <<'PY'
import json, socket, sys
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)))
s.sendall(b'{"type":"open","session":"plain","format":"samp-onfoot"}\n'
          b'{"type":"save","session":"plain","last_ms":1000,"label":"x"}\n')
s.settimeout(10)
print(s.recv(4096).decode())
PY
grep -q "not opened with ring" "$tmp/refused" || fail "a save without a ring: $(cat "$tmp/refused")"
expect_post 409 "/sessions/plain/save?last=2s"

kill -TERM "$recd_pid"
wait "$recd_pid" || fail "recd exited with $? after SIGTERM"
recd_pid=
for key in r-ndjson r-binary r-held; do
    files=$(cd "$tmp/out" && find . -path "*/$key/*" -type f -name "$key-clip.rec")
    [ "$files" = "./samp-onfoot/$key/$key-clip.rec" ] || { fail "$key: files '$files', expected the clip"; continue; }
    f="$tmp/out/samp-onfoot/$key/$key-clip.rec"
    "$RECTOOL" verify "$f" >/dev/null 2>&1 || fail "$key: rectool verify the clip"
    python3 "$tmp/check.py" "$f" 2>"$tmp/check.err" || fail "$key: $(tail -1 "$tmp/check.err")"
done
others=$(cd "$tmp/out" && find . -type f ! -name '*-clip.rec' | sort | tr '\n' ' ')
case "$others" in
    "./samp-onfoot/r-held/replay-"*".rec ") ;;
    *) fail "files besides the clips: '$others' (expected r-held's one replay-*)" ;;
esac
# r-held's ring holds its last 10 s (ring.window): http-clip its last 2 s, replay-* all 10 s.
n=$(( ($(stat -c %s "$tmp/out/samp-onfoot/r-held/http-clip.rec") - 8) / 72 ))
[ "$n" -eq 41 ] || fail "http-clip holds $n blocks, not 41 (2 s every 50 ms)"
for f in "$tmp"/out/samp-onfoot/r-held/*.rec; do
    "$RECTOOL" verify "$f" >/dev/null 2>&1 || fail "rectool verify $(basename "$f")"
done
n=$(( ($(stat -c %s "$tmp"/out/samp-onfoot/r-held/replay-*.rec) - 8) / 72 ))
[ "$n" -eq 201 ] || fail "the 1h save holds $n blocks, not the 201 of the 10 s window"

# With auth.token set, a save needs it.
cat >>"$tmp/recd.yaml" <<YAML
auth:
  token: 0123456789abcdef-ring
YAML
start_recd "$tmp/log" --config "$tmp/recd.yaml"
tcp=${tcp#tcp://}
python3 - "$tcp" <<'PY' || fail "open a ring session with the token"
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)))
s.sendall(b'{"type":"open","session":"tok","format":"samp-vehicle","ring":true,"auth":"0123456789abcdef-ring"}\n'
          b'{"type":"state","session":"tok","t":5,"vehicle_id":1,"left_right":0,"up_down":0,"keys":0,'
          b'"rotation":[1.0,0.0,0.0,0.0],"position":[1.0,2.0,3.0],"velocity":[0.0,0.0,0.0],'
          b'"vehicle_health":1000.0,"driver_health":100,"driver_armour":0,"weapon":0,"additional_key":0,'
          b'"siren":0,"landing_gear":0,"trailer_id":0,"hydra_thrust":[0,0]}\n')
PY
wait_metric recd_samples_total -ge 1 || fail "recd did not count the ring session's state"
expect_post 401 "/sessions/tok/save?last=1s&label=t1"
expect_post 401 "/sessions/tok/save?last=1s&label=t1" wrong-token
expect_post 200 "/sessions/tok/save?last=1s&label=t1" 0123456789abcdef-ring
kill -TERM "$recd_pid"
wait "$recd_pid" || fail "recd exited with $? after SIGTERM"
recd_pid=
"$RECTOOL" verify "$tmp/out/samp-vehicle/tok/t1.rec" >/dev/null 2>&1 || fail "the token-saved clip"

if [ "$failures" -ne 0 ]; then
    cat "$tmp/log" >&2
    exit 1
fi
echo "instant replay: saves hold exactly the asked window"
