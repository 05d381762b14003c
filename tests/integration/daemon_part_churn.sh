# SPDX-License-Identifier: MIT
# Rule 2 of docs/reliability.md, "Round 3: bounds": a samp-player client whose states alternate
# on foot and vehicle, so that every state starts a new part. With limits.part_rate off, 10,000
# and then 100,000 part switches keep the event loop busy for a time linear in their number (the
# manifest is appended, never rendered again from its start), /healthz answers meanwhile within
# 5 s and no loop iteration takes a second; the manifest lists all 100,000 parts. With the default
# limits.part_rate the flipping sender gets an error reply, counted in recd_state_refusals_total.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v python3 >/dev/null || { echo "SKIP: python3 is needed to send the sessions"; exit 77; }
recd_tmpdir daemon_part_churn
scale=${RECD_TEST_TIME_SCALE:-1}
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
send="$(dirname "$0")/daemon_part_churn.py"

# 110,000 parts are 110,000 small files: on tmpfs when there is room (a disk under load creates
# them far more slowly than recd takes them).
root=$tmp/out
shm=
if [ -d /dev/shm ] && [ -w /dev/shm ] &&
    [ "$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 {print $4}')" -gt $((2 * 1024 * 1024)) ]; then
    shm=$(mktemp -d /dev/shm/daemon_part_churn.XXXXXX)
    root=$shm/out
    trap 'stop_recd_at_exit; rm -rf "$tmp" "$shm"' EXIT
fi

config() { # RATE
    cat >"$tmp/recd.yaml" <<YAML
listen:
  - tcp://127.0.0.1:0
output:
  root: $root
metrics:
  listen: 127.0.0.1:0
flush:
  interval: 50ms
limits:
  part_rate: $1
  # the writer (file creation) can hold the sender back for longer than the default 10s
  frame_timeout: 1h
YAML
}
metric_lines() { python3 -c 'import sys, urllib.request
print(urllib.request.urlopen("http://%s/metrics" % sys.argv[1], timeout=60).read().decode())' "$metrics"; }
stop() {
    kill -TERM "$recd_pid"
    wait "$recd_pid"
    recd_pid=
}

config 0
start_recd "$tmp/log" --config "$tmp/recd.yaml"
tcp=${tcp#tcp://}
run() { # KEY N: "seconds worst_healthz_seconds errors first_error"
    timeout $((120 * scale)) python3 "$send" "$tcp" "$1" "$2" "$metrics" 2>"$tmp/$1.err" ||
        echo "999 999 -1 sender-failed:$(tail -1 "$tmp/$1.err")"
}
loop_busy() { metric_lines | sed -n 's/^recd_loop_lag_seconds_sum //p'; }
b0=$(loop_busy)
read -r t10 h10 e10 _ <<<"$(run k10k 10000)"
b1=$(loop_busy)
read -r t100 h100 e100 r100 <<<"$(run k100k 100000)"
b2=$(loop_busy)
echo "10,000 switches: ${t10}s (slowest /healthz ${h10}s); 100,000: ${t100}s (slowest /healthz ${h100}s)"
[ "$e10" = 0 ] && [ "$e100" = 0 ] || fail "the sender got error replies ($e10, $e100): $r100"
python3 - "$b0" "$b1" "$b2" "$h10" "$h100" "$scale" <<'PY' || fail "not linear, or /healthz was slow"
import sys
b0, b1, b2, h10, h100, scale = map(float, sys.argv[1:])
# The event loop's busy time (recd_loop_lag_seconds_sum) for each run: linear is 10x, quadratic
# (the manifest rendered again for every part) 100x. The wall time is mostly the kernel creating
# files on the writer's threads, which does not tell recd's own cost on a loaded machine.
ten, hundred = b1 - b0, b2 - b1
ratio = hundred / max(ten, 0.05)
print("loop busy %.3fs and %.3fs: ratio %.1f (linear 10, quadratic 100)" % (ten, hundred, ratio))
assert ratio < 30, "100,000 switches kept the loop busy %.1fx as long as 10,000" % ratio
assert max(h10, h100) < 5 * scale, "/healthz took %.1fs to answer" % max(h10, h100)
PY
lag=$(metric_lines | python3 -c 'import sys
v = {l.split()[0]: float(l.split()[1]) for l in sys.stdin if l.startswith("recd_loop_lag_seconds_")}
print(int(v["recd_loop_lag_seconds_count"] - v["recd_loop_lag_seconds_bucket{le=\"1\"}"]))')
[ "$lag" = 0 ] || fail "$lag loop iterations took over a second"
stop
echo "recd stopped, every part finalized (${SECONDS}s into the test)"
python3 - "$root" <<'PY' || fail "the manifest of the 100,000-part session is wrong"
import json, os, sys
root = sys.argv[1]
m = json.load(open(os.path.join(root, "samp-player/k100k/k100k.json")))
parts = m["parts"]
assert m["complete"] and len(parts) == 100000, (m["complete"], len(parts))
assert all(p["complete"] for p in parts), "a part is not complete"
assert [p["type"] for p in parts[:2]] == ["onfoot", "vehicle"], parts[:2]
assert len({p["path"] for p in parts}) == 100000, "two parts share a name"
for p in parts[:3] + parts[-3:]:
    assert os.path.getsize(os.path.join(root, p["path"])) > 8, p
PY
rm -rf "$root"
echo "the manifest checked and the parts removed (${SECONDS}s)"
root=$tmp/out2

# The default limits.part_rate (10 a second): the flipping sender is refused and told why.
config 10
start_recd "$tmp/log" --config "$tmp/recd.yaml"
tcp=${tcp#tcp://}
read -r _ _ e r <<<"$(run flood 1000)"
case $r in
*"faster than limits.part_rate"*) ;;
*) fail "the flipping sender got no refusal naming limits.part_rate: $e '$r'" ;;
esac
refused=$(metric_lines | sed -n 's/^recd_state_refusals_total{what="player_parts"} //p')
[ "$refused" = 1 ] || fail "recd_state_refusals_total{what=\"player_parts\"} is '$refused', not 1"
grep -q "faster than limits.part_rate" "$tmp/log" || fail "no log line for the refusal"
stop
parts=$(find "$root" -name '*.rec' | wc -l)
[ "$parts" -le 10 ] || fail "$parts parts were written for the refused sender, over 10"
[ "$fails" -eq 0 ] || { tail -20 "$tmp/log"; exit 1; }
echo "PASS"
