# SPDX-License-Identifier: MIT
# rectool never writes through a link it did not make (docs/reliability.md, round 3, rule 8): for
# every command that writes a file, symlinks planted at OUT.part and at other temporary-name shapes
# (pointing at a victim file, or dangling) are left alone, the victim is untouched, nothing is
# created at a dangling link's target, and the command either writes OUT as a regular file or
# fails with a message; a symlink already at OUT is replaced, never written through.
set -u
: "${RECTOOL:?RECTOOL must point at the rectool binary}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rectool_symlinks.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"
R=$RECTOOL
victim=$tmp/victim
absent=$tmp/absent
printf precious >"$tmp/precious"

# fresh_victim: the victim holds its words again and the dangling links' target does not exist.
fresh_victim() {
    cp "$tmp/precious" "$victim"
    rm -f "$absent"
}

# temp_shapes OUT: the names (no spaces: all under $tmp) a writer of OUT might use for its temporary file.
temp_shapes() {
    printf '%s\n' "$1.part" "$1.tmp" "$1~" "$(dirname "$1")/.$(basename "$1").part" "$1.part-00000000"
}

# plant TARGET OUT...: a symlink to TARGET at every temporary shape of each OUT.
plant() {
    local target=$1 o p
    shift
    for o in "$@"; do
        for p in $(temp_shapes "$o"); do ln -sfn "$target" "$p"; done
    done
}

# unharmed WHAT OUT...: the victim holds its words, no dangling target was made, every planted
# link is still a link, and no other temporary file of ours is left.
unharmed() {
    local what=$1 o p
    shift
    cmp -s "$victim" "$tmp/precious" || fail "$what: wrote through a planted link into the victim"
    [ ! -e "$absent" ] || fail "$what: created the target of a dangling link"
    for o in "$@"; do
        for p in $(temp_shapes "$o"); do
            [ -L "$p" ] || fail "$what: the planted link $p is gone"
        done
        for p in "$o".part-*; do
            [ "$p" = "$o.part-00000000" ] || [ ! -e "$p" ] || fail "$what: left $p behind"
        done
    done
}

# written WHAT RC OUT...: success means each OUT is a regular file (not a link); failure must say
# why on standard error.
written() {
    local what=$1 rc=$2 o
    shift 2
    if [ "$rc" -eq 0 ]; then
        for o in "$@"; do
            [ -f "$o" ] && [ ! -L "$o" ] || fail "$what: exit 0 but $o is not a regular file"
        done
    else
        [ -s "$tmp/err" ] || fail "$what: exit $rc without a message"
    fi
}

# check WHAT "OUT..." CMD...: runs CMD twice, first with links to the victim at each OUT's
# temporary shapes, then with dangling links there and a link to the victim at OUT itself.
check() {
    local what=$1 outs=$2 o rc
    shift 2
    # shellcheck disable=SC2086
    {
        for o in $outs; do rm -rf "$o" "$o".part* "$o.tmp" "$o~" "$(dirname "$o")/.$(basename "$o").part"; done
        fresh_victim
        plant "$victim" $outs
        "$@" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        unharmed "$what (links to a file)" $outs
        written "$what (links to a file)" "$rc" $outs
        for o in $outs; do rm -rf "$o" "$o".part* "$o.tmp" "$o~" "$(dirname "$o")/.$(basename "$o").part"; done
        fresh_victim
        plant "$absent" $outs
        for o in $outs; do ln -sfn "$victim" "$o"; done
        "$@" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        unharmed "$what (dangling links, OUT a link)" $outs
        written "$what (dangling links, OUT a link)" "$rc" $outs
    }
}

expect 0 "$R" generate --format samp-vehicle --scenario drive --duration 20s --seed 4 -o "$tmp/car.rec"
expect 0 "$R" generate --format samp-onfoot --scenario walk --duration 20s --seed 4 -o "$tmp/foot.rec"
expect 0 "$R" generate --format recap --scenario mixed --duration 20s --seed 4 -o "$tmp/play.recap"
expect 0 "$R" export "$tmp/foot.rec" --to jsonl -o "$tmp/foot.jsonl"
size=$(wc -c <"$tmp/car.rec")
head -c $((size - 7)) "$tmp/car.rec" >"$tmp/cut-short.rec"

check "generate" "$tmp/g.rec" "$R" generate --format samp-onfoot --duration 5s --seed 1 -o "$tmp/g.rec"
check "export" "$tmp/e.jsonl" "$R" export "$tmp/car.rec" --to jsonl -o "$tmp/e.jsonl"
mkdir -p "$tmp/many"
check "export (several into a folder)" "$tmp/many/car.rec.csv $tmp/many/foot.rec.csv" \
    "$R" export "$tmp/car.rec" "$tmp/foot.rec" --to csv -o "$tmp/many"
check "import" "$tmp/i.rec" "$R" import "$tmp/foot.jsonl" -o "$tmp/i.rec"
check "repair -o" "$tmp/r.rec" "$R" repair "$tmp/cut-short.rec" -o "$tmp/r.rec"
mkdir -p "$tmp/fixed"
check "repair --out-dir" "$tmp/fixed/cut-short.rec" "$R" repair --out-dir "$tmp/fixed" "$tmp/cut-short.rec"
# --in-place rewrites FILE itself: a fresh damaged copy each run, only its temporary names planted.
in_place() {
    cp "$tmp/cut-short.rec" "$tmp/inplace.rec"
    "$R" repair --in-place "$tmp/inplace.rec"
}
fresh_victim
plant "$victim" "$tmp/inplace.rec"
in_place >"$tmp/out" 2>"$tmp/err"
rc=$?
unharmed "repair --in-place" "$tmp/inplace.rec"
written "repair --in-place" "$rc" "$tmp/inplace.rec"
check "cut" "$tmp/c.rec" "$R" cut "$tmp/car.rec" --from 1000 --to 5000 -o "$tmp/c.rec"
check "cut (.recap)" "$tmp/c.recap" "$R" cut "$tmp/play.recap" --to 10s -o "$tmp/c.recap"
check "retime" "$tmp/rt.rec" "$R" retime "$tmp/car.rec" --speed 2 -o "$tmp/rt.rec"
check "transform" "$tmp/t.rec" "$R" transform "$tmp/car.rec" --translate 1,2,3 -o "$tmp/t.rec"
check "concat" "$tmp/cc.rec" "$R" concat "$tmp/car.rec" "$tmp/car.rec" -o "$tmp/cc.rec"
check "split" "$tmp/s-1.rec $tmp/s-2.rec" "$R" split "$tmp/car.rec" --at 5000 -o "$tmp/s"

# npc script: a one-part samp-player manifest.
mkdir -p "$tmp/root/samp-player/bob"
cp "$tmp/foot.rec" "$tmp/root/samp-player/bob/a.rec"
cat >"$tmp/root/samp-player/bob/a.json" <<'JSON'
{"format":"samp-player","version":1,"session":"bob","start_time":0,"complete":true,"parts":[
  {"path":"samp-player/bob/a.rec","type":"onfoot","start_ms":0,"duration_ms":20000,"complete":true}
]}
JSON
check "npc script" "$tmp/bob.pwn" "$R" npc script "$tmp/root/samp-player/bob/a.json" --dialect samp -o "$tmp/bob.pwn"

# plot needs cairo at run time (exit 3 without it): checked only where it draws.
if "$R" plot "$tmp/car.rec" -o "$tmp/probe.svg" >/dev/null 2>&1; then
    check "plot (svg)" "$tmp/p.svg" "$R" plot "$tmp/car.rec" -o "$tmp/p.svg"
    check "plot (png)" "$tmp/p.png" "$R" plot "$tmp/car.rec" -o "$tmp/p.png"
else
    echo "note: plot cannot draw here (no cairo); its outputs are not checked" >&2
fi

# A stale regular OUT.part (a killed run) is left alone too, and the output is still written.
printf stale >"$tmp/st.rec.part"
expect 0 "$R" generate --format samp-onfoot --duration 2s --seed 1 -o "$tmp/st.rec"
[ "$(cat "$tmp/st.rec.part")" = stale ] || fail "a stale OUT.part was overwritten"
expect 0 "$R" verify "$tmp/st.rec"

[ "$failures" -eq 0 ]
