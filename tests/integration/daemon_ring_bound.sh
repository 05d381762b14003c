# SPDX-License-Identifier: MIT
# recd instant replay at its memory bounds: six ring sessions on one connection, each sent more
# than its share of ring.process_memory (1 MiB) and of ring.session_memory (256 KiB), and a
# seventh opened once the rings are full. recd_ring_bytes stays within ring.process_memory, what
# the bounds let go is counted in recd_samples_dropped_total{reason="ring_session_memory"} and
# {reason="ring_process_memory"}, the seventh ring's samples are dropped without closing the
# connection, saves still write clips rectool verify accepts, and closing the sessions gives the
# memory back.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v python3 >/dev/null || { echo "SKIP: python3 is needed to send the sessions"; exit 77; }
recd_tmpdir daemon_ring_bound
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"

cat >"$tmp/recd.yaml" <<YAML
listen:
  - tcp://127.0.0.1:0
output:
  root: $tmp/out
metrics:
  listen: 127.0.0.1:0
ring:
  window: 1h
  session_memory: 256KiB
  process_memory: 1MiB
YAML
start_recd "$tmp/log" --config "$tmp/recd.yaml"
tcp=${tcp#tcp://}

# send.py ADDR: binary frames on one connection. Rings r1..r6 each get 5000 on-foot samples, 10 ms
# apart and interleaved (360 000 bytes of blocks each: more than 256 KiB, and six of them more
# than 1 MiB); then ring "late" opens and gets 10. It prints "sent" once all is sent, waits for a
# line on stdin, closes the seven sessions and checks that recd never answered with an error.
cat >"$tmp/send.py" <<'PY'
import socket, struct, sys
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)))
f32 = lambda *v: struct.pack("<%df" % len(v), *v)
def frame(ftype, flags, key, body):
    body = bytes([len(key)]) + key.encode() + body
    return struct.pack("<BBBBI", 0xD7, 1, ftype, flags, len(body)) + body
def state(key, t):
    p = struct.pack("<hhH", 0, 0, 0) + f32(1000.0 + t / 100, 5.0, 3.0) + f32(1, 0, 0, 0)
    p += bytes([100, 0, 0, 0]) + f32(0, 0, 0) + f32(0, 0, 0) + struct.pack("<HHH", 0, 0, 0)
    return frame(2, 2, key, struct.pack("<Q", t) + p)
opening = lambda key: frame(1, 0x08, key, struct.pack("<BqB", 1, 0, 0))
keys = ["r%d" % i for i in range(1, 7)]
out = [opening(k) for k in keys]
for i in range(5000):
    out += [state(k, i * 10) for k in keys]
s.sendall(b"".join(out))
s.sendall(opening("late") + b"".join(state("late", i * 10) for i in range(10)))
sys.stdout.write("sent\n")
sys.stdout.flush()
sys.stdin.readline()
s.sendall(b"".join(frame(5, 0, k, b"") for k in keys + ["late"]))
s.shutdown(socket.SHUT_WR)
s.settimeout(10)
reply = s.recv(4096)
if reply:
    sys.exit("daemon replied: %r" % reply)
PY

# metric NAME: the sum of NAME's series whose line starts with NAME (labels included, e.g.
# 'recd_samples_dropped_total{reason="ring_process_memory"}'), as an integer.
metric() { python3 "$(dirname "$0")/../shell/metric.py" "$metrics" "$1"; }
# wait_metric NAME OP VALUE: polls (up to 10 s x $RECD_TEST_TIME_SCALE) until NAME OP VALUE
# (OP: -ge or -eq).
wait_metric() {
    local v
    for _ in $(seq $((100 * ${RECD_TEST_TIME_SCALE:-1}))); do
        v=$(metric "$1")
        case $2 in
            -ge) [ "$v" -ge "$3" ] ;;
            *) [ "$v" -eq "$3" ] ;;
        esac 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
post() { # STATUS PATH: a POST on the metrics listener must answer STATUS
    got=$(python3 - "$metrics" "$2" <<'PY'
import sys, urllib.error, urllib.request
req = urllib.request.Request("http://%s%s" % (sys.argv[1], sys.argv[2]), data=b"", method="POST")
try:
    r = urllib.request.urlopen(req, timeout=10)
    print(r.status, r.read().decode().strip())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode().strip())
PY
)
    [ "${got%% *}" = "$1" ] || fail "POST $2: '$got', expected $1"
}

mkfifo "$tmp/hold"
python3 "$tmp/send.py" "$tcp" <"$tmp/hold" >"$tmp/sent.out" &
sender=$!
exec 3>"$tmp/hold"
for _ in $(seq $((300 * ${RECD_TEST_TIME_SCALE:-1}))); do
    grep -q sent "$tmp/sent.out" 2>/dev/null && break
    kill -0 "$sender" 2>/dev/null || break
    sleep 0.1
done
grep -q sent "$tmp/sent.out" || fail "the sender did not send everything"
# Every sample of r1..r6 is accepted; the ten of "late" are dropped and counted.
wait_metric recd_samples_total -ge 30000 || fail "recd_samples_total did not reach 30000"
dropped_process='recd_samples_dropped_total{reason="ring_process_memory"}'
dropped_session='recd_samples_dropped_total{reason="ring_session_memory"}'
wait_metric "$dropped_process" -ge 10 || fail "no ring_process_memory drops counted"
[ "$(metric recd_ring_sessions)" = 7 ] || fail "recd_ring_sessions is not 7"
ring_bytes=$(metric recd_ring_bytes)
[ "$ring_bytes" -le 1048576 ] || fail "recd_ring_bytes is $ring_bytes, over ring.process_memory (1 MiB)"
# The rings use what the bound allows: less than one 72-byte block of it is left.
[ "$ring_bytes" -gt $((1048576 - 72)) ] || fail "recd_ring_bytes is $ring_bytes: the rings did not fill 1 MiB"
[ "$(metric "$dropped_session")" -gt 0 ] || fail "no ring_session_memory drops counted"
[ "$(metric 'recd_samples_dropped_total{reason="buffer_full"}')" = 0 ] || fail "buffer_full drops"

post 200 "/sessions/r1/save?last=1h&label=r1-clip"
post 200 "/sessions/r6/save?last=1h&label=r6-clip"
post 409 "/sessions/late/save?last=1h"
echo >&3
exec 3>&-
wait "$sender" || fail "the sender (the connection must survive the dropped samples)"
wait_metric recd_ring_sessions -eq 0 || fail "recd_ring_sessions did not come back to 0"
[ "$(metric recd_ring_bytes)" = 0 ] || fail "recd_ring_bytes is not 0 once the rings are closed"
[ "$(metric "$dropped_process")" -ge 10 ] || fail "the process drops went down"

kill -TERM "$recd_pid"
wait "$recd_pid" || fail "recd exited with $? after SIGTERM"
recd_pid=
# check.py FILE: the clip holds its ring's latest samples, 10 ms apart up to the last one sent
# (t = 49990), at most 256 KiB of them, fewer than the 5000 sent.
cat >"$tmp/check.py" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
assert (len(data) - 8) % 72 == 0, len(data)
n = (len(data) - 8) // 72
assert 1 <= n <= 262144 // 72, "%d blocks" % n
first = 5000 - n
for i in range(n):
    t = struct.unpack_from("<I", data, 8 + i * 72)[0]
    x = struct.unpack_from("<f", data, 8 + i * 72 + 10)[0]
    assert t == i * 10, (i, t)
    assert abs(x - (1000.0 + (first + i) / 10)) < 1e-3, (i, x)
PY
for key in r1 r6; do
    f="$tmp/out/samp-onfoot/$key/$key-clip.rec"
    [ -f "$f" ] || { fail "no $key clip"; continue; }
    "$RECTOOL" verify "$f" >/dev/null 2>&1 || fail "rectool verify the $key clip"
    python3 "$tmp/check.py" "$f" 2>"$tmp/check.err" || fail "$key clip: $(tail -1 "$tmp/check.err")"
done

if [ "$failures" -ne 0 ]; then
    cat "$tmp/log" >&2
    exit 1
fi
echo "instant replay: the rings stay within ring.process_memory and count what they let go"
