# SPDX-License-Identifier: MIT
# recd instant replay for CARLA sessions, and CARLA logs that replay alone from their first frame.
# A 10-actor, 20 s CARLA session (rectool generate, 401 frames) is changed so that the traffic
# lights' states come only every 2 s and the weather twice (frames 3 and 250). Sent with ring:
# true (ring.window 5s), it is saved three ways: a wire save message (the last 4 s before 12 s),
# a state with the save flag (the whole window, at 15 s) and POST /sessions/KEY/save (the last
# 3 s). Each save passes rectool verify and, read alone by the reference reader
# (../shared/corpus/carla/carla_log_reader.py), has packets its records fill exactly, frames from
# 1 and time from 0, knows every actor that moves in it, and its first frame holds every light's
# last state and the last weather. The same session sent without a ring and cut by
# rotation.max_size 64KiB: every part after the first holds the same in its first frame. Then,
# at ring.session_memory 64KiB, the ring's drops are counted and a save of it still stands alone.
# Skipped (77) without the corpus.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v python3 >/dev/null || { echo "SKIP: python3 is needed to send and read the logs"; exit 77; }
require_corpus carla
reader_dir=$corpus
[ -f "$reader_dir/carla_log_reader.py" ] ||
    { echo "SKIP: the CARLA reference reader ($reader_dir/carla_log_reader.py) is absent"; exit 77; }
recd_tmpdir daemon_carla_ring
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"

cat >"$tmp/recd.yaml" <<YAML
listen:
  - tcp://127.0.0.1:0
output:
  root: $tmp/rec
metrics:
  listen: 127.0.0.1:0
rotation:
  max_size: 64KiB
ring:
  window: 5s
YAML
start_recd "$tmp/log" --config "$tmp/recd.yaml"
tcp=${tcp#tcp://}

expect 0 "$RECTOOL" generate --format carla --actors 10 --duration 20s --seed 3 -o "$tmp/c.log"
"$RECTOOL" export "$tmp/c.log" --to jsonl >"$tmp/c.jsonl" || fail "rectool export c.log"
# Lights only every 40th frame; weather at frames 3 and 250. sum.json: each frame's elapsed, light
# states and weather cloudiness, for the checks.
python3 - "$tmp/c.jsonl" "$tmp/a.jsonl" "$tmp/sum.json" <<'PY' || fail "preparing the session"
import json, sys
w = {k: 0.5 for k in ("cloudiness", "precipitation", "precipitation_deposits", "wind_intensity",
     "sun_azimuth_angle", "sun_altitude_angle", "fog_density", "fog_distance", "fog_falloff",
     "wetness", "scattering_intensity", "mie_scattering_scale", "rayleigh_scattering_scale",
     "dust_storm")}
out, frames = open(sys.argv[2], "w"), []
for line in open(sys.argv[1]):
    m = json.loads(line)
    if m["type"] == "state":
        if m["frame"] % 40 != 1:
            m.pop("traffic_lights", None)
        if m["frame"] in (3, 250):
            m["weather"] = [dict(w, cloudiness=float(m["frame"]))]
        frames.append({"elapsed": m["elapsed"],
                       "lights": {x["id"]: x["state"] for x in m.get("traffic_lights", [])},
                       "cloudiness": m["weather"][-1]["cloudiness"] if "weather" in m else None})
    out.write(json.dumps(m) + "\n")
json.dump(frames, open(sys.argv[3], "w"))
PY

# send.py ADDR JSONL KEY RING: the session as KEY (ring: true when RING is 1). With a ring, a save
# of the last 4 s (cr-clip) goes before the first state at 12 s or later, and the first state at
# 15 s or later carries the save flag. A save for an unknown session at the end: its error reply
# (recd then closes the connection; the session stays open) tells that every message before it
# was taken. Then it prints "sent" and waits for a line on stdin.
cat >"$tmp/send.py" <<'PY'
import json, socket, sys
host, port = sys.argv[1].rsplit(":", 1)
key, ring = sys.argv[3], sys.argv[4] == "1"
s = socket.create_connection((host, int(port)))
out, clip, flag = b"", False, False
for line in open(sys.argv[2]):
    m = json.loads(line)
    if m["type"] == "close":
        break
    m["session"] = key
    if m["type"] == "open":
        m["ring"] = ring
    if ring and m["type"] == "state" and m["elapsed"] >= 12 and not clip:
        out += json.dumps({"type": "save", "session": key, "last_ms": 4000, "label": "cr-clip"}).encode() + b"\n"
        clip = True
    if ring and m["type"] == "state" and m["elapsed"] >= 15 and not flag:
        m["save"] = True
        flag = True
    out += json.dumps(m).encode() + b"\n"
out += json.dumps({"type": "save", "session": "no-such", "last_ms": 1, "label": "x"}).encode() + b"\n"
s.sendall(out)
s.settimeout(60)
reply = b""
while b"\n" not in reply:
    chunk = s.recv(4096)
    if not chunk:
        sys.exit("the daemon closed the connection")
    reply += chunk
if b"no-such" not in reply:
    sys.exit("daemon replied: %r" % reply)
sys.stdout.write("sent\n")
sys.stdout.flush()
sys.stdin.readline()
PY

post_save() { # KEY LAST LABEL: prints the status
    python3 - "$metrics" "$1" "$2" "$3" <<'PY'
import sys, urllib.error, urllib.request
url = "http://%s/sessions/%s/save?last=%s&label=%s" % tuple(sys.argv[1:5])
try:
    print(urllib.request.urlopen(urllib.request.Request(url, data=b"", method="POST"), timeout=10).status)
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode().strip())
PY
}

mkfifo "$tmp/hold"
python3 "$tmp/send.py" "$tcp" "$tmp/a.jsonl" cr 1 <"$tmp/hold" >"$tmp/sent.out" 2>"$tmp/sent.err" &
sender=$!
exec 3>"$tmp/hold"
python3 "$tmp/send.py" "$tcp" "$tmp/a.jsonl" cp 0 </dev/null >/dev/null 2>"$tmp/sent-cp.err" ||
    fail "the rotated session's sender: $(tail -1 "$tmp/sent-cp.err")"
for _ in $(seq $((900 * ${RECD_TEST_TIME_SCALE:-1}))); do
    grep -q sent "$tmp/sent.out" 2>/dev/null && break
    kill -0 "$sender" 2>/dev/null || break
    sleep 0.1
done
grep -q sent "$tmp/sent.out" || fail "the ring session's sender: $(tail -1 "$tmp/sent.err")"
got=$(post_save cr 3s cr-post)
[ "$got" = 200 ] || fail "POST /sessions/cr/save: $got"
echo >&3
exec 3>&-
wait "$sender" || fail "the ring session's sender: $(tail -1 "$tmp/sent.err")"
kill -TERM "$recd_pid"
wait "$recd_pid" || fail "recd exited with $? after SIGTERM"
recd_pid=

# check.py READER sum.json LOG FIRST [LOG FIRST]...: each LOG, read alone, holds the
# original's frames from index FIRST on (as many as it has; FIRST "+": from where the LOG before
# ended), renumbered from 1 and rebased to 0; every packet is filled by its records; every actor
# that moves was added in LOG before; the first frame holds every light sent up to it, each with
# its last state, and the last weather sent. Prints the frames of each.
cat >"$tmp/check.py" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
import carla_log_reader as r
orig = json.load(open(sys.argv[2]))
def check(path, first):
    buf = open(path, "rb").read()
    hdr, vw, vf, vsz, start = r.read_file(buf)
    known, dels, frames, moved = set(), [], [], set()
    lights, weather = {}, []
    for pid, size, s, e in r.iter_packets(buf, start):
        assert e <= len(buf), "%s: truncated" % path
        recs, used = r.parse_payload(pid, buf, s, e, vf, vsz)
        if recs is None:
            continue
        assert used == size, "%s: packet %d of %d bytes holds %d" % (path, pid, size, used)
        if pid == 0:
            frames.append(recs[0])
            known.difference_update(dels)
            dels = []
        elif pid == 2:
            known.update(x[0] for x in recs)
        elif pid == 3:
            dels += [x[0] if isinstance(x, tuple) else x for x in recs]
        elif pid == 6:
            for x in recs:
                assert x[0] in known, "%s: actor %d moves in frame %d, never added" % (path, x[0], len(frames))
                moved.add(x[0])
        elif pid == 7 and len(frames) == 1:
            lights.update((x[0], x) for x in recs)
        elif pid == 24 and len(frames) == 1:
            weather += recs
    n = len(frames)
    assert n and first + n <= len(orig), "%s: %d frames from %d, of %d" % (path, n, first, len(orig))
    assert moved, "%s: no actor moves" % path
    base = orig[first]["elapsed"]
    for i, (fid, dur, el) in enumerate(frames):
        o = orig[first + i]
        assert fid == i + 1, "%s: frame %d has id %d" % (path, i + 1, fid)
        assert abs(el - (o["elapsed"] - base)) < 1e-6, \
            "%s: frame %d at %r, expected %r" % (path, i + 1, el, o["elapsed"] - base)
    assert frames[-1][1] == -1, "%s: the last frame's duration is %r" % (path, frames[-1][1])
    want_l, want_w = {}, None
    for o in orig[:first + 1]:
        want_l.update((int(i), st) for i, st in o["lights"].items())
        if o["cloudiness"] is not None:
            want_w = o["cloudiness"]
    assert want_l, "the original sends no lights before frame %d" % first
    assert set(lights) == set(want_l), \
        "%s: first frame has lights %s, expected %s" % (path, sorted(lights), sorted(want_l))
    for i, x in lights.items():
        assert x[3] == want_l[i], \
            "%s: light %d in state %d, last sent %d" % (path, i, x[3], want_l[i])
    if want_w is None:
        assert not weather, "%s: weather before any was sent" % path
    else:
        assert weather and abs(weather[-1][0] - want_w) < 1e-3, \
            "%s: first frame weather %r, last sent cloudiness %r" % (path, weather, want_w)
    return n
at = 0
args = sys.argv[3:]
for k in range(0, len(args), 2):
    first = at if args[k + 1] == "+" else int(args[k + 1])
    n = check(args[k], first)
    at = first + n
    print(n)
PY
check() { # LOG FIRST-INDEX [LOG FIRST-INDEX]...: sets n to the frames of each
    n=$(python3 "$tmp/check.py" "$reader_dir" "$tmp/sum.json" "$@" 2>"$tmp/check.err") ||
        fail "$(tail -1 "$tmp/check.err")"
}
frames_of() { # LOG: sets n to its frames, read alone
    n=$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import carla_log_reader as r
b = open(sys.argv[2], "rb").read()
print(sum(1 for p in r.iter_packets(b, r.read_file(b)[4]) if p[0] == 0))' "$reader_dir" "$1")
}
# The index of the first frame of the last MS milliseconds up to frame LAST (its index), by the
# ring's clock (integer milliseconds of elapsed).
first_of() { # LAST MS
    python3 - "$tmp/sum.json" "$1" "$2" <<'PY'
import json, sys
st = json.load(open(sys.argv[1]))
last, ms = int(sys.argv[2]), int(sys.argv[3])
t = lambda i: int(st[i]["elapsed"] * 1000)
print(min(i for i in range(last + 1) if t(i) >= t(last) - ms))
PY
}
index_at() { # SECONDS: the index of the first state at or after it
    python3 -c 'import json,sys; st=json.load(open(sys.argv[1]))
print(min(i for i, m in enumerate(st) if m["elapsed"] >= float(sys.argv[2])))' "$tmp/sum.json" "$1"
}
total=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$tmp/sum.json")
ring_dir=$tmp/rec/carla/cr
ls "$ring_dir" | grep "\.log$" >"$tmp/saves"
[ "$(grep -c . "$tmp/saves")" = 3 ] || fail "expected three saves in $ring_dir: $(cat "$tmp/saves")"
clip_last=$(( $(index_at 12) - 1 ))
for f in $(cat "$tmp/saves"); do expect 0 "$RECTOOL" verify "$ring_dir/$f"; done
# current FILE: its index, fed by the save's frames, is what `rectool index` builds of it.
current() {
    [ -s "$1.idx" ] || { fail "no index beside $1"; return; }
    cp "$1.idx" "$tmp/kept.idx"
    "$RECTOOL" index -q "$1" && cmp -s "$1.idx" "$tmp/kept.idx" ||
        fail "index of $1 differs from a rebuilt one"
}
for f in $(cat "$tmp/saves"); do current "$ring_dir/$f"; done
check "$ring_dir/cr-clip.log" "$(first_of "$clip_last" 4000)"
[ "${n:-0}" = $((clip_last - $(first_of "$clip_last" 4000) + 1)) ] || fail "cr-clip holds $n frames"
flag=$(index_at 15)
replay=$(grep '^replay-[0-9]*\.log$' "$tmp/saves")
[ -n "$replay" ] || fail "no replay-EPOCHMS.log (the flagged state)"
check "$ring_dir/$replay" "$(first_of "$flag" 5000)"
[ "${n:-0}" = $((flag - $(first_of "$flag" 5000) + 1)) ] || fail "$replay holds $n frames"
check "$ring_dir/cr-post.log" "$(first_of $((total - 1)) 3000)"
[ "${n:-0}" = $((total - $(first_of $((total - 1)) 3000))) ] || fail "cr-post holds $n frames"

# The rotated session: its parts in order, each from where the one before ended.
ls "$tmp/rec/carla/cp"/*.log | sort -V >"$tmp/parts"
[ "$(grep -c . "$tmp/parts")" -ge 3 ] || fail "the session was not rotated enough: $(cat "$tmp/parts")"
set --
while read -r p; do
    expect 0 "$RECTOOL" verify "$p"
    current "$p"
    set -- "$@" "$p" +
done <"$tmp/parts"
check "$@"
at=$(echo "$n" | awk '{ s += $1 } END { print s }')
[ "$at" = "$total" ] || fail "the parts hold $at frames of $total"

# At its memory bound: ring.session_memory 64KiB holds about 20 of the 401 frames.
mv "$tmp/log" "$tmp/log1"
sed -i 's/^  window: 5s$/  window: 1h\n  session_memory: 64KiB/' "$tmp/recd.yaml"
start_recd "$tmp/log" --config "$tmp/recd.yaml"
tcp=${tcp#tcp://}
python3 "$(dirname "$0")/../shell/ring_clip.py" "$tcp" "$tmp/a.jsonl" cm cm-all || fail "the bounded ring's sender"
dropped=$(python3 "$(dirname "$0")/../shell/metric.py" "$metrics" \
    'recd_samples_dropped_total{reason="ring_session_memory"}')
kill -TERM "$recd_pid"
wait "$recd_pid" || fail "recd exited with $? after SIGTERM"
recd_pid=
[ "${dropped:-0}" -gt 0 ] || fail "no ring_session_memory drops counted (got '$dropped')"
f="$tmp/rec/carla/cm/cm-all.log"
if [ -f "$f" ]; then
    frames_of "$f"
    [ "${n:-0}" -gt 0 ] && [ "$n" -lt "$total" ] || fail "cm-all holds $n frames of $total"
    expect 0 "$RECTOOL" verify "$f"
    check "$f" $((total - ${n:-0}))
else
    fail "no cm-all.log"
fi

if [ "$failures" -ne 0 ]; then
    cat "$tmp/log1" "$tmp/log" >&2
    exit 1
fi
echo "instant replay: CARLA saves and rotated parts replay alone, lights and weather included"
