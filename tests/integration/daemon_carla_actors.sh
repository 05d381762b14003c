# SPDX-License-Identifier: MIT
# Rule 1 of docs/reliability.md, "Round 3: bounds": a CARLA session that adds 100,000 actors with
# 2 KB blueprints and never deletes them, all in one frame. The live-actor table recd keeps (every
# later part starts with it) and the frame its writer holds back are held in the session's
# account: at its peer's share of held state (a quarter of limits.process_buffer: half of the half
# all sessions may hold) the add is refused with an error reply,
# recd_state_refusals_total{what="carla_actors"} counts it, and recd's resident memory stays within the limit plus a fixed overhead. The same for an actor added
# and deleted again 100,000 times in one frame (the frame held back grows, the table does not).
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v python3 >/dev/null || { echo "SKIP: python3 is needed to send the session"; exit 77; }
[ -r /proc/self/status ] || { echo "SKIP: no /proc to read recd's resident memory"; exit 77; }
recd_tmpdir daemon_carla_actors
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

cat >"$tmp/recd.yaml" <<YAML
listen:
  - tcp://127.0.0.1:0
output:
  root: $tmp/out
metrics:
  listen: 127.0.0.1:0
limits:
  process_buffer: 16MiB
  session_buffer: 1MiB
YAML
# The fixed overhead covers the allocator's slack, the JSON decoder and the writer's batches. A
# sanitizer build gets a small quarantine (or freed memory counts as held, as in
# rectool_send_stream) and four times the overhead for its redzones and allocator metadata.
overhead=$((12 * 1024))
if grep -q '^RECD_SANITIZE:BOOL=ON' "$RECD_BUILD_DIR/CMakeCache.txt" 2>/dev/null; then
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4"
    overhead=$((48 * 1024))
fi
start_recd "$tmp/log" --config "$tmp/recd.yaml"
tcp=${tcp#tcp://}
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$recd_pid/status"; }
hwm_kib() { awk '/^VmHWM:/ {print $2}' "/proc/$recd_pid/status"; } # the peak of VmRSS
metric() { # NAME{LABELS}: its value from /metrics
    python3 - "$metrics" "$1" <<'PY'
import sys, urllib.request
text = urllib.request.urlopen("http://%s/metrics" % sys.argv[1], timeout=60).read().decode()
for line in text.splitlines():
    if line.startswith(sys.argv[2] + " "):
        print(line.split()[-1])
        break
else:
    print("missing")
PY
}
before=$(rss_kib)
python3 "$(dirname "$0")/daemon_carla_actors.py" "$tcp" 100000 2000 >"$tmp/sent" 2>"$tmp/sent.err" ||
    fail "the sender failed: $(tail -3 "$tmp/sent.err")"
after=$(hwm_kib)
# The account: half of process_buffer (8 MiB) for the actors, the rest for buffered bytes; the
# fixed overhead covers the allocator's slack, the JSON decoder and the writer's batches.
limit=$((before + 16 * 1024 + overhead))
echo "VmRSS $before KiB before, at most $after KiB during 100,000 actor adds of 2 KB (bound $limit KiB)"
[ "$after" -le "$limit" ] || fail "recd's resident memory grew to $after KiB, over $limit KiB"
replies=$(head -1 "$tmp/sent")
reply=$(sed -n 2p "$tmp/sent")
echo "error replies: $replies; first: $reply"
case $reply in
*"live actors"*"a quarter of limits.process_buffer"*) ;;
*) fail "the sender got no refusal naming the bound: '$reply'" ;;
esac
refused=$(metric 'recd_state_refusals_total{what="carla_actors"}')
[ "$refused" = 1 ] || fail "recd_state_refusals_total{what=\"carla_actors\"} is $refused, not 1"
grep -q "an event of [0-9]* bytes refused" "$tmp/log" || fail "no log line for the refusal"
# The session lives on (a sender may resume it): its actors stay held, within the bound.
held=$(metric recd_session_state_bytes)
[ "$held" != missing ] && [ "$held" -gt $((2 << 20)) ] && [ "$held" -le $((4 << 20)) ] ||
    fail "recd_session_state_bytes is $held, not within 2 .. 4 MiB"
kill -TERM "$recd_pid"
wait "$recd_pid"

# The frame the writer holds back until the next state is in the same account: an actor added
# and deleted again, 100,000 times in one frame, leaves the table empty and the frame growing.
start_recd "$tmp/log2" --config "$tmp/recd.yaml"
tcp=${tcp#tcp://}
before=$(rss_kib)
python3 "$(dirname "$0")/daemon_carla_actors.py" "$tcp" 100000 2000 churn >"$tmp/sent" 2>"$tmp/sent.err" ||
    fail "the churning sender failed: $(tail -3 "$tmp/sent.err")"
after=$(hwm_kib)
limit=$((before + 16 * 1024 + overhead))
echo "VmRSS $before KiB before, at most $after KiB during 100,000 adds and deletes in one frame (bound $limit KiB)"
[ "$after" -le "$limit" ] || fail "recd's resident memory grew to $after KiB, over $limit KiB"
reply=$(sed -n 2p "$tmp/sent")
case $reply in
*"frame held back"*"a quarter of limits.process_buffer"*) ;;
*) fail "the churning sender got no refusal naming the bound: '$reply'" ;;
esac
refused=$(metric 'recd_state_refusals_total{what="carla_actors"}')
[ "$refused" = 1 ] || fail "churn: recd_state_refusals_total{what=\"carla_actors\"} is $refused, not 1"
[ "$fails" -eq 0 ] || { tail -n 20 "$tmp/log" "$tmp/log2"; exit 1; }
echo "PASS"
