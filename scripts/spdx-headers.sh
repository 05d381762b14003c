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
# The tracked source files, then those whose first three lines lack the tag: one `head` over all of
# them (two processes a file took most of a minute on a loaded 2-core machine).
files=()
while IFS= read -r f; do
  case "$f" in
    *.c | *.h | *.h.in | *.java | *.sh | *.py | CMakeLists.txt | */CMakeLists.txt | Makefile | \
      *.yaml | *.service | *.service.in | *.socket | *.cmake | *.pc.in | .ci/run) ;;
    *) continue ;;
  esac
  [ -f "$f" ] && files+=("$f")
done < <(git ls-files --cached --others --exclude-standard)
lacking=()
while IFS= read -r f; do
  lacking+=("$f")
done < <([ ${#files[@]} -eq 0 ] || printf '%s\n' "${files[@]}" | xargs -d '\n' head -v -n 3 -- |
  awk -v tag="$tag" '
    /^==> .* <==$/ { if (f != "" && !ok) print f; f = substr($0, 5, length($0) - 8); ok = 0; next }
    index($0, tag) { ok = 1 }
    END { if (f != "" && !ok) print f }')
for f in ${lacking[@]+"${lacking[@]}"}; do
  if $check; then
    echo "no SPDX line: $f" >&2
    continue
  fi
  case "$f" in
    *.c | *.h | *.h.in | *.java) { printf '/* %s */\n' "$tag"; cat "$f"; } >"$f.spdx" ;;
    *) if head -n 1 "$f" | grep -q '^#!'; then
         { head -n 1 "$f"; printf '# %s\n' "$tag"; tail -n +2 "$f"; } >"$f.spdx"
       else
         { printf '# %s\n' "$tag"; cat "$f"; } >"$f.spdx"
       fi ;;
  esac
  chmod --reference="$f" "$f.spdx"
  mv "$f.spdx" "$f"
done
if $check && [ ${#lacking[@]} -gt 0 ]; then
  echo "FAIL: ${#lacking[@]} source files lack '$tag' (run scripts/spdx-headers.sh)" >&2
  exit 1
fi
