#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The export bench line: `rectool export --to jsonl` on the corpus (../shared/corpus) and on
# generated recordings, as MB/s of JSON lines written per CPU second (whole rectool run, best
# of 3). With
# OLD_RECTOOL set (an earlier build), it runs that one beside RECTOOL in the same pass and checks
# that both write byte-identical JSON lines and CSV for every file.
# Builds an optimised rectool in BENCH_BUILD (default build-bench) unless RECTOOL points at one.
# Prints one markdown table; the figures in docs/performance.md ("Export") come from it.
# Usage: bench/export.sh [BUILD_DIR]
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-${BENCH_BUILD:-$src/build-bench}}"
if [ -z "${RECTOOL:-}" ]; then
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DRECD_TESTS=OFF >/dev/null
  cmake --build "$build" -j 2 --target rectool >/dev/null
  RECTOOL="$build/tools/rectool"
fi
OLD="${OLD_RECTOOL:-}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/recd-export-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$RECTOOL" generate --format samp-vehicle --duration 6h --seed 1 -o "$tmp/vehicle-6h.rec" >/dev/null
"$RECTOOL" generate --format samp-onfoot --duration 1h --seed 1 -o "$tmp/onfoot-1h.rec" >/dev/null
"$RECTOOL" generate --format recap --duration 1h --seed 1 -o "$tmp/recap-1h.recap" >/dev/null
files=("$tmp/vehicle-6h.rec" "$tmp/onfoot-1h.rec" "$tmp/recap-1h.recap")
corpus="$src/../shared/corpus"
if [ -d "$corpus" ]; then
  while IFS= read -r f; do files+=("$f"); done < <(find "$corpus" -type f \
    \( -name '*.rec' -o -name '*.recap' -o -name '*.mcpr' -o -name '*.log' -o -name '*.SC2Replay' \) | sort)
else
  echo "export bench: $corpus is absent; generated files only" >&2
fi

# best_of3 TOOL FILE: the fastest of three whole runs by CPU time (user + system, which a busy
# shared machine disturbs less than wall time), in ns; the output stays in $tmp/out.jsonl.
best_of3() {
  python3 - "$1" "$2" "$tmp/out.jsonl" <<'PY'
import resource, subprocess, sys
tool, src, out = sys.argv[1:4]
best = None
for _ in range(3):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    rc = subprocess.call([tool, "export", src, "--to", "jsonl", "-o", out], stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if rc != 0:
        sys.exit(1)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    best = cpu if best is None else min(best, cpu)
print(max(int(best * 1e9), 1))
PY
}

mbps() { awk -v b="$1" -v ns="$2" 'BEGIN { printf "%.0f", b / 1e6 / (ns / 1e9) }'; }

echo "export --to jsonl, MB of JSON lines per CPU second, best of 3 whole runs ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%d))"
echo
if [ -n "$OLD" ]; then
  echo "| file | JSON lines | before | after | identical (jsonl, csv) |"
  echo "|---|---|---|---|---|"
else
  echo "| file | JSON lines | MB/s |"
  echo "|---|---|---|"
fi
total_bytes=0 total_new=0 total_old=0 differ=0
for f in "${files[@]}"; do
  name="${f#"$tmp/"}"
  name="${name#"$corpus/"}"
  if ! new_ns=$(best_of3 "$RECTOOL" "$f"); then
    echo "| $name | (not exportable) | | |"
    continue
  fi
  bytes=$(stat -c %s "$tmp/out.jsonl")
  total_bytes=$((total_bytes + bytes))
  total_new=$((total_new + new_ns))
  if [ -n "$OLD" ]; then
    mv "$tmp/out.jsonl" "$tmp/new.jsonl"
    old_ns=$(best_of3 "$OLD" "$f")
    total_old=$((total_old + old_ns))
    same=yes
    cmp -s "$tmp/out.jsonl" "$tmp/new.jsonl" || same=NO
    if "$RECTOOL" export "$f" --to csv -o "$tmp/new.csv" 2>/dev/null; then
      "$OLD" export "$f" --to csv -o "$tmp/old.csv" 2>/dev/null
      cmp -s "$tmp/old.csv" "$tmp/new.csv" || same=NO
    fi
    [ "$same" = yes ] || differ=1
    echo "| $name | $bytes B | $(mbps "$bytes" "$old_ns") MB/s | $(mbps "$bytes" "$new_ns") MB/s | $same |"
  else
    echo "| $name | $bytes B | $(mbps "$bytes" "$new_ns") |"
  fi
done
if [ -n "$OLD" ]; then
  echo "| all files | $total_bytes B | $(mbps "$total_bytes" "$total_old") MB/s | $(mbps "$total_bytes" "$total_new") MB/s | |"
  [ "$differ" = 0 ] || { echo "export bench: outputs differ" >&2; exit 1; }
else
  echo "| all files | $total_bytes B | $(mbps "$total_bytes" "$total_new") |"
fi
