# SPDX-License-Identifier: MIT
# recd instant replay, saved by a sample's own flag: a samp-onfoot ring session over NDJSON
# ("save": true on its state at t = 1000) and one over binary frames (flag bit 4 on its state at
# t = 500) each get a replay-UNIXMS.rec holding the whole window up to and with the flagged
# sample, which rectool verify accepts; a session without a ring ignores the flag (no file, no
# error) and the flag on a close frame is refused.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v python3 >/dev/null || { echo "SKIP: python3 is needed to send the sessions"; exit 77; }
recd_tmpdir daemon_ring_flag
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"

cat >"$tmp/recd.yaml" <<YAML
listen:
  - tcp://127.0.0.1:0
output:
  root: $tmp/rec
ring:
  window: 1h
YAML
start_recd "$tmp/log" --config "$tmp/recd.yaml"
tcp=${tcp#tcp://}

python3 - "$tcp" <<'PY' || fail "the senders"
import json, socket, struct, sys
host, port = sys.argv[1].rsplit(":", 1)
def connect():
    return socket.create_connection((host, int(port)))
def jstate(key, t, save):
    m = {"type": "state", "session": key, "t": t, "left_right": 0, "up_down": 0, "keys": 0,
         "position": [1000.0 + t / 100, 5.0, 3.0], "rotation": [1.0, 0.0, 0.0, 0.0],
         "health": 100, "armour": 0, "weapon": 0, "additional_key": 0, "special_action": 0,
         "velocity": [0.0, 0.0, 0.0], "surf_offset": [0.0, 0.0, 0.0], "surf_id": 0, "anim_id": 0,
         "anim_flags": {"frame_delta": 0, "loop": False, "lock_x": False, "lock_y": False,
                        "freeze": False, "time": 0}}
    if save:
        m["save"] = True
    return json.dumps(m).encode() + b"\n"
f32 = lambda *v: struct.pack("<%df" % len(v), *v)
def frame(ftype, flags, key, body):
    body = bytes([len(key)]) + key.encode() + body
    return struct.pack("<BBBBI", 0xD7, 1, ftype, flags, len(body)) + body
def bstate(key, t, save):
    p = struct.pack("<hhH", 0, 0, 0) + f32(1000.0 + t / 100, 5.0, 3.0) + f32(1, 0, 0, 0)
    p += bytes([100, 0, 0, 0]) + f32(0, 0, 0) + f32(0, 0, 0) + struct.pack("<HHH", 0, 0, 0)
    return frame(2, 0x02 | (0x10 if save else 0), key, struct.pack("<Q", t) + p)
def finish(s, want_error=None):
    s.shutdown(socket.SHUT_WR)
    s.settimeout(10)
    reply = b""
    while True:
        b = s.recv(4096)
        if not b:
            break
        reply += b
    if want_error is None and reply:
        sys.exit("daemon replied: %r" % reply)
    if want_error is not None and want_error not in reply:
        sys.exit("no error %r, got %r" % (want_error, reply))
s = connect()
out = json.dumps({"type": "open", "session": "j", "format": "samp-onfoot", "ring": True}).encode() + b"\n"
out += b"".join(jstate("j", t, t == 1000) for t in range(0, 2000, 50))
out += json.dumps({"type": "close", "session": "j"}).encode() + b"\n"
s.sendall(out)
finish(s)
s = connect()
out = frame(1, 0x08, "b", struct.pack("<BqB", 1, 0, 0))
out += b"".join(bstate("b", t, t == 500) for t in range(0, 1000, 50)) + frame(5, 0, "b", b"")
s.sendall(out)
finish(s)
s = connect() # no ring: the flag is ignored, the session records as usual
out = frame(1, 0, "n", struct.pack("<BqB", 1, 0, 0))
out += b"".join(bstate("n", t, t == 500) for t in range(0, 1000, 50)) + frame(5, 0, "n", b"")
s.sendall(out)
finish(s)
s = connect()
s.sendall(frame(1, 0x08, "c", struct.pack("<BqB", 1, 0, 0)) + frame(5, 0x10, "c", b""))
finish(s, b"save flag")
PY
kill -TERM "$recd_pid"
wait "$recd_pid" || fail "recd exited with $? after SIGTERM"
recd_pid=

# check.py FILE N: N blocks 50 ms apart from 0, x = 1000 + t/100 of the original times 0..
cat >"$tmp/check.py" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
n = int(sys.argv[2])
assert len(data) == 8 + n * 72, "%d bytes, expected %d blocks" % (len(data), n)
for i in range(n):
    t = struct.unpack_from("<I", data, 8 + i * 72)[0]
    x = struct.unpack_from("<f", data, 8 + i * 72 + 10)[0]
    assert t == i * 50 and abs(x - (1000.0 + i * 50 / 100)) < 1e-3, (i, t, x)
PY
for want in "j 21" "b 11"; do
    set -- $want
    f=$(find "$tmp/rec/samp-onfoot/$1" -name 'replay-*.rec')
    [ "$(echo "$f" | grep -c .)" = 1 ] || { fail "session $1: expected one replay-*.rec, got: $f"; continue; }
    expect 0 "$RECTOOL" verify "$f"
    python3 "$tmp/check.py" "$f" "$2" 2>"$tmp/check.err" || fail "session $1: $(tail -1 "$tmp/check.err")"
done
[ -z "$(find "$tmp/rec" -path '*/n/*replay-*')" ] || fail "session n (no ring) saved a replay"
[ -n "$(find "$tmp/rec/samp-onfoot/n" -name '*.rec')" ] || fail "session n (no ring) wrote no recording"
if [ "$failures" -ne 0 ]; then
    cat "$tmp/log" >&2
    exit 1
fi
echo "instant replay: a sample's save flag saves its ring session's window"
