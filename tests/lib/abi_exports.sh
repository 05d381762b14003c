# SPDX-License-Identifier: MIT
# librecd.so must export only the public API: every defined dynamic symbol starts with recd_.
# The library is built with hidden visibility and RECD_API marks the exports, so an offender is an
# internal function exported because the visibility setting was lost, or a public one named
# outside recd_.
set -eu
: "${RECD_SHARED_LIB:?set by tests/CMakeLists.txt to the built librecd.so}"
command -v nm >/dev/null || { echo "SKIP: nm not found"; exit 77; }
symbols=$(nm -D --defined-only "$RECD_SHARED_LIB" | awk '{print $NF}')
[ -n "$symbols" ] || { echo "FAIL: $RECD_SHARED_LIB exports nothing" >&2; exit 1; }
offenders=$(printf '%s\n' "$symbols" | grep -v '^recd_' || true)
if [ -n "$offenders" ]; then
    echo "FAIL: $RECD_SHARED_LIB exports $(printf '%s\n' "$offenders" | wc -l) symbol(s) outside recd_:" >&2
    printf '  %s\n' $offenders >&2
    exit 1
fi
# Private interfaces (lib/internal/recd/) stay inside: the synthetic-data generators, for one.
private=$(printf '%s\n' "$symbols" | grep '^recd_synth_' || true)
if [ -n "$private" ]; then
    echo "FAIL: $RECD_SHARED_LIB exports private recd_synth_* functions:" >&2
    printf '  %s\n' $private >&2
    exit 1
fi
echo "abi_exports: $(printf '%s\n' "$symbols" | wc -l) symbols, all recd_*"
