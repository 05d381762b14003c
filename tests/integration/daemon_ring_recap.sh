# SPDX-License-Identifier: MIT
# recd instant replay for Recap sessions: a session opened with ring: true writes nothing until a
# save. Three saves of one 20 s session (400 ticks): the wire save message, POST
# /sessions/KEY/save and a state that carries the save flag. Each writes a .recap of its own that
# rectool verify accepts, whose header starts at the first tick kept and whose first tick is a
# FULL_STATE: its reader state at every tick equals the original's at the same moment (movement
# within its delta resolution) (checked
# through rectool export, tick by tick, from the first). Then, at ring.session_memory, the drops
# are counted and a save still starts from a FULL_STATE.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v python3 >/dev/null || { echo "SKIP: python3 is needed to send the sessions"; exit 77; }
recd_tmpdir daemon_ring_recap
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"

cat >"$tmp/recd.yaml" <<YAML
listen:
  - tcp://127.0.0.1:0
output:
  root: $tmp/rec
metrics:
  listen: 127.0.0.1:0
ring:
  window: 1h
YAML
start_recd "$tmp/log" --config "$tmp/recd.yaml"
tcp=${tcp#tcp://}

expect 0 "$RECTOOL" generate --format recap --scenario mixed --duration 20s --seed 5 -o "$tmp/a.recap"
"$RECTOOL" export "$tmp/a.recap" --to jsonl >"$tmp/a.jsonl" || fail "rectool export a.recap"

# send.py ADDR JSONL: session "rr" opened with ring: true gets the recording's messages; before
# tick 300 goes a save of the last 5 s (label rr-clip); the state of tick 350 carries the save
# flag. It prints "sent", waits for a line on stdin (the POST save), then closes the session.
cat >"$tmp/send.py" <<'PY'
import json, socket, sys
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)))
out = b""
saved = False
for line in open(sys.argv[2]):
    m = json.loads(line)
    if m["type"] == "close":
        break
    m["session"] = "rr"
    if m["type"] == "open":
        m["ring"] = True
    if m.get("tick", 0) >= 300 and not saved:
        out += json.dumps({"type": "save", "session": "rr", "last_ms": 5000, "label": "rr-clip"}).encode() + b"\n"
        saved = True
    if m["type"] == "state" and m["tick"] == 350:
        m["save"] = True
    out += json.dumps(m).encode() + b"\n"
s.sendall(out)
sys.stdout.write("sent\n")
sys.stdout.flush()
sys.stdin.readline()
s.sendall(json.dumps({"type": "close", "session": "rr"}).encode() + b"\n")
s.shutdown(socket.SHUT_WR)
s.settimeout(10)
reply = s.recv(4096)
if reply:
    sys.exit("daemon replied: %r" % reply)
PY
grep -q '"tick":350,' "$tmp/a.jsonl" || fail "the recording has no state at tick 350 (the flag test needs one)"

mkfifo "$tmp/hold"
python3 "$tmp/send.py" "$tcp" "$tmp/a.jsonl" <"$tmp/hold" >"$tmp/sent.out" &
sender=$!
exec 3>"$tmp/hold"
for _ in $(seq $((300 * ${RECD_TEST_TIME_SCALE:-1}))); do
    grep -q sent "$tmp/sent.out" 2>/dev/null && break
    kill -0 "$sender" 2>/dev/null || break
    sleep 0.1
done
grep -q sent "$tmp/sent.out" || fail "the sender did not send everything"
# The last tick (399) is in the ring once the session is flushed by its clock (flush.interval).
for _ in $(seq $((100 * ${RECD_TEST_TIME_SCALE:-1}))); do
    got=$(python3 - "$metrics" <<'PY'
import sys, urllib.error, urllib.request
req = urllib.request.Request("http://%s/sessions/rr/save?last=2s&label=rr-post" % sys.argv[1], data=b"", method="POST")
try:
    print(urllib.request.urlopen(req, timeout=10).status)
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode().strip())
PY
)
    [ "$got" = 200 ] && break
    sleep 0.1
done
[ "$got" = 200 ] || fail "POST /sessions/rr/save: $got"
echo >&3
exec 3>&-
wait "$sender" || fail "the sender"
kill -TERM "$recd_pid"
wait "$recd_pid" || fail "recd exited with $? after SIGTERM"
recd_pid=

# Nothing but the saves was written.
find "$tmp/rec" -name '*.recap' | sort >"$tmp/files"
[ "$(grep -c . "$tmp/files")" = 3 ] || fail "expected three saved files: $(cat "$tmp/files")"
grep -q '/rr/rr-clip\.recap$' "$tmp/files" || fail "no rr-clip.recap"
grep -q '/rr/rr-post\.recap$' "$tmp/files" || fail "no rr-post.recap"
grep -q '/rr/replay-[0-9]*\.recap$' "$tmp/files" || fail "no replay-EPOCHMS.recap (the flagged state)"

# check.py ORIGINAL.jsonl CLIP.jsonl FIRST LAST: the clip covers original ticks FIRST..LAST (its
# header's start_time says FIRST), starts with a state at its tick 0, and its reader state equals
# the original's at every tick.
cat >"$tmp/check.py" <<'PY'
import json, sys
def states(path):
    head, st, last = None, {}, None
    for l in open(path):
        m = json.loads(l)
        if m["type"] == "open":
            head = m["recap"]
        elif m["type"] == "state":
            st[m["tick"]] = (m["pos"], m["rot"], m["health"])
    return head, st
def reader(st, n):
    cur, out = None, []
    for t in range(n):
        cur = st.get(t, cur)
        out.append(cur)
    return out
oh, ost = states(sys.argv[1])
ch, cst = states(sys.argv[2])
first, last = int(sys.argv[3]), int(sys.argv[4])
base = (ch["start_time"] - oh["start_time"]) // 50
assert base == first, "clip starts at original tick %d, expected %d" % (base, first)
assert 0 in cst, "the clip's first tick has no state (no FULL_STATE)"
assert ch["frame_count"] == last - first + 1, ch["frame_count"]
o = reader(ost, oh["frame_count"])
c = reader(cst, ch["frame_count"])
# Movement is delta-coded with a fixed resolution (recap.md), so a reader's state is within it
# of the one a keyframe gives exactly; everything else is equal.
near = lambda a, b: all(abs(x - y) < 0.01 for x, y in zip(a, b))
for i in range(ch["frame_count"]):
    a, b = c[i], o[base + i]
    assert near(a[0], b[0]) and near(a[1], b[1]) and a[2] == b[2], \
        "tick %d (original %d): %r != %r" % (i, base + i, a, b)
PY
check() { # FILE FIRST LAST
    expect 0 "$RECTOOL" verify "$1"
    "$RECTOOL" export "$1" --to jsonl >"$tmp/clip.jsonl" || fail "rectool export $1"
    python3 "$tmp/check.py" "$tmp/a.jsonl" "$tmp/clip.jsonl" "$2" "$3" 2>"$tmp/check.err" ||
        fail "$(basename "$1"): $(tail -1 "$tmp/check.err")"
}
# The save before tick 300 holds the ticks up to the last one before 300 that has a message
# (L): the last 5 s are L-100..L. The flag of tick 350 saves the whole window once that tick is
# complete: 0..350. The POST's last 2 s end at tick 399: 359..399.
last=$(python3 -c 'import json,sys; print(max(json.loads(l).get("tick",0) for l in open(sys.argv[1]) if json.loads(l).get("tick",0)<300))' "$tmp/a.jsonl")
check "$tmp/rec/recap/rr/rr-clip.recap" $((last - 100)) "$last"
check "$(grep '/replay-' "$tmp/files")" 0 350
check "$tmp/rec/recap/rr/rr-post.recap" 359 399

# At its memory bound: ring.session_memory 64 KiB holds fewer than the 400 ticks. What it lets go
# is counted (per sample) in recd_samples_dropped_total{reason="ring_session_memory"}; a save
# of the whole window starts at a tick the bound left, from the state the ticks before it left
# (its first tick may have only events or nothing): still a file of its own from a FULL_STATE.
mv "$tmp/log" "$tmp/log1"
sed -i 's/^  window: 1h$/  window: 1h\n  session_memory: 64KiB/' "$tmp/recd.yaml"
start_recd "$tmp/log" --config "$tmp/recd.yaml"
tcp=${tcp#tcp://}
python3 "$(dirname "$0")/../shell/ring_clip.py" "$tcp" "$tmp/a.jsonl" rb rb-all || fail "the bounded session's sender"
dropped=$(python3 "$(dirname "$0")/../shell/metric.py" "$metrics" \
    'recd_samples_dropped_total{reason="ring_session_memory"}')
kill -TERM "$recd_pid"
wait "$recd_pid" || fail "recd exited with $? after SIGTERM"
recd_pid=
[ "${dropped:-0}" -gt 0 ] || fail "no ring_session_memory drops counted (got '$dropped')"
f="$tmp/rec/recap/rb/rb-all.recap"
if [ -f "$f" ]; then
    expect 0 "$RECTOOL" verify "$f"
    "$RECTOOL" export "$f" --to jsonl >"$tmp/clip.jsonl" || fail "rectool export rb-all"
    first=$(python3 -c 'import json,sys; h=[json.loads(l)["recap"] for l in open(sys.argv[1]) if "\"open\"" in l]; o=[json.loads(l)["recap"] for l in open(sys.argv[2]) if "\"open\"" in l]; print((h[0]["start_time"]-o[0]["start_time"])//50)' "$tmp/clip.jsonl" "$tmp/a.jsonl")
    [ "$first" -gt 0 ] || fail "the bounded save starts at tick $first: the bound let nothing go"
    python3 "$tmp/check.py" "$tmp/a.jsonl" "$tmp/clip.jsonl" "$first" 399 2>"$tmp/check.err" ||
        fail "rb-all.recap: $(tail -1 "$tmp/check.err")"
else
    fail "no rb-all.recap"
fi

if [ "$failures" -ne 0 ]; then
    cat "$tmp/log1" "$tmp/log" >&2
    exit 1
fi
echo "instant replay: Recap saves stand alone, each from a FULL_STATE, also at the memory bound"
