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

echo "Recap (mixed scenario), cuts of 60 s; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%d)"
echo
echo "| recording | --from | file size | index size | cut with the index (CPU) | cut reading the whole file (CPU) |"
echo "|---|---|---|---|---|---|"
declare -A with
# row NAME FILE FROM_S: one table row, cutting [FROM_S, FROM_S + 60) s of FILE.
row() {
  local name=$1 f=$2 from=$3 full="(not run: minutes)"
  with[$name]=$(cpu "RECTOOL_FULL_SCAN=0" "$f" --from "${from}s" --to "$((from + 60))s")
  if [ "$(stat -c %s "$f")" -lt 1000000 ]; then
    full="$(ms "$(cpu RECTOOL_FULL_SCAN=1 "$f" --from "${from}s" --to "$((from + 60))s")") ms"
  fi
  printf '| %s | %s | %s bytes | %s bytes | %s ms | %s |\n' "$name" "$from s" "$(stat -c %s "$f")" \
    "$(stat -c %s "$f.idx")" "$(ms "${with[$name]}")" "$full"
}
for dur in 1m 1h 24h; do
  "$RECTOOL" generate --format recap --scenario mixed --duration "$dur" --seed 1 -o "$tmp/$dur.recap" >/dev/null
  "$RECTOOL" index -q "$tmp/$dur.recap"
done
row 1m "$tmp/1m.recap" 0
# The first hour of the 1-hour and the 24-hour recording are the same samples (the 1-minute one's
# are not: the generator plans by duration): the same range of both shows what the size costs.
row 1h@30s "$tmp/1h.recap" 30
row 24h@30s "$tmp/24h.recap" 30
# What a range costs depends on what it holds (events, items): five ranges spread over each.
for at in 10 30 50 70 90; do
  row "1h@${at}%" "$tmp/1h.recap" $((3600 * at / 100 - 30))
done
for at in 10 30 50 70 90; do
  row "24h@${at}%" "$tmp/24h.recap" $((86400 * at / 100 - 30))
done
median() { printf '%s\n' "$@" | sort -n | sed -n 3p; }
m1h=$(median "${with[1h@10%]}" "${with[1h@30%]}" "${with[1h@50%]}" "${with[1h@70%]}" "${with[1h@90%]}")
m24=$(median "${with[24h@10%]}" "${with[24h@30%]}" "${with[24h@50%]}" "${with[24h@70%]}" "${with[24h@90%]}")
max24=$(printf '%s\n' "${with[24h@10%]}" "${with[24h@30%]}" "${with[24h@50%]}" "${with[24h@70%]}" "${with[24h@90%]}" | sort -n | tail -1)
echo
awk -v a="${with[1m]}" -v e1="${with[1h@30s]}" -v e24="${with[24h@30s]}" -v m1="$m1h" -v m24="$m24" \
  -v x="$max24" 'BEGIN {
  printf "same range, 24 h / 1 h: %.2fx; 24 h at 30 s / 1 min: %.2fx\n", e24 / e1, e24 / a
  printf "median of five ranges: 1 h %.3f ms (%.2fx the 1-minute cut), 24 h %.3f ms (%.2fx); slowest 24 h range %.3f ms (%.2fx)\n", m1 / 1000, m1 / a, m24 / 1000, m24 / a, x / 1000, x / a
  exit !(e24 <= 2 * a && m24 <= 2 * a && m24 < 50000)
}' && echo "flat (24 h within 2x of 1 min and under 50 ms): yes" || echo "flat (24 h within 2x of 1 min and under 50 ms): NO"
