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
name=import
corpus_match=(-name '*.rec' -o -name '*.recap' -o -name '*.log')
# shellcheck source=rectool_files.sh
. "$(dirname "$0")/rectool_files.sh"

# best_of3 TOOL JSONL OUT: the fastest import by CPU time (cpu_best_of3.py), in ns.
best_of3() { python3 "$src/bench/cpu_best_of3.py" --fresh "$3" "$1" import "$2" -o "$3"; }

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
