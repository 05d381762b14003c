# SPDX-License-Identifier: MIT
# Cut tests: a .rec and a .recap (each >= 20 KiB) are truncated at every byte offset of their last
# 4 KiB; `rectool repair` must turn every cut into a file that verifies and holds exactly what
# was completely written: the whole blocks before the cut, the ticks of every gzip member that
# ends before the cut. To stay fast under ASan, cuts are repaired in batches (one process per
# 512 cuts); cuts that must repair to the same bytes are checked to be identical, and verify,
# info and export then run once per distinct result.
set -u
: "${RECTOOL:?RECTOOL must point at the rectool binary}"
if ! "$RECTOOL" generate --help >/dev/null 2>&1; then
    echo "rectool generate is not available in this build; cut tests need it" >&2
    exit 77
fi
# 3 x 4096 cut files and as many repaired ones: use memory when TMPDIR does not say otherwise.
tmp_base=${TMPDIR:-/tmp}
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
    tmp_base=/dev/shm
fi
tmp=$(mktemp -d "$tmp_base/rectool_cut.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
WINDOW=4096
BATCH=512
MIN_SIZE=20480

die() {
    echo "FAIL: $*" >&2
    exit 1
}

# grow CMD OUT SECONDS: runs "CMD SECONDS OUT" with a longer recording each time until OUT has at least
# MIN_SIZE bytes (in small steps: a bigger file only makes every cut slower to check).
grow() {
    local seconds=$3
    while :; do
        "$1" "${seconds}s" "$2" || die "$1 $seconds s"
        [ "$(stat -c %s "$2")" -ge "$MIN_SIZE" ] && return 0
        seconds=$((seconds * 5 / 4))
        [ "$seconds" -le 7200 ] || die "$1 stays under $MIN_SIZE bytes"
    done
}

make_foot() {
    "$RECTOOL" generate --format samp-onfoot --scenario walk --duration "$1" --seed 11 -o "$2" >/dev/null
}
make_car() {
    "$RECTOOL" generate --format samp-vehicle --scenario drive --duration "$1" --seed 11 -o "$2" >/dev/null
}
# A recorder daemon flushes about once a second; give the Recap file a gzip member per 20 ticks
# (generate, export, add flush messages, import) so the last 4 KiB holds many member ends.
make_recap() {
    "$RECTOOL" generate --format recap --scenario mixed --duration "$1" --seed 11 -o "$tmp/raw.recap" \
        >/dev/null || return 1
    "$RECTOOL" export "$tmp/raw.recap" --to jsonl -o "$tmp/raw.jsonl" || return 1
    python3 - "$tmp/raw.jsonl" "$tmp/flushed.jsonl" <<'EOF' || return 1
import json, sys
out, boundary = [], 20
for line in open(sys.argv[1]):
    m = json.loads(line)
    tick = m.get("tick")
    if tick is not None and tick >= boundary:
        if out and json.loads(out[-1]).get("type") != "flush":
            out.append('{"type":"flush"}\n')
        boundary = (tick // 20 + 1) * 20
    out.append(line)
open(sys.argv[2], "w").writelines(out)
EOF
    "$RECTOOL" import "$tmp/flushed.jsonl" -o "$2" >/dev/null
}

grow make_foot "$tmp/foot.rec" 20
grow make_car "$tmp/car.rec" 20
grow make_recap "$tmp/play.recap" 100
"$RECTOOL" verify -q "$tmp/play.recap" || die "the re-flushed recap does not verify"

# cut_and_repair FILE: writes every cut of the last WINDOW bytes and repairs them in batches into
# $tmp/rep/<name>/c<offset>.
cut_and_repair() {
    local file=$1 name size
    name=$(basename "$file")
    size=$(stat -c %s "$file")
    mkdir -p "$tmp/rep/$name"
    local start=$((size - WINDOW))
    while [ "$start" -lt "$size" ]; do
        local end=$((start + BATCH))
        [ "$end" -gt "$size" ] && end=$size
        rm -rf "$tmp/cuts" && mkdir "$tmp/cuts"
        python3 - "$file" "$tmp/cuts" "$start" "$end" <<'EOF' || die "writing cuts"
import sys
data = open(sys.argv[1], "rb").read()
for k in range(int(sys.argv[3]), int(sys.argv[4])):
    open(f"{sys.argv[2]}/c{k}", "wb").write(data[:k])
EOF
        "$RECTOOL" repair -q --out-dir "$tmp/rep/$name" "$tmp"/cuts/c* ||
            die "$name: repair failed for a cut in [$start, $end)"
        start=$end
    done
}

for f in "$tmp/foot.rec" "$tmp/car.rec" "$tmp/play.recap"; do
    cut_and_repair "$f"
    "$RECTOOL" export "$f" --to jsonl -o "$tmp/$(basename "$f").jsonl" || die "export $f"
done

# Checks every cut by its bytes: a .rec keeps header + whole blocks, a .recap keeps the header
# and every member that ends before the cut (only its frame count and end time may change).
# Prints representatives of the distinct results with the blocks / ticks they must hold.
python3 - "$tmp" "$WINDOW" >"$tmp/representatives" <<'EOF' || die "cut results"
import json, sys, zlib
tmp, window = sys.argv[1], int(sys.argv[2])

def check_rec(name, block_size):
    data = open(f"{tmp}/{name}", "rb").read()
    seen = {}
    for k in range(len(data) - window, len(data)):
        keep = 8 + (k - 8) // block_size * block_size
        got = open(f"{tmp}/rep/{name}/c{k}", "rb").read()
        assert got == data[:keep], f"{name} cut at {k}: kept {len(got)} bytes, expected {keep}"
        seen.setdefault(keep, (f"{tmp}/rep/{name}/c{k}", (keep - 8) // block_size))
    return seen

def member_ends(data):
    """File offsets where each gzip member ends, in order."""
    pos = 7 + int.from_bytes(data[5:7], "big")
    ends = []
    while pos < len(data):
        d = zlib.decompressobj(31)
        d.decompress(data[pos:])
        assert d.eof, "the original file ends in an incomplete member"
        pos = len(data) - len(d.unused_data)
        ends.append(pos)
    return ends

def check_recap(name):
    data = open(f"{tmp}/{name}", "rb").read()
    header_end = 7 + int.from_bytes(data[5:7], "big")
    ends = member_ends(data)
    flushes = [json.loads(l) for l in open(f"{tmp}/{name}.jsonl") if '"flush"' in l]
    flush_ticks = [m["end_tick"] for m in flushes if m.get("type") == "flush"]
    assert len(flush_ticks) == len(ends), (len(flush_ticks), len(ends))
    in_window = [e for e in ends if e >= len(data) - window]
    assert len(in_window) >= 8, f"only {len(in_window)} member ends in the last {window} bytes"
    seen = {}
    for k in range(len(data) - window, len(data)):
        kept = [i for i, e in enumerate(ends) if e <= k]
        keep = ends[kept[-1]] if kept else header_end
        ticks = flush_ticks[kept[-1]] if kept else 0
        got = open(f"{tmp}/rep/{name}/c{k}", "rb").read()
        assert len(got) == keep, f"{name} cut at {k}: kept {len(got)} bytes, expected {keep}"
        assert got[header_end:] == data[header_end:keep], f"{name} cut at {k}: members changed"
        first = seen.setdefault(keep, (f"{tmp}/rep/{name}/c{k}", ticks))[0]
        assert got == open(first, "rb").read(), f"{name}: cuts {k} and {first} repair differently"
    return seen

# Every .rec result was compared byte for byte above; a sample of them is enough for the export
# comparison. Every distinct .recap result is checked.
for name, size in (("foot.rec", 72), ("car.rec", 67)):
    results = list(check_rec(name, size).values())
    for path, units in results[:: max(1, len(results) // 8)]:
        print(name, path, units)
for path, units in check_recap("play.recap").values():
    print("play.recap", path, units)
EOF

# The representatives verify, and info counts what was expected.
cut -d' ' -f2 "$tmp/representatives" | xargs "$RECTOOL" verify -q || die "a repaired cut does not verify"
cut -d' ' -f2 "$tmp/representatives" | xargs "$RECTOOL" info --json >"$tmp/rep.info" ||
    die "info on repaired cuts"
python3 - "$tmp/representatives" "$tmp/rep.info" <<'EOF' || die "info on repaired cuts disagrees"
import json, sys
want = {path: (name, int(units)) for name, path, units in (l.split() for l in open(sys.argv[1]))}
for o in map(json.loads, open(sys.argv[2])):
    name, units = want[o["file"]]
    assert o["valid"], o["file"]
    if name.endswith(".recap"):
        r = o["recap"]
        assert r["ticks"] == units and r["frame_count"] == units and not r["truncated"], (units, r)
    else:
        assert o["rec"]["blocks"] == units and o["rec"]["trailing_bytes"] == 0, (units, o["rec"])
EOF

# The export of a repaired file must be the original's export up to what was kept: the same state,
# event and flush lines in the same order (open and close carry the patched header and differ),
# ending with the flush of the last complete member for a .recap.
mkdir "$tmp/exp"
i=0
while read -r name path units; do
    i=$((i + 1))
    "$RECTOOL" export "$path" --to jsonl -o "$tmp/exp/$i.jsonl" || die "export of repaired $path"
done <"$tmp/representatives"
python3 - "$tmp" <<'EOF' || die "the export of a repaired cut is not a prefix of the original's"
import json, sys
tmp = sys.argv[1]
def body(path):
    return [l for l in open(path) if json.loads(l).get("type") not in ("open", "close")]
originals = {}
for i, line in enumerate(open(f"{tmp}/representatives"), 1):
    name, path, units = line.split()
    orig = originals.setdefault(name, body(f"{tmp}/{name}.jsonl"))
    rep = body(f"{tmp}/exp/{i}.jsonl")
    assert rep == orig[: len(rep)], f"{path}: export is not a prefix of the original export"
    assert len(rep) < len(orig), f"{path}: a cut file kept everything"
    if name.endswith(".recap") and rep:
        assert json.loads(rep[-1]).get("type") == "flush", f"{path}: does not end on a member"
    else:
        assert len(rep) == int(units), f"{path}: {len(rep)} states exported, {units} expected"
EOF
echo "rectool_cut: 3 x $WINDOW cuts repaired and checked, $(wc -l <"$tmp/representatives") exported"
