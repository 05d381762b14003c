# SPDX-License-Identifier: MIT
# AckAll consumers (docs/fleet.md, "Acknowledgement after the write"): a stream whose partition
# consumers an older recd made with explicit acks, with a backlog of one-frame messages. recd
# makes each consumer again with AckAll from its ack floor (it says so), records the backlog
# byte for byte and acknowledges it with fewer acknowledgements than messages; started again,
# it keeps the AckAll consumers and records what comes next.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v nats-server >/dev/null || { echo "SKIP: nats-server is not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is needed"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fleet_ackall.XXXXXX")
a_pid= nats_pid=
cleanup() {
    for p in $a_pid $nats_pid; do kill -9 "$p" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"
die() { fail "$@"; exit 1; }
# shellcheck source=../shell/fleet_nats.sh
. "$(dirname "$0")/../shell/fleet_nats.sh"
here=$(cd "$(dirname "$0")" && pwd)
start_nats_server
fleet_partitions=2
url="nats://127.0.0.1:$port/recd.aa"
stream=RECD_recd_aa
run=$tmp/run
api() { python3 "$here/../shell/js_api.py" "$port" "$@"; }
metric() { fleet_metric "$run" a "$1"; }
owns_both() { [ "$(metric recd_nats_partitions_owned)" = 2 ]; }
acked_at_least() { [ "$(metric recd_nats_acked_total)" -ge "$1" ] 2>/dev/null; }
recorded() { find "$run/out-a" -path "*/$1/*" -name '*.rec' | head -n 1; }

api "\$JS.API.STREAM.CREATE.$stream" \
    "{\"name\":\"$stream\",\"subjects\":[\"recd.aa.>\"],\"storage\":\"file\"}" >/dev/null ||
    die "creating the stream"
for n in 0 1; do
    api "\$JS.API.CONSUMER.DURABLE.CREATE.$stream.p$n" \
        "{\"stream_name\":\"$stream\",\"config\":{\"durable_name\":\"p$n\",\"filter_subject\":\"recd.aa.$n.>\",\"ack_policy\":\"explicit\",\"deliver_policy\":\"all\",\"ack_wait\":30000000000,\"max_ack_pending\":1024}}" \
        >/dev/null || die "creating consumer p$n with explicit acks"
done
"$RECTOOL" generate --format samp-vehicle --duration 20s --seed 3 -o "$tmp/gen.rec" >/dev/null
# 173 states, the open and the close: 175 messages, one frame each
for s in backlog-1 backlog-2; do
    "$RECTOOL" send "$tmp/gen.rec" --to "$url?pack_bytes=0" --partitions 2 --session "$s" \
        --speed max >"$tmp/send.out" 2>&1 || die "rectool send: $(cat "$tmp/send.out")"
done

start_fleet_instance "$run" a "$url"
a_pid=$pid_out
wait_for 30 owns_both || die "recd did not claim both partitions"
wait_for 60 acked_at_least 350 || die "the backlog was not acknowledged: $(metric recd_nats_acked_total) of 350"
remade=$(grep -c 'made again with AckAll' "$run/a.log")
[ "$remade" = 2 ] || fail "recd said $remade times that it made a consumer again with AckAll (2 expected)"
for n in 0 1; do
    api "\$JS.API.CONSUMER.INFO.$stream.p$n" | grep -q '"ack_policy":"all"' ||
        fail "consumer p$n does not acknowledge with AckAll"
done
frames=$(metric recd_nats_ack_frames_total)
[ "$frames" -lt 350 ] 2>/dev/null || fail "$frames acknowledgements sent for 350 messages"

kill "$a_pid"
wait "$a_pid" 2>/dev/null
a_pid=
for s in backlog-1 backlog-2; do
    got=$(recorded "$s")
    [ -n "$got" ] && cmp -s "$tmp/gen.rec" "$got" || fail "session $s: output missing or differs"
done

# Started again: the consumers stay, and what comes next is recorded.
start_fleet_instance "$run" a "$url"
a_pid=$pid_out
wait_for 30 owns_both || die "recd did not claim both partitions again"
"$RECTOOL" send "$tmp/gen.rec" --to "$url?pack_bytes=0" --partitions 2 --session after \
    --speed max >"$tmp/send.out" 2>&1 || die "rectool send: $(cat "$tmp/send.out")"
wait_for 60 acked_at_least 175 || die "the new session was not acknowledged"
kill "$a_pid"
wait "$a_pid" 2>/dev/null
a_pid=
got=$(recorded after)
[ -n "$got" ] && cmp -s "$tmp/gen.rec" "$got" || fail "session after: output missing or differs"
remade=$(grep -c 'made again with AckAll' "$run/a.log")
[ "$remade" = 0 ] || fail "started again, recd made $remade consumers again"
[ "$failures" -eq 0 ] || exit 1
echo "PASS: fleet_nats_ackall: consumers made with explicit acks made again with AckAll, nothing lost"
