#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Shows that package_systemd does not depend on the host's /tmp: fills /tmp with FLOOD_FILES small
# files (a million by default, as benchmark and test runs can leave), runs package_build and
# package_systemd through ctest in BUILD, and removes the files again, whatever the outcome.
# Run by `make test-tmp-flood` (docs/testing.md); not part of `make test`, where it would add
# a few minutes of file creation and removal.
# Usage: tests/host/tmp_flood.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: tmp_flood.sh BUILD_DIR}
files=${FLOOD_FILES:-1000000}
tmp=${TMPDIR:-/tmp}
prefix="recd-tmp-flood.$$"
# Straight in /tmp, not below one folder: tmpfiles' `D /tmp` visits each entry of /tmp itself.
trap 'echo "removing the flood"; find "$tmp" -maxdepth 1 -name "$prefix.*" -delete' EXIT

echo "filling $tmp with $files files named $prefix.*"
python3 - "$tmp/$prefix" "$files" <<'PY'
import os, sys
prefix, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    fd = os.open("%s.%d" % (prefix, i), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(fd, b"x")
    os.close(fd)
PY
echo "$tmp now holds $(find "$tmp" -maxdepth 1 | wc -l) entries"
cd "$build"
ctest --output-on-failure -R '^(package_build|package_systemd)$'
