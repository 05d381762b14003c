# SPDX-License-Identifier: MIT
# Installs the build into a temporary prefix and builds a small program against the installed
# headers and recd.pc, once against the shared and once against the static library. The program
# includes only the umbrella <recd/recd.h> and checks the library's version against the header's.
# recd.pc names the prefix installed to in plain paths (issue 41: no pkgconfig/../../.. detours).
set -eu
: "${RECD_BUILD_DIR:?}"
if grep -q '^RECD_SANITIZE:BOOL=ON' "$RECD_BUILD_DIR/CMakeCache.txt"; then
    echo "SKIP: sanitizer build; the install check links a plain program and runs in the normal build"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$RECD_BUILD_DIR" --prefix "$tmp/prefix" >/dev/null
for h in recd.h api.h version.h common.h samp_rec.h recap.h message.h wire.h client.h; do
    [ -f "$tmp/prefix/include/recd/$h" ] || { echo "FAIL: recd/$h not installed" >&2; exit 1; }
done
for h in synth.h; do # private (lib/internal): rectool and the tests use it through the archive
    [ ! -e "$tmp/prefix/include/recd/$h" ] || { echo "FAIL: private recd/$h installed" >&2; exit 1; }
done
[ -x "$tmp/prefix/bin/rectool" ] || { echo "FAIL: rectool not installed" >&2; exit 1; }
pc_dir=$(dirname "$(find "$tmp/prefix" -name recd.pc | head -n 1)")
[ -n "$pc_dir" ] || { echo "FAIL: recd.pc not installed" >&2; exit 1; }
cat >"$tmp/use.c" <<'C'
#include <recd/recd.h>
#include <stdio.h>
int main(void)
{
    recd_rec_onfoot b = {0};
    uint8_t out[RECD_REC_ONFOOT_BLOCK_SIZE];
    b.time_ms = 1234;
    recd_rec_onfoot_encode(&b, out);
    recd_rec_onfoot back;
    recd_rec_onfoot_decode(out, &back);
    printf("%s %u\n", recd_version_string(), back.time_ms);
    return back.time_ms == 1234 && recd_version_number() == RECD_VERSION_NUMBER ? 0 : 1;
}
C
export PKG_CONFIG_PATH="$pc_dir"
prefix="$tmp/prefix"
cflags=$(pkg-config --cflags recd | sed "s/ *$//")
[ "$cflags" = "-I$prefix/include" ] || { echo "FAIL: pkg-config --cflags recd prints '$cflags', not -I$prefix/include" >&2; exit 1; }
for var in prefix libdir includedir; do
    value=$(pkg-config --variable=$var recd)
    case "$value" in
        */../* | */./* | *//* | */) echo "FAIL: recd.pc's $var is not a plain path: $value" >&2; exit 1 ;;
        "$prefix" | "$prefix"/*) ;;
        *) echo "FAIL: recd.pc's $var is $value, outside $prefix" >&2; exit 1 ;;
    esac
done
[ "$(pkg-config --variable=libdir recd)/pkgconfig" = "$pc_dir" ] ||
    { echo "FAIL: recd.pc's libdir $(pkg-config --variable=libdir recd) does not hold $pc_dir" >&2; exit 1; }
libs=$(pkg-config --libs recd)
case "$libs" in *..*) echo "FAIL: pkg-config --libs recd prints '$libs'" >&2; exit 1 ;; esac
cc -std=c11 -o "$tmp/use_shared" "$tmp/use.c" $(pkg-config --cflags --libs recd)
LD_LIBRARY_PATH="$(pkg-config --variable=libdir recd)" "$tmp/use_shared"
cc -std=c11 -o "$tmp/use_static" "$tmp/use.c" $(pkg-config --cflags recd) \
    "$(pkg-config --variable=libdir recd)/librecd.a" $(pkg-config --libs-only-l --static recd | sed 's/-lrecd//')
"$tmp/use_static"
echo "install_pkgconfig: headers, rectool and recd.pc installed; <recd/recd.h> alone builds; shared and static links work"
