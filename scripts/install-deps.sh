#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages recd needs to build, test and run. Does nothing when all are there.
# Usage: scripts/install-deps.sh [extra-package...]
set -euo pipefail

packages=(
  build-essential cmake pkg-config   # toolchain
  clang libclang-rt-14-dev           # libFuzzer and the sanitizer runtime for fuzz/asan builds
  libuv1-dev zlib1g-dev libyaml-dev  # event loop, gzip, config
  libdeflate-dev                     # the faster compressor of Recap members
  libjansson-dev                     # NDJSON / JSONL parsing
  libhttp-parser-dev                 # /metrics and /healthz requests
  libcmocka-dev                      # unit tests
  libcairo2-dev                      # rectool plot: PNG/SVG drawing (pulls in fontconfig)
  libstorm-dev                       # StormLib: the MPQ container of StarCraft II replays
  python3 gzip                       # integration tests cross-check files with Python's gzip module
  time                               # /usr/bin/time: rectool send's peak memory (rectool_send_stream)
  scdoc man-db                       # man pages from docs/man/*.scd; `man -w` in package_deb
  systemd                            # package_deb's systemd-analyze; package_systemd boots it as PID 1
  zsh                                # parses the zsh completions (tests/repo/completions.sh)
  libembryo-bin                      # embryo_cc compiles rectool npc's PAWN scripts (rectool_npc)
  openjdk-17-jdk-headless            # javac and jar: builds and tests the Java client (clients/java)
  python3-venv python3-setuptools-whl python3-wheel-whl  # pip installs the Python client offline (python_install)
  maven libmaven-compiler-plugin-java libmaven-resources-plugin-java libsurefire-java
    libmaven-jar-plugin-java junit4  # Maven builds and tests the Java client offline (java_maven)
  libnats-dev nats-server            # the fleet on NATS JetStream: nats:// in recd and rectool send; its tests
  libssl-dev                         # libcrypto's Ed25519: the public key of nats:// nkey= seed files
  openssl                            # certificates for the NATS TLS tests (tests/clients/test_python_nats_secure.py)
  "$@"
)

# One dpkg-query for all of them: `make run` calls this every time.
installed=$(dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" 2>/dev/null |
  awk '/ install ok installed$/ { print $1 }' || true)
missing=()
for p in "${packages[@]}"; do
  grep -qx -- "$p" <<<"$installed" || missing+=("$p")
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
