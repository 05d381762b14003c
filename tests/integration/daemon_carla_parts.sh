# SPDX-License-Identifier: MIT
# CARLA parts that replay alone: a 500-actor CARLA session (rectool generate, 10 s, 201 frames,
# about 8 MB) sent to recd with rotation.max_size 1 MiB is cut into several parts; each part,
# read alone by the reference reader (../shared/corpus/carla/carla_log_reader.py), has packets
# its records fill exactly and knows every actor that moves in it (an EventAdd before its first
# Position; an EventDel takes effect at its frame's end, as in CARLA's own logs), and each part
# after the first re-adds every live actor at its last position in the part before (the
# previous part's last Position record of it, byte for byte). Skipped (77) without the corpus.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v python3 >/dev/null || { echo "SKIP: python3 is needed to read the parts"; exit 77; }
require_corpus carla
reader_dir=$corpus
[ -f "$reader_dir/carla_log_reader.py" ] ||
    { echo "SKIP: the CARLA reference reader ($reader_dir/carla_log_reader.py) is absent"; exit 77; }
recd_tmpdir daemon_carla_parts
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"

cat >"$tmp/recd.yaml" <<YAML
listen:
  - tcp://127.0.0.1:0
output:
  root: $tmp/rec
rotation:
  max_size: 1MiB
YAML
start_recd "$tmp/log" --config "$tmp/recd.yaml"
expect 0 "$RECTOOL" generate --format carla --actors 500 --duration 10s --seed 3 -o "$tmp/c.log"
expect 0 "$RECTOOL" send "$tmp/c.log" --session cs --to "$tcp" --speed max
kill -TERM "$recd_pid"
wait "$recd_pid" || fail "recd exited with $? after SIGTERM"
recd_pid=

cat >"$tmp/parts.py" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import carla_log_reader as r
paths = sys.argv[2:]
assert len(paths) >= 3, "only %d parts: the session was not rotated enough" % len(paths)
last_pos = {}  # actor -> its last Position record (location, rotation) in the previous part
for n, path in enumerate(paths):
    buf = open(path, "rb").read()
    hdr, vw, vf, vsz, start = r.read_file(buf)
    known, moved, dels, frames = set(), set(), [], 0
    first_adds = {}
    pos = {}
    for pid, size, s, e in r.iter_packets(buf, start):
        assert e <= len(buf), "%s: truncated" % path
        recs, used = r.parse_payload(pid, buf, s, e, vf, vsz)
        if recs is None:
            continue
        assert used == size, "%s: packet %d of %d bytes holds %d bytes of records" % (path, pid, size, used)
        if pid == 0:
            frames += 1
            known.difference_update(dels)
            dels = []
        elif pid == 2:
            known.update(x[0] for x in recs)
            if frames == 1:
                first_adds.update((x[0], (x[2], x[3])) for x in recs)
        elif pid == 3:
            dels += recs
        elif pid == 6:
            for x in recs:
                assert x[0] in known, "%s: actor %d moves in frame %d, never added in this part" % (path, x[0], frames)
                moved.add(x[0])
                pos[x[0]] = (x[1], x[2])
    assert frames and len(moved) >= 500, "%s: %d frames, %d actors move" % (path, frames, len(moved))
    if n:
        for aid, where in last_pos.items():
            assert aid in first_adds, "%s: live actor %d is not re-added in the first frame" % (path, aid)
            assert first_adds[aid] == where, "%s: actor %d re-added at %r, last at %r" % (path, aid, first_adds[aid], where)
    known.difference_update(dels)
    last_pos = {a: p for a, p in pos.items() if a in known}
    print("%s: %d frames, %d actors move, all known" % (path, frames, len(moved)))
PY
find "$tmp/rec" -name '*.log' | sort >"$tmp/parts"
for p in $(cat "$tmp/parts"); do expect 0 "$RECTOOL" verify "$p"; done
python3 "$tmp/parts.py" "$reader_dir" $(cat "$tmp/parts") >"$tmp/parts.out" 2>"$tmp/parts.err" ||
    fail "$(tail -1 "$tmp/parts.err")"
if [ "$failures" -ne 0 ]; then
    cat "$tmp/log" >&2
    exit 1
fi
echo "CARLA parts: $(grep -c . "$tmp/parts") parts, each replays alone (reference reader)"
