# SPDX-License-Identifier: MIT
# Deduplication inside packed messages after a takeover (docs/fleet.md, "Failover"): instance a
# writes states 1..100 of a session published in packed messages, then stops (SIGTERM: its record
# keeps the highest wire seq written, 100). The publisher sends states 91..110 again as ONE packed
# message, then 111..120 and the close. Instance b takes the session over from its record and
# drops exactly the 10 frames of that message that a wrote (counted in
# recd_nats_duplicates_dropped_total), keeping the other 10: the parts' manifests say a wrote
# seqs 1..100 and b 101..120, each state once. A one-frame message from an older publisher
# (pack_bytes=0) repeating state 95 before them is dropped as well.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v nats-server >/dev/null || { echo "SKIP: nats-server is not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is needed"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fleet_dedup.XXXXXX")
a_pid= b_pid= nats_pid=
cleanup() {
    for p in $a_pid $b_pid $nats_pid; do kill -9 "$p" 2>/dev/null; done
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
fleet_partitions=1
url="nats://127.0.0.1:$port/recd.dd"
run=$tmp/run
output='  path_template: "{format}/{session}/{part}-{instance}.{ext}"
  part_manifest: true'
metric() { fleet_metric "$run" "$1" "$2"; } # INSTANCE NAME
owns() { [ "$(metric "$1" recd_nats_partitions_owned)" = "$2" ]; }
publish() { # ARGS of fleet_nats_dedup.py; prints the JetStream messages published
    python3 "$here/fleet_nats_dedup.py" "$url" "$@" || die "publishing $*"
}
acked_at_least() { [ "$(metric "$1" recd_nats_acked_total)" -ge "$2" ] 2>/dev/null; }

start_fleet_instance "$run" a "$url" "$output"
a_pid=$pid_out
wait_for 30 owns a 1 || die "a did not claim the partition"
sent=$(publish open 1 100)
wait_for 30 acked_at_least a "$sent" || die "a did not acknowledge the $sent messages"
kill -TERM "$a_pid"
wait "$a_pid" || die "a exited with $? after SIGTERM"
a_pid=

start_fleet_instance "$run" b "$url" "$output"
b_pid=$pid_out
wait_for 30 owns b 1 || die "b did not claim the partition"
publish one-frame 95 95 >/dev/null       # an older publisher repeats 95 on its own
publish again 91 110 >/dev/null          # one packed message: 91..100 were written by a
publish close 111 120 >/dev/null
finalized() { [ -n "$(find "$run/out-b" -name '*.rec.json')" ] && [ -z "$(find "$run/out-b" -name '*.part')" ]; }
wait_for 30 finalized || die "b did not finalize the session: $(tail -n 5 "$run/b.log")"
dropped=$(metric b recd_nats_duplicates_dropped_total)
[ "$dropped" = 11 ] || fail "b dropped $dropped duplicates, expected 11 (10 in the packed message, 1 alone)"
taken=$(metric b recd_nats_sessions_taken_over_total)
[ "$taken" = 1 ] || fail "b took $taken sessions over, expected 1"
python3 - "$run" <<'PY' 2>"$tmp/check.out" || fail "manifests"
import glob, json, sys
run = sys.argv[1]
got = {}
for inst in "ab":
    for path in glob.glob(f"{run}/out-{inst}/**/*.rec.json", recursive=True):
        m = json.load(open(path))
        got[inst] = (m["first_seq"], m["last_seq"], m["samples"], m["part"])
want = {"a": (1, 100, 100), "b": (101, 120, 20)}
for inst, w in want.items():
    if inst not in got or got[inst][:3] != w:
        sys.exit(f"{inst}: manifest says (first_seq, last_seq, samples) {got.get(inst)}, expected {w}")
if got["b"][3] <= got["a"][3]:
    sys.exit(f"b's part number {got['b'][3]} does not follow a's {got['a'][3]}")
PY
[ -s "$tmp/check.out" ] && cat "$tmp/check.out" >&2
for p in "$run"/out-*/samp-onfoot/dd/*.rec; do
    "$RECTOOL" verify "$p" >/dev/null || fail "rectool verify $p"
done
kill -TERM "$b_pid"
wait "$b_pid" || die "b exited with $? after SIGTERM"
b_pid=
[ "$failures" -eq 0 ] || exit 1
echo "PASS: fleet_nats_dedup: 10 frames of a packed message and a one-frame repeat dropped after a takeover, none lost"
