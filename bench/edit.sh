#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The editing bench line: cut, retime and transform of a 1-hour vehicle recording (rectool
# generate), each timed as a whole rectool run (read, edit, verify, write), best of 3.
# Builds an optimised rectool in BENCH_BUILD (default build-bench) unless RECTOOL points at one.
# Prints one markdown table; the figures in docs/performance.md ("Editing") come from it.
# Usage: bench/edit.sh [BUILD_DIR]
set -euo pipefail
# shellcheck source=rectool_build.sh
. "$(dirname "$0")/rectool_build.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/recd-edit-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$RECTOOL" generate --format samp-vehicle --scenario drive --duration 1h --seed 1 -o "$tmp/hour.rec" >/dev/null
blocks=$("$RECTOOL" info --json "$tmp/hour.rec" | python3 -c 'import json,sys; print(json.load(sys.stdin)["rec"]["blocks"])')
size=$(stat -c %s "$tmp/hour.rec")

# best_of3 NAME ARGS...: the fastest of three runs, in ms.
best_of3() {
  local name=$1 best=""
  shift
  for _ in 1 2 3; do
    local t0 t1 ms
    t0=$(date +%s%N)
    "$RECTOOL" "$@" -q -o "$tmp/out.rec"
    t1=$(date +%s%N)
    "$RECTOOL" verify -q "$tmp/out.rec"
    ms=$(((t1 - t0) / 1000000))
    if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
  done
  printf '| %s | %s ms |\n' "$name" "$best"
}

echo "1-hour vehicle recording: $blocks blocks, $size bytes ($(nproc) cores, $(date -u +%Y-%m-%d))"
echo
echo "| operation (whole rectool run) | best of 3 |"
echo "|---|---|"
best_of3 "cut --from 600s --to 3000s" cut "$tmp/hour.rec" --from 600s --to 3000s
best_of3 "retime --speed 1.5" retime "$tmp/hour.rec" --speed 1.5
best_of3 "retime --rate 20 (resample)" retime "$tmp/hour.rec" --rate 20
best_of3 "transform --translate 100,50,0 --rotate-z 37" transform "$tmp/hour.rec" --translate 100,50,0 --rotate-z 37
