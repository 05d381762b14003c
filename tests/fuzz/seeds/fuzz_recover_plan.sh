#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Seeds for fuzz_recover_plan: the recap and .rec seeds of the decoder fuzzers, plus the same files
# cut short, as a crash leaves them.
set -euo pipefail
dir=${1:?usage: fuzz_recover_plan.sh DIR}
here=$(dirname "$0")
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bash "$here/fuzz_recap_decoder.sh" "$tmp"
bash "$here/fuzz_rec_reader.sh" "$tmp"
for f in "$tmp"/*; do
    name=$(basename "$f")
    cp "$f" "$dir/$name"
    size=$(stat -c %s "$f")
    [ "$size" -gt 16 ] && head -c $((size - 5)) "$f" >"$dir/$name.cut"
done
exit 0
