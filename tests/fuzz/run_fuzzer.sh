#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs one libFuzzer target for a bounded time. Seeds come from tests/fuzz/seeds/<target>.sh when
# it exists (it writes seed files into the directory given), so no binary seeds live in git.
set -euo pipefail
fuzzer=$1 dir=$2 seconds=$3
name=$(basename "$fuzzer")
mkdir -p "$dir"
seeder="$(dirname "$0")/seeds/$name.sh"
if [ -f "$seeder" ] && [ -z "$(ls -A "$dir")" ]; then
    bash "$seeder" "$dir"
fi
artifacts="$dir/../artifacts-$name"
mkdir -p "$artifacts"
exec "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$dir"
