#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The import bench line, export.sh's other direction: `rectool import FILE.jsonl -o OUT` on the
# JSON lines of the corpus (../shared/corpus) and of the generated recordings, as MB/s of JSON
# lines read per CPU second (whole rectool run, best of 3). Each JSON file is written once by
# RECTOOL's export. Every import must give back the recording byte for byte (the round trip
# rectool promises); with OLD_RECTOOL set (an earlier build), that one runs beside RECTOOL in the
# same pass and must write the same bytes. Foreign replays export but do not import: skipped.
# Builds an optimised rectool in BENCH_BUILD (default build-bench) unless RECTOOL points at one.
# Prints one markdown table; the figures in docs/performance.md ("Export") come from it.
# Usage: bench/import.sh [BUILD_DIR]
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-${BENCH_BUILD:-$src/build-bench}}"
if [ -z "${RECTOOL:-}" ]; then
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DRECD_TESTS=OFF >/dev/null
  cmake --build "$build" -j 2 --target rectool >/dev/null
  RECTOOL="$build/tools/rectool"
fi
OLD="${OLD_RECTOOL:-}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/recd-import-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$RECTOOL" generate --format samp-vehicle --duration 6h --seed 1 -o "$tmp/vehicle-6h.rec" >/dev/null
"$RECTOOL" generate --format samp-onfoot --duration 1h --seed 1 -o "$tmp/onfoot-1h.rec" >/dev/null
"$RECTOOL" generate --format recap --duration 1h --seed 1 -o "$tmp/recap-1h.recap" >/dev/null
files=("$tmp/vehicle-6h.rec" "$tmp/onfoot-1h.rec" "$tmp/recap-1h.recap")
corpus="$src/../shared/corpus"
if [ -d "$corpus" ]; then
  while IFS= read -r f; do files+=("$f"); done < <(find "$corpus" -type f \
    \( -name '*.rec' -o -name '*.recap' -o -name '*.log' \) | sort)
else
  echo "import bench: $corpus is absent; generated files only" >&2
fi

# best_of3 TOOL JSONL OUT: the fastest of three whole imports by CPU time (user + system), in ns.
best_of3() {
  python3 - "$1" "$2" "$3" <<'PY'
import resource, subprocess, sys
tool, src, out = sys.argv[1:4]
best = None
for _ in range(3):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    rc = subprocess.call([tool, "import", src, "-o", out], stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if rc != 0:
        sys.exit(1)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    best = cpu if best is None else min(best, cpu)
print(max(int(best * 1e9), 1))
PY
}

mbps() { awk -v b="$1" -v ns="$2" 'BEGIN { printf "%.0f", b / 1e6 / (ns / 1e9) }'; }

echo "import of JSON lines, MB of JSON lines read per CPU second, best of 3 whole runs ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%d))"
echo
if [ -n "$OLD" ]; then
  echo "| file | JSON lines | before | after | gives the file back (old, new) |"
  echo "|---|---|---|---|---|"
else
  echo "| file | JSON lines | MB/s | gives the file back |"
  echo "|---|---|---|---|"
fi
total_bytes=0 total_new=0 total_old=0 differ=0
for f in "${files[@]}"; do
  name="${f#"$tmp/"}"
  name="${name#"$corpus/"}"
  ext="${f##*.}"
  if ! "$RECTOOL" export "$f" --to jsonl -o "$tmp/in.jsonl" 2>/dev/null; then
    continue # not exportable (export.sh lists those)
  fi
  bytes=$(stat -c %s "$tmp/in.jsonl")
  if ! new_ns=$(best_of3 "$RECTOOL" "$tmp/in.jsonl" "$tmp/new.$ext"); then
    echo "| $name | $bytes B | (import fails) | | |"
    differ=1
    continue
  fi
  total_bytes=$((total_bytes + bytes))
  total_new=$((total_new + new_ns))
  same_new=yes
  cmp -s "$f" "$tmp/new.$ext" || same_new=NO
  [ "$same_new" = yes ] || differ=1
  if [ -n "$OLD" ]; then
    old_ns=$(best_of3 "$OLD" "$tmp/in.jsonl" "$tmp/old.$ext")
    total_old=$((total_old + old_ns))
    same_old=yes
    cmp -s "$f" "$tmp/old.$ext" || same_old=NO
    [ "$same_old" = yes ] || differ=1
    echo "| $name | $bytes B | $(mbps "$bytes" "$old_ns") MB/s | $(mbps "$bytes" "$new_ns") MB/s | $same_old, $same_new |"
  else
    echo "| $name | $bytes B | $(mbps "$bytes" "$new_ns") | $same_new |"
  fi
done
if [ -n "$OLD" ]; then
  echo "| all files | $total_bytes B | $(mbps "$total_bytes" "$total_old") MB/s | $(mbps "$total_bytes" "$total_new") MB/s | |"
else
  echo "| all files | $total_bytes B | $(mbps "$total_bytes" "$total_new") | |"
fi
[ "$differ" = 0 ] || { echo "import bench: an import did not give its recording back" >&2; exit 1; }
