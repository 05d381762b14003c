# SPDX-License-Identifier: MIT
# Runs lintian on the Debian packages of this build tree (built by package_build, as `make deb`
# builds them): no error and no warning on recd, rectool, librecd1 or librecd-dev. Of lintian's
# informational notes, those issue 41 named must be gone too: an unstripped librecd.a, no symbols
# file, .comment sections, and (when the tree takes dpkg-buildflags, RECD_DPKG_BUILDFLAGS) missing
# bindnow or fortify hardening. Skipped when lintian is not installed (make test installs it).
set -u
: "${RECD_BUILD_DIR:?}"
if grep -q '^RECD_SANITIZE:BOOL=ON' "$RECD_BUILD_DIR/CMakeCache.txt"; then
    echo "SKIP: sanitizer build; packages are built from the normal build"
    exit 77
fi
command -v lintian >/dev/null 2>&1 || {
    echo "SKIP: lintian is not installed (scripts/install-deps.sh --test, run by make test, installs it)"
    exit 77
}
[ -n "${RECD:-}" ] || { echo "SKIP: this build has no recd (libuv or libyaml missing)"; exit 77; }
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pkg="$RECD_BUILD_DIR/test-packages" # the package_build fixture's output
debs=""
for p in recd rectool librecd1 librecd-dev; do
    deb=$(ls "$pkg/$p"_*.deb 2>/dev/null | head -n 1)
    [ -n "$deb" ] || fail "no $p package in $pkg (the package_build test builds them: ctest -R package_)"
    debs="$debs $deb"
done
[ "$failures" -eq 0 ] || exit 1

# -I: informational tags too. Root is fine here (lintian only warns about it on stderr).
# shellcheck disable=SC2086
lintian -I --tag-display-limit 0 $debs >"$tmp/lintian" 2>"$tmp/lintian.err"
rc=$?
[ "$rc" -le 2 ] || fail "lintian exits $rc: $(cat "$tmp/lintian.err")"
grep -E '^[EW]: ' "$tmp/lintian" >"$tmp/bad" && fail "lintian reports errors or warnings:
$(cat "$tmp/bad")"
named='unstripped-static-library|no-symbols-control-file|binary-has-unneeded-section|lacks-ldconfig-trigger'
if grep -q '^RECD_DPKG_BUILDFLAGS:BOOL=ON' "$RECD_BUILD_DIR/CMakeCache.txt"; then
    named="$named|hardening-no-bindnow|hardening-no-fortify-functions|hardening-no-relro"
else
    echo "note: this tree was built without dpkg-buildflags (RECD_DPKG_BUILDFLAGS=OFF, e.g. a Debug build): hardening not checked"
fi
grep -E "^I: [^ ]+ ($named)( |$)" "$tmp/lintian" >"$tmp/info" && fail "lintian notes what issue 41 asked to fix:
$(cat "$tmp/info")"

if [ "$failures" -ne 0 ]; then
    echo "all of lintian's output:" >&2
    cat "$tmp/lintian" >&2
    exit 1
fi
echo "package_lintian: lintian $(lintian --version | sed 's/^Lintian v//') reports no error or warning on recd, rectool, librecd1 and librecd-dev ($(grep -c '^I: ' "$tmp/lintian") informational notes left)"
