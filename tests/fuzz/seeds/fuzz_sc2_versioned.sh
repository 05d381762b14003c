#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Seeds for fuzz_sc2_versioned in $1 (first byte: even = one value, odd = a tracker stream): the
# replay headers of the corpus (RECD_CORPUS_DIR/sc2) when present, and values and tracker events
# encoded here by the rules of docs/formats/sc2replay.md.
set -euo pipefail
dir=${1:?usage: fuzz_sc2_versioned.sh DIR}
mkdir -p "$dir"
corpus="${RECD_CORPUS_DIR:-}/sc2"
python3 - "$dir" "$corpus" <<'PY'
import glob, os, struct, sys
out, corpus = sys.argv[1], sys.argv[2]

def vint(v):
    neg, v = v < 0, abs(v)
    b = [(v & 0x3F) << 1 | neg]
    v >>= 6
    while v:
        b[-1] |= 0x80
        b.append(v & 0x7F)
        v >>= 7
    return bytes(b)

def i(v): return b"\x09" + vint(v)
def blob(s): return b"\x02" + vint(len(s)) + s
def arr(items): return b"\x00" + vint(len(items)) + b"".join(items)
def struct_(fields): return b"\x05" + vint(len(fields)) + b"".join(vint(t) + v for t, v in fields)
def choice(tag, v): return b"\x03" + vint(tag) + v
def opt(v): return b"\x04\x00" if v is None else b"\x04\x01" + v

def event(delta, eid, body): return choice(1, i(delta)) + i(eid) + body

stats = struct_([(0, i(1)), (1, struct_([(k, i(k * 4096 if k in (29, 30) else k)) for k in range(39)]))])
born = struct_([(0, i(218)), (1, i(1)), (2, blob(b"Drone")), (3, i(2)), (4, i(2)), (5, i(57)), (6, i(48)),
                (7, opt(None)), (8, opt(None)), (9, opt(None))])
died = struct_([(0, i(218)), (1, i(1)), (2, opt(i(1))), (3, i(55)), (4, i(45)), (5, opt(i(3))), (6, opt(i(2)))])
positions = struct_([(0, i(214)), (1, arr([i(0), i(57), i(50), i(4), i(55), i(45)]))])
upgrade = struct_([(0, i(1)), (1, blob(b"Stimpack")), (2, i(1))])
setup = struct_([(0, i(1)), (1, i(1)), (2, opt(i(0))), (3, opt(i(0)))])
stream = (event(0, 9, setup) + event(1, 0, stats) + event(0, 1, born) + event(16, 8, positions) +
          event(3, 2, died) + event(5, 5, upgrade) + event(0, 6, born) + event(2, 7, struct_([(0, i(218)), (1, i(1))])) +
          event(1, 4, struct_([(0, i(218)), (1, i(1)), (2, blob(b"Baneling"))])) +
          event(1, 3, struct_([(0, i(218)), (1, i(1)), (2, i(1)), (3, i(1))])) + event(1, 42, struct_([])))
open(f"{out}/tracker", "wb").write(b"\x01" + stream)
open(f"{out}/value", "wb").write(b"\x00" + struct_([(0, blob(b"ab")), (3, arr([i(1), opt(None), opt(i(-2))])),
                                                     (7, choice(5, b"\x06\x09")), (8, b"\x01" + vint(9) + b"\xaa\x01")]))
for path in sorted(glob.glob(os.path.join(corpus, "*.SC2Replay"))):
    data = open(path, "rb").read()
    n = struct.unpack_from("<I", data, 12)[0]
    open(f"{out}/header_{os.path.basename(path)}", "wb").write(b"\x00" + data[16:16 + n])
PY
