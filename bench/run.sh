#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Entry point of `make bench` / `make bench-quick`: installs rsyslog and socat, builds recd,
# rectool and benchgen optimised in build-bench, then runs the Python driver, which prints the
# tables and writes bench/results/latest.md (quick: latest-quick.md).
# Usage: bench/run.sh [full|quick] [--only S1,S3] [--systems recd,raw] [--profile] [--results FILE]
# (the cost curve alone: bench/run.sh full --only CURVE --results bench/results/curve-DATE.md)
# Env: BENCH_BUILD (default build-bench), BENCH_WORK (scratch space, default /var/tmp/recd-bench;
# holds cached sample streams, several GiB for a full run).
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
mode="${1:-full}"
shift || true
build="${BENCH_BUILD:-$src/build-bench}"
work="${BENCH_WORK:-/var/tmp/recd-bench}"

bash "$src/scripts/install-deps.sh" python3 rsyslog socat # the driver is Python
bash "$src/bench/build.sh" "$build"

results="$src/bench/results/latest.md"
[ "$mode" = quick ] && results="$src/bench/results/latest-quick.md"
# A subset never replaces the committed tables: it goes to latest-partial.md (not tracked).
case " $* " in *" --only "* | *" --systems "*) results="$src/bench/results/latest-partial.md" ;; esac
exec python3 -B "$src/bench/harness/bench.py" --mode "$mode" --src "$src" --build "$build" \
  --work "$work" --results "$results" "$@"
