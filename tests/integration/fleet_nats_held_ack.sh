# SPDX-License-Identifier: MIT
# An AckAll consumer never acknowledges past an unwritten message (docs/fleet.md, "Acknowledgement
# after the write"). One partition; session "held" comes first and its folder may not be written
# (recd runs as nobody, the folder is root's, mode 555: every write fails with EACCES and is kept
# for a retry), then session "free", which is written and finalized: held's failing writes do not
# hold the partition up while held is under limits.session_buffer. The consumer's ack floor
# stays below held's first state although free is on disk. recd is then killed with SIGKILL,
# the folder is made writable and recd started again: held comes out byte for byte from the
# redelivered messages (in part 1, as a takeover numbers it: its times kept, rebase_parts off),
# and free's, come again, are dropped as the repeats they are (counted as
# duplicates, not as bad input) and not recorded a second time.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v nats-server >/dev/null || { echo "SKIP: nats-server is not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is needed"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fleet_held_ack.XXXXXX")
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
here=$(cd "$(dirname "$0")" && pwd)
recd_as_nobody

start_nats_server
fleet_partitions=1
url="nats://127.0.0.1:$port/recd.ha"
stream=RECD_recd_ha
run=$tmp/run
mkdir -p "$run/out-a/samp-vehicle/held"
chmod 777 "$run" "$run/out-a" "$run/out-a/samp-vehicle"
chmod 555 "$run/out-a/samp-vehicle/held"
api() { python3 "$here/../shell/js_api.py" "$port" "$@"; }
metric() { fleet_metric "$run" a "$1"; }
owns_it() { [ "$(metric recd_nats_partitions_owned)" = 1 ]; }
finalized() { find "$run/out-a/samp-vehicle/$1" -name '*.rec' 2>/dev/null | grep -c .; }
has_file() { [ "$(finalized "$1")" -ge 1 ]; }
ack_floor() { # the partition consumer's ack floor (stream sequence)
    api "\$JS.API.CONSUMER.INFO.$stream.p0" |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["ack_floor"]["stream_seq"])'
}
floor_at() { [ "$(ack_floor)" = "$1" ]; }

start_fleet_instance "$run" a "$url" "  rebase_parts: false"
a_pid=$pid_out
wait_for 30 owns_it || die "recd did not claim the partition: $(tail -n 20 "$run/a.log")"
"$RECTOOL" generate --format samp-vehicle --duration 10s --seed 5 -o "$tmp/gen.rec" >/dev/null
# One message a frame (the open, the states, the close): held's come first in the stream.
# held's come in over 2.5 s, so its writes fail while more of it is still arriving: the
# partition takes them all the same (up to limits.session_buffer) and free behind them.
send_as() { # SESSION SPEED
    "$RECTOOL" send "$tmp/gen.rec" --to "$url?pack_bytes=0" --partitions 1 --session "$1" \
        --speed "$2" >"$tmp/send.out" 2>&1 || die "rectool send $1: $(cat "$tmp/send.out")"
}
send_as held 4
send_as free max
total=$(api "\$JS.API.STREAM.INFO.$stream" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["state"]["last_seq"])')
wait_for 60 has_file free || die "session free was not written: $(tail -n 20 "$run/a.log")"
wait_for 30 grep -q "kept, retrying" "$run/a.log" || fail "held's write failure was not logged"
# free is on disk and its record written; a few passes later nothing has moved the floor.
sleep 1
# held's open may be acknowledged (its session record keeps it: a restart opens the session from
# that), none of its states.
floor=$(ack_floor)
[ "$floor" -le 1 ] 2>/dev/null ||
    fail "ack floor $floor: messages acknowledged past held's unwritten ones"
[ "$(finalized held)" = 0 ] || fail "held has a file although its folder may not be written"

kill -9 "$a_pid"
wait "$a_pid" 2>/dev/null
a_pid=
chmod 777 "$run/out-a/samp-vehicle/held"
start_fleet_instance "$run" a "$url" "  rebase_parts: false"
a_pid=$pid_out
wait_for 30 owns_it || die "recd did not claim the partition again"
wait_for 60 has_file held || die "held was not written after the restart: $(tail -n 20 "$run/a.log")"
wait_for 60 floor_at "$total" ||
    fail "the ack floor is $(ack_floor), not $total, after the restart"
dups=$(metric recd_nats_duplicates_dropped_total)
[ "$dups" -gt 0 ] 2>/dev/null || fail "free's messages came again but no duplicate was counted"
grep -q "unknown session 'free'" "$run/a.log" && fail "free's repeats were taken as bad input"
kill "$a_pid"
wait "$a_pid" 2>/dev/null
a_pid=
got=$(find "$run/out-a/samp-vehicle/held" -name '*.rec')
[ "$(echo "$got" | grep -c .)" = 1 ] && cmp -s "$tmp/gen.rec" "$got" ||
    fail "held: $(echo "$got" | grep -c .) files, not the one sent byte for byte"
got=$(find "$run/out-a/samp-vehicle/free" -name '*.rec')
[ "$(echo "$got" | grep -c .)" = 1 ] && cmp -s "$tmp/gen.rec" "$got" ||
    fail "free: recorded again after the restart, or not as sent: $got"
[ "$failures" -eq 0 ] || { tail -n 30 "$run/a.log"; exit 1; }
echo "PASS: fleet_nats_held_ack: no acknowledgement past an unwritten message, nothing lost"
