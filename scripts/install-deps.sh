#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages recd needs to build, test and run. Does nothing when all are there.
# Usage: scripts/install-deps.sh [extra-package...]
set -euo pipefail

packages=(
  build-essential cmake pkg-config   # toolchain
  clang libclang-rt-14-dev           # libFuzzer and the sanitizer runtime for fuzz/asan builds
  libuv1-dev zlib1g-dev libyaml-dev  # event loop, gzip, config
  libjansson-dev                     # NDJSON / JSONL parsing
  libhttp-parser-dev                 # /metrics and /healthz requests
  libcmocka-dev                      # unit tests
  libstorm-dev                       # StormLib: the MPQ container of StarCraft II replays
  python3 gzip                       # integration tests cross-check files with Python's gzip module
  time                               # /usr/bin/time: rectool send's peak memory (rectool_send_stream)
  "$@"
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing missing packages: ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "error: not root and sudo is missing; install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
