# SPDX-License-Identifier: MIT
# A recd fleet of three instances on a real `nats-server -js`, 6 partitions: when a second and
# then a third instance join, the others hand partitions back for a fair share; when the first is
# killed with SIGKILL the other two take its partitions over and record what is published then.
# No partition ever has two owners: checked on the lease bucket's whole history (every lease
# write as JetStream stored it, tests/shell/lease_history.py) and by sampling the instances'
# gauges. Hostile stream messages (garbage, a cut frame, an empty one, a state for an unknown
# session) are counted, acknowledged and do not block their partitions.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v nats-server >/dev/null || { echo "SKIP: nats-server is not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is needed"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fleet_failover.XXXXXX")
a_pid= b_pid= c_pid= nats_pid= history_pid=
cleanup() {
    for p in $history_pid $a_pid $b_pid $c_pid $nats_pid; do kill -9 "$p" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"
# shellcheck source=../shell/fleet_nats.sh
. "$(dirname "$0")/../shell/fleet_nats.sh"

start_nats_server
url="nats://127.0.0.1:$port/recd.fo"
fleet_partitions=6

start_instance() { start_fleet_instance "$tmp" "$1" "$url"; } # NAME; sets pid_out
metric() { fleet_metric "$tmp" "$1" "$2"; }                    # INSTANCE NAME
owned() { metric "$1" recd_nats_partitions_owned; }
owns() { [ "$(owned "$1")" = "$2" ]; }

start_instance a
a_pid=$pid_out
wait_for 30 owns a 6 || fail "instance a did not claim the 6 partitions"
# Every lease write from here on, as stored (a's claims are in the stream already).
python3 "$(dirname "$0")/../shell/lease_history.py" record "$port" KV_RECD_recd_fo_leases "$tmp/leases.jsonl" \
    2>"$tmp/history.err" &
history_pid=$!

# Joiners only gain partitions and the others only lose them meanwhile, so the joiner is read
# first: read the other way round, a partition handed over between two reads would be counted
# twice. Sampled every 0.1 s until the shares are even.
start_instance b
b_pid=$pid_out
even_with_b() {
    ob=$(owned b) oa=$(owned a)
    [ $((${oa:-0} + ${ob:-0})) -le 6 ] || fail "two owners at once: a owns $oa, b owns $ob"
    [ "${oa:-0}" = 3 ] && [ "${ob:-0}" = 3 ]
}
wait_for 30 even_with_b || fail "no rebalance after b joined: a owns $oa, b owns $ob"
start_instance c
c_pid=$pid_out
even_with_c() {
    oc=$(owned c) oa=$(owned a) ob=$(owned b)
    [ $((${oa:-0} + ${ob:-0} + ${oc:-0})) -le 6 ] ||
        fail "two owners at once: a owns $oa, b owns $ob, c owns $oc"
    [ "${oa:-0}" = 2 ] && [ "${ob:-0}" = 2 ] && [ "${oc:-0}" = 2 ]
}
wait_for 30 even_with_c || fail "no rebalance after c joined: a owns $oa, b owns $ob, c owns $oc"
# Hostile messages on every partition, straight on the NATS protocol.
python3 - "$port" <<'PY' || fail "could not publish the hostile messages"
import socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.recv(4096)  # INFO
s.sendall(b'CONNECT {"verbose":false,"pedantic":false}\r\n')
# A binary frame for a state of a session nobody opened: magic, version, type 2 (state), ...
bogus = [b"garbage, not a frame", b"\xd7\x01", b"", b"\xd7\x01\x02\x00\x05\x00\x00\x00ghost"]
for p in range(6):
    for i, payload in enumerate(bogus):
        subj = "recd.fo.%d.hostile%d" % (p, i)
        s.sendall(b"PUB %s %d\r\n%s\r\n" % (subj.encode(), len(payload), payload))
s.sendall(b"PING\r\n")
buf = b""
while b"PONG" not in buf:
    buf += s.recv(4096)
PY
"$RECTOOL" generate --format samp-vehicle --duration 10s --seed 3 -o "$tmp/gen.rec" >/dev/null
"$RECTOOL" send "$tmp/gen.rec" --to "$url" --partitions 6 --session before --speed max >"$tmp/send.out" 2>&1 ||
    fail "rectool send before the kill: $(cat "$tmp/send.out")"
recorded() { [ -n "$(find "$tmp/out-$1" -path "*/$2/*" -type f ! -name '*.part' ! -name '*.idx' 2>/dev/null)" ]; }
before_on() { recorded a before || recorded b before || recorded c before; }
wait_for 30 before_on || fail "the session sent after the hostile messages was not recorded"
decode_errors() { # a|b|c: the sum of that instance's recd_decode_errors_total series
    python3 -c 'import sys, urllib.request
t = urllib.request.urlopen("http://%s/metrics" % sys.argv[1], timeout=10).read().decode()
print(sum(int(float(l.split()[1])) for l in t.splitlines() if l.startswith("recd_decode_errors_total{")))' \
        "$(sed -n 's/^metrics //p' "$tmp/$1.ports")"
}
bad=0
for i in a b c; do
    n=$(decode_errors $i)
    bad=$((bad + ${n:-0}))
done
[ "$bad" -ge 6 ] || fail "hostile messages: only $bad decode errors counted"

# a dies without a word: b and c take its partitions within about one lease TTL, 3 each.
kill -9 "$a_pid"
wait "$a_pid" 2>/dev/null
a_pid=
took_over() { owns b 3 && owns c 3; }
wait_for 20 took_over || fail "b and c did not take a's partitions over (b owns $(owned b), c owns $(owned c))"
"$RECTOOL" send "$tmp/gen.rec" --to "$url" --partitions 6 --session after --speed max >"$tmp/send.out" 2>&1 ||
    fail "rectool send after the kill: $(cat "$tmp/send.out")"
after_on() { recorded b after || recorded c after; }
wait_for 30 after_on || fail "the session sent after the failover was not recorded"
for i in b c; do
    pid=$(eval echo "\$${i}_pid")
    kill -TERM "$pid"
    wait "$pid"
    code=$?
    eval "${i}_pid="
    [ "$code" -eq 0 ] || fail "$i exited with $code after SIGTERM"
done
kill "$history_pid" 2>/dev/null
wait "$history_pid" 2>/dev/null
history_pid=
got=$(find "$tmp/out-b" "$tmp/out-c" -path "*/after/*" -type f ! -name "*.idx")
cmp -s "$tmp/gen.rec" "$got" || fail "the session recorded after the failover differs from what was sent"
got=$(find "$tmp/out-a" "$tmp/out-b" "$tmp/out-c" -path "*/before/*" -type f ! -name "*.idx")
cmp -s "$tmp/gen.rec" "$got" || fail "the session recorded before the failover differs from what was sent"
[ -s "$tmp/leases.jsonl" ] || fail "no lease history was recorded: $(cat "$tmp/history.err")"
python3 "$(dirname "$0")/../shell/lease_history.py" check "$tmp/leases.jsonl" 3000 >"$tmp/history.out" 2>&1 ||
    fail "lease history: $(cat "$tmp/history.out")"

if [ "$failures" -ne 0 ]; then
    for i in a b c; do show_instance_log "$tmp/$i.log" "$i" 20; done
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "a, b and c shared the 6 partitions 3:3, then 2:2:2; b and c took a's over after its SIGKILL; $(cat "$tmp/history.out"); $bad hostile messages were counted and passed"
