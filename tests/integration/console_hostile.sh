# SPDX-License-Identifier: MIT
# The web console's API against hostile requests (docs/http-api.md): paths that try to leave the
# output root (.., encoded .., absolute, symbolic links to files and directories outside), huge
# and malformed windows, 64+ Server-Sent Events viewers at once (the 65th is refused, /healthz
# still answers within its deadline while 50 are open), a viewer that stops reading (closed and
# counted, not buffered), and what the API answers for a live session fed by rectool send.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v python3 >/dev/null || { echo "SKIP: python3 is needed"; exit 77; }
recd_tmpdir console_hostile
mkdir -p "$tmp/out/rec" "$tmp/outside"
echo TOPSECRET-CONTENT >"$tmp/outside/secret.rec"
"$RECTOOL" generate --format samp-onfoot --duration 20s -o "$tmp/out/rec/walk.rec" >/dev/null
"$RECTOOL" generate --format carla --actors 500 --duration 3s -o "$tmp/out/rec/traffic.log" >/dev/null
"$RECTOOL" generate --format recap --duration 60s -o "$tmp/ride.recap" >/dev/null
# The same Recap recording three times: indexed, without an index, and with an index over the
# 4 MiB the console reads of one (a 64th of the file cap), which it must leave aside.
cp "$tmp/ride.recap" "$tmp/out/rec/indexed.recap"
"$RECTOOL" index "$tmp/out/rec/indexed.recap" >/dev/null
cp "$tmp/ride.recap" "$tmp/out/rec/plain.recap"
cp "$tmp/ride.recap" "$tmp/out/rec/huge-index.recap"
head -c $((5 << 20)) /dev/zero >"$tmp/out/rec/huge-index.recap.idx"
ln -s "$tmp/outside/secret.rec" "$tmp/out/rec/link.rec"
ln -s "$tmp/outside" "$tmp/out/rec/linkdir"
cat >"$tmp/recd.yaml" <<YAML
listen:
  - tcp://127.0.0.1:0
output:
  root: $tmp/out
metrics:
  listen: 127.0.0.1:0
YAML
start_recd "$tmp/log" --config "$tmp/recd.yaml"
"$RECTOOL" send "$tmp/ride.recap" --session ride --to "$tcp" --speed 1 >"$tmp/send.out" 2>&1 &
sender=$!
trap 'kill $sender 2>/dev/null; stop_recd_at_exit; rm -rf "$tmp"' EXIT
python3 "$(dirname "$0")/console_hostile.py" "$metrics" "$tmp" || { tail -20 "$tmp/log"; exit 1; }
echo PASS
