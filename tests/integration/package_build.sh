# SPDX-License-Identifier: MIT
# Builds the Debian packages of this build tree once with CPack (`make deb` does the same) into
# $RECD_BUILD_DIR/test-packages, for the tests that check them (package_deb, package_systemd):
# a ctest fixture (tests/CMakeLists.txt), so `ctest -R package_` builds them first and only once.
set -u
: "${RECD_BUILD_DIR:?}"
out="$RECD_BUILD_DIR/test-packages"
rm -rf "$out" # a skipped or failed build leaves no old packages for the tests to check
if grep -q '^RECD_SANITIZE:BOOL=ON' "$RECD_BUILD_DIR/CMakeCache.txt"; then
    echo "SKIP: sanitizer build; packages are built from the normal build"
    exit 77
fi
command -v cpack >/dev/null 2>&1 || { echo "SKIP: cpack not installed"; exit 77; }
[ -n "${RECD:-}" ] || { echo "SKIP: this build has no recd (libuv or libyaml missing)"; exit 77; }

mkdir -p "$out"
if ! cpack -G DEB --config "$RECD_BUILD_DIR/CPackConfig.cmake" -B "$out" >"$out/cpack.log" 2>&1; then
    cat "$out/cpack.log" >&2
    rm -rf "$out"
    echo "FAIL: cpack -G DEB failed" >&2
    exit 1
fi
rm -rf "$out/_CPack_Packages" # CPack's staging trees: only the .deb files are needed
ls -1 "$out"/*.deb
