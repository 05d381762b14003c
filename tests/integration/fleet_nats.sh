# SPDX-License-Identifier: MIT
# A one-instance recd fleet on a real `nats-server -js` (loopback, free port, temporary store):
# every standard .rec of the corpus published with `rectool send --to nats://` comes out
# byte-identical (from publishers of both subject layouts), a generated .recap holds the same
# messages, recd creates the stream, the consumers and the lease bucket itself, /healthz fails
# while the server is down, what is published after the server restarts is recorded too, a
# backlog recd is in the middle of when the server restarts comes out whole, and a publisher
# whose messages are not confirmed says so. recd_samples_total counts every sample of a packed
# message, not one per message.
set -u
corpus="${RECD_CORPUS_DIR:-}/samp-rec"
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
if ! command -v nats-server >/dev/null; then
    echo "SKIP: nats-server is not installed (scripts/install-deps.sh installs it)"
    exit 77
fi
if ! command -v curl >/dev/null && ! command -v python3 >/dev/null; then
    echo "SKIP: neither curl nor python3 to read /metrics"
    exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fleet_nats.XXXXXX")
nats_pid=
cleanup() {
    stop_recd_at_exit
    [ -n "$nats_pid" ] && kill -9 "$nats_pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"
# shellcheck source=../shell/fleet_nats.sh
. "$(dirname "$0")/../shell/fleet_nats.sh"

start_nats_server
url="nats://127.0.0.1:$port/recd.fleet"

# The leases outlive the server restarts below, however slow the machine: a lease that expired
# would be claimed again, and its sessions closed and taken over into new parts.
fleet_lease_ttl=30s fleet_config "$tmp/recd.yaml" "$url" "$tmp/out"
# A recd without NATS support refuses the nats:// listener and does not start: a probe in a
# subshell (start_recd exits it) tells that apart from a recd that fails for another reason.
if ! (start_recd "$tmp/probe.log" --config "$tmp/recd.yaml" && kill -TERM "$recd_pid" && wait "$recd_pid") \
    >/dev/null 2>&1; then
    if grep -q 'without NATS support' "$tmp/probe.log"; then
        echo "SKIP: recd was built without libnats"
        exit 77
    fi
fi
start_recd "$tmp/log" --config "$tmp/recd.yaml"
get() { # PATH: the body (any status)
    if command -v curl >/dev/null; then
        curl -s "http://$metrics$1"
    else
        python3 -c 'import sys, urllib.request, urllib.error
try: print(urllib.request.urlopen(sys.argv[1]).read().decode())
except urllib.error.HTTPError as e: print(e.read().decode())' "http://$metrics$1"
    fi
}
metric() { get /metrics | sed -n "s/^$1 //p"; }
owns_all() { [ "$(metric recd_nats_partitions_owned)" = 4 ]; }
wait_for 30 owns_all || fail "recd did not claim the 4 partitions (owns $(metric recd_nats_partitions_owned))"

sent_samples=0 # states and events, as rectool send counts them
send() { # FILE SESSION [QUERY]: packed, as rectool publishes by default
    "$RECTOOL" send "$1" --to "$url${3:-}" --partitions 4 --session "$2" --speed max >"$tmp/send.out" 2>&1 ||
        fail "rectool send $(basename "$1") to JetStream: $(cat "$tmp/send.out")"
    local counted
    counted=$(sed -n 's/^sent [0-9]* messages (\([0-9]*\) states, \([0-9]*\) events).*/\1 + \2/p' "$tmp/send.out")
    if [ -n "$counted" ]; then
        sent_samples=$((sent_samples + counted))
    else
        fail "rectool send did not say what it sent: $(cat "$tmp/send.out")"
    fi
}
finalized() { [ "$(find "$tmp/out" -type f ! -name '*.part' ! -name '*.idx' 2>/dev/null | grep -c .)" -ge "$1" ]; } # recordings, not seek indexes

# 1. The corpus and a generated Recap.
expected=0
if [ -n "${RECD_CORPUS_DIR:-}" ] && [ -d "$corpus" ]; then
    i=0
    for f in "$corpus"/*.rec; do
        "$RECTOOL" verify "$f" >/dev/null 2>&1 || continue
        i=$((i + 1))
        send "$f" "rec-$i"
        echo "$i $f" >>"$tmp/sent"
        expected=$((expected + 1))
    done
else
    echo "note: the SA-MP corpus is not available; only generated recordings are sent"
fi
"$RECTOOL" generate --format recap --duration 20s --seed 7 -o "$tmp/gen.recap" >/dev/null
"$RECTOOL" generate --format samp-vehicle --duration 20s --seed 7 -o "$tmp/gen.rec" >/dev/null
send "$tmp/gen.recap" gen-recap
send "$tmp/gen.rec" gen-rec
# The earlier layout, a subject per session (PREFIX.<p>.<key>), into the same stream and
# consumers as the default PREFIX.<p>.~: a fleet with publishers of both ages records both.
send "$tmp/gen.rec" gen-rec-session "?subjects=session"
expected=$((expected + 3))
wait_for 60 finalized "$expected" || fail "only $(find "$tmp/out" -type f ! -name '*.part' | grep -c .) of $expected files finalized"
acked=$(metric recd_nats_acked_total)
[ "${acked:-0}" -gt 0 ] || fail "no stream message was acknowledged"
nats_samples() { get /metrics | awk '/^recd_samples_total\{transport="nats"/ { s += $2 } END { print s + 0 }'; }
all_counted() { [ "$(nats_samples)" = "$sent_samples" ]; }
wait_for 10 all_counted || fail "recd_samples_total counts $(nats_samples) samples from JetStream, $sent_samples were sent"

# 2. The server goes away: /healthz says so; it comes back: recording goes on.
health=$(get /healthz)
case $health in *'"status":"ok"'*) ;; *) fail "/healthz is not ok while connected: $health" ;; esac
kill -TERM "$nats_pid"
wait "$nats_pid" 2>/dev/null
nats_pid=
unhealthy() { get /healthz | grep -q '"nats"'; }
wait_for 20 unhealthy || fail "/healthz did not report the unreachable JetStream server: $(get /healthz)"
start_nats_server "$port"
healthy() { get /healthz | grep -q '"status":"ok"'; }
wait_for 30 healthy || fail "/healthz did not recover after the server restarted: $(get /healthz)"
send "$tmp/gen.rec" after-restart
expected=$((expected + 1))
wait_for 60 finalized "$expected" || fail "the session sent after the restart was not recorded"

# 3. The server restarts while recd is in the middle of a backlog, holding messages it has taken
# and not yet acknowledged: their acknowledgements are lost, the rest comes after the restart, and
# the recording still comes out whole, each state once (what comes again is dropped and counted).
"$RECTOOL" generate --format samp-vehicle --duration 60m --seed 11 -o "$tmp/long.rec" >/dev/null
kill -STOP "$recd_pid" # the backlog builds up while recd is stopped (well within the lease TTL)
# One frame per message (an older publisher): the backlog is then many messages, still in
# flight when the server stops (packed, recd would drain it at once).
send "$tmp/long.rec" in-flight "?pack_bytes=0"
kill -CONT "$recd_pid"
taking() { [ -n "$(find "$tmp/out" -path '*/in-flight/*' 2>/dev/null)" ]; }
wait_for 20 taking || fail "recd took nothing of the backlog"
kill -TERM "$nats_pid"
wait "$nats_pid" 2>/dev/null
nats_pid=
finalized "$((expected + 1))" && fail "the backlog was recorded whole before the server stopped: nothing was in flight"
wait_for 20 unhealthy || fail "/healthz did not report the server gone with a backlog in flight"
start_nats_server "$port"
wait_for 30 healthy || fail "/healthz did not recover after the second restart: $(get /healthz)"
expected=$((expected + 1))
wait_for 90 finalized "$expected" || fail "the backlog was not recorded after the restart"

kill -TERM "$recd_pid"
wait "$recd_pid"
code=$?
recd_pid=
[ "$code" -eq 0 ] || fail "recd exited with $code after SIGTERM"
find "$tmp/out" -name '*.part' | grep -q . && fail ".part files left: $(find "$tmp/out" -name '*.part')"

# 4. A publisher never drops in silence: to a prefix no stream covers, and with the server killed
# in the middle, the unconfirmed messages are reported and the exit code is 3.
"$RECTOOL" send "$tmp/gen.rec" --to "nats://127.0.0.1:$port/nostream" --session lost --speed max \
    --ack-timeout 1s >"$tmp/lost.out" 2>&1
code=$?
[ "$code" -eq 3 ] || fail "publishing where no stream listens exited $code, not 3"
grep -q 'not confirmed by JetStream' "$tmp/lost.out" || fail "no loss reported: $(cat "$tmp/lost.out")"
"$RECTOOL" generate --format samp-vehicle --duration 3s --seed 9 -o "$tmp/short.rec" >/dev/null
# A core subscriber on the stream's subjects sees the sender's first message reach the server.
python3 - "$port" >"$tmp/watch.out" 2>&1 <<'PY' &
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b'CONNECT {"verbose":false}\r\nSUB recd.fleet.> 1\r\nPING\r\n')
buf = b""
def until(token):
    global buf
    while token not in buf:
        chunk = s.recv(4096)
        if not chunk:
            sys.exit("the server closed the connection")
        buf += chunk
until(b"PONG")
print("subscribed", flush=True)
until(b"MSG ")
print("published", flush=True)
PY
watcher=$!
wait_for 20 grep -q subscribed "$tmp/watch.out" || fail "the subscriber did not start: $(cat "$tmp/watch.out")"
"$RECTOOL" send "$tmp/short.rec" --to "$url" --partitions 4 --session cut --speed 1 --ack-timeout 1s \
    >"$tmp/cut.out" 2>&1 &
sender=$!
wait_for 20 grep -q published "$tmp/watch.out" || fail "the sender published nothing: $(cat "$tmp/cut.out")"
kill -9 "$nats_pid"
wait "$nats_pid" 2>/dev/null
nats_pid=
wait "$sender"
code=$?
wait "$watcher" 2>/dev/null
[ "$code" -eq 3 ] || fail "publishing while the server died exited $code, not 3: $(cat "$tmp/cut.out")"
grep -qE 'not confirmed|publishing to' "$tmp/cut.out" || fail "the lost messages were not reported: $(cat "$tmp/cut.out")"

one_file() { # SESSION: the single file recorded for it
    local files
    files=$(find "$tmp/out" -path "*/$1/*" -type f ! -name "*.idx")  # seek indexes: daemon_seek_index.sh
    if [ "$(printf '%s\n' "$files" | grep -c .)" -ne 1 ]; then
        fail "session $1: $(printf '%s\n' "$files" | grep -c .) output files"
        return 1
    fi
    printf '%s\n' "$files"
}
if [ -f "$tmp/sent" ]; then
    while read -r n f; do
        got=$(one_file "rec-$n") || continue
        cmp -s "$f" "$got" || fail "$(basename "$f") through JetStream: output differs ($(cmp "$f" "$got" 2>&1 | head -1))"
    done <"$tmp/sent"
fi
for s in gen-rec gen-rec-session after-restart; do
    got=$(one_file "$s") || continue
    cmp -s "$tmp/gen.rec" "$got" || fail "generated .rec as $s: output differs"
done
if got=$(one_file in-flight); then
    cmp -s "$tmp/long.rec" "$got" ||
        fail "the backlog recorded across the restart differs: $(cmp "$tmp/long.rec" "$got" 2>&1 | head -1)"
fi
if got=$(one_file gen-recap); then
    "$RECTOOL" export "$tmp/gen.recap" --to jsonl | grep -v '"type":"flush"' >"$tmp/want.jsonl"
    # recd's members come from its own compressor (recap.compressor), which its header names.
    "$RECTOOL" export "$got" --to jsonl | grep -v '"type":"flush"' |
        sed '1s/,"compressor":"libdeflate"}/}/' >"$tmp/got.jsonl"
    cmp -s "$tmp/want.jsonl" "$tmp/got.jsonl" || fail "generated .recap: recd's file holds other messages"
fi

if [ "$failures" -ne 0 ]; then
    show_instance_log "$tmp/log" recd 40
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "$expected sessions through JetStream came out as sent ($acked messages acknowledged)"
