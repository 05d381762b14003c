#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs f32_exhaustive over every f32 bit pattern, the two signs in two processes at the lowest
# priority (about 10 minutes on 2 busy cores), and fails if any text differs.
# Usage: bench/float_text/run.sh [BUILD_DIR] (default build-rel; configured Release if new).
set -euo pipefail
cd "$(dirname "$0")/../.."
build="${1:-build-rel}"
[ -f "$build/CMakeCache.txt" ] ||
    nice -n 19 cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
nice -n 19 cmake --build "$build" --target f32_exhaustive -j2 >/dev/null
bin="$build/bench/float_text/f32_exhaustive"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
nice -n 19 "$bin" 0 7fffffff >"$tmp/positive" &
positive=$!
nice -n 19 "$bin" 80000000 ffffffff >"$tmp/negative" &
negative=$!
rc=0
wait "$positive" || rc=1
wait "$negative" || rc=1
cat "$tmp/positive" "$tmp/negative"
exit "$rc"
