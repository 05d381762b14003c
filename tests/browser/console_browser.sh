# SPDX-License-Identifier: MIT
# The web console in a real browser (tests/browser/console.cjs): Debian's chromium, headless,
# driven by playwright-core from npm (installed from package-lock.json by install.sh into the
# build tree; the browser is never downloaded), against recd fed by a sender of each format.
# Skipped only when chromium or node is absent. Screenshots go to RECD_SCREENSHOT_DIR when set
# (`make screenshots` sets it to docs/images/), otherwise into the test's own temporary directory:
# a test never writes into the source tree.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../shell/recd_daemon.sh
. "$here/../shell/recd_daemon.sh"
require_recd
[ -x /usr/bin/chromium ] || { echo "SKIP: /usr/bin/chromium is not installed (scripts/install-deps.sh --test)"; exit 77; }
command -v node >/dev/null || { echo "SKIP: node is not installed"; exit 77; }
modules=$(bash "$here/install.sh" "$(dirname "$RECD")/../browser-tests") || { echo "FAIL: npm could not install playwright-core"; exit 1; }
recd_tmpdir console_browser
mkdir -p "$tmp/out/rec"
"$RECTOOL" generate --format samp-onfoot --scenario walk --duration 30s -o "$tmp/out/rec/walk.rec" >/dev/null
"$RECTOOL" generate --format recap --scenario walk --duration 30s -o "$tmp/out/rec/ride.recap" >/dev/null
"$RECTOOL" generate --format carla --actors 10 --duration 30s -o "$tmp/out/rec/traffic.log" >/dev/null
# A 24-hour Recap file with its seek index: the viewer samples it at keyframes and reads the
# scrubbed stretch through the index.
"$RECTOOL" generate --format recap --scenario walk --duration 24h -o "$tmp/out/rec/day.recap" >/dev/null
"$RECTOOL" index "$tmp/out/rec/day.recap" >/dev/null
cat >"$tmp/recd.yaml" <<YAML
listen:
  - tcp://127.0.0.1:0
output:
  root: $tmp/out
metrics:
  listen: 127.0.0.1:0
ring:
  all: true
YAML
start_recd "$tmp/log" --config "$tmp/recd.yaml"
pids=()
for f in walk.rec ride.recap traffic.log; do
    "$RECTOOL" send "$tmp/out/rec/$f" --session "${f%%.*}" --to "$tcp" --speed 1 >"$tmp/$f.send" 2>&1 &
    pids+=($!)
done
trap 'kill "${pids[@]}" 2>/dev/null; stop_recd_at_exit; rm -rf "$tmp"' EXIT
shots=${RECD_SCREENSHOT_DIR:-$tmp/shots}
mkdir -p "$shots"
NODE_PATH=$modules timeout $((120 * ${RECD_TEST_TIME_SCALE:-1})) \
    node "$here/console.cjs" "http://$metrics" "$tmp/out" "$RECTOOL" "$shots" ||
    { tail -20 "$tmp/log"; exit 1; }
echo PASS
