# SPDX-License-Identifier: MIT
# StormLib, libnats, libcrypto, libssl, cairo and fontconfig are opened with dlopen on first use
# (lib/src/base/dl_table.h): rectool and librecd.so do not name them as NEEDED, `rectool --version`
# and a .rec export load none of them, and a command that needs one that cannot be loaded (a fake,
# empty one found first through LD_LIBRARY_PATH, or a file that is no library) fails with exit 3
# and a message naming the library and the missing function, leaving no output behind. The .deb
# files only recommend these libraries, so the message ends with the apt-get command that
# installs the one missing (when dpkg knew its package at build time).
set -u
: "${RECTOOL:?RECTOOL must point at the rectool binary}" "${RECD_SHARED_LIB:?}"
command -v readelf >/dev/null 2>&1 || { echo "SKIP: readelf (binutils) not installed"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dlopen_libraries.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"

lazy='libstorm|libnats|libssl|libcrypto|libcairo|libfontconfig'
for bin in "$RECTOOL" "$RECD_SHARED_LIB"; do
    needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
    [ -n "$needed" ] || fail "readelf -d $bin lists no NEEDED libraries"
    bad=$(printf '%s\n' "$needed" | grep -E "^($lazy)\." | tr '\n' ' ')
    [ -z "$bad" ] || fail "$(basename "$bin") still links $bad(they are opened with dlopen)"
done
if [ -n "${RECD:-}" ]; then # the daemon may link libnats: its nats:// inputs use it directly
    echo "recd links: $(readelf -d "$RECD" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
fi

# Nothing of them is even looked for when no command needs them.
"$RECTOOL" generate --format samp-onfoot --scenario walk --duration 5s -o "$tmp/walk.rec" >/dev/null 2>&1 ||
    fail "generate a .rec"
LD_DEBUG=libs "$RECTOOL" --version >/dev/null 2>"$tmp/ld_version"
LD_DEBUG=libs "$RECTOOL" export "$tmp/walk.rec" --to jsonl -o "$tmp/walk.jsonl" 2>"$tmp/ld_export" ||
    fail "export of a .rec"
for what in version export; do
    grep -E "find library=($lazy)" "$tmp/ld_$what" >&2 && fail "rectool $what looks for a library it does not need"
done

# The sonames are the ones the build found (cmake/dlopen_library.cmake): read them from rectool.
command -v strings >/dev/null 2>&1 || { echo "SKIP: strings (binutils) not installed"; exit 77; }
soname() { strings "$RECTOOL" | grep -Ex "$1\\.so\\.[0-9.]+" | head -n 1; }
cc=$(command -v cc || command -v gcc || command -v clang) || { echo "SKIP: no C compiler for the fake libraries"; exit 77; }
mkdir -p "$tmp/empty" "$tmp/broken"
fake() { # fake SONAME: an empty shared object in empty/, and a file that is no library in broken/
    "$cc" -shared -o "$tmp/empty/$1" -x c /dev/null || fail "cc -shared $1"
    echo "not a library" >"$tmp/broken/$1"
}
storm=$(soname libstorm) cairo=$(soname libcairo) nats=$(soname libnats)
[ -n "$storm" ] && [ -n "$cairo" ] || fail "rectool holds no libstorm or libcairo soname: '$storm' '$cairo'"
for so in $storm $cairo $nats; do fake "$so"; done

# plot without cairo: exit 3, the library and its first missing function named, no image left.
LD_LIBRARY_PATH="$tmp/empty" expect 3 "$RECTOOL" plot "$tmp/walk.rec" -o "$tmp/walk.svg"
grep -q "cairo ($cairo).*lacks cairo_" "$tmp/err" || fail "plot, empty $cairo: $(cat "$tmp/err")"
LD_LIBRARY_PATH="$tmp/broken" expect 3 "$RECTOOL" plot "$tmp/walk.rec" -o "$tmp/walk.png"
grep -q "cairo ($cairo), needed for rectool plot, cannot be loaded.*; install " "$tmp/err" || fail "plot, broken $cairo: $(cat "$tmp/err")"
if command -v dpkg-query >/dev/null 2>&1 && dpkg-query -S "$cairo" >/dev/null 2>&1; then
    grep -qE "; install it with: apt-get install libcairo[0-9a-z.+-]*\$" "$tmp/err" ||
        fail "plot, broken $cairo: no apt-get command for the missing package: $(cat "$tmp/err")"
fi
ls "$tmp"/walk.svg* "$tmp"/walk.png* >/dev/null 2>&1 && fail "plot left an image behind: $(ls "$tmp")"
expect 0 "$RECTOOL" plot "$tmp/walk.rec" -o "$tmp/walk.svg" # and with the real one it draws
grep -q "<svg" "$tmp/walk.svg" 2>/dev/null || fail "plot with the real cairo wrote no SVG"

# send to nats:// without libnats: refused before any connection is tried.
if [ -n "$nats" ]; then
    LD_LIBRARY_PATH="$tmp/empty" expect 3 "$RECTOOL" send "$tmp/walk.rec" --to "nats://127.0.0.1:9/x"
    grep -q "libnats ($nats).*lacks " "$tmp/err" || fail "send, empty $nats: $(cat "$tmp/err")"
fi

# send to tls:// without libssl: refused before any connection is tried (port 9: nothing there).
ssl=$(soname libssl)
if [ -n "$ssl" ]; then
    fake "$ssl"
    LD_LIBRARY_PATH="$tmp/empty" expect 3 "$RECTOOL" send "$tmp/walk.rec" --to "tls://127.0.0.1:9"
    grep -q "libssl ($ssl).*lacks " "$tmp/err" || fail "send, empty $ssl: $(cat "$tmp/err")"
fi

# An SC2 replay without StormLib: export, info and verify fail as errors, not as a damaged file.
replay=$(ls "${RECD_CORPUS_DIR:-/nonexistent}"/sc2/*.SC2Replay 2>/dev/null | head -n 1)
if [ -n "$replay" ] && [ -n "$storm" ]; then
    LD_LIBRARY_PATH="$tmp/empty" expect 3 "$RECTOOL" export "$replay" --to jsonl -o "$tmp/sc2.jsonl"
    grep -q "StormLib ($storm).*lacks SFile" "$tmp/err" || fail "export, empty $storm: $(cat "$tmp/err")"
    [ -e "$tmp/sc2.jsonl" ] && fail "export left $tmp/sc2.jsonl behind"
    for cmd in info verify; do
        LD_LIBRARY_PATH="$tmp/broken" expect 3 "$RECTOOL" $cmd "$replay"
        grep -q "StormLib ($storm), needed for .*, cannot be loaded" "$tmp/err" || fail "$cmd, broken $storm: $(cat "$tmp/err")"
    done
    expect 0 "$RECTOOL" verify "$replay" # and with the real one it reads
else
    echo "the SC2 corpus is not available (RECD_CORPUS_DIR): StormLib's failure is not checked"
fi
[ "$failures" -eq 0 ]
