#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The export bench line: `rectool export --to jsonl` on the corpus (../shared/corpus) and on
# generated recordings, as MB/s of JSON lines written per CPU second (whole rectool run, best
# of 3, each run writing a new file: cpu_best_of3.py --fresh). With
# OLD_RECTOOL set (an earlier build), it runs that one beside RECTOOL in the same pass and checks
# that both write byte-identical JSON lines and CSV for every file.
# Builds an optimised rectool in BENCH_BUILD (default build-bench) unless RECTOOL points at one.
# Prints one markdown table, with the corpus files together (the target of issue 25 is on them)
# and all files together; the figures in docs/performance.md ("Export") come from it.
# Usage: bench/export.sh [BUILD_DIR]
set -euo pipefail
name=export
corpus_match=(-name '*.rec' -o -name '*.recap' -o -name '*.mcpr' -o -name '*.log' -o -name '*.SC2Replay')
# shellcheck source=rectool_files.sh
. "$(dirname "$0")/rectool_files.sh"

# best_of3 TOOL FILE: the fastest export of FILE by CPU time (cpu_best_of3.py), in ns; the output
# stays in $tmp/out.jsonl.
best_of3() {
  python3 "$src/bench/cpu_best_of3.py" --fresh "$tmp/out.jsonl" "$1" export "$2" --to jsonl -o "$tmp/out.jsonl"
}

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
corpus_bytes=0 corpus_new=0 corpus_old=0 # the corpus files alone: issue 25's target is on them
corpus_files=()
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
  in_corpus=0
  case "$f" in "$corpus"/*) in_corpus=1 ;; esac
  if [ "$in_corpus" = 1 ]; then
    corpus_files+=("$f")
    corpus_bytes=$((corpus_bytes + bytes))
    corpus_new=$((corpus_new + new_ns))
  fi
  if [ -n "$OLD" ]; then
    mv "$tmp/out.jsonl" "$tmp/new.jsonl"
    old_ns=$(best_of3 "$OLD" "$f")
    total_old=$((total_old + old_ns))
    [ "$in_corpus" = 1 ] && corpus_old=$((corpus_old + old_ns))
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
  [ "$corpus_bytes" -gt 0 ] &&
    echo "| corpus files together | $corpus_bytes B | $(mbps "$corpus_bytes" "$corpus_old") MB/s | $(mbps "$corpus_bytes" "$corpus_new") MB/s | |"
  echo "| all files | $total_bytes B | $(mbps "$total_bytes" "$total_old") MB/s | $(mbps "$total_bytes" "$total_new") MB/s | |"
  [ "$differ" = 0 ] || { echo "export bench: outputs differ" >&2; exit 1; }
else
  [ "$corpus_bytes" -gt 0 ] &&
    echo "| corpus files together | $corpus_bytes B | $(mbps "$corpus_bytes" "$corpus_new") |"
  echo "| all files | $total_bytes B | $(mbps "$total_bytes" "$total_new") |"
fi
# The exportable corpus files in one rectool run (`export FILE... -o DIR`): rectool starts once,
# which is most of what a small NPC recording costs (docs/performance.md, "Export").
if [ "${#corpus_files[@]}" -gt 0 ] &&
  batch_ns=$(python3 "$src/bench/cpu_best_of3.py" --fresh "$tmp/batch" \
    "$RECTOOL" export "${corpus_files[@]}" --to jsonl -o "$tmp/batch" 2>/dev/null); then
  batch_bytes=$(cat "$tmp/batch"/*.jsonl | wc -c)
  echo
  echo "The ${#corpus_files[@]} exportable corpus files in one run (\`rectool export FILE... -o DIR\`): $batch_bytes B of JSON lines, $(mbps "$batch_bytes" "$batch_ns") MB/s."
fi
