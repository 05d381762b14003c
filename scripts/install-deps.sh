#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages recd needs. Does nothing when all are there.
# Usage: scripts/install-deps.sh [--test] [extra-package...]
#   without --test: what building and running recd and rectool needs (make run, make deb)
#   --test:         that plus what the test suite needs (make test, make build, make asan)
# RECD_DEPS_DRY_RUN=1 prints the list, one a line, and installs nothing (tests/repo/make_deps.sh).
set -euo pipefail

# Build recd, rectool and librecd, and their packages (make run, make install, make deb).
run_packages=(
  build-essential cmake pkg-config   # toolchain (binutils' objdump reads the sonames to dlopen)
  libuv1-dev zlib1g-dev libyaml-dev  # event loop, gzip, config
  libdeflate-dev                     # the faster compressor of Recap members
  libjansson-dev                     # NDJSON / JSONL parsing
  libhttp-parser-dev                 # /metrics and /healthz requests
  libcairo2-dev                      # rectool plot: PNG/SVG drawing (pulls in fontconfig)
  libstorm-dev                       # StormLib: the MPQ container of StarCraft II replays
  libnats-dev                        # the fleet on NATS JetStream: nats:// in recd and rectool send
  libssl-dev                         # OpenSSL 3: tls:// and metrics.tls in recd; Ed25519 for nats:// nkey= seeds
  scdoc                              # man pages from docs/man/*.scd
  dpkg-dev file                      # make deb: dpkg-buildflags, dpkg-shlibdeps, dpkg-gensymbols; CPack runs file
)
# The test suite only (make test): sanitizers, unit tests, the tools tests drive.
test_packages=(
  clang libclang-rt-14-dev           # libFuzzer and the sanitizer runtime for fuzz/asan builds
  libcmocka-dev                      # unit tests
  python3 gzip                       # integration tests cross-check files with Python's gzip module
  time                               # /usr/bin/time: rectool send's peak memory (rectool_send_stream)
  man-db                             # `man -w` in package_deb
  systemd                            # package_deb's systemd-analyze; package_systemd boots it as PID 1
  lintian                            # package_lintian: the .deb files have no lintian error or warning
  abigail-tools                      # abidw/abidiff: librecd.so's ABI against lib/abi/librecd.so.abi (abi_check)
  zsh                                # parses the zsh completions (tests/repo/completions.sh)
  libembryo-bin                      # embryo_cc compiles rectool npc's PAWN scripts (rectool_npc)
  openjdk-17-jdk-headless            # javac and jar: builds and tests the Java client (clients/java)
  nats-server                        # the NATS fleet tests (fleet_nats*)
  python3-venv python3-setuptools-whl python3-wheel-whl  # pip installs the Python client offline (python_install)
  maven libmaven-compiler-plugin-java libmaven-resources-plugin-java libsurefire-java
    libmaven-jar-plugin-java junit4  # Maven builds and tests the Java client offline (java_maven)
  openssl                            # certificates for the NATS TLS tests (tests/clients/test_python_nats_secure.py)
  chromium nodejs                    # the web console in a real browser (tests/browser/console_browser.sh)
)
# npm installs playwright-core for the browser test; a nodejs that bundles it (NodeSource's) needs
# no Debian npm, which would conflict with it.
command -v npm >/dev/null || test_packages+=(npm)

packages=("${run_packages[@]}")
if [ "${1:-}" = --test ]; then
  shift
  packages+=("${test_packages[@]}")
fi
packages+=("$@")
if [ -n "${RECD_DEPS_DRY_RUN:-}" ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

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
