#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds what the benchmarks run: librecd, rectool and recd with optimisation in build-bench
# (RelWithDebInfo-style: -O3 plus symbols for perf), and benchgen, the load generator in bench/gen,
# linked against that librecd. Usage: bench/build.sh [BUILD_DIR]
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$src/build-bench}"
jobs="$(nproc 2>/dev/null || echo 2)"

# -g only adds symbols for the profile.
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DRECD_TESTS=OFF "-DCMAKE_C_FLAGS=-g" >/dev/null
# A failed build must not leave the last good binaries to be measured as if they were new.
if ! log="$(cmake --build "$build" -j "$jobs" 2>&1)"; then
  printf '%s\n' "$log" | grep -E "error:|\*\*\*" >&2 || printf '%s\n' "$log" | tail -20 >&2
  echo "bench: the build failed" >&2
  exit 1
fi
test -f "$build/lib/librecd.a" || { echo "bench: librecd did not build" >&2; exit 1; }
test -x "$build/tools/rectool" || { echo "bench: rectool did not build" >&2; exit 1; }

read -r -a cc <<<"${CC:-cc}" # CC may hold a launcher too ("ccache gcc")
mkdir -p "$build/bench"
# send-nats (scenario S8) needs libnats; without it benchgen says so and S8 is skipped.
nats_flags=()
if pkg-config --exists libnats 2>/dev/null; then
  read -r -a nats_flags <<<"-DBG_HAVE_NATS=1 $(pkg-config --cflags --libs libnats)"
fi
# shellcheck disable=SC2046
"${cc[@]}" -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
  -Wmissing-prototypes -I"$src/lib/include" -I"$src/lib/internal" -o "$build/bench/benchgen.new" "$src"/bench/gen/*.c \
  "$build/lib/librecd.a" "${nats_flags[@]}" $(pkg-config --libs zlib libdeflate jansson) -lm -lpthread
mv "$build/bench/benchgen.new" "$build/bench/benchgen"

if [ -x "$build/daemon/recd" ]; then
  echo "bench: built $build/daemon/recd, rectool and benchgen"
else
  echo "bench: recd is not buildable yet (daemon/app/main.c missing or failing); baselines only" >&2
fi
