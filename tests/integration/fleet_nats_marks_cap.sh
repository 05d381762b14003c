# SPDX-License-Identifier: MIT
# A partition remembers the sessions that ended for good until it is acknowledged past them
# (docs/fleet.md, "Failover"), and at most limits.max_sessions of them. One partition; session
# "held" comes first and its folder may not be written, so the partition's ack floor stays
# below it; then five sessions open and close in turn. With limits.max_sessions at 3 the two
# oldest marks are forgotten: counted in recd_nats_closed_marks_dropped_total and logged.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v nats-server >/dev/null || { echo "SKIP: nats-server is not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is needed"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fleet_marks_cap.XXXXXX")
chmod 755 "$tmp"
a_pid= nats_pid=
cleanup() {
    for p in $a_pid $nats_pid; do kill -9 "$p" 2>/dev/null; done
    chmod -R u+w "$tmp" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"
die() { fail "$@"; exit 1; }
# shellcheck source=../shell/fleet_nats.sh
. "$(dirname "$0")/../shell/fleet_nats.sh"
recd_as_nobody

start_nats_server
fleet_partitions=1
url="nats://127.0.0.1:$port/recd.mc"
run=$tmp/run
mkdir -p "$run/out-a/samp-vehicle/held"
chmod 777 "$run" "$run/out-a" "$run/out-a/samp-vehicle"
chmod 555 "$run/out-a/samp-vehicle/held"
metric() { fleet_metric "$run" a "$1"; }
owns_it() { [ "$(metric recd_nats_partitions_owned)" = 1 ]; }
dropped_is() { [ "$(metric recd_nats_closed_marks_dropped_total)" = "$1" ]; }
written() { find "$run/out-a/samp-vehicle" -name '*.rec' | grep -c .; }
all_written() { [ "$(written)" = 5 ]; }

start_fleet_instance "$run" a "$url" "$(printf '  rebase_parts: false\nlimits:\n  max_sessions: 3')"
a_pid=$pid_out
wait_for 30 owns_it || die "recd did not claim the partition: $(tail -n 20 "$run/a.log")"
"$RECTOOL" generate --format samp-vehicle --duration 2s --seed 9 -o "$tmp/gen.rec" >/dev/null
for s in held c1 c2 c3 c4 c5; do
    "$RECTOOL" send "$tmp/gen.rec" --to "$url?pack_bytes=0" --partitions 1 --session "$s" \
        --speed max >"$tmp/send.out" 2>&1 || die "rectool send $s: $(cat "$tmp/send.out")"
done
wait_for 60 all_written || die "$(written) of the five closed sessions written: $(tail -n 20 "$run/a.log")"
# The log first (a grep a poll), then the count (a metrics request a poll).
wait_for 30 grep -q "forgot the .* oldest" "$run/a.log" || fail "no forgotten marks were logged"
wait_for 10 dropped_is 2 ||
    fail "recd_nats_closed_marks_dropped_total is '$(metric recd_nats_closed_marks_dropped_total)', not 2"
# Nothing written was lost by it: each closed session is one file, the one sent.
for s in c1 c2 c3 c4 c5; do
    got=$(find "$run/out-a/samp-vehicle/$s" -name '*.rec')
    [ "$(echo "$got" | grep -c .)" = 1 ] && cmp -s "$tmp/gen.rec" "$got" ||
        fail "$s: not one file as sent: $got"
done
kill "$a_pid"
wait "$a_pid" 2>/dev/null
a_pid=
[ "$failures" -eq 0 ] || { tail -n 30 "$run/a.log"; exit 1; }
echo "PASS: fleet_nats_marks_cap: closed-session marks capped at limits.max_sessions, counted, logged"
