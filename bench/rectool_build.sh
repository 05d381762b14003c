# SPDX-License-Identifier: MIT
# Sourced by the rectool bench lines (edit.sh, and export.sh and import.sh through
# rectool_files.sh): sets src to the repository and RECTOOL to an optimised rectool, built in
# BUILD_DIR (default BENCH_BUILD, else build-bench) unless RECTOOL already names one.
# Usage: . bench/rectool_build.sh [BUILD_DIR]
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-${BENCH_BUILD:-$src/build-bench}}"
if [ -z "${RECTOOL:-}" ]; then
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DRECD_TESTS=OFF >/dev/null
  cmake --build "$build" -j 2 --target rectool >/dev/null
  RECTOOL="$build/tools/rectool"
fi
