# SPDX-License-Identifier: MIT
# SIGHUP with new nats.* options on a real `nats-server -js`: while a session is being published
# at its pace, the live options (nats.max_in_flight here) change and the nats:// input starts again
# with them; the session goes on in the same part and comes out byte-identical, each state once.
# The fleet's layout (nats.partitions) is kept until a restart, and the reload says so.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v nats-server >/dev/null || { echo "SKIP: nats-server is not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is needed"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fleet_reload.XXXXXX")
a_pid= nats_pid= send_pid=
cleanup() {
    for p in $send_pid $a_pid $nats_pid; do kill -9 "$p" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"
# shellcheck source=../shell/fleet_nats.sh
. "$(dirname "$0")/../shell/fleet_nats.sh"

start_nats_server
url="nats://127.0.0.1:$port/recd.hup"
start_fleet_instance "$tmp" a "$url" "  path_template: \"{format}/{session}/{part}.{ext}\""
a_pid=$pid_out
owns() { [ "$(fleet_metric "$tmp" a recd_nats_partitions_owned)" = 4 ]; }
wait_for 30 owns || fail "recd did not claim the 4 partitions"

"$RECTOOL" generate --format samp-vehicle --duration 8s --seed 5 -o "$tmp/gen.rec" >/dev/null
"$RECTOOL" send "$tmp/gen.rec" --to "$url" --partitions 4 --session hup --speed 1 >"$tmp/send.out" 2>&1 &
send_pid=$!
started() { [ -n "$(find "$tmp/out-a" -path '*/hup/*' 2>/dev/null)" ]; }
wait_for 20 started || fail "nothing of the session was written before the reload"

# The same file with new live options, and a partition count that needs a restart.
sed -e 's/^  partitions: 4$/  partitions: 8\n  max_in_flight: 32/' "$tmp/a.yaml" >"$tmp/a.yaml.new"
mv "$tmp/a.yaml.new" "$tmp/a.yaml"
grep -q 'max_in_flight: 32' "$tmp/a.yaml" || fail "could not edit the configuration"
kill -HUP "$a_pid"
reloaded() { grep -q 'configuration reloaded' "$tmp/a.log"; }
wait_for 20 reloaded || fail "recd did not reload"
grep -q 'reload: nats.max_in_flight changed' "$tmp/a.log" || fail "the reload did not name nats.max_in_flight"
grep -q 'reload: nats.partitions changed, but only takes effect after a restart' "$tmp/a.log" ||
    fail "the reload did not say that nats.partitions needs a restart"
wait_for 30 owns || fail "the restarted input did not claim the 4 partitions again"

wait "$send_pid"
code=$?
send_pid=
[ "$code" -eq 0 ] || fail "rectool send exited with $code: $(cat "$tmp/send.out")"
done_() { [ -n "$(find "$tmp/out-a" -path '*/hup/*' -name '*.rec' ! -name '*.part')" ]; }
wait_for 60 done_ || fail "the session was not finalized after the reload"
grep -q "session 'hup' goes on through the restarted input" "$tmp/a.log" ||
    fail "the session was not handed to the restarted input"
kill -TERM "$a_pid"
wait "$a_pid"
code=$?
a_pid=
[ "$code" -eq 0 ] || fail "recd exited with $code after SIGTERM"
files=$(find "$tmp/out-a" -path '*/hup/*' -type f ! -name "*.idx")
[ "$(printf '%s\n' "$files" | grep -c .)" = 1 ] || fail "the session went into $(printf '%s\n' "$files" | grep -c .) files: $files"
cmp -s "$tmp/gen.rec" "$files" || fail "the session recorded across the reload differs: $(cmp "$tmp/gen.rec" "$files" 2>&1 | head -1)"

if [ "$failures" -ne 0 ]; then
    show_instance_log "$tmp/a.log" a 40
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "nats.max_in_flight reloaded mid-session: the input started again and the session came out whole in one part"
