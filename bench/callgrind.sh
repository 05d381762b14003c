#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Counts the instructions recd executes to record one prepared scenario stream, under callgrind.
# Instruction counts do not depend on what else the machine is doing, so two builds can be
# compared on a busy machine where samples/s would only show the noise (docs/performance.md).
# Usage: bench/callgrind.sh BUILD_DIR [SCENARIO] (S1, S2, S3, S6 or S7; default S2). The streams come
# from a `make bench-quick` (BENCH_WORK, default /var/tmp/recd-bench); S6 sends NDJSON lines. S7
# (CARLA frames, one connection) is prepared here when missing, as the harness does
# (bench/harness/carla.py, quick: 100 episodes x 200 actors x 5 s), with BUILD_DIR's rectool and
# socat; its samples are frames.
# Prints one line: "SCENARIO BUILD_DIR instructions=N samples=M per_sample=X". CALLGRIND_OUT=FILE
# keeps the profile for callgrind_annotate; KEEP_OUTPUT=DIR keeps recd's output tree (DIR must not
# exist), to compare two builds' files with diff -r.
set -euo pipefail
build="${1:?usage: bench/callgrind.sh BUILD_DIR [S1|S2|S3|S6|S7]}"
scenario="${2:-S2}"
work="${BENCH_WORK:-/var/tmp/recd-bench}"
command -v valgrind >/dev/null || { echo "callgrind: valgrind is not installed" >&2; exit 1; }
if [ "$scenario" = S7 ] && ! ls -d "$work/prepared/S7-quick-"* >/dev/null 2>&1; then
  here="$(cd "$(dirname "$0")" && pwd)"
  python3 -B - "$here/harness" "$(cd "$build" && pwd)" "$work" <<'PY'
import os, shutil, sys
sys.path.insert(0, sys.argv[1])
import carla, scenarios
build = sys.argv[2]
env = type("Env", (), dict(rectool=os.path.join(build, "tools", "rectool"), work=sys.argv[3],
                           socat=shutil.which("socat") or "/usr/bin/socat"))
carla.ensure(env, "S7-quick", scenarios.QUICK["S7"])
PY
fi
prep="$(ls -d "$work/prepared/$scenario"-quick-* 2>/dev/null | head -n 1)"
[ -n "$prep" ] || { echo "callgrind: no prepared $scenario stream in $work (run make bench-quick)" >&2; exit 1; }
enc=wire
[ -f "$prep/wire-head.0" ] || enc=ndjson # S6 is prepared as NDJSON only
conn="$prep/$enc-head.0,$prep/$enc-body.0,$prep/$enc-tail.0"
[ -f "$prep/wire.bin" ] && conn="$prep/wire.bin" # S7: one file of binary frames
samples="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["states"])' "$prep/meta.json")"

tmp="$(mktemp -d)"
pid=""
cleanup() { [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
cat >"$tmp/recd.yaml" <<YAML
listen:
  - tcp://127.0.0.1:0
output:
  root: $tmp/out
  path_template: "{format}/{session}.{ext}"
flush:
  interval: 3600s  # flushes by size and at close only, so counts do not depend on timing
  buffer_size: 64KiB
limits:
  max_sessions: 100000
rotation:
  idle_timeout: 0
metrics:
  enabled: false
shutdown:
  drain_timeout: 600s
YAML
mkdir -p "$tmp/out"
valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$build/daemon/recd" \
  --config "$tmp/recd.yaml" --print-ports >"$tmp/ports" 2>"$tmp/recd.log" &
pid=$!
port=""
for _ in $(seq 1 600); do
  port="$(sed -n 's|^listen tcp://127.0.0.1:||p' "$tmp/ports" 2>/dev/null || true)"
  [ -n "$port" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$tmp/recd.log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { echo "callgrind: recd did not report its port" >&2; exit 1; }
"$build/bench/benchgen" send-tcp --to "127.0.0.1:$port" \
  --conn "$conn" >/dev/null
kill -TERM "$pid"
wait "$pid" || { echo "callgrind: recd exited non-zero" >&2; cat "$tmp/recd.log" >&2; exit 1; }
pid=""
total="$(sed -n 's/^summary: //p' "$tmp/cg.out" | awk '{print $1}')"
[ -n "${CALLGRIND_OUT:-}" ] && cp "$tmp/cg.out" "$CALLGRIND_OUT"
[ -n "${KEEP_OUTPUT:-}" ] && cp -r "$tmp/out" "$KEEP_OUTPUT"
awk -v s="$scenario" -v b="$build" -v n="$total" -v m="$samples" \
  'BEGIN { printf "%s %s instructions=%.0f samples=%d per_sample=%.1f\n", s, b, n, m, n / m }'
