#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Gives every tracked source file its one-line SPDX licence header (LICENSE, README "Licence").
# Usage: scripts/spdx-headers.sh          adds the line where it is missing
#        scripts/spdx-headers.sh --check  lists the files without it and fails (tests/repo)
set -euo pipefail
cd "$(dirname "$0")/.."
tag='SPDX-License-Identifier: MIT'
check=false
[ "${1:-}" = --check ] && check=true
missing=0
while IFS= read -r f; do
  case "$f" in
    *.c | *.h | *.h.in | *.java) style=c ;;
    *.sh | *.py | CMakeLists.txt | */CMakeLists.txt | Makefile | *.yaml | *.service | *.service.in | *.socket | *.cmake | *.pc.in | .ci/run) style=hash ;;
    *) continue ;;
  esac
  [ -f "$f" ] || continue
  head -n 3 "$f" | grep -q "$tag" && continue
  if $check; then
    echo "no SPDX line: $f" >&2
    missing=$((missing + 1))
    continue
  fi
  if [ $style = c ]; then
    { printf '/* %s */\n' "$tag"; cat "$f"; } >"$f.spdx"
  elif head -n 1 "$f" | grep -q '^#!'; then
    { head -n 1 "$f"; printf '# %s\n' "$tag"; tail -n +2 "$f"; } >"$f.spdx"
  else
    { printf '# %s\n' "$tag"; cat "$f"; } >"$f.spdx"
  fi
  chmod --reference="$f" "$f.spdx"
  mv "$f.spdx" "$f"
done < <(git ls-files --cached --others --exclude-standard)
if $check && [ $missing -gt 0 ]; then
  echo "FAIL: $missing source files lack '$tag' (run scripts/spdx-headers.sh)" >&2
  exit 1
fi
