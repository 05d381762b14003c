#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# zlib against libdeflate, both through librecd's member writer, on the members of a generated
# Recap recording: bytes and best-of-N CPU time at levels 1, 2 and 6.
# Usage: bench/deflate/run.sh [BUILD_DIR] [DURATION] (default build-bench, 2h of one walking
# player; the recording is the same on every host).
set -euo pipefail
src="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$src/build-bench}"
duration="${2:-2h}"
bash "$src/scripts/install-deps.sh"
bash "$src/bench/build.sh" "$build" >/dev/null
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"${CC:-cc}" -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -I"$src/lib/include" \
  -o "$tmp/compare" "$src/bench/deflate/compare.c" "$build/lib/librecd.a" \
  $(pkg-config --libs zlib libdeflate jansson) -lm -lpthread
"$build/tools/rectool" generate --format recap --scenario walk --duration "$duration" \
  -o "$tmp/walk.recap" >/dev/null
"$tmp/compare" "$tmp/walk.recap" 15
