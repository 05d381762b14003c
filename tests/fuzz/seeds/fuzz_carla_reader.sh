#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Writes small CARLA log seeds for fuzz_carla_reader into $1: a 0.9.13-style and a 0.9.16-style
# log in both vector widths with events, positions and a user packet, a cut one, and the first
# 16 KiB of the corpus recording when RECD_CORPUS_DIR has it.
set -euo pipefail
dir=${1:?usage: fuzz_carla_reader.sh DIR}
mkdir -p "$dir"
python3 - "$dir" <<'PY'
import struct, sys
out = sys.argv[1]

def s(t):
    b = t.encode()
    return struct.pack("<H", len(b)) + b

def packet(pid, payload):
    return struct.pack("<BI", pid, len(payload)) + payload

def log(width, ids16):
    v = "<3f" if width == 4 else "<3d"
    hdr = struct.pack("<H", 1) + s("CARLA_RECORDER") + struct.pack("<q", 1637671165) + s("Town01")
    body = b""
    for i in range(3):
        fr = packet(0, struct.pack("<Qdd", i + 1, 0.05 if i < 2 else -1.0, 0.05 * i))
        if ids16:
            fr += packet(20, struct.pack("<d", 0.05 * i))
        add = b""
        if i == 0:
            add = (struct.pack("<IB", 7, 1) + struct.pack(v, 1, 2, 3) + struct.pack(v, 0, 0, 90)
                   + struct.pack("<I", 3) + s("vehicle.audi.a2") + struct.pack("<H", 1)
                   + struct.pack("<B", 3) + s("role_name") + s("hero"))
        fr += packet(2, struct.pack("<H", 1 if add else 0) + add)
        fr += packet(3, struct.pack("<H", 0))
        fr += packet(4, struct.pack("<H", 0))
        fr += packet(5, struct.pack("<HIIIBB", 1, 1, 7, 0xFFFFFFFF, 1, 0) if i == 1 else struct.pack("<H", 0))
        if ids16:
            fr += packet(23, struct.pack("<H", 0))
        fr += packet(6, struct.pack("<HI", 1, 7) + struct.pack(v, 10 * i, 0, 0) + struct.pack(v, 0, 0, 0))
        fr += packet(7, struct.pack("<H", 0))
        fr += packet(8, struct.pack("<HIfffBi", 1, 7, 0.1, 0.5, 0.0, 0, 2))
        fr += packet(9, struct.pack("<H", 0))
        fr += packet(10, struct.pack("<HII", 1, 7, 3))
        if ids16:
            fr += packet(21, struct.pack("<HII", 1, 7, 1) + struct.pack("<Bff", 0, 0.1, 0.2))
            fr += packet(22, struct.pack("<H", 0))
        fr += packet(139, b"user")
        fr += packet(1, b"")
        body += fr
    return hdr + body

for w in (4, 8):
    for ids16 in (False, True):
        data = log(w, ids16)
        with open(f"{out}/log_w{w}_{'16' if ids16 else '13'}.log", "wb") as f:
            f.write(data)
        with open(f"{out}/cut_w{w}_{'16' if ids16 else '13'}.log", "wb") as f:
            f.write(data[:-23])
PY
corpus="${RECD_CORPUS_DIR:-}/carla/DistanceToLaneCenter.log"
if [ -f "$corpus" ]; then
    head -c 16384 "$corpus" >"$dir/corpus_head.log"
fi
