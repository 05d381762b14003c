# SPDX-License-Identifier: MIT
# Takes the Debian packages of this build tree (built by package_build, `make deb` builds the same),
# unpacks them into a scratch root with `dpkg -x` and checks that every file is there, that the control data
# (dependencies, conffiles, maintainer scripts) is right, that the installed recd.service names the
# installed binary and config (systemd-analyze verify --root when systemd-analyze exists, an
# offline check always), that `man` finds the pages, and that the maintainer scripts succeed
# without a running systemd.
set -u
: "${RECD_BUILD_DIR:?}" "${RECD_SOURCE_DIR:?}"
if grep -q '^RECD_SANITIZE:BOOL=ON' "$RECD_BUILD_DIR/CMakeCache.txt"; then
    echo "SKIP: sanitizer build; packages are built from the normal build"
    exit 77
fi
for tool in dpkg-deb dpkg; do
    command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool not installed"; exit 77; }
done
[ -n "${RECD:-}" ] || { echo "SKIP: this build has no recd (libuv or libyaml missing)"; exit 77; }
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pkg="$RECD_BUILD_DIR/test-packages" # the package_build fixture's output
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$RECD_BUILD_DIR/CMakeCache.txt")
deb() { ls "$pkg/$1"_*.deb 2>/dev/null | head -n 1; }
for p in recd rectool librecd1 librecd-dev; do
    [ -n "$(deb $p)" ] || fail "no $p package in $pkg (the package_build test builds them: ctest -R package_)"
done
[ "$failures" -eq 0 ] || exit 1

# Control data.
field() { dpkg-deb -f "$(deb "$1")" "$2"; }
for lib in libc6 libuv1 libyaml-0-2 libjansson4 zlib1g libdeflate0 libhttp-parser; do
    field recd Depends | grep -q "$lib" || fail "recd does not depend on $lib: $(field recd Depends)"
done
field rectool Depends | grep -q libjansson4 || fail "rectool does not depend on libjansson4: $(field rectool Depends)"
field librecd-dev Depends | grep -qF "librecd1 (= $version)" || fail "librecd-dev does not depend on this librecd1: $(field librecd-dev Depends)"
# Libraries opened with dlopen on first use are not seen by dpkg-shlibdeps: the packages recommend
# them (not Depends: a command that needs a missing one says which package to install).
dlopened="libstorm9"
if grep -q '^NATS_FOUND:INTERNAL=1' "$RECD_BUILD_DIR/CMakeCache.txt"; then
    dlopened="$dlopened libnats"
    grep -q '^CRYPTO_FOUND:INTERNAL=1' "$RECD_BUILD_DIR/CMakeCache.txt" && dlopened="$dlopened libssl3"
fi
for lib in $dlopened; do
    field librecd1 Recommends | grep -q "$lib" || fail "librecd1 does not recommend $lib (librecd opens it): $(field librecd1 Recommends)"
    field rectool Recommends | grep -q "$lib" || fail "rectool does not recommend $lib (it opens it): $(field rectool Recommends)"
done
for lib in libcairo2 libfontconfig1; do
    field rectool Recommends | grep -q "$lib" || fail "rectool does not recommend $lib (plot opens it): $(field rectool Recommends)"
done
for p in rectool librecd1; do
    field $p Depends | grep -Eq 'libstorm|libnats|libssl|libcairo|libfontconfig' &&
        fail "$p depends on a library it only opens on first use: $(field $p Depends)"
done
field librecd1 Depends | grep -q 'libc6' || fail "librecd1 has no Depends from dpkg-shlibdeps: $(field librecd1 Depends)"
field recd Maintainer | grep -Eq '@[A-Za-z0-9-]+\.[A-Za-z0-9.-]+>$' || fail "the maintainer's address has no domain: $(field recd Maintainer)"
field librecd-dev Depends | grep -q 'libstorm-dev\|libnats-dev\|libssl-dev' &&
    fail "librecd-dev depends on a -dev package recd.pc no longer needs: $(field librecd-dev Depends)"
[ "$(field recd Version)" = "$version" ] || fail "recd's version is $(field recd Version), not $version (native)"
dpkg-deb -e "$(deb recd)" "$tmp/control"
grep -qx /etc/recd/recd.yaml "$tmp/control/conffiles" 2>/dev/null || fail "/etc/recd/recd.yaml is not a conffile"
for script in postinst prerm postrm; do
    [ -x "$tmp/control/$script" ] || { fail "recd has no executable $script"; continue; }
    sh -n "$tmp/control/$script" || fail "$script does not parse"
done
grep -q "deb-systemd-helper enable 'recd.service'" "$tmp/control/postinst" 2>/dev/null || fail "postinst does not enable recd.service"
dpkg-deb -e "$(deb librecd1)" "$tmp/libcontrol"
grep -q '^librecd 1 librecd1' "$tmp/libcontrol/shlibs" 2>/dev/null || fail "librecd1 has no shlibs entry"
# ldconfig runs from dpkg's trigger, not from maintainer scripts.
grep -qx 'activate-noawait ldconfig' "$tmp/libcontrol/triggers" 2>/dev/null || fail "librecd1 does not activate the ldconfig trigger"
for script in preinst postinst prerm postrm; do
    [ -e "$tmp/libcontrol/$script" ] && fail "librecd1 has a $script: $(cat "$tmp/libcontrol/$script")"
done
# The symbols file lists exactly the library's dynamic symbols, all recd_*, versions without a
# Debian revision (dpkg-gensymbols, packaging/cpack_librecd.cmake).
symbols="$tmp/libcontrol/symbols"
if [ -f "$symbols" ]; then
    head -n 1 "$symbols" | grep -qx 'librecd.so.1 librecd1 #MINVER#' || fail "symbols file header: $(head -n 1 "$symbols")"
    sed -n 's/^ \([^@]*\)@Base .*/\1/p' "$symbols" | sort >"$tmp/symbols.listed"
    grep -v '^recd_' "$tmp/symbols.listed" >&2 && fail "the symbols file lists symbols other than recd_*"
    grep -q ' [0-9][^ ]*-[0-9]*$' "$symbols" && fail "the symbols file has a Debian revision in a version"
else
    fail "librecd1 has no symbols file"
fi

# Files.
root="$tmp/root"
for p in recd rectool librecd1 librecd-dev; do dpkg -x "$(deb $p)" "$root"; done
for f in usr/bin/recd usr/bin/rectool; do
    [ -x "$root/$f" ] || fail "/$f missing or not executable"
done
for f in etc/recd/recd.yaml usr/lib/systemd/system/recd.service usr/lib/systemd/system/recd.socket \
    usr/include/recd/recd.h usr/include/recd/version.h \
    usr/share/man/man8/recd.8.gz usr/share/man/man1/rectool.1.gz usr/share/man/man5/recd.yaml.5.gz \
    usr/share/man/man7/recd-protocol.7.gz usr/share/bash-completion/completions/rectool \
    usr/share/bash-completion/completions/recd usr/share/zsh/vendor-completions/_rectool \
    usr/share/zsh/vendor-completions/_recd usr/share/doc/recd/README.md \
    usr/share/doc/recd/operations.md usr/share/doc/recd/configuration.md \
    usr/share/doc/recd/formats/recap.md usr/share/doc/recd/copyright usr/share/doc/rectool/copyright; do
    [ -f "$root/$f" ] || fail "/$f is not in the packages"
done
# librecd in usr/lib, or in usr/lib/<multiarch> when the tree was configured for /usr.
for f in librecd.a librecd.so librecd.so.1 pkgconfig/recd.pc; do
    [ -n "$(find "$root/usr/lib" -path "*/$f" 2>/dev/null)" ] || fail "$f is not in the packages"
done
if command -v nm >/dev/null 2>&1; then
    so=$(find "$root/usr/lib" -name 'librecd.so.1.*' -type f | head -n 1)
    nm -D --defined-only "$so" | awk '{ print $3 }' | sort >"$tmp/symbols.exported"
    cmp -s "$tmp/symbols.listed" "$tmp/symbols.exported" ||
        fail "librecd1's symbols file and librecd.so.1 differ: $(diff "$tmp/symbols.listed" "$tmp/symbols.exported" | head -n 5)"
fi
for p in recd rectool librecd1 librecd-dev; do
    zcat "$root/usr/share/doc/$p/changelog.gz" 2>/dev/null | head -n 1 | grep -q "^recd ($version) " ||
        fail "$p has no changelog.gz for $version"
done
# recd.pc names /usr plainly (issue 41: no pkgconfig/../../.. detours).
pc=$(find "$root/usr/lib" -path '*/pkgconfig/recd.pc' | head -n 1)
if [ -n "$pc" ]; then
    [ "$(PKG_CONFIG_PATH="${pc%/recd.pc}" pkg-config --variable=includedir recd)" = /usr/include ] ||
        fail "the packaged recd.pc's includedir is $(PKG_CONFIG_PATH="${pc%/recd.pc}" pkg-config --variable=includedir recd)"
    libdir=$(PKG_CONFIG_PATH="${pc%/recd.pc}" pkg-config --variable=libdir recd)
    [ "$root$libdir/pkgconfig/recd.pc" = "$pc" ] || fail "the packaged recd.pc's libdir is $libdir, not where it lies"
fi
"$root/usr/bin/rectool" --version >/dev/null 2>&1 || fail "the packaged rectool does not run"
"$root/usr/bin/recd" --check-config "$root/etc/recd/recd.yaml" >"$tmp/check" 2>&1 ||
    fail "the packaged recd rejects the packaged /etc/recd/recd.yaml: $(cat "$tmp/check")"

# The unit names what the packages install (offline: every path it uses exists in the root).
unit="$root/usr/lib/systemd/system/recd.service"
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
binary=${exec_start%% *}
[ "$binary" = /usr/bin/recd ] || fail "ExecStart runs $binary, not /usr/bin/recd"
[ -x "$root$binary" ] || fail "ExecStart's $binary is not an executable in the package"
config=$(printf '%s\n' "$exec_start" | sed -n 's/.*--config \([^ ]*\).*/\1/p')
[ "$config" = /etc/recd/recd.yaml ] || fail "ExecStart reads '$config', not /etc/recd/recd.yaml"
for doc in $(sed -n 's/^Documentation=//p' "$unit"); do
    case "$doc" in
        file:*) [ -f "$root${doc#file:}" ] || fail "Documentation=$doc is not in the package" ;;
    esac
done
grep -q '^LogsDirectory=' "$unit" && fail "the unit sets LogsDirectory=, which recd never uses"
grep -q '@[A-Z_]*@' "$unit" && fail "the unit has an unexpanded placeholder: $(grep '@[A-Z_]*@' "$unit")"

# `cmake --install` into a prefix: the unit follows the prefix, and a second install keeps an
# edited config (the shipped one goes beside it as recd.yaml.new).
prefix="$tmp/prefix"
cmake --install "$RECD_BUILD_DIR" --prefix "$prefix" >/dev/null 2>"$tmp/install.err" || fail "cmake --install: $(cat "$tmp/install.err")"
grep -qx "ExecStart=$prefix/bin/recd --config $prefix/etc/recd/recd.yaml" "$prefix/lib/systemd/system/recd.service" ||
    fail "cmake --install --prefix gives $(grep '^ExecStart=' "$prefix/lib/systemd/system/recd.service" 2>/dev/null)"
echo "# edited" >>"$prefix/etc/recd/recd.yaml"
cmake --install "$RECD_BUILD_DIR" --prefix "$prefix" >/dev/null 2>&1
tail -n 1 "$prefix/etc/recd/recd.yaml" | grep -qx "# edited" || fail "a second cmake --install overwrote the edited recd.yaml"
cmp -s "$prefix/etc/recd/recd.yaml.new" "$RECD_SOURCE_DIR/config/recd.yaml" || fail "the shipped config is not beside the edited one as recd.yaml.new"

# man finds the installed pages.
for page in recd rectool recd.yaml recd-protocol; do
    found=$(MANPATH="$root/usr/share/man" man -w "$page" 2>/dev/null)
    case "$found" in "$root"/*) ;; *) fail "man -w $page finds '$found', not the packaged page" ;; esac
done

if command -v systemd-analyze >/dev/null 2>&1 && [ -f /usr/lib/systemd/system/sysinit.target ]; then
    # A Debian 12 root: merged /usr, systemd's own targets, /bin/kill for ExecReload=.
    ln -s usr/bin "$root/bin"
    ln -s usr/lib "$root/lib"
    cp -P /usr/lib/systemd/system/*.target /usr/lib/systemd/system/*.slice "$root/usr/lib/systemd/system/" 2>/dev/null
    [ -e "$root/usr/bin/kill" ] || cp /bin/kill "$root/usr/bin/kill"
    if ! MANPATH="$root/usr/share/man" systemd-analyze verify --root="$root" recd.service recd.socket >"$tmp/verify" 2>&1; then
        fail "systemd-analyze verify --root: $(cat "$tmp/verify")"
    else
        echo "systemd-analyze verify --root: recd.service and recd.socket verify"
    fi
else
    echo "note: systemd-analyze or systemd's units missing; only the offline unit check ran"
fi

# The maintainer scripts, with the systemd helpers replaced by stubs that log their arguments:
# they succeed whether or not systemd runs, and enable the service on a first install.
mkdir -p "$tmp/stubs"
for stub in deb-systemd-helper deb-systemd-invoke systemctl; do
    printf '#!/bin/sh\necho "%s $*" >>"%s"\nexit 0\n' "$stub" "$tmp/calls" >"$tmp/stubs/$stub"
    chmod +x "$tmp/stubs/$stub"
done
run_script() {
    local script=$1
    shift
    PATH="$tmp/stubs:$PATH" sh "$tmp/control/$script" "$@" >/dev/null 2>&1 || fail "$script $* exits $?"
}
run_script postinst configure ""
grep -q "deb-systemd-helper enable recd.service" "$tmp/calls" 2>/dev/null || fail "postinst configure did not enable recd.service: $(cat "$tmp/calls" 2>/dev/null)"
run_script prerm remove
run_script postrm remove
run_script postrm purge
grep -q "deb-systemd-helper purge recd.service" "$tmp/calls" || fail "postrm purge did not purge recd.service's state"

if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "package_deb: recd, rectool, librecd1 and librecd-dev install every file; the unit runs /usr/bin/recd --config /etc/recd/recd.yaml; man finds all pages"
