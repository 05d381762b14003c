# SPDX-License-Identifier: MIT
# Sourced by the rectool bench lines (export.sh, import.sh): an optimised rectool in BUILD_DIR
# (or RECTOOL as given), a scratch folder $tmp removed on exit, and in files the generated
# recordings (6 h vehicle, 1 h on foot, 1 h Recap) followed by the corpus files (../shared/corpus)
# whose names match the find(1) expression in corpus_match. Sets RECTOOL, OLD (OLD_RECTOOL),
# src, tmp, corpus, files; mbps BYTES NS prints MB per second.
# Usage: name=NAME; corpus_match=(-name '*.rec' -o ...); . bench/rectool_files.sh [BUILD_DIR]
# shellcheck source=rectool_build.sh
. "$(dirname "${BASH_SOURCE[0]}")/rectool_build.sh"
OLD="${OLD_RECTOOL:-}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/recd-$name-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$RECTOOL" generate --format samp-vehicle --duration 6h --seed 1 -o "$tmp/vehicle-6h.rec" >/dev/null
"$RECTOOL" generate --format samp-onfoot --duration 1h --seed 1 -o "$tmp/onfoot-1h.rec" >/dev/null
"$RECTOOL" generate --format recap --duration 1h --seed 1 -o "$tmp/recap-1h.recap" >/dev/null
files=("$tmp/vehicle-6h.rec" "$tmp/onfoot-1h.rec" "$tmp/recap-1h.recap")
corpus="$src/../shared/corpus"
if [ -d "$corpus" ]; then
  while IFS= read -r f; do files+=("$f"); done < <(find "$corpus" -type f \( "${corpus_match[@]}" \) | sort)
else
  echo "$name bench: $corpus is absent; generated files only" >&2
fi

mbps() { awk -v b="$1" -v ns="$2" 'BEGIN { printf "%.0f", b / 1e6 / (ns / 1e9) }'; }
