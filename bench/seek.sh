#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The seek bench line: `rectool cut --from T --to T+60s` on generated Recap recordings of 1 minute,
# 1 hour and 24 hours (T in the middle), each with its seek index (rectool index) and, where it
# takes less than a minute, without one read in full (RECTOOL_FULL_SCAN=1). Whole rectool runs
# (read, seek, decode, cut, verify, write), CPU time (user + system), best of 3. The curve must stay flat: the
# 24-hour cut within 2x of the 1-minute cut and under 50 ms (issue 38). Prints one markdown
# table and the ratios; the figures in docs/performance.md ("Seeking") come from it.
# Builds an optimised rectool in BENCH_BUILD (default build-bench) unless RECTOOL points at one.
# Usage: bench/seek.sh [BUILD_DIR]
set -euo pipefail
# shellcheck source=rectool_build.sh
. "$(dirname "$0")/rectool_build.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/recd-seek-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# cpu ENV ARGS...: the least CPU time (user + system) of three whole runs of `rectool cut ARGS`
# (bench/cpu_best_of3.py: a machine shared with other work disturbs CPU time far less than wall
# time), in microseconds; the output must verify.
cpu() {
  local env=$1 ns
  shift
  ns=$(env $env python3 "$src/bench/cpu_best_of3.py" --fresh "$tmp/out.recap" \
    "$RECTOOL" cut "$@" -q -o "$tmp/out.recap")
  "$RECTOOL" verify -q "$tmp/out.recap"
  echo $((ns / 1000))
}

ms() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }

echo "Recap (mixed scenario), cut of 60 s in the middle; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%d)"
echo
echo "| recording | file size | index size | cut with the index (CPU) | cut reading the whole file (CPU) |"
echo "|---|---|---|---|---|"
declare -A with
for dur in 1m 1h 24h; do
  f=$tmp/$dur.recap
  "$RECTOOL" generate --format recap --scenario mixed --duration "$dur" --seed 1 -o "$f" >/dev/null
  "$RECTOOL" index -q "$f"
  case $dur in 1m) secs=60 ;; 1h) secs=3600 ;; 24h) secs=86400 ;; esac
  from=$((secs / 2 - 30)); [ "$from" -ge 0 ] || from=0
  to=$((from + 60))
  with[$dur]=$(cpu "RECTOOL_FULL_SCAN=0" "$f" --from "${from}s" --to "${to}s")
  full="(not run: minutes)"
  if [ "$dur" != 24h ]; then
    full="$(ms "$(cpu RECTOOL_FULL_SCAN=1 "$f" --from "${from}s" --to "${to}s")") ms"
  fi
  printf '| %s | %s bytes | %s bytes | %s ms | %s |\n' "$dur" "$(stat -c %s "$f")" \
    "$(stat -c %s "$f.idx")" "$(ms "${with[$dur]}")" "$full"
done
echo
awk -v a="${with[1m]}" -v b="${with[1h]}" -v c="${with[24h]}" 'BEGIN {
  printf "ratios to the 1-minute cut: 1 h %.2fx, 24 h %.2fx (target: 24 h <= 2x and < 50 ms)\n", b / a, c / a
  exit !(c <= 2 * a && c < 50000)
}' && echo "flat: yes" || echo "flat: NO"
