# SPDX-License-Identifier: MIT
# librecd.so against its ABI baseline (lib/abi/librecd.so.abi, written at a release by
# lib/abi/regenerate.sh): abidiff from Debian's abigail-tools compares the functions librecd.so
# exports and the public types they reach. A removed or changed function, a changed signature or
# a changed public type fails; added functions pass (an addition does not break a program built
# against the baseline; they join the baseline at the next release). A failure is either a
# mistake to undo or a deliberate break: then raise the SOVERSION (lib/CMakeLists.txt) and
# regenerate the baseline, as a release does.
set -u
: "${RECD_SHARED_LIB:?set by tests/CMakeLists.txt to the built librecd.so}"
: "${RECD_SOURCE_DIR:?}" "${RECD_BUILD_DIR:?}"
for tool in abidw abidiff; do
    command -v "$tool" >/dev/null 2>&1 ||
        { echo "SKIP: $tool not installed (Debian's abigail-tools; scripts/install-deps.sh --test installs it)"; exit 77; }
done
if grep -q '^RECD_SANITIZE:BOOL=ON' "$RECD_BUILD_DIR/CMakeCache.txt"; then
    echo "SKIP: sanitizer build (clang's debug info of instrumented code); the ABI check runs in the normal build"
    exit 77
fi
baseline="$RECD_SOURCE_DIR/lib/abi/librecd.so.abi"
[ -f "$baseline" ] || { echo "FAIL: no baseline $baseline" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../../lib/abi/abidw_options.sh
. "$RECD_SOURCE_DIR/lib/abi/abidw_options.sh"
abidw "${RECD_ABIDW_OPTIONS[@]}" --headers-dir "$RECD_SOURCE_DIR/lib/include" \
    --headers-dir "$RECD_BUILD_DIR/lib/include" --out-file "$tmp/built.abi" "$RECD_SHARED_LIB" ||
    { echo "FAIL: abidw could not read $RECD_SHARED_LIB" >&2; exit 1; }
# abidiff's exit status is a bit set: 1 error, 2 usage, 4 ABI change, 8 incompatible change.
# With --no-added-syms additions are left out of the report and of the status.
abidiff --no-added-syms "$baseline" "$tmp/built.abi" >"$tmp/report" 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then
    cat "$tmp/report" >&2
    if [ $((rc & 3)) -ne 0 ]; then
        echo "FAIL: abidiff could not compare (status $rc)" >&2
    else
        echo "FAIL: librecd.so's ABI differs from lib/abi/librecd.so.abi (status $rc): undo the change," \
            "or break the ABI on purpose (raise the SOVERSION, run lib/abi/regenerate.sh)" >&2
    fi
    exit 1
fi
added=$(abidiff "$baseline" "$tmp/built.abi" | sed -n 's/.*Functions changes summary: [0-9]* Removed, [0-9]* Changed[^,]*, \([0-9]*\) Added.*/\1/p')
echo "abi_check: librecd.so keeps every function and type of lib/abi/librecd.so.abi (${added:-0} function(s) added since)"
