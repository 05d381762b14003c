#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Counts the instructions recd executes to record one prepared scenario stream, under callgrind.
# Instruction counts do not depend on what else the machine is doing, so two builds can be
# compared on a busy machine where samples/s would only show the noise (docs/performance.md).
# Usage: bench/callgrind.sh BUILD_DIR [SCENARIO] (S1, S2, S3 or S6; default S2). The streams come
# from a `make bench-quick` (BENCH_WORK, default /var/tmp/recd-bench); S6 sends NDJSON lines.
# Prints one line: "SCENARIO BUILD_DIR instructions=N samples=M per_sample=X". CALLGRIND_OUT=FILE
# keeps the profile for callgrind_annotate.
set -euo pipefail
build="${1:?usage: bench/callgrind.sh BUILD_DIR [S1|S2|S3|S6]}"
scenario="${2:-S2}"
work="${BENCH_WORK:-/var/tmp/recd-bench}"
command -v valgrind >/dev/null || { echo "callgrind: valgrind is not installed" >&2; exit 1; }
prep="$(ls -d "$work/prepared/$scenario"-quick-* 2>/dev/null | head -n 1)"
[ -n "$prep" ] || { echo "callgrind: no prepared $scenario stream in $work (run make bench-quick)" >&2; exit 1; }
enc=wire
[ -f "$prep/wire-head.0" ] || enc=ndjson # S6 is prepared as NDJSON only
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
  --conn "$prep/$enc-head.0,$prep/$enc-body.0,$prep/$enc-tail.0" >/dev/null
kill -TERM "$pid"
wait "$pid" || { echo "callgrind: recd exited non-zero" >&2; cat "$tmp/recd.log" >&2; exit 1; }
pid=""
total="$(sed -n 's/^summary: //p' "$tmp/cg.out" | awk '{print $1}')"
[ -n "${CALLGRIND_OUT:-}" ] && cp "$tmp/cg.out" "$CALLGRIND_OUT"
awk -v s="$scenario" -v b="$build" -v n="$total" -v m="$samples" \
  'BEGIN { printf "%s %s instructions=%.0f samples=%d per_sample=%.1f\n", s, b, n, m, n / m }'
