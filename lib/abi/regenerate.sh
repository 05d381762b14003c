#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Writes librecd's ABI baseline from a built librecd.so: lib/abi/librecd.so.abi (abidw's ABIXML:
# every exported function and the public types it reaches) and the symbol list of
# packaging/debian/librecdN.symbols. tests/abi/abi_check.sh compares each build with them.
#
# Run it ONLY at a release, or after a change that deliberately breaks the ABI (with the SOVERSION
# in lib/CMakeLists.txt raised and the count in docs/architecture.md updated): between releases the
# baseline is what embedders built against, and the check exists to notice a change to it.
# Usage: lib/abi/regenerate.sh [BUILD_DIR]   (default build-dev; any build type with -g)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build-dev}" && pwd)
lib="$build/lib/librecd.so"
[ -e "$lib" ] || { echo "regenerate: no $lib; build recd_shared first" >&2; exit 1; }
command -v abidw >/dev/null || { echo "regenerate: abidw not found (apt install abigail-tools)" >&2; exit 1; }
# shellcheck source=abidw_options.sh
. "$src/lib/abi/abidw_options.sh"
abidw "${RECD_ABIDW_OPTIONS[@]}" --headers-dir "$src/lib/include" \
    --headers-dir "$build/lib/include" --out-file "$src/lib/abi/librecd.so.abi" "$lib"

# The package's symbols file: the same header, every exported symbol with the version it is listed
# with already, or this version when it is new (a new SOVERSION's file starts empty: all are new).
soname=$(objdump -p "$lib" | awk '$1 == "SONAME" { print $2 }')
package="librecd${soname##*.so.}"
version=$(sed -n 's/^project(recd VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
symbols="$src/packaging/debian/$package.symbols"
{
    sed -n '/^#/p' "$symbols" 2>/dev/null || true
    echo "$soname $package #MINVER#"
    echo "* Build-Depends-Package: librecd-dev"
    nm -D --defined-only "$lib" | awk '{ print $3 }' | sort |
        awk -v version="$version" -v listed="$symbols" '
            BEGIN { while ((getline line < listed) > 0)
                        if (line ~ /^ [^ ]+@Base /) { split(line, f, /[@ ]/); since[f[2]] = f[4] } }
            { print " " $1 "@Base " ($1 in since ? since[$1] : version) }'
} >"$symbols.tmp"
mv "$symbols.tmp" "$symbols"
echo "regenerate: lib/abi/librecd.so.abi and packaging/debian/$package.symbols:" \
    "$(nm -D --defined-only "$lib" | wc -l) exported symbols ($soname)"
