#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks that daemon/ stays a set of one-way layers: a file includes headers of its own layer or of
# a layer below it (app -> ingest -> record -> write -> support), never lib/src's private headers,
# and no files include each other in a circle (a module is x.c with x.h). A file's layer is the
# first folder of its path (record/formats/rec/rec_session.c is in record). A format's folder
# (record/formats/NAME/) is reached from the rest of the daemon only through the one list,
# record/session_formats.c. With --self-test it also proves it can fail: on a copy of the tree it
# adds an upward include, then a circle, then a format's header included from outside the list,
# and expects each to be refused.
#   usage: layers.sh [DAEMON_DIR] | layers.sh --self-test [DAEMON_DIR]
set -u

LAYERS=(app ingest record write support) # top to bottom
declare -A RANK # a layer's place from the top, looked up without a subshell per include
for i in "${!LAYERS[@]}"; do RANK[${LAYERS[$i]}]=$i; done

# Prints one problem per line; exit status 1 when there is any.
check() {
    local root=$1 bad=0 edges file layer dir base inc target tlayer
    edges=$(mktemp)
    for file in "$root"/*.c "$root"/*.h; do
        [[ -e $file ]] || continue
        echo "daemon/$(basename "$file"): outside the layer folders"
        bad=1
    done
    local files
    mapfile -t files < <(find "$root" -mindepth 2 -name '*.[ch]' | sort)
    for file in "${files[@]}"; do
        rel=${file#"$root"/}
        if [[ -z ${RANK[${rel%%/*}]:-} ]]; then
            echo "$rel: in a folder that is not a layer"
            bad=1
        fi
    done
    # Every quoted include of every file, "FILE<TAB>HEADER" a line, from one awk: a process per
    # file made the self-test's five checks take most of a minute on a loaded machine.
    while IFS=$'\t' read -r file inc; do
        dir=${file%/*}
        rel=${file#"$root"/}
        layer=${rel%%/*}
        [[ -n ${RANK[$layer]:-} ]] || continue
        module=${rel%.*}
        if [[ $inc == */* ]]; then
            target=$root/$inc
        else
            target=$dir/$inc
        fi
        if [[ ! -f $target ]]; then
            # Only lib's public headers (recd/...) come from outside daemon/.
            if [[ $inc != recd/* ]]; then
                echo "$rel: includes \"$inc\", which is neither in daemon/ nor lib's public recd/"
                bad=1
            fi
            continue
        fi
        target=${target#"$root"/}
        tlayer=${target%%/*}
        if [[ ${RANK[$tlayer]:--1} -lt ${RANK[$layer]} ]]; then
            echo "$rel: $layer includes \"$inc\" from $tlayer, a layer above it"
            bad=1
        fi
        if [[ $target == record/formats/*/* && $rel != record/formats/* &&
              $rel != record/session_formats.c ]]; then
            echo "$rel: includes \"$inc\", a format's header, outside record/session_formats.c"
            bad=1
        fi
        if [[ ${target%.*} != "$module" ]]; then
            echo "$module ${target%.*}" >&3
        fi
    done < <([ ${#files[@]} -eq 0 ] || awk '/^[[:space:]]*#[[:space:]]*include[[:space:]]*"/ {
                 rest = substr($0, index($0, "\"") + 1)
                 if (index(rest, "\"")) print FILENAME "\t" substr(rest, 1, index(rest, "\"") - 1)
             }' "${files[@]}") 3>"$edges"
    # tsort reports every circle it finds on stderr.
    local loops
    loops=$(sort -u "$edges" | tsort 2>&1 >/dev/null)
    if [[ -n $loops ]]; then
        echo "files include each other in a circle:"
        echo "$loops"
        bad=1
    fi
    rm -f "$edges"
    return $bad
}

self_test() {
    local root=$1 tmp ok=0
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' RETURN
    cp -r "$root" "$tmp/daemon"
    if ! check "$tmp/daemon" >/dev/null; then
        echo "self-test: the unchanged tree already fails"
        return 1
    fi
    echo '#include "app/server.h"' >>"$tmp/daemon/support/log.c"
    if check "$tmp/daemon" >/dev/null; then
        echo "self-test: an upward include (support -> app) was not caught"
        ok=1
    fi
    cp "$root/support/log.c" "$tmp/daemon/support/log.c"
    echo '#include "record/formats/rec/rec_session.h"' >>"$tmp/daemon/record/session.c"
    if check "$tmp/daemon" >/dev/null; then
        echo "self-test: a circle (session <-> formats/rec/rec_session) was not caught"
        ok=1
    fi
    cp "$root/record/session.c" "$tmp/daemon/record/session.c"
    echo '#include "record/formats/rec/rec_session.h"' >>"$tmp/daemon/record/sessions.c"
    if check "$tmp/daemon" >/dev/null; then
        echo "self-test: a format's header included outside the list was not caught"
        ok=1
    fi
    cp "$root/record/sessions.c" "$tmp/daemon/record/sessions.c"
    echo '#include "wire_internal.h"' >>"$tmp/daemon/ingest/listener.c"
    if check "$tmp/daemon" >/dev/null; then
        echo "self-test: a private lib header was not caught"
        ok=1
    fi
    return $ok
}

here=$(cd "$(dirname "$0")" && pwd)
if [[ ${1:-} == --self-test ]]; then
    self_test "${2:-$here/../../daemon}" || exit 1
    echo "layers.sh: self-test passed (upward include, circle, format header outside the list and private header are refused)"
    exit 0
fi
root=${1:-$here/../../daemon}
if check "$root"; then
    echo "layers.sh: daemon/ includes only downwards and has no circles"
else
    exit 1
fi
