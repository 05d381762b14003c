# SPDX-License-Identifier: MIT
# A two-instance recd fleet on a real `nats-server -js`: when the second instance joins, the
# first hands back half of the partitions (never two owners at once); the second takes them all
# over after the
# first is killed with SIGKILL, and records what is published then. Hostile stream messages
# (garbage, a cut frame, an empty one, a state for an unknown session) are counted, acknowledged
# and do not block their partitions.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v nats-server >/dev/null || { echo "SKIP: nats-server is not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is needed"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fleet_failover.XXXXXX")
a_pid= b_pid= nats_pid=
cleanup() {
    for p in $a_pid $b_pid $nats_pid; do kill -9 "$p" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"
# shellcheck source=../shell/fleet_nats.sh
. "$(dirname "$0")/../shell/fleet_nats.sh"

start_nats_server
url="nats://127.0.0.1:$port/recd.fo"

start_instance() { start_fleet_instance "$tmp" "$1" "$url"; } # NAME; sets pid_out
metric() { fleet_metric "$tmp" "$1" "$2"; }                    # INSTANCE NAME
owns() { [ "$(metric "$1" recd_nats_partitions_owned)" = "$2" ]; }

start_instance a
a_pid=$pid_out
wait_for 30 owns a 4 || fail "instance a did not claim the 4 partitions"
start_instance b
b_pid=$pid_out
# b joins: a hands back half of the partitions and b claims them, never two owners at once
# (sampled every 0.1 s until the shares are even). b only gains and a only loses meanwhile, so b
# is read first: read the other way round, a partition handed over between the two reads would
# be counted twice.
balanced() {
    ob=$(metric b recd_nats_partitions_owned)
    oa=$(metric a recd_nats_partitions_owned)
    [ $((${oa:-0} + ${ob:-0})) -le 4 ] || fail "two owners at once: a owns $oa, b owns $ob"
    [ "${oa:-0}" = 2 ] && [ "${ob:-0}" = 2 ]
}
wait_for 30 balanced || fail "no rebalance after b joined: a owns $oa, b owns $ob"
# Hostile messages on every partition, straight on the NATS protocol.
python3 - "$port" <<'PY' || fail "could not publish the hostile messages"
import socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.recv(4096)  # INFO
s.sendall(b'CONNECT {"verbose":false,"pedantic":false}\r\n')
# A binary frame for a state of a session nobody opened: magic, version, type 2 (state), ...
bogus = [b"garbage, not a frame", b"\xd7\x01", b"", b"\xd7\x01\x02\x00\x05\x00\x00\x00ghost"]
for p in range(4):
    for i, payload in enumerate(bogus):
        subj = "recd.fo.%d.hostile%d" % (p, i)
        s.sendall(b"PUB %s %d\r\n%s\r\n" % (subj.encode(), len(payload), payload))
s.sendall(b"PING\r\n")
buf = b""
while b"PONG" not in buf:
    buf += s.recv(4096)
PY
"$RECTOOL" generate --format samp-vehicle --duration 10s --seed 3 -o "$tmp/gen.rec" >/dev/null
"$RECTOOL" send "$tmp/gen.rec" --to "$url" --partitions 4 --session before --speed max >"$tmp/send.out" 2>&1 ||
    fail "rectool send before the kill: $(cat "$tmp/send.out")"
recorded() { [ -n "$(find "$tmp/out-$1" -path "*/$2/*" -type f ! -name '*.part' 2>/dev/null)" ]; }
before_on() { recorded a before || recorded b before; }
wait_for 30 before_on || fail "the session sent after the hostile messages was not recorded"
decode_errors() { # a|b: the sum of that instance's recd_decode_errors_total series
    python3 -c 'import sys, urllib.request
t = urllib.request.urlopen("http://%s/metrics" % sys.argv[1]).read().decode()
print(sum(int(float(l.split()[1])) for l in t.splitlines() if l.startswith("recd_decode_errors_total{")))' \
        "$(sed -n 's/^metrics //p' "$tmp/$1.ports")"
}
bad_a=$(decode_errors a)
bad_b=$(decode_errors b)
bad=$((${bad_a:-0} + ${bad_b:-0}))
[ "${bad:-0}" -ge 4 ] || fail "hostile messages: only ${bad:-0} decode errors counted"

# a dies without a word: b takes every partition within about one lease TTL.
kill -9 "$a_pid"
wait "$a_pid" 2>/dev/null
a_pid=
wait_for 20 owns b 4 || fail "b did not take the partitions over (owns $(metric b recd_nats_partitions_owned))"
"$RECTOOL" send "$tmp/gen.rec" --to "$url" --partitions 4 --session after --speed max >"$tmp/send.out" 2>&1 ||
    fail "rectool send after the kill: $(cat "$tmp/send.out")"
wait_for 30 recorded b after || fail "b did not record the session sent after the failover"
kill -TERM "$b_pid"
wait "$b_pid"
code=$?
b_pid=
[ "$code" -eq 0 ] || fail "b exited with $code after SIGTERM"
got=$(find "$tmp/out-b" -path "*/after/*" -type f)
cmp -s "$tmp/gen.rec" "$got" || fail "the session recorded by b differs from what was sent"
got=$(find "$tmp/out-a" "$tmp/out-b" -path "*/before/*" -type f)
cmp -s "$tmp/gen.rec" "$got" || fail "the session recorded by a differs from what was sent"

if [ "$failures" -ne 0 ]; then
    show_instance_log "$tmp/a.log" a 20
    show_instance_log "$tmp/b.log" b 20
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "a and b shared the 4 partitions 2:2, b took all 4 over after a's SIGKILL; $bad hostile messages were counted and passed"
