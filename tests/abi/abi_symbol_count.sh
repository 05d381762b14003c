# SPDX-License-Identifier: MIT
# How many functions librecd.so exports, against the number docs/architecture.md states ("exports
# N functions"). The public ABI is kept as small as embedders need (issue 36); a change in the
# count, up or down, is a decision to write down there, not a side effect.
set -u
: "${RECD_SHARED_LIB:?set by tests/CMakeLists.txt to the built librecd.so}"
: "${RECD_SOURCE_DIR:?}"
command -v nm >/dev/null || { echo "SKIP: nm not found"; exit 77; }
doc="$RECD_SOURCE_DIR/docs/architecture.md"
stated=$(sed -n 's/.*`librecd.so` exports \([0-9][0-9]*\) functions.*/\1/p' "$doc" | head -n 1)
[ -n "$stated" ] || { echo "FAIL: docs/architecture.md states no count ('\`librecd.so\` exports N functions')" >&2; exit 1; }
count=$(nm -D --defined-only "$RECD_SHARED_LIB" | awk '$2 == "T"' | wc -l)
echo "abi_symbol_count: librecd.so exports $count functions; docs/architecture.md states $stated"
if [ "$count" -ne "$stated" ]; then
    echo "FAIL: update docs/architecture.md (and the ABI baseline at a release) or keep the function internal" >&2
    exit 1
fi
