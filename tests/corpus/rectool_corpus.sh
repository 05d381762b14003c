# SPDX-License-Identifier: MIT
# rectool against the real SA-MP recordings of the shared corpus: every standard file verifies and
# survives export + import byte for byte through JSON lines and CSV; the legacy file is named
# legacy by info and verify; the text-mangled copy is rejected.
set -u
: "${RECTOOL:?RECTOOL must point at the rectool binary}"
corpus="${RECD_CORPUS_DIR:-}/samp-rec"
if [ -z "${RECD_CORPUS_DIR:-}" ] || [ ! -d "$corpus" ]; then
    echo "skipped: the SA-MP corpus ($corpus) is not available; set RECD_CORPUS_DIR" >&2
    exit 77
fi
legacy="$corpus/lsg__truth1.rec"
mangled="$corpus/bryan__animtest1_textmangled.rec"
for f in "$legacy" "$mangled"; do
    [ -f "$f" ] || { echo "FAIL: corpus file $f is missing" >&2; exit 1; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rectool_corpus.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

standard=0
for f in "$corpus"/*.rec; do
    [ "$f" = "$legacy" ] || [ "$f" = "$mangled" ] && continue
    standard=$((standard + 1))
    name=$(basename "$f")
    "$RECTOOL" verify "$f" >"$tmp/out" 2>&1 || fail "$name does not verify: $(cat "$tmp/out")"
    "$RECTOOL" info --json "$f" >"$tmp/info.json" || fail "info $name"
    python3 -c 'import json,sys; o=json.load(sys.stdin); sys.exit(not (o["format"] == "samp-rec" and o["valid"]))' \
        <"$tmp/info.json" || fail "info does not call $name a valid samp-rec"
    for enc in jsonl csv; do
        "$RECTOOL" export "$f" --to "$enc" -o "$tmp/$name.$enc" || { fail "export $name to $enc"; continue; }
        "$RECTOOL" import "$tmp/$name.$enc" -o "$tmp/$name" || { fail "import $name from $enc"; continue; }
        cmp -s "$f" "$tmp/$name" || fail "$name changes through export/import as $enc"
    done
done
[ "$standard" -ge 9 ] || fail "only $standard standard corpus files found"

# Legacy 56-byte on-foot blocks behind a 1000/2 header: recognised and named, never valid.
"$RECTOOL" info --json "$legacy" >"$tmp/legacy.json" || fail "info on the legacy file"
python3 - "$tmp/legacy.json" <<'EOF' || fail "info does not identify the legacy layout"
import json, sys
o = json.load(open(sys.argv[1]))
assert o["format"] == "legacy-rec" and o["rec"]["layout"] == "legacy-onfoot-56", o
assert o["valid"] is False and o["rec"]["blocks"] == 424, o["rec"]
EOF
"$RECTOOL" verify "$legacy" >"$tmp/out" 2>&1
[ $? -eq 1 ] || fail "verify accepts the legacy file"
grep -qi "legacy" "$tmp/out" || fail "verify does not say the file is legacy: $(cat "$tmp/out")"
"$RECTOOL" export "$legacy" --to jsonl >/dev/null 2>&1 && fail "export accepts the legacy file"

# A .rec that went through a text conversion: rejected, with the reason.
"$RECTOOL" verify "$mangled" >"$tmp/out" 2>&1
[ $? -eq 1 ] || fail "verify accepts the text-mangled file"
grep -qi "text" "$tmp/out" || fail "verify does not name the text conversion: $(cat "$tmp/out")"
"$RECTOOL" info --json "$mangled" >"$tmp/mangled.json" || fail "info on the text-mangled file"
python3 -c 'import json,sys; o=json.load(sys.stdin); sys.exit(o["format"] != "text-mangled-rec" or o["valid"])' \
    <"$tmp/mangled.json" || fail "info does not call the mangled file text-mangled"
"$RECTOOL" repair "$mangled" -o "$tmp/fixed.rec" >/dev/null 2>&1
[ $? -eq 1 ] || fail "repair does not refuse the text-mangled file"

if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "rectool_corpus: $standard standard files verified and round-tripped"
