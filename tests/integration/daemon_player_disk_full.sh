# SPDX-License-Identifier: MIT
# A samp-player session's manifest and a full disk (docs/reliability.md, "Round 3: a manifest
# stored through a full disk"), on a real 1 MiB tmpfs (root only: mount; skipped otherwise). The
# session's parts switch and it closes while the disk is full, so the manifest stores then fail:
# once space is freed the manifest is there, complete, listing every part (before, the lines of
# the failed stores were dropped and nothing retried them). The failures count in
# recd_write_errors_total{reason="no_space"} and nothing is lost. A second session's manifest
# still fails when recd is stopped: the stop ends anyway, logs the manifest as lost, counts it in
# recd_lost_bytes_total and exits non-zero.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v python3 >/dev/null || { echo "SKIP: python3 is needed to send the sessions"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: the tmpfs disk-full test needs root (mount)"; exit 77; }
recd_tmpdir daemon_player_disk_full
scale=${RECD_TEST_TIME_SCALE:-1}
root=$tmp/root
mkdir "$root"
if ! mount -t tmpfs -o size=1m recd-test "$root" 2>"$tmp/mount.err"; then
    echo "SKIP: cannot mount a tmpfs here: $(cat "$tmp/mount.err")"
    exit 77
fi
trap 'stop_recd_at_exit; umount -l "$root"; rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
send="$(dirname "$0")/daemon_player_disk_full.py"
parts=62 # well past the 16 parts a store keeps in memory, and past a 4 KiB page of manifest

# flush.interval 1h: no part is written before the close, so the close is read while the disk
# is full (a failing part write would pause the sender's input until there is room again).
cat >"$tmp/recd.yaml" <<YAML
listen:
  - tcp://127.0.0.1:0
output:
  root: $root
metrics:
  listen: 127.0.0.1:0
flush:
  interval: 1h
limits:
  part_rate: 0
YAML
metric() { # NAME: its value, or 0
    python3 -c 'import sys, urllib.request
for l in urllib.request.urlopen("http://%s/metrics" % sys.argv[1], timeout=30).read().decode().splitlines():
    if l.split(" ")[0] == sys.argv[2]:
        print(l.split(" ")[1]); break
else:
    print(0)' "$metrics" "$1"
}

# check.py ROOT KEY N: the manifest is complete and lists N complete parts, each a finalized file.
cat >"$tmp/check.py" <<'PY'
import json, os, sys
root, key, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
m = json.load(open(os.path.join(root, "samp-player", key, key + ".json")))
parts = m["parts"]
assert m["complete"], "not complete"
assert len(parts) == n, "%d parts listed, not %d" % (len(parts), n)
assert all(p["complete"] for p in parts), "a part is not complete"
assert [p["type"] for p in parts[:2]] == ["onfoot", "vehicle"], parts[:2]
assert len({p["path"] for p in parts}) == n, "two parts share a name"
for p in parts:
    assert os.path.getsize(os.path.join(root, p["path"])) > 8, p
PY

start_recd "$tmp/log" --config "$tmp/recd.yaml"
tcp=${tcp#tcp://}
python3 "$send" "$tcp" "$root" full "$parts" "$tmp/log" || fail "sending the session 'full'"
rm -f "$root/filler"
deadline=$((SECONDS + 30 * scale))
until python3 "$tmp/check.py" "$root" full "$parts" 2>"$tmp/check.err"; do
    if [ "$SECONDS" -gt "$deadline" ]; then
        fail "the manifest of 'full' after space was freed: $(tail -1 "$tmp/check.err")"
        break
    fi
    sleep 0.2
done
[ "$(metric 'recd_write_errors_total{reason="no_space"}')" != 0 ] ||
    fail "the failed manifest stores are not in recd_write_errors_total{reason=\"no_space\"}"
[ "$(metric recd_lost_bytes_total)" = 0 ] || fail "recd_lost_bytes_total is not 0"
grep -q "session 'full': its manifest .* is stored again" "$tmp/log" || fail "no log line for the store that got through"

# Stopped while the disk is still full: the stop ends, and says what it lost.
python3 "$send" "$tcp" "$root" stuck "$parts" "$tmp/log" || fail "sending the session 'stuck'"
kill -TERM "$recd_pid"
code=
for _ in $(seq $((600 * scale))); do # the writes give up after about 3 s, the manifest after 5 tries
    kill -0 "$recd_pid" 2>/dev/null || { wait "$recd_pid"; code=$?; break; }
    sleep 0.1
done
if [ -z "$code" ]; then
    fail "recd did not stop within $((60 * scale)) s with the disk full"
else
    recd_pid=
    [ "$code" != 0 ] || fail "recd exited 0 though the manifest of 'stuck' was lost"
    grep -q "session 'stuck': its manifest .* still cannot be stored at shutdown" "$tmp/log" ||
        fail "the stop did not log the lost manifest"
    grep -q "accepted bytes never written" "$tmp/log" || fail "no stop message with the lost bytes"
fi

if [ "$failures" -ne 0 ]; then
    tail -40 "$tmp/log" >&2
    exit 1
fi
echo "samp-player manifests through a full disk: stored once there is room, or counted as lost at the stop"
