# SPDX-License-Identifier: MIT
# recd CARLA round trip: the real CARLA 0.9.13 log of the shared corpus and a generated 0.9.16 log (50 actors), sent with
# `rectool send` over TCP and over UDP, comes out of the daemon byte-identical; a state with
# platform_time in a session without additional_data is refused with its reason.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
require_corpus carla
recd_tmpdir daemon_carla
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"

cat >"$tmp/recd.yaml" <<YAML
listen:
  - tcp://127.0.0.1:0
  - udp://127.0.0.1:0
output:
  root: $tmp/out
metrics:
  enabled: false
flush:
  interval: 100ms
limits:
  # UDP has no backpressure: the whole 1.7 MB log sent at full speed must fit the buffer
  session_buffer: 64MiB
YAML
start_recd "$tmp/log" --config "$tmp/recd.yaml"

"$RECTOOL" generate --format carla --actors 50 --duration 10s --seed 5 -o "$tmp/generated.log" >/dev/null ||
    fail "generate a CARLA log"
sent=0
i=0
for f in "$corpus"/*.log "$tmp/generated.log"; do
    "$RECTOOL" verify "$f" >/dev/null 2>&1 || continue
    i=$((i + 1))
    for transport in tcp udp; do
        url=$tcp
        [ "$transport" = udp ] && url=$udp
        if ! "$RECTOOL" send "$f" --to "$url" --session "$transport-$i" --speed max >"$tmp/send.out" 2>&1; then
            fail "rectool send $(basename "$f") over $transport: $(cat "$tmp/send.out")"
        fi
        sent=$((sent + 1))
    done
    echo "$i $f" >>"$tmp/sent"
done
[ "$sent" -eq 4 ] || fail "sent $sent sessions, not 4"
# NDJSON too: the same messages as JSON lines
"$RECTOOL" send "$tmp/generated.log" --to "$tcp?encoding=ndjson" --session ndjson-1 --speed max \
    >"$tmp/send.out" 2>&1 || fail "rectool send as NDJSON (exit $?): $(cat "$tmp/send.out")"
# PlatformTime without additional_data would make a log that does not read back as written: the
# daemon refuses the state with the reason, and what it wrote of the session still exports.
python3 - "${tcp#tcp://}" >"$tmp/refused.out" 2>&1 <<'PY' || fail "platform_time without additional_data: $(cat "$tmp/refused.out")"
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)), timeout=30)
s.sendall(b'{"type":"open","session":"refused","format":"carla","carla":{"map":"Town01"}}\n'
          b'{"type":"state","frame":1,"elapsed":0,"platform_time":0.5}\n'
          b'{"type":"state","frame":2,"elapsed":0.05,"platform_time":0.6}\n{"type":"close"}\n')
s.shutdown(socket.SHUT_WR)
reply = b""
while True:
    d = s.recv(4096)
    if not d:
        break
    reply += d
if b'"type":"error"' not in reply or b"additional_data" not in reply:
    sys.exit(f"no error reply naming additional_data: {reply!r}")
PY

kill -TERM "$recd_pid"
wait "$recd_pid"
code=$?
recd_pid=
[ "$code" -eq 0 ] || fail "recd exited with $code after SIGTERM"
refused=$(find "$tmp/out" -path "*/refused/*" -type f ! -name "*.idx")  # a seek index beside it: daemon_seek_index.sh
if [ -n "$refused" ] && ! "$RECTOOL" export "$refused" --to jsonl >/dev/null 2>"$tmp/refused.err"; then
    fail "the refused session's file does not export: $(cat "$tmp/refused.err")"
fi
expect_no_parts "$tmp/out"
expect_sent_back "$tmp/sent" "$tmp/out" tcp udp
ndjson_out=$(find "$tmp/out" -path "*/ndjson-1/*" -type f ! -name "*.idx")
cmp -s "$tmp/generated.log" "$ndjson_out" || fail "the generated log sent as NDJSON comes out different"

# Rotation: every part is a log of its own (frames from 1, time from 0), and a part after the
# first starts with an EventAdd for every actor alive when it began.
cat >"$tmp/rot.yaml" <<YAML
listen:
  - tcp://127.0.0.1:0
output:
  root: $tmp/rot
metrics:
  enabled: false
rotation:
  max_size: 256KiB
YAML
start_recd "$tmp/rot.log" --config "$tmp/rot.yaml"
rot_url=$tcp
"$RECTOOL" send "$tmp/generated.log" --to "$rot_url" --session rotated --speed max >"$tmp/send.out" 2>&1 ||
    fail "send for rotation: $(cat "$tmp/send.out")"
kill -TERM "$recd_pid"
wait "$recd_pid"
recd_pid=
parts=$(find "$tmp/rot" -name '*.log' -type f | sort)
nparts=$(printf '%s\n' "$parts" | grep -c .)
[ "$nparts" -ge 3 ] || fail "rotation at 256 KiB made $nparts parts of an 870 KB log"
for p in $parts; do
    "$RECTOOL" verify "$p" >/dev/null || fail "part $(basename "$p") does not verify"
    "$RECTOOL" info --json "$p" >"$p.json" || fail "info --json $(basename "$p")"
done
python3 - $(for p in $parts; do printf '%s.json ' "$p"; done) <<'PY' || fail "rotated parts do not replay on their own"
import json, sys
live = set()
for n, path in enumerate(sys.argv[1:]):
    info = json.load(open(path))["carla"]
    events = info["events"]
    first = [e for e in events if e["frame"] == 1]
    adds = {e["record"]["id"] for e in first if e["kind"] == "add"}
    if n and not live <= adds:
        sys.exit(f"{path}: frame 1 adds {len(adds)} actors, {len(live - adds)} live ones missing")
    for e in events:
        if e["kind"] == "add":
            live.add(e["record"]["id"])
        elif e["kind"] == "delete":
            live.discard(e["record"]["id"])
    if events and events[0]["frame"] != 1:
        sys.exit(f"{path}: does not start at frame 1")
PY
for p in $parts; do
    python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["carla"]; sys.exit(c["frames"] < 2)' "$p.json" ||
        fail "part $(basename "$p") holds less than 2 frames"
done

# kill -9 in the middle of an episode: at the next start recovery cuts the torn frame, and the
# log verifies and ends as CARLA's do (last duration -1).
cat >"$tmp/kill.yaml" <<YAML
listen:
  - tcp://127.0.0.1:0
output:
  root: $tmp/kill
metrics:
  enabled: false
flush:
  interval: 100ms
YAML
start_recd "$tmp/kill.log" --config "$tmp/kill.yaml"
kill_url=$tcp
"$RECTOOL" send "$tmp/generated.log" --to "$kill_url" --session killed --speed 1 >/dev/null 2>&1 &
sender=$!
for _ in $(seq 300); do # up to 30 s for the episode's first flush
    find "$tmp/kill" -name '*.part' 2>/dev/null | grep -q . && break
    sleep 0.1
done
kill -9 "$recd_pid"
wait "$recd_pid" 2>/dev/null
kill "$sender" 2>/dev/null
wait "$sender" 2>/dev/null
find "$tmp/kill" -name '*.part' | grep -q . || fail "no .part file after kill -9 mid-episode"
start_recd "$tmp/kill2.log" --config "$tmp/kill.yaml"
kill -TERM "$recd_pid"
wait "$recd_pid"
recd_pid=
recovered=$(find "$tmp/kill" -name '*.log' -type f)
if [ -z "$recovered" ] || find "$tmp/kill" -name '*.part*' | grep -q .; then
    fail "recovery left: $(find "$tmp/kill" -type f)"
else
    "$RECTOOL" verify "$recovered" >"$tmp/kv" 2>&1 || fail "the recovered log does not verify: $(cat "$tmp/kv")"
    python3 "$RECD_CORPUS_DIR/carla/carla_log_reader.py" "$recovered" >"$tmp/kst"
    grep -q "last_durationThis=-1 truncated=False" "$tmp/kst" || fail "recovered log: $(head -3 "$tmp/kst")"
    grep -q "size mismatches: none" "$tmp/kst" || fail "recovered log has packets that do not fill their size"
fi

if [ "$failures" -ne 0 ]; then
    sed 's/^/    recd: /' "$tmp/log" | tail -40 >&2
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "$sent CARLA sessions came out byte-identical; rotation made $nparts parts that replay on their own"
